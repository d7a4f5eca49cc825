//! Integration tests of the `hookpack` command and of hooks answering from compiled rules.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod answers;
mod cli;
mod doctor;
mod explain;
mod import;
mod install;
mod plugin;
mod share;

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

/// Runs `hookpack <args>` in `dir` with a clean environment but for `env`.
pub(crate) fn hookpack_with(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hookpack"));
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"));
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The folder of the project `dir`'s hook binaries ([`fake_bin`]): outside the project and the
/// repository the tests run in, as installed hooks are (doctor runs no repository's file).
pub(crate) fn bin_dir(dir: &Path) -> PathBuf {
    bins().join(dir.file_name().unwrap())
}

/// Where the [`bin_dir`]s are: a folder in the system's temporary one, named after this
/// checkout's target folder (checkouts tested side by side keep apart).
fn bins() -> PathBuf {
    let target = env!("CARGO_TARGET_TMPDIR");
    let hash = target.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    std::env::temp_dir().join(format!("hookpack-cli-bin-{hash:016x}"))
}

/// [`bin_dir`] with a `hookpack` and a `hookpack-<event>` for every event, scripts that say
/// the version of this hookpack (what `hookpack install --hooks` and `doctor` look for).
pub(crate) fn fake_bin(dir: &Path) -> PathBuf {
    fake_bin_at(&bin_dir(dir))
}

/// [`fake_bin`] in folder `bin`.
pub(crate) fn fake_bin_at(bin: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = bin.to_path_buf();
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{}'; fi\n",
        hook_runtime::version()
    );
    let names = hook_model::EventKind::ALL.iter().map(|k| k.binary_name()).chain(["hookpack"]);
    for name in names {
        let path = bin.join(name);
        std::fs::write(&path, &script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .replace(bins().to_str().unwrap(), "[TMP]/hookpack-cli-bin")
        .replace(env!("CARGO_TARGET_TMPDIR"), "[TMP]")
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

/// Every snapshot is one a test still makes: its name (after `doctor@` or `explain@`, with `__`
/// for `/` where it comes from an example's path) is written in a test (what `cargo insta test
/// --unreferenced reject` checks, without the tool).
#[test]
fn no_orphan_snapshots() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut sources = String::new();
    for entry in std::fs::read_dir(&here).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            sources.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    // An example's answer is made for every example there is (`answers.rs`).
    let root = here.join("../../../..");
    let answers: Vec<String> = answers::examples(&root)
        .iter()
        .map(|(kind, file)| format!("{}__{}", kind.kebab(), file.trim_end_matches(".json")))
        .collect();
    for entry in std::fs::read_dir(here.join("snapshots")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some((_, named)) = name.strip_suffix(".snap").and_then(|n| n.split_once('@')) else {
            panic!("unexpected file {name}");
        };
        if name.starts_with("answer@") {
            assert!(answers.iter().any(|a| a == named), "{name}: no example makes it");
            continue;
        }
        let written = [named.to_owned(), named.replace("__", "/")];
        assert!(
            written
                .iter()
                .any(|w| ["\"", "@"].iter().any(|q| sources.contains(&format!("{q}{w}")))),
            "{name}: no test makes it"
        );
    }
}
