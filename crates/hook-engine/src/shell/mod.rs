//! What a shell command line runs: the simple commands of a `Bash` (or `PowerShell`) call, each
//! as the words its program receives, wrappers stripped (reference §2.1, `command`).
//!
//! `sudo env X=1 "git" reset --hard && (cd / ; bash -c 'rm -rf "$HOME"')` runs `git reset
//! --hard`, `cd /`, `bash -c …` and `rm -rf $HOME`: the text is split at `;`, `&&`, `||`, `|`,
//! `&` and newlines, into subshells, `$(…)`, `<(…)` and backticks; words are unquoted (`'…'`,
//! `"…"`, `\x`, `$'…'`); assignments and wrappers (`sudo`, `env`, `command`, `exec`, `nohup`,
//! `time`, `nice`, `timeout`, `xargs`, …) are skipped with their options; and what an inline
//! shell runs is parsed in turn (`bash -c`, `sh -c`, `eval`, a heredoc or here-string fed to a
//! shell, `find -exec`). Text that is only data stays data: a heredoc's body is the standard
//! input of its command (a word of it for matching, never parsed unless a shell reads it), and
//! the arguments of `echo`, `grep` or `git commit -m` are arguments.
//!
//! It is a reader for guards, not a shell: it never expands variables or globs, and reads odd
//! input (unbalanced quotes, stray parentheses) as far as it makes sense. It is linear: every
//! byte is read once per nesting level and nesting stops at [`MAX_DEPTH`]; its output lives in
//! one string and two vectors however many words there are.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

mod lexer;
mod names;
mod settle;

use lexer::Lexer;
pub use names::RESERVED;
pub(crate) use names::lowercase;
use names::program_name;
use settle::{Inline, feed, settle};

/// How deep commands nest (`$(…)` in `bash -c` in a subshell …) before the rest is read as
/// plain words.
pub const MAX_DEPTH: u8 = 8;

/// The shell whose syntax the text is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Bash and its kin: `\` escapes, heredocs, `&` runs in the background.
    Posix,
    /// PowerShell: `` ` `` escapes (a `\` is a path separator), `&` calls a command, no heredocs.
    PowerShell,
}

/// The simple commands a command line runs.
#[derive(Clone, Debug, Default)]
pub struct Parsed<'t> {
    /// The text read, as given when it was borrowed: the words that are spans of it are not
    /// copied. Positions (`Span`) below its length are in it, the others in `text`.
    source: &'t str,
    /// The words that are not spans of the source (unquoted, joined, fed), and the text of every
    /// nested reading (and of an owned source), each followed by such words of it.
    text: String,
    /// The words, as ranges of `text`.
    words: Vec<Span>,
    /// The commands, in the order they were read.
    commands: Vec<Raw>,
    /// The bytes nested readings (`bash -c`, `eval`, backticks, inline code) may still read:
    /// [`REREADS`] times the text, so that the whole reading stays linear however the
    /// nestings multiply (`eval "$(eval "$(…)")"` reads each substitution at every level).
    budget: usize,
    /// Whether a nested reading was left unread for want of budget, or the text was cut.
    exhausted: bool,
    /// The programs' names (`Command::name`), each with the commands that run it (a range of
    /// `grouped`); in order once read: a rule looks for its programs among the names, not among
    /// every command.
    names: Vec<Name>,
    /// The commands of each name, one name after the other (indices into `commands`).
    grouped: Vec<u32>,
    /// What heredocs and here-strings feed commands (few do): by command (an index into
    /// `commands`), an index into `words`.
    stdins: BTreeMap<u32, u32>,
    /// While reading, the names past the first [`FEW_NAMES`], indexed.
    lookup: BTreeMap<Box<[u8]>, u32>,
    /// Whether words may be taken whole and programs settled from memory
    /// ([`parse_the_long_way`]).
    shortcuts: bool,
    /// The last [`SETTLED`] first words that were plain programs ([`Settled`]), and how many
    /// were remembered in all (the next one replaces the oldest).
    settled: [Settled; SETTLED],
    remembered: usize,
}

/// How many plain programs a reading remembers.
const SETTLED: usize = 8;

/// A command's first word that was its program (not a reserved word, an assignment or a
/// wrapper) and runs nothing inline, as a number ([`first_key`]), with its name's index in
/// `Parsed::names`: a command that begins with the same word settles alike whatever follows,
/// and a script runs the same few programs over and over.
#[derive(Clone, Copy, Debug, Default)]
struct Settled {
    key: u64,
    name: u32,
}

/// A word of 1 to 7 bytes as a number, its length in the top byte (so that no two words share
/// one); `None` for another (most programs' names are that short).
fn first_key(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 7 {
        return None;
    }
    let mut key = (word.len() as u64) << 56;
    for (i, &b) in word.iter().enumerate() {
        key |= u64::from(b) << (8 * i);
    }
    Some(key)
}

/// A program's name: a span of the reading's text, with its first bytes as a number (most names
/// differ there), and its commands (a range of `Parsed::grouped`, once read).
#[derive(Clone, Copy, Debug, Default)]
struct Name {
    first: u64,
    text: Span,
    commands: Span,
}

/// How many times its length the nested readings of a text may read in all.
pub const REREADS: usize = 4;

/// The most bytes the words of a text of `len` bytes can hold: a reading copies each byte at
/// most once per level of `$(…)` around it ([`MAX_DEPTH`]), and the nested readings read at
/// most [`REREADS`] times the text.
pub fn max_word_bytes(len: usize) -> usize {
    usize::from(MAX_DEPTH).saturating_mul(REREADS + 1).saturating_mul(len.saturating_add(1))
}

/// The most commands a text of `len` bytes can hold: each takes at least a byte of the reading
/// it is found in, and the readings read at most [`REREADS`] times the text besides the text.
pub fn max_commands(len: usize) -> usize {
    (REREADS + 1).saturating_mul(len.saturating_add(1))
}

/// A range of a reading's text (the borrowed source, then `Parsed::text`), or of
/// `Parsed::words`, in half the room of a `Range<usize>`: the
/// words of a long text are many, and the memory a process touches first costs it more than the
/// work (a text's readings hold far less than 4 GiB: [`parse`] reads at most [`MAX_TEXT`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn new(range: Range<usize>) -> Span {
        Span { start: index(range.start), end: index(range.end) }
    }

    fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// `i` as stored (an index of a reading of at most [`MAX_TEXT`] bytes fits).
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// A `Raw` index that is not there (no index of a reading comes near it).
const NONE: u32 = u32::MAX;

/// `i` as an optional stored index.
fn some(i: u32) -> Option<usize> {
    (i != NONE).then_some(i as usize)
}

/// The most program names [`parse`] looks for in a list before it indexes them.
const FEW_NAMES: usize = 16;

/// The longest text [`parse`] reads: the rest of a longer one is left unread (and that is
/// known: [`Parsed::exhausted`]). Its readings then hold at most [`max_word_bytes`] of it, well
/// within what a [`Span`] can index.
pub const MAX_TEXT: usize = 64 << 20;

/// A command as stored: its words and where its program is among them. In 28 bytes: a long
/// script holds thousands.
#[derive(Clone, Debug)]
struct Raw {
    /// Indices into `words`: everything the command line gave it, wrappers included.
    words: Span,
    /// The index in `words` of its program (after assignments and wrappers).
    program: u32,
    /// The end of the files its output goes to (`> file`, `>> file`), indices into `words`
    /// that follow its words: those it truncates first, then those it appends to.
    writes_end: u32,
    /// How many of the last of those it appends to; past 255, the first ones are read as
    /// truncated (a guard then judges more, not less).
    appended: u8,
    /// The command whose output it reads through a pipe: an index into `commands`, or
    /// [`NONE`].
    piped_from: u32,
    /// Its program's name: an index into `names`, or [`NONE`] until its program is found (a
    /// reading skips the commands a nested one has settled).
    name: u32,
    /// How deeply it is nested (0: on the command line itself).
    depth: u8,
}

const _: () = assert!(size_of::<Raw>() == 28);

/// A reading as plain values ([`Parsed::describe`]).
#[doc(hidden)]
#[derive(Debug, PartialEq, Eq)]
pub struct Description<'p> {
    pub exhausted: bool,
    pub commands: Vec<Described<'p>>,
    pub names: Vec<(&'p str, &'p [u32])>,
}

/// A command as plain values ([`Parsed::describe`]).
#[doc(hidden)]
#[derive(Debug, PartialEq, Eq)]
pub struct Described<'p> {
    pub name: &'p str,
    pub program: &'p str,
    pub args: Vec<&'p str>,
    pub wrappers: Vec<&'p str>,
    pub writes: Vec<&'p str>,
    pub stdin: Option<&'p str>,
    pub piped_from: Option<usize>,
    pub depth: u8,
}

/// One simple command.
#[derive(Clone, Copy, Debug)]
pub struct Command<'p> {
    parsed: &'p Parsed<'p>,
    raw: &'p Raw,
    index: usize,
}

impl<'p> Command<'p> {
    /// Its program, as written (`/usr/bin/git`, unquoted); empty for a command of assignments
    /// only.
    pub fn program(&self) -> &'p str {
        let program = self.raw.program as usize;
        if program < self.raw.words.range().end { self.parsed.word(program) } else { "" }
    }

    /// Its program's name: the last part of its path, without a Windows program's extension
    /// (`/usr/bin/git` and `C:\Git\git.exe` are `git`).
    pub fn name(&self) -> &'p str {
        match self.parsed.names.get(self.raw.name as usize) {
            Some(name) => self.parsed.span(name.text),
            None => program_name(self.program()),
        }
    }

    /// The words after the program.
    pub fn args(&self) -> impl ExactSizeIterator<Item = &'p str> + Clone + 'p {
        let parsed = self.parsed;
        let end = self.raw.words.range().end;
        let start = (self.raw.program as usize + 1).min(end);
        (start..end).map(move |i| parsed.word(i))
    }

    /// The commands read before it at its depth, the nearest first, as far back as the start
    /// of its nesting (`cd /tmp && rm -rf x`: `cd /tmp` for `rm`).
    pub fn before(&self) -> impl Iterator<Item = Command<'p>> + 'p {
        let parsed = self.parsed;
        let depth = self.raw.depth;
        (0..self.index)
            .rev()
            .map(move |index| Command { parsed, raw: &parsed.commands[index], index })
            .take_while(move |c| c.raw.depth >= depth)
            .filter(move |c| c.raw.depth == depth)
    }

    /// Its `i`th argument (0: the first after the program).
    pub fn arg(&self, i: usize) -> Option<&'p str> {
        let at = (self.raw.program as usize).checked_add(1)?.checked_add(i)?;
        (at < self.raw.words.range().end).then(|| self.parsed.word(at))
    }

    /// Its place among the commands of its text ([`Parsed::commands`]).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The files its output is written to (`> /etc/hosts`, `>> log`, `&> out`).
    pub fn writes(&self) -> impl ExactSizeIterator<Item = &'p str> + 'p {
        let parsed = self.parsed;
        let start = self.raw.words.range().end;
        (start..(self.raw.writes_end as usize).max(start)).map(move |i| parsed.word(i))
    }

    /// The files its output truncates (`> file`, `>| file`, `&> file`), not those it appends
    /// to (`>> file`).
    pub fn overwrites(&self) -> impl ExactSizeIterator<Item = &'p str> + 'p {
        let parsed = self.parsed;
        let start = self.raw.words.range().end;
        let end = (self.raw.writes_end as usize).max(start);
        (start..end.saturating_sub(usize::from(self.raw.appended)).max(start))
            .map(move |i| parsed.word(i))
    }

    /// The command whose output it reads through a pipe (`curl … | sh`).
    pub fn piped_from(&self) -> Option<Command<'p>> {
        let index = some(self.raw.piped_from)?;
        let raw = self.parsed.commands.get(index)?;
        Some(Command { parsed: self.parsed, raw, index })
    }

    /// What a heredoc or here-string gives it on standard input.
    pub fn stdin(&self) -> Option<&'p str> {
        self.parsed.stdin(self.index).map(|i| self.parsed.word(i))
    }

    /// The words it was given before its program: assignments and wrappers (`sudo -u root`).
    pub fn wrappers(&self) -> impl Iterator<Item = &'p str> + 'p {
        let parsed = self.parsed;
        let words = self.raw.words.range();
        (words.start..(self.raw.program as usize).min(words.end)).map(move |i| parsed.word(i))
    }

    /// How deeply it is nested: 0 on the command line itself, 1 inside `$(…)` or `bash -c`, …
    pub fn depth(&self) -> u8 {
        self.raw.depth
    }
}

impl std::fmt::Display for Command<'_> {
    /// The command as a shell would read it back: its program and arguments, quoted where
    /// needed (wrappers left out; standard input from a heredoc shown as `<<<`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for word in std::iter::once(self.program()).chain(self.args()) {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write_quoted(f, word)?;
        }
        if let Some(stdin) = self.stdin() {
            f.write_str(" <<< ")?;
            write_quoted(f, stdin)?;
        }
        Ok(())
    }
}

fn write_quoted(f: &mut std::fmt::Formatter<'_>, word: &str) -> std::fmt::Result {
    f.write_str(&quote(word))
}

/// `word` as a shell reads it back as one word: as it is when it is plain, else in single
/// quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^~{}".contains(&b));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

impl Parsed<'_> {
    /// The commands, in the order they begin (a command before the `$(…)` in its words).
    pub fn commands(&self) -> impl ExactSizeIterator<Item = Command<'_>> {
        self.commands.iter().enumerate().map(move |(index, raw)| Command {
            parsed: self,
            raw,
            index,
        })
    }

    /// Whether some of the text was left unread: it nests readings (`eval`, `bash -c`,
    /// backticks) so deeply over so much of itself that reading them all would not be linear,
    /// or it is longer than [`MAX_TEXT`]. No ordinary command line comes near; a guard may
    /// treat such a text as suspect.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// The names of the programs it runs (`Command::name`), in order, each with its commands
    /// (their indices, in order: [`Parsed::command`]).
    pub fn by_name(&self) -> impl ExactSizeIterator<Item = (&str, &[u32])> {
        self.names.iter().map(|name| {
            (self.span(name.text), self.grouped.get(name.commands.range()).unwrap_or_default())
        })
    }

    /// Its command at `index` ([`Command::index`]).
    pub fn command(&self, index: usize) -> Option<Command<'_>> {
        Some(Command { parsed: self, raw: self.commands.get(index)?, index })
    }

    /// All of it as plain values: whether some was left unread, each command (name, program,
    /// arguments, wrappers, files written, standard input, the command piped from, depth), each
    /// name with its commands. For tests and the fuzz target to compare two readings (as values:
    /// formatting them on every input was a tenth of the fuzz target's time).
    #[doc(hidden)]
    pub fn describe(&self) -> Description<'_> {
        Description {
            exhausted: self.exhausted,
            commands: self
                .commands()
                .map(|c| Described {
                    name: c.name(),
                    program: c.program(),
                    args: c.args().collect(),
                    wrappers: c.wrappers().collect(),
                    writes: c.writes().collect(),
                    stdin: c.stdin(),
                    piped_from: c.piped_from().map(|f| f.index()),
                    depth: c.depth(),
                })
                .collect(),
            names: self.by_name().collect(),
        }
    }

    /// The bytes of all its words.
    pub fn word_bytes(&self) -> usize {
        self.words.iter().map(|w| w.range().len()).sum()
    }

    /// The index in `words` of what command `index` is given on standard input.
    fn stdin(&self, index: usize) -> Option<usize> {
        if self.stdins.is_empty() {
            return None;
        }
        self.stdins.get(&self::index(index)).map(|&word| word as usize)
    }

    fn word(&self, i: usize) -> &str {
        self.words.get(i).map_or("", |&w| self.span(w))
    }

    fn span(&self, span: Span) -> &str {
        let split = self.source.len();
        let range = span.range();
        let found = if range.end <= split {
            self.source.get(range)
        } else {
            self.text.get(range.start.wrapping_sub(split)..range.end - split)
        };
        found.unwrap_or("")
    }

    /// Where the next byte pushed to `text` will be.
    fn end(&self) -> usize {
        self.source.len() + self.text.len()
    }

    /// Pushes `word` to `text`; its span.
    fn push(&mut self, word: &str) -> Span {
        let start = self.end();
        self.text.push_str(word);
        Span::new(start..self.end())
    }

    /// The index in `names` of the name `text` spans, added when it is new. A text runs few
    /// programs: they are looked for in a short list; past [`FEW_NAMES`], in an index.
    fn name_index(&mut self, text: Span) -> u32 {
        let name = self.span(text).as_bytes();
        let mut first = [0u8; 8];
        for (to, from) in first.iter_mut().zip(name) {
            *to = *from;
        }
        let first = u64::from_be_bytes(first);
        let len = text.end - text.start;
        let known = if self.names.len() <= FEW_NAMES {
            self.names.iter().position(|n| {
                n.first == first
                    && n.text.end - n.text.start == len
                    && (len <= 8 || self.span(n.text).as_bytes() == name)
            })
        } else {
            self.lookup.get(name).map(|&at| at as usize)
        };
        if let Some(at) = known {
            return index(at);
        }
        let at = index(self.names.len());
        if self.names.len() >= FEW_NAMES {
            let name: Box<[u8]> = name.into();
            if self.names.len() == FEW_NAMES {
                let names = self.names.iter().enumerate();
                let text = |n: &Name| self.span(n.text).as_bytes().into();
                self.lookup = names.map(|(at, n)| (text(n), index(at))).collect();
            }
            self.lookup.insert(name, at);
        }
        self.names.push(Name { first, text, commands: Span::default() });
        at
    }

    /// The name of the plain program whose first word is `key`, when remembered.
    fn settled(&self, key: u64) -> Option<u32> {
        let known = &self.settled[..self.remembered.min(SETTLED)];
        known.iter().find(|s| s.key == key).map(|s| s.name)
    }

    /// Remembers that the first word `key` is a plain program named `name`.
    fn remember(&mut self, key: u64, name: u32) {
        self.settled[self.remembered % SETTLED] = Settled { key, name };
        self.remembered += 1;
    }

    /// Puts the names in order, each with its commands.
    fn group(&mut self) {
        self.lookup = BTreeMap::new();
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (self.names[a], self.names[b]);
            (a.first, self.span(a.text)).cmp(&(b.first, self.span(b.text)))
        });
        let mut renamed = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            renamed[old] = index(new);
        }
        let mut counts = vec![0usize; order.len()];
        for raw in &mut self.commands {
            let Some(&name) = renamed.get(raw.name as usize) else { continue };
            raw.name = name;
            counts[name as usize] += 1;
        }
        let mut start = 0;
        let mut names = Vec::with_capacity(order.len());
        for (&old, count) in order.iter().zip(&counts) {
            names.push(Name { commands: Span::new(start..start + count), ..self.names[old] });
            start += count;
        }
        // Each name's commands, in order: its range filled from the front.
        let mut next: Vec<usize> = names.iter().map(|n| n.commands.start as usize).collect();
        let mut grouped = vec![0; start];
        for (i, raw) in self.commands.iter().enumerate() {
            if let Some(at) = next.get_mut(raw.name as usize) {
                grouped[*at] = index(i);
                *at += 1;
            }
        }
        self.names = names;
        self.grouped = grouped;
    }
}

/// The commands `text` runs, read as `dialect`. A borrowed text is read in place: the reading
/// borrows it.
pub fn parse<'t>(text: impl Into<Cow<'t, str>>, dialect: Dialect) -> Parsed<'t> {
    parse_with(text.into(), dialect, true)
}

/// [`parse`] without its shortcuts (a word that is all plain bytes, or one quoted string, taken
/// whole): every word read the long way. It reads alike; the fuzz target checks that it does.
#[doc(hidden)]
pub fn parse_the_long_way(text: &str, dialect: Dialect) -> Parsed<'_> {
    parse_with(Cow::Borrowed(text), dialect, false)
}

fn parse_with(text: Cow<'_, str>, dialect: Dialect, shortcuts: bool) -> Parsed<'_> {
    let mut cut = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    // Room for the words made of the text, at once: growing by copies would touch twice the
    // memory (pages a process touches first cost it more than the copying), and room left
    // unused is never touched.
    let mut parsed = Parsed {
        words: Vec::with_capacity(cut / 4),
        commands: Vec::with_capacity(cut / 16),
        budget: REREADS.saturating_mul(cut.saturating_add(1)),
        exhausted: cut < text.len(),
        shortcuts,
        ..Parsed::default()
    };
    match text {
        Cow::Borrowed(text) => {
            let text = &text[..cut];
            parsed.source = text;
            read_at(&mut parsed, text, 0, dialect, 0);
        }
        Cow::Owned(text) => read(&mut parsed, &text[..cut], dialect, 0),
    }
    parsed.group();
    parsed
}

/// Reads `text` at `depth` into `parsed`, then what its inline shells run.
fn read(parsed: &mut Parsed, text: &str, dialect: Dialect, depth: u8) {
    if depth > 0 {
        // Past the budget, a nested reading is left unread (and that is known).
        let Some(left) = parsed.budget.checked_sub(text.len()) else {
            parsed.exhausted = true;
            return;
        };
        parsed.budget = left;
    }
    // The text itself is kept: a word that is all plain bytes is a span of it, not a copy.
    let base = parsed.push(text).start as usize;
    read_at(parsed, text, base, dialect, depth);
}

/// Reads `text`, kept at `base`, at `depth` into `parsed`, then what its inline shells run.
fn read_at(parsed: &mut Parsed<'_>, text: &str, base: usize, dialect: Dialect, depth: u8) {
    let first = parsed.commands.len();
    Lexer::new(text, base, 0, dialect, depth, parsed).list(false);
    // The commands this reading found (nested ones included): wrappers skipped, and what
    // inline shells run read in turn (appended, and settled by that reading).
    for index in first..parsed.commands.len() {
        if parsed.commands[index].name != NONE {
            continue;
        }
        let depth = parsed.commands[index].depth;
        feed(parsed, index);
        let inline = settle(parsed, index);
        let Some(inline) = inline else { continue };
        if depth + 1 < MAX_DEPTH {
            let text = match inline {
                Inline::Words(words) => {
                    words.map(|i| parsed.word(i).to_owned()).collect::<Vec<_>>().join(" ")
                }
                Inline::Word(i) => parsed.word(i).to_owned(),
                Inline::Argv(words) => {
                    let quoted: Vec<String> = words.map(|i| quote(parsed.word(i))).collect();
                    quoted.join(" ")
                }
                Inline::Text(text) => text,
            };
            read(parsed, &text, dialect, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::names::{INLINE_NAMES, WRAPPERS, basename, runs_inline, wrapper_named};
    use super::settle::code_commands;
    use super::*;

    /// Each command as `program arg arg…`, with its depth when nested.
    fn commands(text: &str) -> Vec<String> {
        let parsed = parse(text, Dialect::Posix);
        parsed
            .commands()
            .filter(|c| !c.program().is_empty())
            .map(|c| {
                let mut line =
                    std::iter::once(c.program()).chain(c.args()).collect::<Vec<_>>().join(" ");
                if let Some(stdin) = c.stdin() {
                    line = format!("{line} <<< {stdin:?}");
                }
                if c.depth() > 0 {
                    line = format!("{}:{line}", c.depth());
                }
                line
            })
            .collect()
    }

    #[test]
    fn lists_and_pipelines_split() {
        assert_eq!(
            commands("make build; git reset --hard && ls | wc -l || echo no & sleep 1\nnpm test"),
            ["make build", "git reset --hard", "ls", "wc -l", "echo no", "sleep 1", "npm test"]
        );
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(
            commands(r#""git" 'reset' --ha"rd" \rm -r\f "/home/a b" $'\x72m' "a\"b" 'c'"d""#),
            [r#"git reset --hard rm -rf /home/a b rm a"b cd"#]
        );
        assert_eq!(commands(r"\rm -rf /"), ["rm -rf /"]);
        assert_eq!(commands("rm -rf \\\n  /etc"), ["rm -rf /etc"]);
    }

    #[test]
    fn wrappers_and_assignments_are_skipped() {
        for (text, program, args) in [
            ("sudo rm -rf /etc", "rm", "-rf /etc"),
            ("sudo -u root -E rm -rf /", "rm", "-rf /"),
            ("env X=1 Y=2 git push -f", "git", "push -f"),
            ("env -i -u HOME git push -f", "git", "push -f"),
            ("FOO=bar BAZ=1 git reset --hard", "git", "reset --hard"),
            ("command git reset --hard", "git", "reset --hard"),
            ("exec -a x rm -rf /", "rm", "-rf /"),
            ("nohup nice -n 10 timeout -s KILL 30 rm -rf /", "rm", "-rf /"),
            ("time -p sudo rm -rf /", "rm", "-rf /"),
            ("xargs -0 -n 1 rm -rf", "rm", "-rf"),
            ("/usr/bin/sudo /bin/rm -rf /", "/bin/rm", "-rf /"),
            ("if true; then rm -rf /; fi", "rm", "-rf /"),
            (&("nice ".repeat(40) + "rm -rf /"), "rm", "-rf /"),
        ] {
            let parsed = parse(text, Dialect::Posix);
            let found = parsed.commands().find(|c| c.name() == basename(program));
            let found = found.unwrap_or_else(|| panic!("{text}: {:?}", commands(text)));
            assert_eq!(found.program(), program, "{text}");
            assert_eq!(found.args().collect::<Vec<_>>().join(" "), args, "{text}");
        }
        // `command -v` runs nothing.
        assert_eq!(
            parse("command -v rm", Dialect::Posix).commands().next().unwrap().name(),
            "command"
        );
    }

    #[test]
    fn nested_commands_are_found() {
        assert_eq!(
            commands("echo $(rm -rf /tmp/x) `git clean -fdx` \"$(git reset --hard)\""),
            [
                "echo $(rm -rf /tmp/x) `git clean -fdx` $(git reset --hard)",
                "1:rm -rf /tmp/x",
                "1:git clean -fdx",
                "1:git reset --hard",
            ]
        );
        assert_eq!(commands("(cd / && rm -rf *)"), ["1:cd /", "1:rm -rf *"]);
        assert_eq!(commands("diff <(ls a) >(tee b)"), ["diff", "1:ls a", "1:tee b"]);
    }

    #[test]
    fn inline_shells_are_read() {
        assert_eq!(
            commands("bash -c 'rm -rf \"$HOME\"'"),
            ["bash -c rm -rf \"$HOME\"", "1:rm -rf $HOME"]
        );
        assert_eq!(
            commands("sh -ec \"git push --force\""),
            ["sh -ec git push --force", "1:git push --force"]
        );
        assert_eq!(
            commands("eval 'git' reset --hard"),
            ["eval git reset --hard", "1:git reset --hard"]
        );
        assert_eq!(
            commands("find / -name x -exec rm -rf {} \\;"),
            ["find / -name x -exec rm -rf {} ;", "1:rm -rf {}"]
        );
        assert_eq!(
            commands("bash <<'EOF'\nrm -rf /\nEOF\necho done"),
            ["bash <<< \"rm -rf /\\n\"", "echo done", "1:rm -rf /"]
        );
        assert_eq!(
            commands("sh <<< 'git clean -fdx'"),
            ["sh <<< \"git clean -fdx\"", "1:git clean -fdx"]
        );
    }

    #[test]
    fn truncations_are_told_from_appends() {
        let parsed = parse("cmd > a >> b &> c >| d 2>&1 &>> e >&2", Dialect::Posix);
        let command = parsed.commands().next().unwrap_or_else(|| panic!("no command"));
        let mut writes: Vec<&str> = command.writes().collect();
        writes.sort_unstable();
        assert_eq!(writes, ["a", "b", "c", "d", "e"]);
        assert_eq!(command.overwrites().collect::<Vec<_>>(), ["a", "c", "d"]);
        // Past 255 appends the first ones count as truncations: more judged, never fewer.
        let many = format!("cmd{}", " >> x".repeat(300));
        let parsed = parse(&many, Dialect::Posix);
        let command = parsed.commands().next().unwrap_or_else(|| panic!("no command"));
        assert_eq!((command.writes().len(), command.overwrites().len()), (300, 45));
    }

    #[test]
    fn command_lines_handed_to_a_shell_are_read() {
        for (text, run) in [
            ("watch -n 60 'rm -rf ~/Downloads/*'", "1:rm -rf ~/Downloads/*"),
            ("parallel --will-cite 'rm -rf {}' ::: src lib", "1:rm -rf {} ::: src lib"),
            ("su -c 'rm -rf /srv/data' root", "1:rm -rf /srv/data"),
            ("su - deploy -lc 'git reset --hard'", "1:git reset --hard"),
            ("ansible all -m shell -a 'rm -rf /opt/app'", "1:rm -rf /opt/app"),
            ("ansible web -a 'rm -rf /opt/app'", "1:rm -rf /opt/app"),
            ("tmux new -d -s wipe 'rm -rf ~/scratch'", "1:rm -rf ~/scratch"),
            ("pssh -h hosts.txt -i 'rm -rf /var/log/app'", "1:rm -rf /var/log/app"),
            ("at now + 1 hour <<< 'rm -rf ~/scratch'", "1:rm -rf ~/scratch"),
        ] {
            let commands = commands(text);
            assert!(commands.contains(&run.to_owned()), "{text:?}: {commands:?}");
        }
        // Not a command line: a copy's arguments, a file name with a space, a listing.
        assert!(
            !commands("ansible all -m copy -a 'src=a dest=/etc/b'")
                .iter()
                .any(|c| c.starts_with("1:"))
        );
        assert_eq!(commands("time 'my tool' --x"), ["my tool --x"]);
        assert_eq!(commands("tmux ls"), ["tmux ls"]);
        assert!(
            !commands("parallel --dry-run 'rm -rf {}' ::: a").iter().any(|c| c.starts_with("1:"))
        );
    }

    #[test]
    fn a_heredoc_printed_by_cat_is_the_script() {
        for text in [
            "bash -c \"$(cat <<EOF\nrm -rf /\nEOF\n)\"",
            "sh -c \"$(cat << 'SCRIPT END'\nrm -rf /\nSCRIPT END\n)\"",
            "bash -c \"$(cat <<-\"EOF\"\n\trm -rf /\n\tEOF\n)\"",
            "eval \"$(cat <<'EOF'\nrm -rf /\nEOF\n)\"",
        ] {
            let run = commands(text);
            assert!(run.contains(&"1:rm -rf /".to_owned()), "{text:?}: {run:?}");
        }
        // `cat` given a file, or a heredoc piped on, is not the script.
        let piped = commands("bash -c \"$(cat <<EOF | tr a b\nrm -rf /\nEOF\n)\"");
        assert!(!piped.contains(&"1:rm -rf /".to_owned()), "{piped:?}");
        assert_eq!(settle::cat_heredoc("$(cat notes.txt)"), None);
        assert_eq!(settle::cat_heredoc("$(cat <<EOF\nrm x\n)"), None);
        assert_eq!(settle::cat_heredoc("`cat <<E\nls\nE\n`").as_deref(), Some("ls\n"));
    }

    #[test]
    fn what_echo_feeds_is_read() {
        assert_eq!(
            commands("echo 'rm -rf /' | sh"),
            ["echo rm -rf /", "sh <<< \"rm -rf /\"", "1:rm -rf /"]
        );
        assert_eq!(
            commands("printf '%s\\n' /usr /var | xargs -n1 sudo rm -rf"),
            ["printf %s\\n /usr /var", "rm -rf <<< \"/usr\\n/var\"", "1:rm -rf /usr /var"]
        );
        assert_eq!(
            commands("echo 'DROP DATABASE x;' | psql -U postgres"),
            ["echo DROP DATABASE x;", "psql -U postgres <<< \"DROP DATABASE x;\""]
        );
        // What `ls` writes is not known: nothing is made up.
        assert_eq!(commands("ls | xargs rm -rf"), ["ls", "rm -rf"]);
    }

    #[test]
    fn what_inline_code_runs_is_read() {
        for (text, run) in [
            ("python3 -c \"import os; os.system('rm -rf ~')\"", "1:rm -rf ~"),
            (
                "python3 -c \"import subprocess; subprocess.run(['git','reset','--hard'])\"",
                "1:git reset --hard",
            ),
            (
                "node -e \"require('child_process').execSync('git push --force', {stdio: 'inherit'})\"",
                "1:git push --force",
            ),
            (
                "ruby -e 'system(\"terraform destroy -auto-approve\")'",
                "1:terraform destroy -auto-approve",
            ),
            (
                "python3 <<'PY'\nimport subprocess\nsubprocess.check_call(['npm', 'publish'])\nPY",
                "1:npm publish",
            ),
        ] {
            let found = commands(text);
            assert!(found.iter().any(|c| c == run), "{text}: {found:?}");
        }
        // Code that only prints a command runs nothing.
        assert_eq!(commands("python3 -c \"print('rm -rf /')\""), ["python3 -c print('rm -rf /')"]);
        // Unclosed calls over and over stay linear: each byte is looked at a bounded number of times.
        let many = "exec([".repeat(100_000);
        assert!(code_commands(&many).is_empty());
    }

    #[test]
    fn commands_run_elsewhere_are_read() {
        for (text, run) in [
            (
                "docker exec -it -u postgres db psql -c 'DROP TABLE users'",
                "1:psql -c DROP TABLE users",
            ),
            ("docker run --rm -v /:/host alpine rm -rf /host/etc", "1:rm -rf /host/etc"),
            ("docker --context prod container exec web sh -c 'rm -rf /srv'", "2:rm -rf /srv"),
            ("kubectl exec -n prod -it api-0 -- redis-cli FLUSHALL", "1:redis-cli FLUSHALL"),
            ("ssh -p 2222 deploy@prod 'sudo rm -rf /var/www'", "1:rm -rf /var/www"),
        ] {
            let found = commands(text);
            assert!(found.iter().any(|c| c == run), "{text}: {found:?}");
        }
        // What is not a command run elsewhere stays as it is.
        assert_eq!(commands("docker ps -a"), ["docker ps -a"]);
        assert_eq!(commands("kubectl exec api-0 ls"), ["kubectl exec api-0 ls"]);
        assert_eq!(commands("ssh prod"), ["ssh prod"]);
    }

    #[test]
    fn tool_runners_run_their_commands() {
        for (text, run) in [
            ("npx prisma migrate reset --force", "prisma migrate reset --force"),
            ("bundle exec rails db:drop", "1:rails db:drop"),
            ("pnpm exec -- sequelize db:drop", "1:sequelize db:drop"),
            ("uv run --with psycopg python manage.py flush", "1:python manage.py flush"),
            ("npm exec cdk destroy", "1:cdk destroy"),
        ] {
            let found = commands(text);
            assert!(found.iter().any(|c| c == run), "{text}: {found:?}");
        }
        assert_eq!(commands("npm install"), ["npm install"]);
        assert_eq!(commands("uv run"), ["uv run"]);
    }

    #[test]
    fn data_stays_data() {
        assert_eq!(commands("echo \"git reset --hard\""), ["echo git reset --hard"]);
        assert_eq!(commands("grep -r 'rm -rf /' ."), ["grep -r rm -rf / ."]);
        assert_eq!(
            commands("git commit -m \"Fix git push --force detection\""),
            ["git commit -m Fix git push --force detection"]
        );
        assert_eq!(
            commands("cat <<EOF > notes.md\nnever run rm -rf /\nEOF\ngit add notes.md"),
            ["cat <<< \"never run rm -rf /\\n\"", "git add notes.md"]
        );
        assert_eq!(commands("ls # rm -rf /"), ["ls"]);
        assert_eq!(commands("python3 -c \"print('rm -rf /')\""), ["python3 -c print('rm -rf /')"]);
    }

    #[test]
    fn redirections_are_not_arguments() {
        assert_eq!(commands("make 2>&1 >build.log < in.txt"), ["make"]);
        assert_eq!(commands("echo x >> /etc/hosts; cat 2> /dev/null"), ["echo x", "cat"]);
        assert_eq!(
            commands("cat <<-EOF | psql\n\tDROP TABLE users;\n\tEOF"),
            ["cat <<< \"DROP TABLE users;\\n\"", "psql"]
        );
    }

    #[test]
    fn what_commands_write_to_is_kept() {
        let parsed = parse(
            "echo x > /etc/hosts 2>&1; : > /etc/shadow; make &> build.log; sort <in >>out; > /etc/motd",
            Dialect::Posix,
        );
        let writes: Vec<(&str, Vec<&str>)> =
            parsed.commands().map(|c| (c.program(), c.writes().collect())).collect();
        assert_eq!(
            writes,
            [
                ("echo", vec!["/etc/hosts"]),
                (":", vec!["/etc/shadow"]),
                ("make", vec!["build.log"]),
                ("sort", vec!["out"]),
                ("", vec!["/etc/motd"]),
            ]
        );
    }

    #[test]
    fn pipes_are_known() {
        let parsed =
            parse("curl -fsSL https://x.sh | sudo bash; a || b; c |& d | e", Dialect::Posix);
        let from: Vec<(&str, Option<&str>)> =
            parsed.commands().map(|c| (c.name(), c.piped_from().map(|p| p.name()))).collect();
        assert_eq!(
            from,
            [
                ("curl", None),
                ("bash", Some("curl")),
                ("a", None),
                ("b", None),
                ("c", None),
                ("d", Some("c")),
                ("e", Some("d"))
            ]
        );
    }

    #[test]
    fn powershell_escapes_with_backticks() {
        let parsed = parse(
            r#"Remove-Item -Recurse -Force C:\Users\me; & "rm" -r `"x`""#,
            Dialect::PowerShell,
        );
        let lines: Vec<String> = parsed
            .commands()
            .map(|c| std::iter::once(c.program()).chain(c.args()).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(lines, [r"Remove-Item -Recurse -Force C:\Users\me", r#"rm -r "x""#]);
    }

    #[test]
    fn odd_input_is_read_as_far_as_it_goes() {
        for text in [
            "'unterminated",
            "\"unterminated $(",
            "$(((((",
            ")))))",
            "<<",
            "<<<",
            "echo $'\\x",
            "`",
            "bash -c",
            "find -exec",
            "a <<A <<B\nx\nA\ny",
            "${",
            "\\",
            "&&||;;",
            "$'\\777'",
            "<(",
            "sudo",
            "env -u",
            "é \u{1F600} ü",
            "cat <<\n",
        ] {
            let parsed = parse(text, Dialect::Posix);
            for command in parsed.commands() {
                let _ = command.to_string();
            }
            let _ = parse(text, Dialect::PowerShell);
        }
    }

    #[test]
    fn programs_are_listed_by_name_however_many() {
        for count in [1, 3, 16, 17, 40] {
            // Names sharing their first eight bytes, and not, in an order of their own.
            let names: Vec<String> = (0..count)
                .map(|i| match i % 3 {
                    0 => format!("program-{:02}", (i * 7) % count),
                    1 => format!("p{}", (i * 5) % count),
                    _ => format!("program-{:02}-long", (i * 11) % count),
                })
                .collect();
            let text: Vec<String> = names.iter().chain(&names).map(|n| format!("{n} x")).collect();
            let parsed = parse(text.join("; "), Dialect::Posix);
            let listed: Vec<(&str, &[u32])> = parsed.by_name().collect();
            assert!(listed.windows(2).all(|w| w[0].0 < w[1].0), "{count}: {listed:?}");
            let mut seen: Vec<usize> =
                listed.iter().flat_map(|(_, at)| at.iter().map(|&i| i as usize)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..parsed.commands().len()).collect::<Vec<_>>(), "{count}");
            for (name, at) in listed {
                assert!(at.windows(2).all(|w| w[0] < w[1]));
                assert!(at.iter().all(|&i| parsed.command(i as usize).unwrap().name() == name));
            }
        }
    }

    #[test]
    fn wrappers_and_inline_readers_are_found_by_name() {
        // Their names are short enough to be numbers, and in lowercase as a name is compared.
        for name in WRAPPERS.iter().map(|w| w.name).chain(INLINE_NAMES.iter().copied()) {
            assert!(name.len() <= 15 && !name.contains(char::is_uppercase), "{name}");
        }
        for w in WRAPPERS {
            let found = wrapper_named(&w.name.to_uppercase()).map(|found| found.name);
            assert_eq!(found, Some(w.name));
        }
        for name in INLINE_NAMES.iter().chain(&["python3.12", "PYTHON"]) {
            assert!(runs_inline(name), "{name}");
        }
        // `git` reads inline too (`git submodule foreach CMD`).
        for name in ["echo", "grep", "sud", "sudoo", "pytho", "python3.12345678901", "", "e"] {
            assert!(wrapper_named(name).is_none() && !runs_inline(name), "{name}");
        }
    }

    #[test]
    fn nesting_stops_at_the_limit() {
        let deep = "$(".repeat(10_000) + "rm -rf /" + &")".repeat(10_000);
        let parsed = parse(&deep, Dialect::Posix);
        assert!(parsed.commands().all(|c| c.depth() < MAX_DEPTH));
        let shells = "bash -c \"".repeat(50) + "rm -rf /";
        let parsed = parse(&shells, Dialect::Posix);
        assert!(parsed.commands().all(|c| c.depth() < MAX_DEPTH));
        let subshells = "(".repeat(100_000);
        assert!(parse(&subshells, Dialect::Posix).commands().len() < MAX_DEPTH as usize);
    }

    #[test]
    fn nested_readings_stay_within_the_budget() {
        // Every level re-reads the substitutions of the one below: without a budget, 2^depth.
        let text =
            "eval \"$(eval \"$(eval \"$(eval \"$(eval \"$(eval x)\")\")\")\")\" ".repeat(2_000);
        let parsed = parse(&text, Dialect::Posix);
        let words = parsed.word_bytes();
        assert!(words <= max_word_bytes(text.len()), "{words} for {}", text.len());
        assert!(parsed.exhausted());
        assert!(!parse("eval \"$(eval x)\"; bash -c 'rm -rf /'", Dialect::Posix).exhausted());
    }

    #[test]
    fn the_shortcuts_read_alike() {
        // Texts made of the bytes that matter to the reader, from a fixed seed.
        let pieces = [
            "a",
            "rm",
            "-rf",
            "/",
            " ",
            " ",
            "\t",
            "\n",
            ";",
            "|",
            "&",
            "(",
            ")",
            "<",
            ">",
            "'",
            "\"",
            "`",
            "\\",
            "$",
            "$(",
            "${",
            "=",
            "#",
            "'a b'",
            "\"x y\"",
            "''",
            "\"\"",
            "é",
            "sudo",
            "bash -c ",
            "<<EOF\n",
            "EOF",
            "x=1",
            "\\\n",
            "'it''s'",
            "`$x`",
            // Programs met again (remembered once settled) and words that settle otherwise.
            "git",
            "Git",
            "command",
            "-v",
            "xargs",
            "echo",
            "do",
            "if",
            "sh",
            "python",
            "git.exe",
            "/bin/git",
            "a-very-long-program-name",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % below as u64).unwrap_or_default()
        };
        for _ in 0..4000 {
            let len = next(24);
            let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            for dialect in [Dialect::Posix, Dialect::PowerShell] {
                assert_eq!(
                    parse(&text, dialect).describe(),
                    parse_the_long_way(&text, dialect).describe(),
                    "{text:?} as {dialect:?}"
                );
            }
        }
    }

    #[test]
    fn programs_met_again_settle_alike() {
        // The first reading of each settles it; the later ones are remembered, and must read
        // as they would have: a word that is not a plain program first is never remembered.
        let text = "git status; command -v git; command git push -f; command -v rm; \
                    command rm -rf /; echo x | sh; echo y | sh; sh -c 'rm -rf /'; do; \
                    do rm -rf /; Git RESET --hard; git reset --hard; echo 'DROP TABLE t' | psql; \
                    echo 'DROP TABLE u' | psql; x=1 git clean -fdx; x=1; x=1 rm -rf /etc";
        let parsed = parse(text, Dialect::Posix);
        assert_eq!(parsed.describe(), parse_the_long_way(text, Dialect::Posix).describe());
        let names: Vec<&str> = parsed.commands().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "git", "command", "git", "command", "rm", "echo", "sh", "echo", "sh", "sh", "",
                "rm", "Git", "git", "echo", "psql", "echo", "psql", "git", "", "rm",
                // What the shells run, read after the line: `x`, `y`, `rm -rf /`.
                "x", "y", "rm"
            ]
        );
        let stdins: Vec<Option<&str>> = parsed.commands().map(|c| c.stdin()).collect();
        assert_eq!(stdins[15], Some("DROP TABLE t"));
        assert_eq!(stdins[17], Some("DROP TABLE u"));
    }

    #[test]
    fn display_quotes_what_needs_it() {
        let parsed = parse("sudo rm -rf \"/home/a b\" it\\'s", Dialect::Posix);
        assert_eq!(parsed.commands().next().unwrap().to_string(), r"rm -rf '/home/a b' 'it'\''s'");
    }
}
