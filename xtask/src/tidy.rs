//! `cargo xtask tidy`: the workspace's house rules that no compiler checks.
//!
//! - every `.rs` file opens with a `//!` comment saying what it is for;
//! - `crates/README.md` has one line for every crate, and none for a crate that is gone.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::workspace::root;

pub(crate) fn run() -> anyhow::Result<()> {
    let mut problems = Vec::new();

    let mut files = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root().join(dir), &mut files)?;
    }
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
        if !text.starts_with("//!") {
            let relative = file.strip_prefix(root()).unwrap_or(file);
            problems.push(format!("{}: does not start with a `//!` comment", relative.display()));
        }
    }

    let readme = std::fs::read_to_string(root().join("crates/README.md"))?;
    let listed: Vec<&str> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("- `")?.split_once('`').map(|(name, _)| name))
        .collect();
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root().join("crates"))? {
        let entry = entry?;
        if entry.path().join("Cargo.toml").is_file() {
            crates.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    for name in &crates {
        if !listed.contains(&name.as_str()) {
            problems.push(format!("crates/README.md: no line for `{name}`"));
        }
    }
    for name in listed {
        if !crates.iter().any(|c| c == name) {
            problems.push(format!("crates/README.md: `{name}` is not a crate"));
        }
    }

    if problems.is_empty() {
        return Ok(());
    }
    bail!("tidy:\n  {}", problems.join("\n  "))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name == "target" || name == "snapshots") {
                continue;
            }
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workspace_is_tidy() {
        if let Err(err) = super::run() {
            panic!("{err:#}");
        }
    }
}
