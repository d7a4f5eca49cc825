//! Integration tests of the `hookpack` command and of hooks answering from compiled rules.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod cli;
mod doctor;
mod explain;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A project folder under the test target dir, with `files` written into it.
pub(crate) fn project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-cli").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".claude/hookpack")).unwrap();
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Runs `hookpack <args>` in `dir` with a clean environment.
pub(crate) fn hookpack(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookpack"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .output()
        .unwrap()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace(env!("CARGO_TARGET_TMPDIR"), "[TMP]")
}

/// What a hook answers for `payload` in `project`, run in-process as the binaries run it.
pub(crate) fn hook(
    kind: hook_model::EventKind,
    project: &Path,
    payload: &serde_json::Value,
) -> (hook_runtime::ExitStatus, String, String) {
    let env =
        hook_runtime::Env { project_dir: Some(project.to_owned()), ..hook_runtime::Env::default() };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = hook_runtime::run(
        kind,
        &mut payload.to_string().as_bytes(),
        &mut stdout,
        &mut stderr,
        &env,
    );
    (status, text(&stdout), text(&stderr))
}
