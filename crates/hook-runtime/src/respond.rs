//! Writing the answer: the only code in a hook that prints.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "this module is the hook's output")]

use std::io::Write;

use hook_model::{EventKind, HookOutput};

use crate::ExitStatus;

/// The longest stderr note, in bytes. Notes can quote the payload (serde names the value it
/// could not read); Claude Code shows the first line of stderr, so it stays short and single.
const MAX_NOTE_BYTES: usize = 400;

/// What a hook run says.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Nothing at all.
    Silent,
    /// Nothing on stdout, and why on stderr: a failure that fails open.
    Note(String),
    /// A JSON answer.
    #[allow(dead_code, reason = "produced by the rule engine, which arrives with the artifact")]
    Output(HookOutput),
}

impl Answer {
    /// Writes the answer and returns the exit status, the only place that decides it.
    /// Errors writing to stdout or stderr are ignored: Claude Code has gone away, and there is
    /// nobody left to tell.
    pub(crate) fn write(
        self,
        kind: EventKind,
        stdout: &mut dyn Write,
        stderr: &mut dyn Write,
    ) -> ExitStatus {
        match self {
            Answer::Silent => {}
            Answer::Note(message) => {
                let _ = writeln!(
                    stderr,
                    "{}: {}; answered nothing",
                    kind.binary_name(),
                    one_line(&message)
                );
            }
            Answer::Output(mut output) => {
                debug_assert_eq!(output.kind(), kind, "an answer to another event");
                if let Some(json) = output.render() {
                    let _ =
                        stdout.write_all(json.as_bytes()).and_then(|()| stdout.write_all(b"\n"));
                }
            }
        }
        let _ = stdout.flush();
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
