//! The user path of README.md, run as written: the shell blocks of its sections `## Install`
//! (in the clone) and `## Set up a project` (in the project), in a temporary home, so that what
//! the README tells a new user is what works. A scenario with `readme = true` sets its project
//! up this way, and then Claude Code runs in it as the user would.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};

use crate::workspace::root;

/// Where a block of the README runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The clone of hookpack (`cargo xtask install`).
    Clone,
    /// The user's project.
    Project,
    /// A fenced block in the user path that is not `sh` (its fence given): an error, since it
    /// would not be run.
    Unrunnable,
}

/// The longest a block may take (`cargo xtask install` builds the release binaries).
const BLOCK_LIMIT: Duration = Duration::from_mins(40);

/// The sections of the user path, in order, and where their blocks run.
const SECTIONS: [(&str, Place); 2] =
    [("## Install", Place::Clone), ("## Set up a project", Place::Project)];

/// The `sh` blocks of the user path's sections of `readme`, in order.
pub(crate) fn user_path(readme: &str) -> Vec<(Place, String)> {
    let mut blocks = Vec::new();
    let mut place = None;
    let mut block: Option<String> = None;
    let mut skipping = false;
    for line in readme.lines() {
        if let Some(text) = &mut block {
            if line.trim_start().starts_with("```") {
                if let Some(place) = place.filter(|_| !skipping) {
                    blocks.push((place, std::mem::take(text)));
                }
                block = None;
                skipping = false;
            } else {
                text.push_str(line);
                text.push('\n');
            }
            continue;
        }
        if line.starts_with("## ") {
            place = SECTIONS.iter().find(|(title, _)| line.trim_end() == *title).map(|(_, p)| *p);
        } else if line.trim_start() == "```sh" {
            block = Some(String::new());
        } else if place.is_some() && line.trim_start().starts_with("```") {
            // Another fence in the user path: a block the runner would skip.
            let fence = line.trim();
            if matches!(fence, "```bash" | "```shell" | "```console" | "```") {
                blocks.push((Place::Unrunnable, fence.to_owned()));
            }
            block = Some(String::new());
            skipping = true;
        }
    }
    blocks
}

/// Runs the user path of the workspace's README.md: `home` is the user's home (what `cargo
/// xtask install` installs into: `~/.local`), `user` their config folder, `project` the
/// project. Each block runs in `bash -euo pipefail`, with `~/.local/bin` first on `PATH`, as the
/// README tells; what each printed is kept in `log_dir`.
pub(crate) fn run(project: &Path, home: &Path, user: &Path, log_dir: &Path) -> anyhow::Result<()> {
    let readme = std::fs::read_to_string(root().join("README.md")).context("reading README.md")?;
    let blocks = user_path(&readme);
    if let Some((_, fence)) = blocks.iter().find(|(p, _)| *p == Place::Unrunnable) {
        bail!("README.md's user path has a `{fence}` block: write commands in ```sh blocks");
    }
    ensure!(
        blocks.iter().any(|(p, _)| *p == Place::Clone)
            && blocks.iter().any(|(p, _)| *p == Place::Project),
        "README.md has no sh block under `## Install` or `## Set up a project`"
    );
    let real_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let keep = |name: &str, default: PathBuf| std::env::var_os(name).map_or(default, PathBuf::from);
    // The toolchain and the crates already downloaded stay where they are.
    let cargo_home = keep("CARGO_HOME", real_home.join(".cargo"));
    let rustup_home = keep("RUSTUP_HOME", real_home.join(".rustup"));
    // What a new user has: the toolchain and the system, and `~/.local/bin` (the README tells
    // them to add it); nothing else of this machine's, no hookpack installed elsewhere.
    let path = std::env::join_paths([
        home.join(".local/bin"),
        cargo_home.join("bin"),
        PathBuf::from("/usr/local/bin"),
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
    ])?;
    std::fs::create_dir_all(log_dir)?;
    for (n, (place, block)) in blocks.iter().enumerate() {
        let dir = match place {
            Place::Clone => root(),
            Place::Project | Place::Unrunnable => project.to_path_buf(),
        };
        let mut command = Command::new("bash");
        command
            .args(["-euo", "pipefail", "-c", block])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", user)
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .env("CARGO_TERM_COLOR", "never");
        if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
            command.env("CARGO_TARGET_DIR", target);
        }
        command.process_group(0).stdin(std::process::Stdio::null());
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let output = super::run_limited(command, BLOCK_LIMIT)
            .with_context(|| format!("README.md's block {n}"))?;
        let said = format!(
            "$ {}\n{}{}",
            block.trim_end().replace('\n', "\n$ "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::write(log_dir.join(format!("readme-{n}.log")), &said)?;
        if !output.status.success() {
            bail!("README.md's block {n} ({place:?}) failed ({}):\n{said}", output.status);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_path_is_the_sh_blocks_of_its_sections() {
        let readme = "# x\n## Quick start\n```sh\ncargo xtask demo\n```\n## Install\n\ntext\n\
                      ```sh\ncargo xtask install\n```\n## Set up a project\n```sh\nhookpack init\n\
                      hookpack compile\n```\n```json\n{}\n```\n```sh\nhookpack doctor\n```\n\
                      ## Rule packs\n```sh\nhookpack lint\n```\n";
        assert_eq!(
            user_path(readme),
            [
                (Place::Clone, "cargo xtask install\n".to_owned()),
                (Place::Project, "hookpack init\nhookpack compile\n".to_owned()),
                (Place::Project, "hookpack doctor\n".to_owned()),
            ]
        );
        let bash = "## Install\n```bash\ncargo xtask install\n```\n";
        assert_eq!(user_path(bash), [(Place::Unrunnable, "```bash".to_owned())]);
        let ours = std::fs::read_to_string(root().join("README.md")).unwrap();
        let path = user_path(&ours);
        assert!(path.iter().all(|(p, _)| *p != Place::Unrunnable), "{path:?}");
        let all: String = path.iter().map(|(_, b)| b.as_str()).collect();
        for step in [
            "cargo xtask install",
            "hookpack init",
            "hookpack compile",
            "hookpack install",
            "hookpack doctor",
            "hookpack explain",
        ] {
            assert!(all.contains(step), "README.md's user path lacks `{step}`:\n{all}");
        }
    }
}
