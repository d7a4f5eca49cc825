//! The shell reader is linear, checked on counts (never on time): hostile shapes of 1 MiB stay
//! within the bounds the `shell` harness checks, and what the reader produces grows in
//! proportion to its text.
//!
//! For the times themselves (128 KiB against 1 MiB should be about 8 times):
//! `cargo test --release -p hook-fuzz --test it shell::timings -- --ignored --nocapture`.

use std::time::Instant;

use hook_engine::shell::{Dialect, parse};
use hook_fuzz::shell::{max_commands, max_word_bytes, word_bytes};

const MIB: usize = 1 << 20;

/// Shapes the reader must read in linear time and space: nesting it stops, quotes, heredocs and
/// substitutions left open, long pipelines, one long word.
const HOSTILE: &[&str] = &[
    "$(",
    "(",
    "'",
    "bash -c \"",
    "`",
    "<<A ",
    "a | ",
    "a",
    "${",
    "\"",
    "bash -c '",
    "eval ",
    "find -exec ",
    "\\`",
    "sh <<< ",
    "<(",
    "a;",
    "$'\\x",
    "python3 -c \"os.system('",
    "system(",
    "exec([",
    "echo a | xargs ",
    "printf '%s' a | ",
    "echo $( | sh <<< ",
];

/// Shapes where an inline shell (`eval`, `bash -c`) reads text whose substitutions were read
/// already: each inline shell would double what is inside, up to 2^`MAX_DEPTH` times the text,
/// were the nested readings not held to `REREADS` times the text in all (about 30 times at
/// 1 MiB).
const AMPLIFYING: &[&str] = &[
    "bash -c \"$(",
    "$(bash -c \"",
    "eval $(",
    "eval eval eval $(eval eval eval $(eval eval $(",
    "eval eval eval eval eval eval eval $(",
    "python3 -c \"os.system('$(",
    "echo a | xargs eval $(",
];

/// `unit` repeated to `size` bytes (`unit` is ASCII).
fn repeat(unit: &str, size: usize) -> String {
    let mut text = unit.repeat(size / unit.len() + 1);
    text.truncate(size);
    text
}

/// The bytes of words and the commands `text` reads to.
fn counts(text: &str, dialect: Dialect) -> (usize, usize) {
    let parsed = parse(text, dialect);
    (word_bytes(&parsed), parsed.commands().len())
}

fn within_bounds(unit: &str, dialect: Dialect) -> Result<(), String> {
    let text = repeat(unit, MIB);
    let (words, commands) = counts(&text, dialect);
    if words > max_word_bytes(text.len()) || commands > max_commands(text.len()) {
        return Err(format!(
            "{unit:?} × 1 MiB ({dialect:?}): {words} bytes of words (at most {}), {commands} \
             commands (at most {})",
            max_word_bytes(text.len()),
            max_commands(text.len())
        ));
    }
    Ok(())
}

#[test]
fn hostile_shapes_stay_within_the_linear_bounds() {
    for unit in HOSTILE {
        for dialect in [Dialect::Posix, Dialect::PowerShell] {
            within_bounds(unit, dialect).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn amplifying_shapes_stay_within_the_linear_bounds() {
    let over: Vec<String> =
        AMPLIFYING.iter().filter_map(|unit| within_bounds(unit, Dialect::Posix).err()).collect();
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn what_the_reader_makes_grows_in_proportion_to_its_text() {
    for unit in HOSTILE.iter().chain(AMPLIFYING) {
        let (small, large) = (repeat(unit, MIB / 8), repeat(unit, MIB));
        let (small_words, small_commands) = counts(&small, Dialect::Posix);
        let (large_words, large_commands) = counts(&large, Dialect::Posix);
        // Eight times the text: eight times the output, within 1% (the unit cut at the end is
        // read once per nesting level and inline shell), and some units more. Quadratic would be
        // 64 times.
        let proportional = |small: usize, large: usize| large * 100 <= small * 808 + 1024;
        assert!(
            proportional(small_words, large_words),
            "{unit:?}: {small_words} bytes of words from 128 KiB, {large_words} from 1 MiB"
        );
        assert!(
            proportional(small_commands, large_commands),
            "{unit:?}: {small_commands} commands from 128 KiB, {large_commands} from 1 MiB"
        );
    }
}

/// Prints how long each shape takes at 128 KiB and 1 MiB, and what it reads to.
#[test]
#[ignore = "prints times: run with --release -- --ignored --nocapture"]
#[allow(clippy::print_stderr, clippy::cast_precision_loss)]
fn timings() {
    for unit in HOSTILE.iter().chain(AMPLIFYING) {
        for dialect in [Dialect::Posix, Dialect::PowerShell] {
            let mut parts = Vec::new();
            let mut times = Vec::new();
            for size in [MIB / 8, MIB] {
                let text = repeat(unit, size);
                let started = Instant::now();
                let parsed = parse(&text, dialect);
                let elapsed = started.elapsed();
                times.push(elapsed.as_secs_f64());
                parts.push(format!(
                    "{} KiB {:.1} ms (words {:.1}× the text, {} commands)",
                    size >> 10,
                    elapsed.as_secs_f64() * 1e3,
                    word_bytes(&parsed) as f64 / size as f64,
                    parsed.commands().len()
                ));
            }
            eprintln!(
                "{unit:?} {dialect:?}: {}; ratio {:.1}",
                parts.join("; "),
                times[1] / times[0]
            );
        }
    }
}
