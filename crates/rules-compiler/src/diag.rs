//! Diagnostics: every problem in every pack, reported at once, cargo style.
//!
//! ```text
//! packs/api.toml:12:1: error: unknown key `keyword` in a rule; did you mean `keywords`?
//!    |
//! 12 | keyword = ["sql"]
//!    | ^^^^^^^
//! ```

use std::fmt::{self, Write as _};
use std::ops::Range;
use std::sync::Arc;

use crate::SourceFile;

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Nothing is wrong, but the author may not know it happens (a rule replacing a builtin
    /// one): one line, never counted as a problem.
    Info,
    /// The pack still compiles, but something in it cannot do what it says.
    Warning,
    /// The pack does not compile.
    Error,
}

/// One problem, at one place in one file.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, lowercase, naming the bad input.
    pub message: String,
    /// The file, and the bytes of it that are wrong (`None` for problems with no place).
    pub place: Option<(Arc<SourceFile>, Range<usize>)>,
    /// What else the reader needs: another place involved ("first defined here"), or a hint.
    pub notes: Vec<Note>,
}

/// A secondary label of a [`Diagnostic`].
#[derive(Clone, Debug)]
pub struct Note {
    /// What it says, lowercase.
    pub message: String,
    /// The place it points at, if any.
    pub place: Option<(Arc<SourceFile>, Range<usize>)>,
}

impl Diagnostic {
    /// The 1-based line and column where the problem starts.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        self.place.as_ref().map(|(source, span)| source.line_col(span.start))
    }

    /// A problem at `span` of `source`, to give notes and then [`Diagnostics::add`].
    pub fn new(
        severity: Severity,
        source: &Arc<SourceFile>,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        let place = Some((source.clone(), span));
        Diagnostic { severity, message: message.into(), place, notes: Vec::new() }
    }

    /// With a note pointing at `span` of `source`.
    #[must_use]
    pub fn note_at(
        mut self,
        source: &Arc<SourceFile>,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        self.notes.push(Note { message: message.into(), place: Some((source.clone(), span)) });
        self
    }

    /// With a note that has no place (a hint).
    #[must_use]
    pub fn note(mut self, message: impl Into<String>) -> Self {
        self.notes.push(Note { message: message.into(), place: None });
        self
    }
}

/// Writes `file:line:col: label: message` and, unless `one_line`, the line with `mark` under
/// `span`.
fn write_at(
    f: &mut fmt::Formatter<'_>,
    (source, span): &(Arc<SourceFile>, Range<usize>),
    label: &str,
    message: &str,
    mark: char,
    one_line: bool,
) -> fmt::Result {
    let (line, column) = source.line_col(span.start);
    writeln!(f, "{}:{line}:{column}: {label}: {message}", source.path().display())?;
    if one_line {
        return Ok(());
    }
    let text = source.line(line);
    let (end_line, end_column) = source.line_col(span.end.max(span.start + 1) - 1);
    let width = if end_line == line {
        (end_column + 1).saturating_sub(column).max(1)
    } else {
        text.chars().count().saturating_sub(column - 1).max(1)
    };
    let gutter = " ".repeat(line.to_string().len());
    let mut caret = String::new();
    for c in text.chars().take(column - 1) {
        caret.push(if c == '\t' { '\t' } else { ' ' });
    }
    caret.extend(std::iter::repeat_n(mark, width));
    writeln!(f, "{gutter} |")?;
    writeln!(f, "{line} | {text}")?;
    writeln!(f, "{gutter} | {caret}")
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let one_line = self.severity == Severity::Info;
        match &self.place {
            Some(place) => write_at(f, place, severity, &self.message, '^', one_line)?,
            None => writeln!(f, "{severity}: {}", self.message)?,
        }
        for note in &self.notes {
            match &note.place {
                Some(place) => write_at(f, place, "note", &note.message, '-', one_line)?,
                None => writeln!(f, "  = note: {}", note.message)?,
            }
        }
        Ok(())
    }
}

/// The problems found so far.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records an error at `span` of `source`.
    pub fn error(
        &mut self,
        source: &Arc<SourceFile>,
        span: Range<usize>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, Some((source.clone(), span)), message.into());
    }

    /// Records a warning at `span` of `source`.
    pub fn warning(
        &mut self,
        source: &Arc<SourceFile>,
        span: Range<usize>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Warning, Some((source.clone(), span)), message.into());
    }

    /// Records an info line at `span` of `source`: not a problem, something to know.
    pub fn info(
        &mut self,
        source: &Arc<SourceFile>,
        span: Range<usize>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Info, Some((source.clone(), span)), message.into());
    }

    /// Records `diagnostic` (built with its notes).
    pub fn add(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    /// Records an error that has no place in a file.
    pub fn error_without_place(&mut self, message: impl Into<String>) {
        self.push(Severity::Error, None, message.into());
    }

    /// Records a warning that has no place in a file.
    pub fn warning_without_place(&mut self, message: impl Into<String>) {
        self.push(Severity::Warning, None, message.into());
    }

    fn push(
        &mut self,
        severity: Severity,
        place: Option<(Arc<SourceFile>, Range<usize>)>,
        message: String,
    ) {
        self.list.push(Diagnostic { severity, message, place, notes: Vec::new() });
    }

    /// Adds every problem of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.list.extend(other.list);
    }

    /// Leaves out the info lines.
    pub fn drop_infos(&mut self) {
        self.list.retain(|d| d.severity != Severity::Info);
    }

    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }

    /// The number of errors.
    pub fn error_count(&self) -> usize {
        self.list.iter().filter(|d| d.severity == Severity::Error).count()
    }

    /// The number of warnings.
    pub fn warning_count(&self) -> usize {
        self.list.iter().filter(|d| d.severity == Severity::Warning).count()
    }

    /// Whether there are no problems at all (info lines are none).
    pub fn is_empty(&self) -> bool {
        self.list.iter().all(|d| d.severity == Severity::Info)
    }

    /// Whether there is nothing to show, not even an info line.
    pub fn is_silent(&self) -> bool {
        self.list.is_empty()
    }

    /// The problems, by file and position.
    pub fn sorted(&self) -> Vec<&Diagnostic> {
        let mut list: Vec<&Diagnostic> = self.list.iter().collect();
        list.sort_by(|a, b| {
            let key = |d: &Diagnostic| {
                d.place.as_ref().map(|(source, span)| (source.path().to_owned(), span.start))
            };
            key(a).cmp(&key(b))
        });
        list
    }

    /// Every problem, rendered, followed by a summary line.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for diagnostic in self.sorted() {
            // A problem is followed by a blank line; an info line stands alone.
            let gap = if diagnostic.severity == Severity::Info { "" } else { "\n" };
            let _ = write!(text, "{diagnostic}{gap}");
        }
        let (errors, warnings) = (self.error_count(), self.warning_count());
        if errors + warnings > 0 {
            let plural =
                |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
            let _ = writeln!(text, "{}, {}", plural(errors, "error"), plural(warnings, "warning"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_cargo_style_with_a_caret() {
        let source = Arc::new(SourceFile::new("packs/api.toml", "[[rule]]\nkeyword = [\"sql\"]\n"));
        let mut diagnostics = Diagnostics::default();
        diagnostics.error(
            &source,
            9..16,
            "unknown key `keyword` in a rule; did you mean `keywords`?",
        );
        assert_eq!(
            diagnostics.render(),
            "packs/api.toml:2:1: error: unknown key `keyword` in a rule; did you mean `keywords`?\n  |\n2 | keyword = [\"sql\"]\n  | ^^^^^^^\n\n1 error, 0 warnings\n"
        );
    }
}
