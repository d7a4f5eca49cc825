//! The `artifact` target: a valid artifact mutated by the fuzzer's bytes, then loaded and
//! evaluated as a hook would.
//!
//! The base artifact is the builtin packs plus the compiler's `everything` test pack (every key
//! of the language), with recorded sources, compiled once. An input that starts with the magic
//! (`HOOKPACK`) is a whole artifact; any other input is a list of 8-byte edits of the base:
//!
//! ```text
//! [op, region, offset (u16 LE), value (u32 LE)]
//! ```
//!
//! `region` 0 is the header and section table, 1–9 the sections in `Section::ALL` order; the
//! offset is taken modulo the region's length. `op` (modulo 6): 0 sets a byte, 1 sets the
//! aligned word, 2 adds a small signed delta to it, 3 sets it to a boundary value (0, 1,
//! `u32::MAX`, …), 4 cuts the file there (and fixes the header's length), 5 writes a sequence
//! that is not UTF-8 there (a stray byte, an overlong encoding, an encoded surrogate: what a
//! string of the artifact must never be taken for). The CRC is then
//! recomputed, so edits get past the checksum to the code behind it.
//!
//! Then: `Artifact::parse`, its CRC, the sources section, `Engine::new`, and every fixed
//! payload through `Engine::evaluate` and `respond`. Errors are fine; panics, aborts and hangs
//! are not.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use hook_engine::Engine;
use hook_engine::artifact::format::{HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, Section, header};
use hook_engine::artifact::sources::sources;
use hook_engine::artifact::{AlignedBytes, Artifact, checksum};
use rules_compiler::{
    ConfigSettings, DirStamp, FileStamp, SourceFile, Sources, compile, parse_pack,
};

use crate::{Reached, fixtures, workspace_root};

/// The length of one edit.
pub const EDIT_LEN: usize = 8;

/// The base artifact and its regions (`(start, len)`: the header, then each section).
struct Base {
    bytes: Vec<u8>,
    regions: Vec<(usize, usize)>,
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let bytes = base_artifact();
        let aligned = AlignedBytes::new(&bytes);
        let artifact = Artifact::parse(aligned.as_slice()).expect("the base artifact parses");
        let mut regions = vec![(0, HEADER_LEN + Section::ALL.len() * SECTION_ENTRY_LEN)];
        for kind in Section::ALL {
            let section = artifact.section(kind);
            let start = section.as_ptr() as usize - aligned.as_slice().as_ptr() as usize;
            regions.push((start, section.len()));
        }
        Base { bytes, regions }
    })
}

/// Compiles the base artifact now rather than on the first input.
pub fn init() {
    let _ = base();
}

/// The builtin packs (`rules/*.toml`) and the `everything` test pack, compiled with two
/// recorded source files and a folder, so that every section has content.
///
/// # Panics
///
/// When a pack of the workspace does not compile.
pub fn base_artifact() -> Vec<u8> {
    let root = workspace_root();
    let mut files: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(root.join("rules"))
        .expect("rules/ is readable")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .map(|path| (path, root.join("rules")))
        .collect();
    files.sort();
    let valid = root.join("crates/rules-compiler/tests/it/valid");
    files.push((valid.join("everything.toml"), valid));
    let mut packs = Vec::new();
    for (file, dir) in files {
        let text = std::fs::read_to_string(&file).expect("a pack is readable");
        let (pack, diagnostics) = parse_pack(&Arc::new(SourceFile::new(&file, text)), &dir);
        assert!(!diagnostics.has_errors(), "{}", diagnostics.render());
        packs.push(pack.expect("a pack without errors"));
    }
    let rules: Vec<_> = packs.iter().flat_map(|pack| &pack.rules).collect();
    let sources = Sources {
        files: vec![
            FileStamp {
                path: "/project/.claude/hookpack/packs/team.toml".into(),
                len: Some(1234),
                mtime_ns: 1_700_000_000_000_000_000,
                hash: 0x0123_4567_89ab_cdef,
            },
            FileStamp {
                path: "/project/.claude/hookpack/hookpack.toml".into(),
                len: None,
                mtime_ns: 0,
                hash: 0,
            },
        ],
        dirs: vec![DirStamp {
            path: "/project/.claude/hookpack/packs".into(),
            names_hash: 0xfeed_beef,
        }],
    };
    compile(&rules, &ConfigSettings::default(), &sources).expect("the base packs compile").bytes
}

/// The base artifact with `edits` applied (see the module's documentation).
pub fn mutate(edits: &[u8]) -> Vec<u8> {
    let base = base();
    let mut bytes = base.bytes.clone();
    for edit in edits.chunks_exact(EDIT_LEN) {
        let (start, len) = base.regions[usize::from(edit[1]) % base.regions.len()];
        if len == 0 {
            continue;
        }
        let at = start + usize::from(u16::from_le_bytes([edit[2], edit[3]])) % len;
        let word_at = at & !3;
        let value = u32::from_le_bytes([edit[4], edit[5], edit[6], edit[7]]);
        match edit[0] % 6 {
            0 => set(&mut bytes, at, &[edit[4]]),
            1 => set(&mut bytes, word_at, &value.to_le_bytes()),
            2 => {
                let old = word(&bytes, word_at);
                #[allow(clippy::cast_possible_wrap, reason = "a byte read as a signed delta")]
                let delta = i32::from(edit[4] as i8);
                set(&mut bytes, word_at, &old.wrapping_add_signed(delta).to_le_bytes());
            }
            3 => {
                let specials = [0, 1, 2, 0x7f, 0xff, 0xffff, 0x7fff_ffff, 0x8000_0000, u32::MAX];
                let value = specials[usize::from(edit[4]) % specials.len()];
                set(&mut bytes, word_at, &value.to_le_bytes());
            }
            5 => {
                let ill_formed: [&[u8]; 5] =
                    [b"\xff", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"];
                set(&mut bytes, at, ill_formed[usize::from(edit[4]) % ill_formed.len()]);
            }
            _ => {
                bytes.truncate(at);
                set(&mut bytes, header::LENGTH, &(at as u64).to_le_bytes());
            }
        }
    }
    bytes
}

/// Writes `value` at `at`, as much of it as fits.
fn set(bytes: &mut [u8], at: usize, value: &[u8]) {
    for (i, &byte) in value.iter().enumerate() {
        if let Some(slot) = bytes.get_mut(at + i) {
            *slot = byte;
        }
    }
}

fn word(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at + 4).map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// `bytes` with the header's CRC field made to match.
pub fn with_crc(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= HEADER_LEN {
        let crc = checksum(&bytes);
        set(&mut bytes, header::CRC, &crc.to_le_bytes());
    }
    bytes
}

/// Runs the target on `data`; `Evaluated` when the engine accepted the artifact (its
/// evaluations may still have failed).
///
/// # Panics
///
/// When the artifact's loader or engine panics, or an answer is not one JSON object.
pub fn run(data: &[u8]) -> Reached {
    let bytes = if data.starts_with(&MAGIC) { data.to_vec() } else { mutate(data) };
    let bytes = AlignedBytes::new(&with_crc(bytes));
    let Ok(artifact) = Artifact::parse(bytes.as_slice()) else { return Reached::Rejected };
    artifact.verify().unwrap_or_else(|err| panic!("the CRC was just recomputed: {err}"));
    let _ = artifact.source_fingerprint();
    let _ = artifact.compiler_fingerprint();
    let _ = sources(&artifact);
    let Ok(engine) = Engine::new(artifact) else { return Reached::Parsed };
    fixtures::exercise(&engine);
    Reached::Evaluated
}
