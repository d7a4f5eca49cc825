//! Integration tests of `hook_runtime::run`, in-process.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod examples;
mod malformed;

use std::path::{Path, PathBuf};

use hook_model::EventKind;
use hook_runtime::{Env, ExitStatus};

/// What one run produced.
#[derive(Debug)]
struct Outcome {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// The body of a snapshot, after uv and ruff.
    /// The invariants of every run: exit 0 (a worktree hook may fail at its own job: exit 1);
    /// stdout empty or one JSON object answering `kind`; stderr empty or one line.
    fn assert_well_formed(&self, kind: EventKind) {
        if kind.acts_without_rules() && self.status == ExitStatus::Failed {
            assert!(self.stdout.is_empty(), "{}", self.stdout);
            assert_eq!(self.stderr.lines().count(), 1, "{:?}", self.stderr);
            return;
        }
        assert_eq!(self.status, ExitStatus::Proceed);
        if !self.stdout.is_empty() {
            let json: serde_json::Value = serde_json::from_str(&self.stdout)
                .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout));
            assert!(json.is_object(), "stdout is not an object: {}", self.stdout);
            if let Some(specific) = json.get("hookSpecificOutput") {
                assert_eq!(specific["hookEventName"], kind.as_str());
            }
        }
        if !self.stderr.is_empty() {
            assert!(self.stderr.ends_with('\n'), "{:?}", self.stderr);
            assert_eq!(self.stderr.lines().count(), 1, "{:?}", self.stderr);
            assert!(self.stderr.starts_with(kind.binary_name()), "{:?}", self.stderr);
            assert!(!self.stderr.contains("panicked"), "{:?}", self.stderr);
        }
    }
}

fn run(kind: EventKind, stdin: &mut dyn std::io::Read, env: &Env) -> Outcome {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let status = hook_runtime::run(kind, stdin, &mut stdout, &mut stderr, env);
    Outcome {
        status,
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

fn workspace_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A folder under the test target dir, created empty.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-runtime").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An environment in which no project and no user uses hookpack.
fn env_without_hookpack() -> Env {
    Env {
        project_dir: Some(workspace_root().join("crates")),
        artifact: None,
        xdg_config_home: Some(workspace_root().join("crates")),
        home: None,
        window_tokens: None,
        dry_run: false,
    }
}
