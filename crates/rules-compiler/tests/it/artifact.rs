//! The artifact's integrity: every single changed byte and every truncation is caught before
//! anything in it is used; compiling is deterministic.

use std::path::Path;
use std::sync::Arc;

use hook_engine::artifact::{AlignedBytes, Artifact};
use rules_compiler::{ConfigSettings, SourceFile, Sources, compile, parse_pack};

fn small_artifact() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/valid");
    let text = std::fs::read_to_string(dir.join("everything.toml")).unwrap();
    let pack = parse_pack(&Arc::new(SourceFile::new("everything.toml", text)), &dir).0.unwrap();
    let rules: Vec<_> = pack.rules.iter().collect();
    compile(&rules, &ConfigSettings::default(), &Sources::default()).unwrap().bytes
}

fn check(bytes: &[u8]) -> Result<(), hook_engine::artifact::ArtifactError> {
    let aligned = AlignedBytes::new(bytes);
    Artifact::parse(aligned.as_slice())?.verify()
}

#[test]
fn every_changed_byte_is_detected() {
    let good = small_artifact();
    check(&good).unwrap();
    assert!(good.len() > 1_000, "a small but real artifact: {} bytes", good.len());
    for at in 0..good.len() {
        for change in [0x01u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[at] ^= change;
            assert!(check(&bad).is_err(), "byte {at} ^ {change:#x} went unnoticed");
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let good = small_artifact();
    for len in 0..good.len() {
        assert!(check(&good[..len]).is_err(), "truncated to {len} bytes went unnoticed");
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(check(&longer).is_err(), "a trailing byte went unnoticed");
}

#[test]
fn compiling_is_deterministic() {
    assert_eq!(small_artifact(), small_artifact());
}
