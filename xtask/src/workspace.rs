//! The workspace's layout and the write-or-check discipline of generated files.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Whether a generator writes its files or only checks that they are up to date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Write,
    Check,
}

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_owned()
}

/// Cargo, as the one running xtask.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The example payloads of `kind`, `examples/<event-kebab>/*.json`, sorted by name.
pub(crate) fn examples(kind: hook_model::EventKind) -> anyhow::Result<Vec<PathBuf>> {
    let dir = root().join("examples").join(kind.kebab());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "json"));
    files.sort();
    Ok(files)
}

/// A set of generated files, written or checked as one.
#[derive(Debug)]
pub(crate) struct Generated {
    mode: Mode,
    stale: Vec<PathBuf>,
}

impl Generated {
    pub(crate) fn new(mode: Mode) -> Self {
        Generated { mode, stale: Vec::new() }
    }

    /// Makes `path` (relative to the root) hold `contents`.
    pub(crate) fn file(&mut self, path: &Path, contents: &str) -> anyhow::Result<()> {
        let full = root().join(path);
        let current = std::fs::read_to_string(&full).ok();
        if current.as_deref() == Some(contents) {
            println!("Up-to-date: {}", path.display());
            return Ok(());
        }
        match self.mode {
            Mode::Write => {
                if let Some(dir) = full.parent() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                std::fs::write(&full, contents)
                    .with_context(|| format!("writing {}", full.display()))?;
                println!("Updating: {}", path.display());
            }
            Mode::Check => self.stale.push(path.to_owned()),
        }
        Ok(())
    }

    /// Makes sure `path` (relative to the root) does not exist.
    pub(crate) fn absent(&mut self, path: &Path) -> anyhow::Result<()> {
        let full = root().join(path);
        if !full.exists() {
            return Ok(());
        }
        match self.mode {
            Mode::Write => {
                std::fs::remove_file(&full)
                    .with_context(|| format!("removing {}", full.display()))?;
                println!("Removing: {}", path.display());
            }
            Mode::Check => self.stale.push(path.to_owned()),
        }
        Ok(())
    }

    /// Fails, in check mode, naming every file that is not what the generator would write.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        if self.stale.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = self.stale.iter().map(|p| format!("  {}", p.display())).collect();
        bail!("generated files are stale; run `cargo xtask codegen`:\n{}", list.join("\n"))
    }
}
