//! The `shell` target: the fuzzer's bytes as a command line for `hook_engine::shell`, and the
//! commands it reads matched by a `command` pattern (`hook_engine::command`).
//!
//! The first [`HEADER`] bytes choose: the dialect (byte 0, bit 0: `PowerShell` when set;
//! bit 1: the text is also read as an owned one, and the readings compared), then
//! a `command` pattern from a small fixed vocabulary (byte 1: its `program`; byte 2: its
//! `subcommand`; byte 3: which `flags`, a bit each; byte 4: which `args` globs, a bit each;
//! byte 5: which `writes` globs, bits 0–3, and which `piped_from` globs, bits 4–7; byte 0, bits
//! 2–7: which `targets` classes, a bit each). The rest,
//! read as UTF-8 (lossily), is the command line. A seed is a command line behind its six header
//! bytes (the first one `0`: POSIX; `1`: `PowerShell`).
//!
//! The properties, for any input:
//!
//! - `parse` returns, in either dialect; every command is less than `MAX_DEPTH` deep;
//! - it reads as it does without its shortcuts (`parse_the_long_way`), and (byte 0, bit 1) a
//!   text it owns as one it borrows;
//! - the reader is linear: the bytes of all words (programs, arguments, standard inputs,
//!   wrappers, files written to) are at most [`max_word_bytes`] of the text, and the commands
//!   at most [`max_commands`];
//! - a command displays, and its display read back (POSIX) runs its program again when that is
//!   a plain name (ASCII letters, digits, `-`, `_`, `.`): checked for the first commands of an
//!   input;
//! - matching a pattern returns, charges the same work and answers the same twice, and stops
//!   with the charge's error when the work is over budget;
//! - the text read as inline code (`hook_engine::code::calls`) gives paths that are placed
//!   (`hook_engine::paths`) without a panic, and read as SQL (`hook_engine::sql`) it returns;
//!   its words read as find's arguments (`hook_engine::find`) give a start point;
//! - what a command truncates (`Command::overwrites`) is among what it writes;
//! - `glob` agrees with a plain dynamic-programming matcher; `*` matches anything; a text
//!   matches itself with its `*`, `?` and `\` escaped (`\*`, `\?`, `\\`), and as it is when it has
//!   none of them.

use std::convert::Infallible;

use hook_engine::command::{Pattern, glob, problem};
use hook_engine::paths::Places;
use hook_engine::shell::{Command, Dialect, MAX_DEPTH, Parsed, parse, parse_the_long_way};

use crate::Reached;

/// The bytes before the command line: the dialect and the pattern.
pub const HEADER: usize = 6;

/// Program name globs, one list chosen by byte 1.
const PROGRAMS: &[&[&str]] = &[
    &[],
    &["rm"],
    &["git"],
    &["*"],
    &["python*|node"],
    &["r?"],
    &["kubectl", "oc"],
    &["curl"],
    &["sh*|bash"],
    &["psql|mysql"],
    &["remove-item|ri"],
    &["find"],
    &["cargo|rustup"],
    &["curl.exe|git"],
];

/// Subcommands, one chosen by byte 2 (the odd ones are what lint turns away: matching must not
/// mind).
const SUBCOMMANDS: &[&[&str]] = &[
    &[],
    &["push"],
    &["stash", "drop|clear"],
    &["delete", "ns|namespace"],
    &["reset"],
    &["-c"],
    &["*", ""],
    &["|"],
    &["iam", "delete-*"],
    &["publish"],
];

/// Flags, a bit each of byte 3.
const FLAGS: [&str; 8] = [
    "-r|-R|--recursive",
    "--force|-f",
    "!--force-with-lease",
    "-X=DELETE|--request=DELETE",
    "-D",
    "!-i",
    "--hard|-x=*",
    "-|--|-=|=|",
];

/// Operand globs, a bit each of byte 4.
const ARGS: [&str; 8] =
    ["/", "/*", "C:\\Windows\\*", "", "/etc*", "*delete from*", "!*where*", "!"];

/// Globs over the files written to, a bit each of byte 5's low half.
const WRITES: [&str; 4] = ["/etc/*", "~/.ssh/*", "*.log", "\\*"];

/// Globs over the program piping into the command, a bit each of byte 5's high half.
const PIPED_FROM: [&str; 4] = ["curl", "wget", "*", "c?t"];

/// Classes of path, a bit each of byte 0's bits 2–7.
const TARGETS: [&str; 6] =
    ["system", "home", "in-home", "!build-output", "credentials", "above-project"];

/// Functions whose calls the text is searched for, read as inline code.
const CALLS: [&str; 5] = ["shutil.rmtree", "rmtree", ".unlink", "fs.rmSync", "unlink"];

/// Where the commands' paths are placed.
fn places() -> &'static Places {
    static PLACES: std::sync::OnceLock<Places> = std::sync::OnceLock::new();
    PLACES.get_or_init(|| {
        Places::new(Some("/home/dev/app/src"), Some("/home/dev/app"), Some("/home/dev"), None)
    })
}

/// Runs the target on `data`; `Evaluated` when the text has a command with a program (which
/// the pattern was then matched against).
///
/// # Panics
///
/// When the reader, a pattern or a glob breaks a property (see the module's documentation).
pub fn run(data: &[u8]) -> Reached {
    if data.len() < HEADER {
        return Reached::Rejected;
    }
    let (header, rest) = data.split_at(HEADER);
    let dialect = if header[0] & 1 == 0 { Dialect::Posix } else { Dialect::PowerShell };
    let mut pattern = pattern(&header[1..]);
    pattern.targets = TARGETS
        .iter()
        .enumerate()
        .filter(|(i, _)| header[0] & (4 << i) != 0)
        .map(|(_, t)| (*t).to_owned())
        .collect();
    let _ = problem(&pattern);
    let text = String::from_utf8_lossy(rest);

    // The text as an interpreter's inline code: every call found names a path, placed.
    for (_, word) in hook_engine::code::calls(&text, &CALLS) {
        let _ = places().classify(&word);
    }
    // The text as SQL: read to its end, whatever it holds.
    let _ = hook_engine::sql::effects(&text);
    // The text's words as find's arguments: start points and an effect, whatever they are.
    let words: Vec<&str> = text.split_whitespace().collect();
    let (starts, _) = hook_engine::find::read(&words);
    assert!(!starts.is_empty(), "find always has a start point");
    let parsed = parse(&*text, dialect);
    check_size(&text, &parsed);
    for command in parsed.commands() {
        // What a command truncates is among what it writes: the first of them.
        assert!(command.overwrites().len() <= command.writes().len());
        assert!(command.overwrites().zip(command.writes()).all(|(o, w)| std::ptr::eq(o, w)));
    }
    let long_way = parse_the_long_way(&text, dialect);
    assert_eq!(parsed.describe(), long_way.describe(), "the shortcuts read otherwise");
    if header[0] & 2 != 0 {
        let owned = parse(text.to_string(), dialect);
        assert_eq!(parsed.describe(), owned.describe(), "an owned text reads otherwise");
    }
    let mut reached = Reached::Parsed;
    for (i, command) in parsed.commands().enumerate() {
        assert!(command.depth() < MAX_DEPTH, "a command {} deep", command.depth());
        let program = command.program();
        let last = program.rsplit(['/', '\\']).next().unwrap_or(program);
        assert!(last.starts_with(command.name()), "`{}` named `{}`", program, command.name());
        let _ = command.piped_from().map(|from| from.name());
        // Reading a display back costs a reading: the first commands only, so that an input of
        // many commands costs what its reading does.
        if i < DISPLAYED {
            display(&command);
        }
        matches_twice(&pattern, &command);
        if !command.program().is_empty() {
            reached = Reached::Evaluated;
        }
    }
    globs(&parsed, &pattern);
    reached
}

/// How many of an input's commands are displayed and read back.
const DISPLAYED: usize = 8;

/// The pattern the header's bytes 1 to 5 choose (`choice` starts at byte 1).
///
/// # Panics
///
/// When `choice` is shorter than five bytes.
pub fn pattern(choice: &[u8]) -> Pattern<String> {
    let own = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
    let some = |list: &[&str], bits: u8| {
        list.iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, s)| (*s).to_owned())
            .collect()
    };
    Pattern {
        program: own(PROGRAMS[usize::from(choice[0]) % PROGRAMS.len()]),
        subcommand: own(SUBCOMMANDS[usize::from(choice[1]) % SUBCOMMANDS.len()]),
        flags: some(&FLAGS, choice[2]),
        args: some(&ARGS, choice[3]),
        writes: some(&WRITES, choice[4] & 0xF),
        piped_from: some(&PIPED_FROM, choice[4] >> 4),
        targets: Vec::new(),
        calls: Vec::new(),
        sql: Vec::new(),
        find: Vec::new(),
        overwrites: Vec::new(),
        empties: Vec::new(),
    }
}

pub use hook_engine::shell::{max_commands, max_word_bytes};

/// The bytes of all the words of `parsed`: programs, arguments, standard inputs, wrappers and
/// the files written to.
pub fn word_bytes(parsed: &Parsed) -> usize {
    parsed
        .commands()
        .map(|c| {
            c.program().len()
                + c.args().map(str::len).sum::<usize>()
                + c.stdin().map_or(0, str::len)
                + c.wrappers().map(str::len).sum::<usize>()
                + c.writes().map(str::len).sum::<usize>()
        })
        .sum()
}

/// The reader is linear: its words and commands stay within their bounds for `text`.
///
/// # Panics
///
/// When they do not.
pub fn check_size(text: &str, parsed: &Parsed) {
    let bytes = word_bytes(parsed);
    assert!(
        bytes <= max_word_bytes(text.len()),
        "{bytes} bytes of words from {} bytes of text (at most {})",
        text.len(),
        max_word_bytes(text.len())
    );
    let commands = parsed.commands().len();
    assert!(
        commands <= max_commands(text.len()),
        "{commands} commands from {} bytes of text (at most {})",
        text.len(),
        max_commands(text.len())
    );
}

/// Whether `program` is a name that displays as itself and reads back as a program.
fn plain(program: &str) -> bool {
    !program.is_empty()
        && program.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `command` displays; read back, a plain program is run again.
fn display(command: &Command<'_>) {
    let shown = command.to_string();
    let program = command.program();
    // A reserved word after a wrapper (`exec do`) is the program, as in bash, but reads back as
    // a reserved word: the reader does not tell a quoted `'do'` from `do` (it errs towards
    // reading what follows as the command, which guards see).
    if !plain(program) || hook_engine::shell::RESERVED.contains(&program) {
        return;
    }
    let again = parse(&shown, Dialect::Posix);
    assert!(
        again.commands().any(|c| c.program() == program),
        "`{program}` displayed as {shown:?}, which runs {:?}",
        again.commands().map(|c| c.program().to_owned()).collect::<Vec<_>>()
    );
}

/// Matches `pattern` against `command`: the same answer and work twice, and the charge's error
/// when the budget is below that work.
fn matches_twice(pattern: &Pattern<String>, command: &Command<'_>) {
    let counted = |pattern: &Pattern<String>| {
        let mut units = 0usize;
        let answer = pattern.matches(command, places(), &mut |n| {
            units = units.saturating_add(n);
            Ok::<(), Infallible>(())
        });
        let Ok(answer) = answer;
        (answer, units)
    };
    let first = counted(pattern);
    let second = counted(pattern);
    assert_eq!(first, second, "matching {command} twice: (answer, units)");

    let (answer, units) = first;
    let budget = units / 2;
    let mut spent = 0usize;
    let limited = pattern.matches(command, places(), &mut |n| {
        spent = spent.saturating_add(n);
        if spent > budget { Err(spent) } else { Ok(()) }
    });
    if units > budget {
        assert!(limited.is_err(), "matching {command} with {budget} of {units} units: {limited:?}");
    } else {
        assert_eq!(limited, Ok(answer), "matching {command} with all its {units} units");
    }
}

/// Pattern globs and words against words; words as globs against their neighbours.
fn globs(parsed: &Parsed, pattern: &Pattern<String>) {
    // A bounded number of words, each cut to `TEXT` bytes (what the reference holds).
    const PAIRS: usize = 32;
    const PATTERN: usize = 24;
    let cut = |word: &str, max: usize| word.as_bytes()[..word.len().min(max)].to_vec();
    let mut words: Vec<Vec<u8>> = Vec::new();
    for command in parsed.commands() {
        let all = std::iter::once(command.program()).chain(command.args()).chain(command.stdin());
        words.extend(all.chain(command.writes()).map(|w| cut(w, TEXT)));
        if words.len() > PAIRS {
            words.truncate(PAIRS + 1);
            break;
        }
    }
    let globs = pattern.args.iter().chain(&pattern.program).chain(&pattern.subcommand);
    let globs: Vec<&String> = globs.chain(&pattern.writes).chain(&pattern.piped_from).collect();
    let mut previous: Option<&[u8]> = None;
    for text in &words {
        let shown = String::from_utf8_lossy(text);
        let reference = Reference::new(text);
        let check = |pattern: &[u8]| {
            assert_eq!(
                glob(pattern, text),
                reference.matches(pattern),
                "glob({:?}, {shown:?})",
                String::from_utf8_lossy(pattern),
            );
        };
        assert!(glob(b"*", text), "`*` against {shown:?}");
        // `\\` is one backslash: a text with one is not a glob matching itself.
        if !text.iter().any(|b| matches!(b, b'*' | b'?' | b'\\')) {
            assert!(glob(text, text), "{shown:?} against itself");
        }
        let mut escaped = Vec::with_capacity(text.len() * 2);
        for &b in text {
            if matches!(b, b'*' | b'?' | b'\\') {
                escaped.push(b'\\');
            }
            escaped.push(b);
        }
        assert!(glob(&escaped, text), "{shown:?} escaped against itself");
        for p in &globs {
            check(p.as_bytes());
        }
        if let Some(before) = previous {
            check(&before[..before.len().min(PATTERN)]);
        }
        previous = Some(text);
    }
}

/// The longest text [`Reference`] holds.
const TEXT: usize = 256;

/// Bits for the prefixes of a text of at most [`TEXT`] bytes: bit `j` for its first `j` bytes.
type Prefixes = [u64; TEXT / 64 + 1];

/// No prefix.
const NONE: Prefixes = [0; TEXT / 64 + 1];

/// A plain glob matcher to check `glob` against, independent of it: `*` any text, `?` one
/// byte, `\*`, `\?` and `\\` the character itself, other bytes themselves ignoring ASCII
/// case. It keeps the set of the text's prefixes that the pattern read so far matches, as bits,
/// one element of the pattern at a time (a dynamic program, 64 prefixes to a word).
struct Reference {
    len: usize,
    /// The positions of the text's bytes: bits 0 to `len - 1`.
    bytes: Prefixes,
    /// For each byte (ASCII lowercased), the positions of the text where it stands.
    at: Box<[Prefixes; 256]>,
}

impl Reference {
    /// # Panics
    ///
    /// When `text` is longer than [`TEXT`].
    fn new(text: &[u8]) -> Reference {
        assert!(text.len() <= TEXT, "a reference text of {} bytes", text.len());
        let mut at = Box::new([NONE; 256]);
        for (j, &b) in text.iter().enumerate() {
            at[usize::from(b.to_ascii_lowercase())][j / 64] |= 1 << (j % 64);
        }
        let mut bytes = NONE;
        for j in 0..text.len() {
            bytes[j / 64] |= 1 << (j % 64);
        }
        Reference { len: text.len(), bytes, at }
    }

    fn matches(&self, pattern: &[u8]) -> bool {
        let mut row = NONE;
        row[0] = 1;
        let mut p = 0;
        while p < pattern.len() {
            // `None`: a `*`; `Some(None)`: a `?`; `Some(Some(c))`: the byte `c`.
            let element = match (pattern[p], pattern.get(p + 1)) {
                (b'\\', Some(&c @ (b'*' | b'?' | b'\\'))) => {
                    p += 1;
                    Some(Some(c))
                }
                (b'*', _) => None,
                (b'?', _) => Some(None),
                (c, _) => Some(Some(c)),
            };
            p += 1;
            row = match element {
                // Every prefix at least as long as the shortest one matched so far.
                None => match row.iter().position(|&w| w != 0) {
                    None => row,
                    Some(i) => {
                        let mut next = NONE;
                        next[i] = !0 << row[i].trailing_zeros();
                        next[i + 1..].fill(!0);
                        next
                    }
                },
                // A matched prefix followed by a byte the element matches: one byte longer.
                Some(c) => {
                    let here =
                        c.map_or(&self.bytes, |c| &self.at[usize::from(c.to_ascii_lowercase())]);
                    let mut next = NONE;
                    let mut carry = 0;
                    for (i, word) in next.iter_mut().enumerate() {
                        let both = row[i] & here[i];
                        *word = both << 1 | carry;
                        carry = both >> 63;
                    }
                    next
                }
            };
        }
        row[self.len / 64] & 1 << (self.len % 64) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The glob language by recursion, exponential but plainly right, for short cases.
    fn naive(pattern: &[u8], text: &[u8]) -> bool {
        match pattern {
            [] => text.is_empty(),
            [b'\\', c @ (b'*' | b'?' | b'\\'), rest @ ..] => {
                text.first() == Some(c) && naive(rest, &text[1..])
            }
            [b'*', rest @ ..] => (0..=text.len()).any(|i| naive(rest, &text[i..])),
            [b'?', rest @ ..] => !text.is_empty() && naive(rest, &text[1..]),
            [c, rest @ ..] => {
                text.first().is_some_and(|t| t.eq_ignore_ascii_case(c)) && naive(rest, &text[1..])
            }
        }
    }

    #[test]
    fn the_reference_matches_as_the_language_says() {
        let long = "ab".repeat(70) + "/etc/passwd" + &"x".repeat(100);
        let texts = ["", "a", "rm", "RM", "r*", "a\\b", "/etc/hosts", "x?y", long.as_str()];
        let patterns = [
            "",
            "*",
            "**",
            "?",
            "r?",
            "R*",
            "*m",
            "\\*",
            "r\\*",
            "a\\\\b",
            "a\\b",
            "*etc*",
            "/etc*",
            "x\\?y",
            "x?y",
            "*/etc/*",
            "ab*x",
            "*passwd*x",
            "?*?",
            "ab*ab*ab*/etc*",
        ];
        let mut matched = 0;
        for text in texts {
            let reference = Reference::new(text.as_bytes());
            for pattern in patterns {
                let expected = naive(pattern.as_bytes(), text.as_bytes());
                assert_eq!(
                    reference.matches(pattern.as_bytes()),
                    expected,
                    "{pattern:?} against {text:?}"
                );
                matched += usize::from(expected);
            }
        }
        // Both answers occur, on the long text too.
        assert!(matched > 20, "{matched} matches");
        assert!(Reference::new(long.as_bytes()).matches(b"ab*ab*ab*/etc*"));
        assert!(!Reference::new(long.as_bytes()).matches(b"*passwd?"));
    }
}
