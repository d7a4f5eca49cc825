//! The fuzz targets' harnesses: what each target does with the fuzzer's bytes.
//!
//! The libFuzzer binaries in `fuzz/` (a workspace of its own, built by `cargo xtask fuzz`) are
//! one-line wrappers around [`Target::run`]; this crate links no fuzzer, so the replay test
//! (`tests/it/main.rs`) runs every file of `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/`
//! through the very same functions under `cargo test`.
//!
//! A harness panics when an invariant does not hold; that panic is what the fuzzer reports as a
//! crash. Errors the code under test returns (a malformed payload, a pack with errors, a damaged
//! artifact) are fine: they are answers, not crashes.
//!
//! - [`payload`]: every event's payload parser, and the whole runtime where no project exists;
//! - [`pack`]: the pack reader, and the compiler and engine behind a pack that parses;
//! - [`artifact`]: a mutated artifact (the builtin packs', CRC recomputed) loaded and evaluated;
//! - [`memory`]: private-tag stripping, markers, captures and terms;
//! - [`shell`]: the shell reader, and `command` patterns matched against what it reads.

pub mod artifact;
mod fixtures;
pub mod memory;
pub mod pack;
pub mod payload;
pub mod shell;

use std::path::PathBuf;

/// How far an input got: what the replay test checks seeds still reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reached {
    /// Turned away at the door: not JSON, not a pack, not an artifact, no pair to check.
    Rejected,
    /// Read, but stopped on an error: a pack with errors, an engine that refuses the artifact.
    Parsed,
    /// All the way: evaluated (or, for `memory`, the privacy property checked; for `shell`, a
    /// command with a program read and matched).
    Evaluated,
}

/// A fuzz target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// [`payload::run`].
    Payload,
    /// [`pack::run`].
    Pack,
    /// [`artifact::run`].
    Artifact,
    /// [`memory::run`].
    Memory,
    /// [`shell::run`].
    Shell,
}

impl Target {
    /// Every target, in the order `cargo xtask fuzz` runs them.
    pub const ALL: [Target; 5] =
        [Target::Payload, Target::Pack, Target::Artifact, Target::Memory, Target::Shell];

    /// Its name: the `[[bin]]` in `fuzz/Cargo.toml` and the folder of its seeds.
    pub const fn name(self) -> &'static str {
        match self {
            Target::Payload => "payload",
            Target::Pack => "pack",
            Target::Artifact => "artifact",
            Target::Memory => "memory",
            Target::Shell => "shell",
        }
    }

    /// The target called `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Builds what the harness keeps between inputs (the base artifact, the fixed payloads),
    /// so that the first input's time is its own: libFuzzer's timeout then measures inputs.
    pub fn init(self) {
        match self {
            Target::Artifact => artifact::init(),
            Target::Pack => {
                let _ = fixtures::payloads();
            }
            Target::Payload | Target::Memory | Target::Shell => {}
        }
    }

    /// Runs the target's harness on `data`.
    ///
    /// # Panics
    ///
    /// When an invariant does not hold: that is what the fuzzer reports.
    pub fn run(self, data: &[u8]) -> Reached {
        match self {
            Target::Payload => payload::run(data),
            Target::Pack => pack::run(data),
            Target::Artifact => artifact::run(data),
            Target::Memory => memory::run(data),
            Target::Shell => shell::run(data),
        }
    }
}

/// The workspace's root, where `fuzz/`, `rules/` and `examples/` are.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
