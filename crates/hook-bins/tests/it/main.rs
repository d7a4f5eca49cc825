//! Integration tests of the `hookpack-<event>` binaries, run as real subprocesses.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod hostile;
mod session;
mod smoke;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hook_model::EventKind;

fn workspace_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The first example payload of `kind`, from `examples/<event-kebab>/`.
fn first_example(kind: EventKind) -> PathBuf {
    let dir = workspace_root().join("examples").join(kind.kebab());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files.into_iter().next().unwrap_or_else(|| panic!("no example in {}", dir.display()))
}

/// `payload` as Claude Code sends it for `kind` in project `root`: the event's name, and the
/// common fields it lacks filled in (`session` as the session's id).
fn full_payload(
    kind: EventKind,
    root: &Path,
    session: &str,
    payload: &serde_json::Value,
) -> serde_json::Value {
    use serde_json::json;
    let mut payload = payload.clone();
    let fields = payload.as_object_mut().unwrap();
    fields.insert("hook_event_name".into(), json!(kind.as_str()));
    fields.entry("session_id").or_insert(json!(session));
    fields.entry("cwd").or_insert(json!(root));
    fields.entry("permission_mode").or_insert(json!("default"));
    fields.entry("transcript_path").or_insert(json!(root.join("transcript.jsonl")));
    if kind.is_tool_event() {
        fields.entry("tool_use_id").or_insert(json!("toolu_01"));
    }
    payload
}

/// Runs `binary` on `stdin` with a clean environment in which no project uses hookpack.
fn spawn(binary: &str, stdin: Stdio, project: &Path) -> std::process::Output {
    Command::new(binary)
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(stdin)
        .output()
        .unwrap_or_else(|e| panic!("spawning {binary}: {e}"))
}

/// The generated smoke test of each binary: wired to its own event, silent where hookpack is
/// not in use, one stderr line for another event's payload.
pub(crate) fn smoke(binary: &str, kind: EventKind) {
    let name = Path::new(binary).file_stem().unwrap().to_str().unwrap();
    assert_eq!(name, kind.binary_name());
    let no_project = workspace_root().join("crates");

    let example = std::fs::File::open(first_example(kind)).unwrap();
    let output = spawn(binary, example.into(), &no_project);
    assert!(output.stdout.is_empty(), "{name}: {}", String::from_utf8_lossy(&output.stdout));
    if kind.acts_without_rules() {
        // A worktree hook makes worktrees wherever it is wired: the example's folder does not
        // exist here, so it fails, saying why, as a hook that cannot do its job must.
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.starts_with(&format!("{name}: ")), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
    } else {
        assert_eq!(output.status.code(), Some(0), "{name}");
        assert!(output.stderr.is_empty(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
    }

    let other = if kind == EventKind::Stop { EventKind::SessionStart } else { EventKind::Stop };
    let example = std::fs::File::open(first_example(other)).unwrap();
    let output = spawn(binary, example.into(), &no_project);
    assert_eq!(output.status.code(), Some(0), "{name}");
    assert!(output.stdout.is_empty(), "{name}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
    assert!(stderr.starts_with(&format!("{name}: payload is for `{other}`")), "{name}: {stderr}");
}

/// Tidy: the binaries are exactly one per event, so a new event cannot ship without its hook.
#[test]
fn one_binary_per_event() {
    let dir = workspace_root().join("crates/hook-bins/src/bin");
    let found: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path().file_stem().unwrap().to_str().unwrap().to_owned())
        .collect();
    let mut expected: BTreeSet<String> =
        EventKind::ALL.iter().map(|kind| kind.binary_name().to_owned()).collect();
    expected.insert("hookpack-hook".to_owned());
    assert_eq!(found, expected);
}

/// `hookpack-hook`, linked under an event's name (as `cargo xtask install` links it), is that
/// event's hook: every smoke test holds of it too. Run as itself it says how it is meant to be
/// run; every binary answers `--version` alike.
#[test]
fn the_one_binary_answers_as_every_event() {
    let multicall = env!("CARGO_BIN_EXE_hookpack-hook");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("multicall");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for &kind in EventKind::ALL {
        let link = dir.join(kind.binary_name());
        if std::fs::hard_link(multicall, &link).is_err() {
            std::fs::copy(multicall, &link).unwrap();
        }
        smoke(link.to_str().unwrap(), kind);
    }

    let itself = spawn(multicall, Stdio::null(), &workspace_root().join("crates"));
    assert_eq!(itself.status.code(), Some(1), "a non-blocking error, never 2");
    assert!(itself.stdout.is_empty());
    let said = String::from_utf8(itself.stderr).unwrap();
    assert!(said.contains("install it as hookpack-<event>"), "{said}");

    let version = |binary: &str| {
        let out = Command::new(binary).arg("--version").stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{binary}");
        String::from_utf8(out.stdout).unwrap()
    };
    let expected = format!("{}\n", hook_runtime::version());
    assert!(expected.starts_with("hookpack "), "{expected}");
    for binary in [multicall, env!("CARGO_BIN_EXE_hookpack-pre-tool-use")] {
        assert_eq!(version(binary), expected, "{binary}");
    }
    assert_eq!(version(dir.join("hookpack-stop").to_str().unwrap()), expected);
}

/// What a hook does of Rust's start-up itself (`hook_runtime::start`): a reader that has gone
/// makes its writes fail, not the process die of `SIGPIPE`.
#[test]
fn a_hook_survives_a_reader_that_has_gone() {
    // stderr is a pipe whose reader is gone before the hook writes its one line (an empty
    // stdin is no payload).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_hookpack-stop"))
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}: killed by SIGPIPE?");
}

/// A real process given 100 MB on stdin: drained, answered with nothing, one stderr line.
#[test]
fn a_hundred_megabytes_of_stdin_fail_open() {
    use std::io::Write;

    let mut child = Command::new(env!("CARGO_BIN_EXE_hookpack-user-prompt-submit"))
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..100 {
            stdin.write_all(&chunk)?;
        }
        Ok::<_, std::io::Error>(())
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("the hook read all of stdin");
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "hookpack-user-prompt-submit: stdin is 104857600 bytes, over the 67108864-byte limit; \
         answered nothing\n"
    );
}

/// A hook links no shared library beyond the C runtime's: each one costs every hook start its
/// loading. libm crept in twice (the full-text search of `SQLite`, then a float logarithm in memory
/// ranking); this catches it in the debug build the tests use.
#[cfg(target_os = "linux")]
#[test]
fn hooks_do_not_link_libm() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_hookpack-user-prompt-submit")).unwrap();
    let needle = b"libm.so";
    assert!(
        !binary.windows(needle.len()).any(|w| w == needle),
        "a hook links libm: look for f64::ln/exp/powf and the like, or a SQLite extension"
    );
}
