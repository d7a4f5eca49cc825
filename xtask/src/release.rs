//! Release builds of the hook binaries, dynamically or statically linked, and `cargo xtask dist`.
//! The hooks and the floor are built with the `hooks` profile (fat LTO, one codegen unit: what
//! ships is what is measured); everything else with `release`.
//!
//! `cargo xtask bench` measures both linkings in one run; static linking starts faster (about
//! 0.89x the dynamic start-up on the 2-core CI machine, see ARCHITECTURE.md), so `dist` ships
//! static binaries where the host allows it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, ensure};
use hook_model::EventKind;

use crate::workspace::{cargo, root};

/// One way of building the binaries, and where it puts them.
#[derive(Debug)]
pub(crate) struct Linking {
    pub(crate) name: &'static str,
    pub(crate) bin_dir: PathBuf,
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

fn package_args(packages: &[&str]) -> Vec<String> {
    packages.iter().flat_map(|p| ["--package".to_owned(), (*p).to_owned()]).collect()
}

/// The profile the hook binaries ship with (`[profile.hooks]` in Cargo.toml: release with fat
/// LTO and one codegen unit), or `release` for anything else.
pub(crate) fn profile(packages: &[&str]) -> &'static str {
    if packages.iter().all(|p| matches!(*p, "hook-bins" | "hook-floor")) {
        "hooks"
    } else {
        "release"
    }
}

pub(crate) fn build_dynamic(packages: &[&str]) -> anyhow::Result<Linking> {
    let profile = profile(packages);
    println!("building {}: {profile} profile, dynamic linking", packages.join(", "));
    let status = cargo()
        .args(["build", "--profile", profile, "--quiet"])
        .args(package_args(packages))
        .status()?;
    ensure!(status.success(), "cargo build failed");
    Ok(Linking { name: "dynamic", bin_dir: target_dir().join(profile) })
}

/// Static linking needs an explicit `--target`: with it, the flags reach only the target's
/// crates, not the proc macros, which cannot link statically against glibc.
pub(crate) fn build_static(packages: &[&str]) -> anyhow::Result<Option<Linking>> {
    let host = host_triple()?;
    if !host.ends_with("-linux-gnu") {
        return Ok(None);
    }
    let profile = profile(packages);
    println!("building {}: {profile} profile, static linking (+crt-static)", packages.join(", "));
    let status = cargo()
        .args(["build", "--profile", profile, "--quiet", "--target", &host])
        .args(package_args(packages))
        .env("RUSTFLAGS", "-C target-feature=+crt-static -C relocation-model=static")
        .status()?;
    ensure!(status.success(), "cargo build --target {host} failed");
    Ok(Some(Linking { name: "static", bin_dir: target_dir().join(&host).join(profile) }))
}

pub(crate) fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().context("running rustc -vV")?;
    let text = String::from_utf8(output.stdout)?;
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV printed no host")
}

/// `cargo xtask dist`: the hook binaries, built the faster way, in `target/dist/bin/`.
/// They are built on their own, never with the compiler (see `bench`).
pub(crate) fn dist() -> anyhow::Result<()> {
    let packages = ["hook-bins"];
    let linking = match build_static(&packages)? {
        Some(linking) => linking,
        None => build_dynamic(&packages)?,
    };
    let dest = target_dir().join("dist/bin");
    std::fs::create_dir_all(&dest).with_context(|| format!("creating {}", dest.display()))?;
    for &kind in EventKind::ALL {
        let from = linking.bin_dir.join(kind.binary_name());
        // Replaced, never overwritten in place: a running hook may have the old file mapped.
        replace(&dest.join(kind.binary_name()), |staged| {
            std::fs::copy(&from, staged).with_context(|| format!("copying {}", from.display()))?;
            // The `hooks` profile keeps the symbol table for the link order (`link_order`);
            // what ships does without it, where `strip` is to be had.
            let _ = Command::new("strip").arg(staged).stderr(std::process::Stdio::null()).status();
            Ok(())
        })?;
    }
    println!(
        "{} hook binaries ({} linking) in {}",
        EventKind::ALL.len(),
        linking.name,
        dest.display()
    );
    Ok(())
}

/// Where `cargo xtask install` puts hookpack unless told (`--root`): `~/.local`, whose `bin` is
/// on most users' `PATH`.
fn default_root() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".local"))
}

const INSTALL_USAGE: &str = "usage: cargo xtask install [--root DIR]   (default: ~/.local)";

/// `cargo xtask install [--root DIR]`: builds the hooks as they ship (one binary for every
/// event, `hookpack-hook`, statically linked where the host allows) and the `hookpack` command,
/// and installs them under `DIR` ([`install_into`]).
pub(crate) fn install(args: &[&str]) -> anyhow::Result<()> {
    let root = match args {
        [] => default_root()?,
        ["--root", dir] => PathBuf::from(dir),
        _ => anyhow::bail!("{INSTALL_USAGE}"),
    };
    let root = std::path::absolute(&root)?;
    let hooks = build_multicall()?;
    let cli = build_cli()?;
    let installed = install_into(&root, &hooks, &cli)?;
    println!(
        "installed in {}: hookpack, hookpack-hook and {} hook names linked to it, the schemas \
         in {}; {}.{} MB in all",
        root.display(),
        EventKind::ALL.len(),
        root.join(SCHEMAS_DEST).display(),
        installed / 1_000_000,
        installed / 100_000 % 10
    );
    let bin = root.join("bin");
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir == bin));
    if !on_path {
        println!("{} is not on PATH: add it, or name the hooks by their full paths", bin.display());
    }
    println!("next: `hookpack init` in a project (README: \"Set up a project\")");
    Ok(())
}

/// The one binary for every event, built as the hooks ship (`hooks` profile, static where the
/// host allows).
fn build_multicall() -> anyhow::Result<PathBuf> {
    let bin = crate::codegen::MULTICALL;
    let host = host_triple()?;
    let mut build = cargo();
    build.args(["build", "--profile", "hooks", "--quiet", "--package", "hook-bins", "--bin", bin]);
    let dir = if host.ends_with("-linux-gnu") {
        build
            .args(["--target", &host])
            .env("RUSTFLAGS", "-C target-feature=+crt-static -C relocation-model=static");
        target_dir().join(&host).join("hooks")
    } else {
        target_dir().join("hooks")
    };
    println!("building {bin}: hooks profile");
    ensure!(build.status()?.success(), "cargo build --bin {bin} failed");
    Ok(dir.join(bin))
}

/// The `hookpack` command as installed: the `cli` profile (fat LTO, optimized for size).
fn build_cli() -> anyhow::Result<PathBuf> {
    println!("building hookpack: cli profile");
    let status =
        cargo().args(["build", "--profile", "cli", "--quiet", "--package", "hookpack"]).status()?;
    ensure!(status.success(), "cargo build --package hookpack failed");
    Ok(target_dir().join("cli").join("hookpack"))
}

/// Where the schemas go under the root.
const SCHEMAS_DEST: &str = "share/hookpack/schemas";

/// Installs `cli` as `<root>/bin/hookpack`, `hooks` as `<root>/bin/hookpack-hook` and, hard
/// linked to it, `<root>/bin/hookpack-<event>` for every event, and the pack and config schemas
/// in `<root>/share/hookpack/schemas/`. Every file is replaced by renaming, never written in
/// place: a hook running from the old one goes on undisturbed. Returns the bytes installed
/// (each file once, however many names it has).
pub(crate) fn install_into(root: &Path, hooks: &Path, cli: &Path) -> anyhow::Result<u64> {
    let bin = root.join("bin");
    let schemas = root.join(SCHEMAS_DEST);
    for dir in [&bin, &schemas] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let multicall = bin.join(crate::codegen::MULTICALL);
    let mut bytes = 0;
    let copied = [
        (cli.to_path_buf(), bin.join("hookpack"), true),
        (hooks.to_path_buf(), multicall.clone(), true),
        (root_schemas().join("config.schema.json"), schemas.join("config.schema.json"), false),
        (
            root_schemas().join("rule-pack.schema.json"),
            schemas.join("rule-pack.schema.json"),
            false,
        ),
    ];
    for (from, to, strip) in copied {
        replace(&to, |staged| {
            std::fs::copy(&from, staged).with_context(|| format!("copying {}", from.display()))?;
            if strip {
                let _ =
                    Command::new("strip").arg(staged).stderr(std::process::Stdio::null()).status();
            }
            Ok(())
        })?;
        bytes += std::fs::metadata(&to)?.len();
    }
    for &kind in EventKind::ALL {
        // A hard link where the file system has them, else a symbolic one: the hook goes by the
        // name it is run by either way.
        replace(&bin.join(kind.binary_name()), |staged| {
            std::fs::hard_link(&multicall, staged)
                .or_else(|_| std::os::unix::fs::symlink(crate::codegen::MULTICALL, staged))
                .with_context(|| format!("linking {}", staged.display()))
        })?;
    }
    Ok(bytes)
}

/// Makes `to` anew: `make` writes a staged file beside it, which is renamed over it (a running
/// program keeps the old one); the staged file is removed when anything fails.
pub(crate) fn replace(
    to: &Path,
    make: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let staged = staged_name(to);
    let _ = std::fs::remove_file(&staged);
    let done = make(&staged).and_then(|()| {
        std::fs::rename(&staged, to).with_context(|| format!("installing {}", to.display()))
    });
    if done.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    done
}

fn staged_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.new"))
}

fn root_schemas() -> PathBuf {
    root().join("schemas")
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    /// Every event's name is a hard link to the one hook binary; installing again replaces
    /// the files (new ones, same bytes) and keeps every name.
    #[test]
    fn install_links_every_event_to_one_binary() {
        let dir = std::env::temp_dir().join(format!("hookpack-install-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (hooks, cli) = (dir.join("built-hook"), dir.join("built-cli"));
        std::fs::write(&hooks, b"the hooks").unwrap();
        std::fs::write(&cli, b"the command").unwrap();
        let root = dir.join("root");
        for round in 0..2 {
            let bytes = install_into(&root, &hooks, &cli).unwrap();
            let bin = root.join("bin");
            let multicall = std::fs::metadata(bin.join("hookpack-hook")).unwrap();
            assert_eq!(multicall.nlink(), 1 + EventKind::ALL.len() as u64, "round {round}");
            for &kind in EventKind::ALL {
                let hook = std::fs::metadata(bin.join(kind.binary_name())).unwrap();
                assert_eq!(hook.ino(), multicall.ino(), "{kind}");
            }
            assert_eq!(std::fs::read(bin.join("hookpack")).unwrap(), b"the command");
            let schema = root.join(SCHEMAS_DEST).join("rule-pack.schema.json");
            assert_eq!(
                std::fs::read(&schema).unwrap(),
                std::fs::read(root_schemas().join("rule-pack.schema.json")).unwrap()
            );
            let schemas: u64 = ["config.schema.json", "rule-pack.schema.json"]
                .iter()
                .map(|n| std::fs::metadata(root_schemas().join(n)).unwrap().len())
                .sum();
            assert_eq!(bytes, 9 + 11 + schemas, "each file counted once");
        }
        let left: Vec<_> = std::fs::read_dir(root.join("bin"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
