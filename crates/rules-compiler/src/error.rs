//! What can keep rules from being compiled, or a pack's tests from running: kinds with their
//! context, not strings. Problems in a pack's text are diagnostics with places
//! ([`crate::Diagnostics`]), found before; these are what is left when compiling what was
//! checked.

use std::fmt;

use hook_engine::artifact::ArtifactError;
use hook_engine::artifact::sources::{MAX_SOURCE_DIRS, MAX_SOURCE_FILES};

/// Why rules could not be compiled, or their tests run.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// More source files or pack folders than a hook checks for changes.
    TooManySources {
        /// The source files.
        files: usize,
        /// The pack folders.
        dirs: usize,
    },
    /// A glob or a regex whose automaton cannot be built (the linter checks each, so this is
    /// one over the size limit).
    Automaton {
        /// A glob or a regex.
        kind: MatcherKind,
        /// As written.
        pattern: String,
        /// Why, as the automaton builder says it.
        reason: String,
    },
    /// The automata of the rules together are over [`crate::MAX_AUTOMATA_BYTES`].
    AutomataOverBudget {
        /// Their bytes.
        total: usize,
        /// The bytes each rule adds, with its full id, largest first.
        contributions: Vec<(usize, String)>,
    },
    /// What was just compiled does not read back: a bug in the compiler or the engine.
    ReadBack(ArtifactError),
}

/// What kind of matcher an [`Error::Automaton`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatcherKind {
    /// A path glob (`paths`).
    Glob,
    /// A regex (`regex`, a tool regex).
    Regex,
}

impl MatcherKind {
    /// Its name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            MatcherKind::Glob => "glob",
            MatcherKind::Regex => "regex",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TooManySources { files, dirs } => write!(
                f,
                "{files} source files in {dirs} pack folders: hooks check at most \
                 {MAX_SOURCE_FILES} files in {MAX_SOURCE_DIRS} folders"
            ),
            Error::Automaton { kind, pattern, reason } => {
                write!(f, "{} `{pattern}` cannot be precompiled: {reason}", kind.as_str())
            }
            Error::AutomataOverBudget { total, contributions } => {
                let named: Vec<_> =
                    contributions.iter().map(|(bytes, id)| (*bytes, id.clone(), None)).collect();
                f.write_str(&crate::compile::automata_over_budget(*total, &named))
            }
            Error::ReadBack(err) => write!(f, "the compiled rules do not read back: {err}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ReadBack(err) => Some(err),
            Error::TooManySources { .. }
            | Error::Automaton { .. }
            | Error::AutomataOverBudget { .. } => None,
        }
    }
}

impl From<ArtifactError> for Error {
    fn from(err: ArtifactError) -> Self {
        Error::ReadBack(err)
    }
}
