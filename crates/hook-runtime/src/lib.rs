//! The one place hookpack does process IO.
//!
//! Every `hookpack-<event>` binary is one [`hook_main!`] with its [`EventKind`]. [`run`] does
//! the work on any reader and writers, so tests drive it in-process:
//! stdin → [`hook_model::HookInput`] → answer → at most one JSON object on stdout + [`ExitStatus`].
//!
//! Failures fail open (reference §5): whatever goes wrong, the hook exits 0 with empty or valid
//! output and says what went wrong in one short stderr line.
//!
//! ```
//! use hook_model::EventKind;
//! use hook_runtime::{Env, ExitStatus, run};
//!
//! let payload = br#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/t",
//!                    "cwd":"/nowhere","stop_hook_active":false}"#;
//! let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
//! let status = run(EventKind::Stop, &mut &payload[..], &mut stdout, &mut stderr, &Env::default());
//! assert_eq!(status, ExitStatus::Proceed);
//! assert!(stdout.is_empty(), "no hookpack here: the hook stays silent");
//! ```

mod compiled;
pub mod confined;
mod env;
mod exit;
pub mod export;
mod failure;
pub mod git;
mod notice;
mod project;
mod respond;
mod rules;
pub mod state;
mod stdin;
pub mod transcript;
mod worktree;

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use hook_model::{EventKind, HookInput, InputError};

pub use compiled::{write_compiled, write_fail_closed};
pub use env::{Env, EnvVars};
pub use exit::ExitStatus;
pub use failure::way_out;
pub use project::{Installation, PROJECT_SUBDIR};
pub use rules::{
    Unusable, load as load_artifact, reachable as artifact_reachable, stale as staleness,
};
pub use stdin::MAX_STDIN_BYTES;

use respond::Answer;
use stdin::{StdinError, read_payload};

/// Defines the C `main` of a `hookpack-<event>` binary, which is `#![no_main]`: the whole
/// generated source of one is
///
/// ```ignore
/// #![no_main]
/// hook_runtime::hook_main!(hook_model::EventKind::PreToolUse);
/// ```
///
/// `hook_main!()` defines that of `hookpack-hook`, one binary for every event, installed under
/// each event's name (`hookpack-pre-tool-use`, … as hard links): the event is the name it was
/// run by.
///
/// A hook runs for a millisecond; Rust's own start-up would take a tenth of it (the main
/// thread's stack guard reads and parses `/proc/self/maps`, a signal stack is mapped and
/// unmapped). [`start`] does the part of it a hook needs.
#[macro_export]
macro_rules! hook_main {
    () => {
        $crate::hook_main!(@event |args: &$crate::Args| args.event());
    };
    ($kind:expr) => {
        $crate::hook_main!(@event |_: &$crate::Args| Some($kind));
    };
    (@event $event:expr) => {
        #[allow(unsafe_code, reason = "the process's C entry point, called once by libc")]
        #[unsafe(no_mangle)]
        extern "C" fn main(
            argc: ::std::ffi::c_int,
            argv: *const *const ::std::ffi::c_char,
        ) -> ::std::ffi::c_int {
            // SAFETY: libc's `argc` and `argv`, as it passes them to `main`.
            let args = unsafe { $crate::Args::new(argc, argv) };
            $crate::start_with(($event)(&args), &args)
        }
    };
}

/// A hook's command line, as libc gives it to `main` (for [`hook_main!`]): the name it was run by, and whether
/// it was asked for its version (the one argument a hook takes).
#[derive(Debug)]
#[doc(hidden)]
pub struct Args {
    name: &'static [u8],
    version: bool,
}

impl Args {
    /// Reads `argv[0]` and `argv[1]`.
    ///
    /// # Safety
    ///
    /// `argv` holds `argc` pointers to NUL-terminated strings that live as long as the process,
    /// as libc passes them to `main`.
    #[allow(unsafe_code, reason = "reading libc's argv")]
    pub unsafe fn new(count: std::ffi::c_int, strings: *const *const std::ffi::c_char) -> Args {
        let arg = |i: isize| {
            // SAFETY: `i < count`, and each of the first `count` pointers is a C string.
            (i < isize::try_from(count).unwrap_or(0))
                .then(|| unsafe { std::ffi::CStr::from_ptr(*strings.offset(i)) }.to_bytes())
        };
        Args { name: arg(0).unwrap_or_default(), version: arg(1) == Some(b"--version".as_slice()) }
    }

    /// The event of the name it was run by (`…/hookpack-pre-tool-use`: `PreToolUse`).
    pub fn event(&self) -> Option<EventKind> {
        let name = self.name.rsplit(|&b| b == b'/').next().unwrap_or_default();
        let kebab = std::str::from_utf8(name.strip_prefix(b"hookpack-")?).ok()?;
        EventKind::from_kebab(kebab)
    }
}

/// What a hook answers to `--version`: the release, and the fingerprint compiled artifacts
/// record of the compiler that wrote them (the release and the artifact format).
pub fn version() -> String {
    format!(
        "hookpack {} (fingerprint {:016x})",
        env!("CARGO_PKG_VERSION"),
        hook_engine::artifact::sources::hookpack_fingerprint()
    )
}

/// [`start`] for a command line: `--version` prints [`version`]; a name that is no event's
/// (`hookpack-hook` run as itself) says how it is meant to be run and exits 1, which Claude Code
/// takes for a non-blocking error (2 would block the tool call or the prompt).
pub fn start_with(kind: Option<EventKind>, args: &Args) -> std::ffi::c_int {
    if args.version {
        // A reader that has gone is an error, not a signal.
        standard_streams();
        let _ = writeln!(std::io::stdout(), "{}", version());
        return 0;
    }
    match kind {
        Some(kind) => start(kind),
        None => {
            let _ = writeln!(
                std::io::stderr(),
                "hookpack-hook answers the event it is named after: install it as \
                 hookpack-<event> (cargo xtask install), e.g. hookpack-pre-tool-use"
            );
            1
        }
    }
}

/// The body of every `hookpack-<event>` binary ([`hook_main!`]); returns its exit code.
///
/// Does what the hook needs of Rust's runtime start-up (a closed pipe is an error, not a
/// signal; the standard streams are open), then locks the streams, reads the environment and
/// calls [`run`]. A panic anywhere below is caught and answered like any other failure:
/// nothing on stdout, one line on stderr, exit 0.
pub fn start(kind: EventKind) -> std::ffi::c_int {
    ONE_SHOT.store(true, Ordering::Relaxed);
    keep_freed_memory();
    standard_streams();
    // The default hook prints a multi-line report; the hook's stderr gets one line instead.
    panic::set_hook(Box::new(|_| {}));
    let env = Env::from_process();
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let status = panic::catch_unwind(AssertUnwindSafe(|| {
        run(kind, &mut stdin, &mut stdout, &mut stderr, &env)
    }));
    let status = status.unwrap_or_else(|panic| {
        Answer::note(format!("internal error ({})", panic_message(panic.as_ref()))).write(
            kind,
            &mut stdout,
            &mut stderr,
        )
    });
    // Nothing flushes stdout at exit without Rust's runtime.
    let _ = stdout.flush();
    std::ffi::c_int::from(status.code())
}

/// Whether this process is a hook ([`start`]), which exits once it has answered: what it
/// holds to the end need not be let go of (tests call [`run`] many times in one process).
static ONE_SHOT: AtomicBool = AtomicBool::new(false);

fn one_shot() -> bool {
    ONE_SHOT.load(Ordering::Relaxed)
}

/// Drops `value`, unless this process is a hook: then it is left for the exit to take back,
/// which does at once what freeing it piece by piece would do (a map's unmapping is a system
/// call and a flush of the TLB; a session's state is hundreds of strings).
fn keep_until_exit<T>(value: T) {
    if one_shot() {
        std::mem::forget(value);
    }
}

/// A hook answers once and exits: the memory it frees is best kept for what it allocates
/// next, since a page a process touches first costs it more than the work on it (about 1.7 µs
/// here, against 0.6 ms for the whole floor process). By default glibc gives freed memory at
/// the top of the heap back to the system, and maps each block of 128 KiB or more afresh (a
/// 50 KB command's payload, read, parsed and freed, was touched again for its reading).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code, reason = "mallopt, called before any thread exists")]
fn keep_freed_memory() {
    // SAFETY: `mallopt` only sets the allocator's parameters; called on the main thread before
    // any other exists. A value it refuses leaves the default, which is only slower.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, std::ffi::c_int::MAX);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

/// What Rust's runtime start-up does that a hook relies on: `SIGPIPE` ignored, so that writing
/// to a reader that has gone is an error the hook handles and not a silent death; and the
/// standard streams open (a closed one is opened on `/dev/null`), so that no file the hook
/// opens takes their place and receives its answer.
#[allow(unsafe_code, reason = "signal and poll, as Rust's runtime start-up calls them")]
fn standard_streams() {
    let mut streams = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: `SIG_IGN` is a valid disposition for `SIGPIPE`; `poll` is given an array of
    // three initialised `pollfd` and its length, and returns at once (timeout 0).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        if libc::poll(streams.as_mut_ptr(), 3, 0) == -1 {
            return;
        }
    }
    for stream in streams {
        if stream.revents & libc::POLLNVAL != 0 {
            // SAFETY: a valid C string; the descriptor, the lowest free one (this stream's:
            // the streams are opened in order), is kept for the life of the process.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic")
}

/// Answers one `kind` event: reads the payload from `stdin`, writes at most one JSON object to
/// `stdout` and at most one line to `stderr`, and returns how the process should exit.
pub fn run(
    kind: EventKind,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    env: &Env,
) -> ExitStatus {
    state::new_hook();
    confined::during_hook(|| answer(kind, stdin, env)).write(kind, stdout, stderr)
}

fn answer(kind: EventKind, stdin: &mut dyn Read, env: &Env) -> Answer {
    let no_payload = |note: String| unreadable(kind, note, None, env);
    let payload = match read_payload(stdin, MAX_STDIN_BYTES) {
        Ok(payload) => payload,
        Err(StdinError::TooLarge { total }) => {
            return no_payload(format!(
                "stdin is {total} bytes, over the {MAX_STDIN_BYTES}-byte limit"
            ));
        }
        Err(StdinError::Io(err)) => return no_payload(format!("cannot read stdin: {err}")),
    };
    if payload.iter().all(u8::is_ascii_whitespace) {
        return no_payload("stdin is empty; Claude Code always sends a JSON object".into());
    }
    // What JavaScript reads and a UTF-8 reader does not (a lone surrogate in a file's content)
    // is made readable and judged: a guard must not be turned off by one escape.
    let mut payload = match hook_model::json_from_slice(&payload) {
        Ok(parsed) => {
            // The bytes go before anything else is made: what comes next reuses their memory
            // (a page a process touches first costs it more than the work on it).
            drop(payload);
            parsed
        }
        Err(err) => {
            let note = format!("stdin is not a JSON object: {err}");
            return unreadable_bytes(kind, note, &payload, env);
        }
    };
    let input = match typed(kind, &mut payload) {
        Ok(input) => input,
        Err(err @ InputError::WrongEvent { .. }) => {
            return Answer::note(format!("{err}; check the hook's command in settings.json"));
        }
        Err(err @ InputError::Invalid(..)) => {
            return unreadable(kind, err.to_string(), Some(&payload), env);
        }
        Err(err) => return no_payload(err.to_string()),
    };

    // A wired WorktreeCreate hook replaces Claude Code's worktree creation, in every project:
    // these do what Claude Code does (`worktree.rs`), and no rule applies to them.
    match kind {
        _ if !kind.acts_without_rules() => {}
        EventKind::WorktreeCreate => {
            return match worktree::create(&payload) {
                Ok(path) => Answer { plain: Some(path.display().to_string()), ..Answer::default() },
                Err(err) => {
                    Answer { note: Some(err.to_string()), failed: true, ..Answer::default() }
                }
            };
        }
        EventKind::WorktreeRemove => {
            return match worktree::remove(&payload) {
                Ok(()) => Answer::silent(),
                Err(err) => {
                    Answer { note: Some(err.to_string()), failed: true, ..Answer::default() }
                }
            };
        }
        _ => {}
    }
    let Some(installation) = Installation::discover(env, Path::new(&input.common.cwd)) else {
        // No hookpack here: hooks installed for the user must not disturb other projects.
        return Answer::silent();
    };
    // A panic while answering is a failure like any other: a fail-closed guard still denies.
    let mut answer = panic::catch_unwind(AssertUnwindSafe(|| {
        rules::answer(&input, &payload, &installation, env)
    }))
    .unwrap_or_else(|panic| {
        Answer::note(format!("internal error ({})", panic_message(panic.as_ref())))
    });
    if answer.note.is_some() && !env.dry_run {
        failure::handle(&mut answer, failure::Failed::of(&input), &installation, env);
    }
    answer
}

/// The payload, typed and checked. Its `tool_input` (a 50 KB command, a file's content) is
/// read by the rules from the payload itself: the typed input gets an empty one in its place,
/// not a copy (whether it is an object is still checked).
fn typed(kind: EventKind, payload: &mut serde_json::Value) -> Result<HookInput, InputError> {
    let empty = || serde_json::Value::Object(serde_json::Map::new());
    let tool_input = payload.get_mut("tool_input").filter(|input| input.is_object());
    let taken = tool_input.map(|input| std::mem::replace(input, empty()));
    let input = HookInput::from_value(kind, payload);
    if let Some(taken) = taken {
        payload["tool_input"] = taken;
    }
    input
}

/// Stdin that is no JSON object, even read leniently: on `PreToolUse` the fail-closed rules
/// that cover the tool the bytes name (`"tool_name": "…"`, found as text), or every one when
/// they name none, deny it.
fn unreadable_bytes(kind: EventKind, note: String, bytes: &[u8], env: &Env) -> Answer {
    if kind != EventKind::PreToolUse {
        return unreadable(kind, note, None, env);
    }
    let text = String::from_utf8_lossy(bytes);
    let named = |key: &str| named_string(&text, key);
    let mut fields = serde_json::Map::new();
    for key in ["tool_name", "cwd", "session_id"] {
        if let Some(value) = named(key) {
            fields.insert(key.to_owned(), serde_json::Value::String(value));
        }
    }
    if fields.contains_key("tool_name") {
        return unreadable(kind, note, Some(&serde_json::Value::Object(fields)), env);
    }
    unreadable(kind, note, None, env)
}

/// The string value of `"key": "…"` in `text` (a payload that is not JSON), when every such
/// pair in it names the same one without escapes: the most that can be said of what the bytes
/// name (a decoy before or after the real one makes it unknown).
fn named_string(text: &str, key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    let mut named: Option<&str> = None;
    for (at, _) in text.match_indices(&quoted) {
        let rest = text[at + quoted.len()..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else { continue };
        let rest = rest.trim_start().strip_prefix('"')?;
        let value = &rest[..rest.find(['"', '\\'])?];
        if !rest[value.len()..].starts_with('"') || value.len() > 4096 {
            return None;
        }
        if named.is_some_and(|first| first != value) {
            return None;
        }
        named = Some(value);
    }
    named.map(str::to_owned)
}

/// A payload the rules cannot be evaluated on: a failure like a broken artifact, so a tool that
/// a fail-closed rule covers is denied rather than let through unguarded. `payload` is the JSON
/// when it was the event's own but not in a shape hookpack reads (then every event records the
/// failure); without it (stdin that is no JSON object) it names no tool, and only on
/// `PreToolUse` do the rules marked `fail = "closed"` for every tool (`*`) deny it.
fn unreadable(
    kind: EventKind,
    note: String,
    payload: Option<&serde_json::Value>,
    env: &Env,
) -> Answer {
    let mut answer = Answer::note(note);
    if env.dry_run || (payload.is_none() && kind != EventKind::PreToolUse) {
        return answer;
    }
    let cwd = payload.and_then(|p| p.get("cwd")).and_then(serde_json::Value::as_str);
    if let Some(installation) = Installation::discover(env, Path::new(cwd.unwrap_or(""))) {
        let failed = match payload {
            Some(payload) => failure::Failed::of_raw(kind, payload),
            None => failure::Failed { kind, session: "", tool: None, unreadable_payload: true },
        };
        failure::handle(&mut answer, failed, &installation, env);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panic_payload_is_reported_in_one_line() {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let status = Answer::note("internal error (boom\nsecond line)".into()).write(
            EventKind::Stop,
            &mut stdout,
            &mut stderr,
        );
        assert_eq!(status, ExitStatus::Proceed);
        assert!(stdout.is_empty());
        let stderr = String::from_utf8(stderr).unwrap();
        assert_eq!(stderr, "hookpack-stop: internal error (boom second line); answered nothing\n");
    }
}
