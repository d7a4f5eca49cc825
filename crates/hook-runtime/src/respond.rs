//! Writing the answer: the only code in a hook that prints.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "this module is the hook's output")]

use std::io::Write;

use hook_model::{EventKind, HookOutput};

use crate::ExitStatus;

/// The longest stderr note, in bytes. Notes can quote the payload (serde names the value it
/// could not read); Claude Code shows the first line of stderr, so it stays short and single.
const MAX_NOTE_BYTES: usize = 400;

/// What a hook's output is when it also reports a failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Nothing from the rules (at most a notice for the user).
    #[default]
    Nothing,
    /// The rules' answer, without what failed (such as the session state).
    FromRules,
    /// A deny of a tool that a rule marked `fail = "closed"` covers.
    FailClosed,
}

/// What a hook run says.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// The JSON answer.
    pub(crate) output: Option<HookOutput>,
    /// A failure that failed open, for one stderr line.
    pub(crate) note: Option<String>,
    /// What the output is, for the stderr line of a failure.
    pub(crate) answered: Answered,
    /// Plain text for stdout instead of JSON (`WorktreeCreate`'s path).
    pub(crate) plain: Option<String>,
    /// The hook failed at what it does itself (a worktree hook): exit 1, the note on stderr.
    pub(crate) failed: bool,
}

impl Answer {
    pub(crate) fn silent() -> Answer {
        Answer::default()
    }

    pub(crate) fn note(message: String) -> Answer {
        Answer { note: Some(message), ..Answer::default() }
    }

    /// Writes the answer and returns the exit status, the only place that decides it.
    /// Errors writing to stdout or stderr are ignored: Claude Code has gone away, and there is
    /// nobody left to tell.
    pub(crate) fn write(
        self,
        kind: EventKind,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> ExitStatus {
        let outcome = match self.answered {
            Answered::Nothing => "answered nothing",
            Answered::FromRules => "answered without it",
            Answered::FailClosed => "denied: a rule marked fail = \"closed\" covers the tool",
        };
        if let Some(mut output) = self.output {
            debug_assert_eq!(output.kind(), kind, "an answer to another event");
            if let Some(json) = output.render() {
                let _ = stdout.write_all(json.as_bytes()).and_then(|()| stdout.write_all(b"\n"));
            }
        }
        if let Some(text) = &self.plain {
            let _ = writeln!(stdout, "{text}");
        }
        let _ = stdout.flush();
        if self.failed {
            let _ = writeln!(
                stderr,
                "{}: {}",
                kind.binary_name(),
                one_line(&self.note.unwrap_or_default())
            );
            return ExitStatus::Failed;
        }
        if let Some(message) = self.note {
            let _ = writeln!(stderr, "{}: {}; {outcome}", kind.binary_name(), one_line(&message));
        }
        ExitStatus::Proceed
    }
}

/// `message` on one line of at most [`MAX_NOTE_BYTES`] bytes.
fn one_line(message: &str) -> String {
    let mut line: String = message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if line.len() > MAX_NOTE_BYTES {
        let mut cut = MAX_NOTE_BYTES;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}
