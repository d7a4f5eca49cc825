//! Lays the functions a hook runs side by side in its binary, and links it at a fixed address.
//!
//! A hook's start-up is mostly the kernel's: each first touch of a page of code is a fault,
//! and the kernel maps 16 pages around it. The few hundred functions a hook runs are a tenth of
//! its code, but the linker scatters them over the whole of it; listed in `link-order.txt`,
//! they come first, in a few pages (`cargo xtask link-order` writes the list from the shipped
//! and the dynamic binaries; `cargo xtask bench` says how much of it the binaries it measures
//! hold). A name
//! the build does not define is passed over, so a stale list costs speed, never the build.
//!
//! `hook-floor`, the benchmarks' baseline, is built with this script and the same list: the
//! hooks are measured against a floor laid out the same way, so the layout is not what their
//! ratio to it shows.
//!
//! Only where the linker is known to read such a list: `rust-lld`, Rust's default linker for
//! `x86_64-unknown-linux-gnu`, unless a linker of one's own is configured. `HOOKPACK_LINK_ORDER=off`
//! turns the list off (not the fixed address).
//!
//! The fixed address (`-no-pie`, as the shipped static hooks have) gives up the randomised
//! address of the hook's own code in `cargo build`s, for the loader's patching of 2,300
//! pointers at every start; the libraries it loads are still placed at random.

#![allow(clippy::print_stdout, reason = "cargo reads a build script's instructions on its stdout")]

use std::env;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=../hook-bins/link-order.txt");
    println!("cargo::rerun-if-changed=../hook-bins/build.rs");
    println!("cargo::rerun-if-env-changed=HOOKPACK_LINK_ORDER");
    let wanted = !env::var("HOOKPACK_LINK_ORDER").is_ok_and(|value| value == "off");
    let target = env::var("TARGET").unwrap_or_default();
    // A linker of one's own (`linker = …`, `-C linker=…`, `-fuse-ld=…`) may not take the list.
    let own_linker = env::var_os("RUSTC_LINKER").is_some()
        || env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|flags| {
            flags.split('\x1f').any(|flag| flag.contains("fuse-ld") || flag.contains("linker"))
        });
    if target != "x86_64-unknown-linux-gnu" || own_linker {
        return;
    }
    // Linked at a fixed address, as the shipped (static) hooks are: a position-independent
    // executable has the loader patch every pointer in its tables at each start (2,300 of
    // them, the SQLite's function tables included), and each page it patches is one more
    // page fault and copy, for code a hook mostly never runs.
    println!("cargo::rustc-link-arg-bins=-no-pie");
    if !wanted {
        return;
    }
    let Some(dir) = env::var_os("CARGO_MANIFEST_DIR") else { return };
    // `crates/hook-bins/link-order.txt`, from either package.
    let list = Path::new(&dir).join("../hook-bins/link-order.txt");
    if !list.is_file() {
        return;
    }
    // One argument each (`-Xlinker`), so that no comma in the path splits it.
    for arg in [
        "-Xlinker".to_owned(),
        format!("--symbol-ordering-file={}", list.display()),
        "-Xlinker".to_owned(),
        "--no-warn-symbol-ordering".to_owned(),
    ] {
        println!("cargo::rustc-link-arg-bins={arg}");
    }
}
