//! The `pack` target: the fuzzer's bytes as a pack file.
//!
//! The pack is read and checked (`rules_compiler::parse_pack`) and its diagnostics rendered.
//! When it has no error, its `[[test]]` cases run, its rules are compiled into an artifact, and
//! that artifact must load (`Artifact::parse`, its CRC, `Engine::new`) and answer the fixed
//! payloads: what the compiler writes, the hooks must read.

use std::path::PathBuf;
use std::sync::Arc;

use hook_engine::Engine;
use hook_engine::artifact::{AlignedBytes, Artifact, sources::sources};
use rules_compiler::{
    ConfigSettings, SourceFile, Sources, compile, fail_closed_list, parse_pack, run_tests,
};

use crate::{Reached, fixtures, workspace_root};

/// The folder `context_file` paths are relative to: the compiler's valid test packs, so that
/// the `everything` seed finds its `refresh.md`.
fn pack_dir() -> PathBuf {
    workspace_root().join("crates/rules-compiler/tests/it/valid")
}

/// Runs the target on `data`; `Evaluated` when the pack compiled and its artifact answered.
///
/// # Panics
///
/// When the compiler panics, writes an artifact the hooks cannot load, or an answer is not one
/// JSON object.
pub fn run(data: &[u8]) -> Reached {
    let text = String::from_utf8_lossy(data).into_owned();
    let source = Arc::new(SourceFile::new("fuzz.toml", text));
    let (pack, diagnostics) = parse_pack(&source, &pack_dir());
    let _ = diagnostics.render();
    let Some(pack) = pack else { return Reached::Rejected };
    if diagnostics.has_errors() {
        return Reached::Parsed;
    }
    // A failing pack test is an answer; an error means the pack could not be compiled.
    let _ = run_tests(&pack);
    let rules: Vec<_> = pack.rules.iter().collect();
    let _ = fail_closed_list(&rules);
    // The parser has checked every glob and regex: compiling can fail only on an automaton
    // over the size limit.
    let Ok(compiled) = compile(&rules, &ConfigSettings::default(), &Sources::default()) else {
        return Reached::Parsed;
    };
    let bytes = AlignedBytes::new(&compiled.bytes);
    let artifact = Artifact::parse(bytes.as_slice())
        .unwrap_or_else(|err| panic!("a compiled artifact does not parse: {err}"));
    artifact.verify().unwrap_or_else(|err| panic!("a compiled artifact fails its CRC: {err}"));
    sources(&artifact).unwrap_or_else(|err| panic!("a compiled artifact's sources: {err}"));
    let engine =
        Engine::new(artifact).unwrap_or_else(|err| panic!("a compiled artifact's engine: {err}"));
    engine.memory_settings().unwrap_or_else(|err| panic!("a compiled artifact's settings: {err}"));
    fixtures::exercise(&engine);
    Reached::Evaluated
}
