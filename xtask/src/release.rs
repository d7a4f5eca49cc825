//! Release builds of the hook binaries, dynamically or statically linked, and `cargo xtask dist`.
//! The hooks and the floor are built with the `hooks` profile (fat LTO, one codegen unit: what
//! ships is what is measured); everything else with `release`.
//!
//! `cargo xtask bench` measures both linkings in one run; static linking starts faster (about
//! 0.89x the dynamic start-up on the 2-core CI machine, see ARCHITECTURE.md), so `dist` ships
//! static binaries where the host allows it.

use std::path::PathBuf;
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
        let to = dest.join(kind.binary_name());
        // Replace, never overwrite in place: a running hook may have the old file mapped.
        let staged = dest.join(format!(".{}.new", kind.binary_name()));
        std::fs::copy(&from, &staged).with_context(|| format!("copying {}", from.display()))?;
        // The `hooks` profile keeps the symbol table for the link order (`link_order`); what
        // ships does without it, where `strip` is to be had.
        let _ = Command::new("strip").arg(&staged).stderr(std::process::Stdio::null()).status();
        std::fs::rename(&staged, &to).with_context(|| format!("installing {}", to.display()))?;
    }
    println!(
        "{} hook binaries ({} linking) in {}",
        EventKind::ALL.len(),
        linking.name,
        dest.display()
    );
    Ok(())
}
