//! [`SourceFile`]: a file's text, with byte offsets turned into lines and columns.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// One source file: its path as shown in diagnostics, and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    path: PathBuf,
    text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A source named `path` holding `text`.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts =
            std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
        SourceFile { path: path.into(), text, line_starts }
    }

    /// The path shown in diagnostics.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text[start..floor_char_boundary(&self.text, offset)].chars().count();
        (line + 1, column + 1)
    }

    /// The text of 1-based line `line`, without its line break.
    pub fn line(&self, line: usize) -> &str {
        let start = self.line_starts.get(line - 1).copied().unwrap_or(self.text.len());
        let end = self.line_starts.get(line).copied().unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The text of `span`.
    pub fn slice(&self, span: Range<usize>) -> &str {
        self.text.get(span).unwrap_or("")
    }
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::SourceFile;

    #[test]
    fn lines_and_columns() {
        let source = SourceFile::new("p.toml", "a = 1\nbé = 2\n\nlast");
        assert_eq!(source.line_col(0), (1, 1));
        assert_eq!(source.line_col(4), (1, 5));
        assert_eq!(source.line_col(6), (2, 1));
        assert_eq!(source.line_col(9), (2, 3), "columns count characters, not bytes");
        assert_eq!(source.line_col(14), (3, 1));
        assert_eq!(source.line_col(15), (4, 1));
        assert_eq!(source.line(2), "bé = 2");
        assert_eq!(source.line(3), "");
        assert_eq!(source.line(4), "last");
    }
}
