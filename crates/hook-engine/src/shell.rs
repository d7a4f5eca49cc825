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
    /// Whether words may be taken whole ([`parse_the_long_way`]).
    shortcuts: bool,
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
    /// that follow its words.
    writes_end: u32,
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

    /// All of it, a line per command (name, program, arguments, wrappers, files written,
    /// standard input, the command piped from, depth), then a line per name with its commands,
    /// after whether some was left unread: for tests and the fuzz target to compare two readings.
    #[doc(hidden)]
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!("{}", self.exhausted)];
        for c in self.commands() {
            let args: Vec<&str> = c.args().collect();
            let wrappers: Vec<&str> = c.wrappers().collect();
            let writes: Vec<&str> = c.writes().collect();
            let from = c.piped_from().map(|f| f.index());
            let (name, program, stdin, depth) = (c.name(), c.program(), c.stdin(), c.depth());
            lines.push(format!(
                "{name:?} {program:?} {args:?} {wrappers:?} {writes:?} {stdin:?} {from:?} {depth}"
            ));
        }
        lines.extend(self.by_name().map(|(name, commands)| format!("{name:?} {commands:?}")));
        lines
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

/// What an inline shell runs.
enum Inline {
    /// One word: `bash -c WORD`, a heredoc fed to `sh`.
    Word(usize),
    /// Words joined by spaces, as a shell reads them again: `eval a b c`, `ssh host a b`.
    Words(Range<usize>),
    /// Words that are a program and its arguments already: `find -exec …`, `docker exec`.
    Argv(Range<usize>),
    /// A command line made here: what `xargs` runs, what an interpreter's code runs.
    Text(String),
}

/// What `echo` or `printf` writes becomes the standard input of the command it is piped to
/// (`echo 'rm -rf /' | sh`, `echo /etc | xargs rm -rf`, `echo 'DROP TABLE t' | psql`).
fn feed(parsed: &mut Parsed, index: usize) {
    let raw = &parsed.commands[index];
    if parsed.stdin(index).is_some() {
        return;
    }
    let Some(at) = some(raw.piped_from) else { return };
    let Some(from) = parsed.commands.get(at) else { return };
    let command = Command { parsed, raw: from, index: at };
    let name = command.name();
    if !matches!(name, "echo" | "printf") {
        return;
    }
    let args: Vec<&str> = command.args().collect();
    let text = match name {
        "echo" => {
            let start = args.iter().take_while(|a| matches!(**a, "-n" | "-e" | "-E")).count();
            args[start..].join(" ")
        }
        "printf" => match args.split_first() {
            Some((format, rest)) if format.contains('%') && !rest.is_empty() => rest.join("\n"),
            Some((format, _)) => format.replace("\\n", "\n"),
            None => return,
        },
        _ => return,
    };
    let word = parsed.push(&text);
    parsed.words.push(word);
    parsed.stdins.insert(self::index(index), self::index(parsed.words.len() - 1));
}

/// Finds command `index`'s program past assignments and wrappers; says what it runs inline.
fn settle(parsed: &mut Parsed, index: usize) -> Option<Inline> {
    let (words, stdin) = (parsed.commands[index].words.range(), parsed.stdin(index));
    let (i, xargs) = program_of(parsed, words.clone()).unwrap_or_else(|query| (query, false));
    parsed.commands[index].program = self::index(i.min(words.end));
    let Some(&word) = parsed.words.get(i).filter(|_| i < words.end) else {
        parsed.commands[index].name = parsed.name_index(Span::default());
        return None;
    };
    // Its name (`Command::name`), and the last part of its path (`.exe` and all).
    let name = name_range(parsed.span(word));
    let start = word.start as usize;
    parsed.commands[index].name =
        parsed.name_index(Span::new(start + name.start..start + name.end));
    let base = Span::new(start + name.start..word.end as usize);
    // Most programs run nothing inline: they are told apart without trying each reader.
    let inline = runs_inline(parsed.span(base));
    let mut buffer = [0u8; 16];
    let name = lowercase(parsed.span(base), &mut buffer);
    let rest = i + 1..words.end;
    if !inline {
        debug_assert!(
            runner(parsed, name, rest.clone()).is_none()
                && !is_interpreter(name)
                && !matches!(name, "eval" | "find")
                && run_elsewhere(parsed, name, rest.clone()).is_none()
                && !is_shell(name),
            "`{name}` runs something inline: name it in INLINE_NAMES"
        );
        if !(xargs && stdin.is_some()) {
            return None;
        }
    }
    if let Some(runs) = runner(parsed, name, rest.clone()) {
        return Some(Inline::Argv(runs));
    }
    if xargs && let Some(stdin) = stdin {
        // `echo /etc | xargs rm -rf` runs `rm -rf /etc`.
        let mut text: Vec<String> = (i..words.end).map(|j| quote(parsed.word(j))).collect();
        text.extend(parsed.word(stdin).split_whitespace().map(quote));
        return Some(Inline::Text(text.join(" ")));
    }
    if is_interpreter(name) {
        // `python -c CODE`, `node -e CODE`, `ruby -e`, `perl -e`, `php -r`, or code on stdin:
        // the commands its calls of `os.system`, `subprocess.run`, `execSync`, … run.
        let code = rest
            .clone()
            .position(|j| CODE_FLAGS.contains(&parsed.word(j)))
            .map(|at| rest.start + at + 1)
            .filter(|&j| j < words.end)
            .or(stdin)?;
        let run = code_commands(parsed.word(code));
        return (!run.is_empty()).then(|| Inline::Text(run.join("\n")));
    }
    if name == "eval" {
        return (!rest.is_empty()).then_some(Inline::Words(rest));
    }
    if let Some(elsewhere) = run_elsewhere(parsed, name, rest.clone()) {
        // `ssh` hands its words to a shell on the host; containers and pods run them as is.
        return Some(if name == "ssh" {
            Inline::Words(elsewhere)
        } else {
            Inline::Argv(elsewhere)
        });
    }
    if is_shell(name) {
        // `bash -c 'cmd'`, `bash -lc 'cmd'`, `sh -e -c 'cmd'`: the first operand after the
        // options; without `-c`, the shell reads its standard input.
        let mut c = false;
        for j in rest.clone() {
            let word = parsed.word(j);
            if word.starts_with('-') && !word.starts_with("--") && word.len() > 1 {
                c |= word[1..].contains('c');
                continue;
            }
            if word.starts_with("--") {
                continue;
            }
            return c.then_some(Inline::Word(j));
        }
        return if c { None } else { stdin.map(Inline::Word) };
    }
    if name == "find" {
        // `find … -exec cmd … ;` (or `+`, `-execdir`, `-ok`).
        let start = rest.clone().find(|&j| FIND_EXEC.contains(&parsed.word(j)))? + 1;
        let end = (start..words.end)
            .find(|&j| matches!(parsed.word(j), ";" | "+" | "\\;"))
            .unwrap_or(words.end);
        return (start < end).then_some(Inline::Argv(start..end));
    }
    None
}

/// Where the program of a command of `words` is: past reserved words, assignments and wrappers
/// with their options; and whether `xargs` was among them. `Err` with the wrapper's index when
/// a wrapper only asks about a program (`command -v rm`): it is the program then.
fn program_of(parsed: &Parsed, words: Range<usize>) -> Result<(usize, bool), usize> {
    let mut i = words.start;
    // Reserved words that open or close a compound command.
    while i < words.end && is_reserved(parsed.word(i)) {
        i += 1;
    }
    // Each round takes at least the wrapper's name: at most one round per word.
    let mut xargs = false;
    loop {
        while i < words.end && is_assignment(parsed.word(i)) {
            i += 1;
        }
        if i >= words.end {
            break;
        }
        let base = basename(parsed.word(i));
        let Some(wrapper) = wrapper_named(base) else { break };
        xargs |= wrapper.name == "xargs";
        let at = i;
        i += 1;
        // Its options, and those that take a value, with the value.
        while i < words.end {
            let word = parsed.word(i);
            if word == "--" {
                i += 1;
                break;
            }
            if !word.starts_with('-') || word.len() < 2 {
                break;
            }
            if wrapper.queries.contains(&word) {
                // `command -v rm` says where `rm` is; it runs nothing.
                return Err(at);
            }
            i += 1;
            if wrapper.valued.contains(&word) {
                i += 1;
            }
        }
        // `timeout 30 cmd`, `taskset 0x1 cmd`, `flock /tmp/lock cmd`: a first operand.
        if wrapper.operand && i < words.end {
            i += 1;
        }
    }
    Ok((i, xargs))
}

/// The command a program runs somewhere else: in a container (`docker exec CONTAINER cmd…`,
/// `docker run IMAGE cmd…`), in a pod (`kubectl exec POD -- cmd…`), on a host (`ssh HOST cmd…`).
fn run_elsewhere(parsed: &Parsed, name: &str, rest: Range<usize>) -> Option<Range<usize>> {
    let word = |j: usize| parsed.word(j);
    let mut j = rest.start;
    let (valued, operands_before): (&[&str], usize) = match name {
        "docker" | "podman" | "nerdctl" => {
            // `docker [global options] [container] exec|run [options] NAME cmd…`
            while j < rest.end && word(j).starts_with('-') {
                j += if DOCKER_GLOBAL_VALUED.contains(&word(j)) { 2 } else { 1 };
            }
            if word(j) == "container" {
                j += 1;
            }
            if !matches!(word(j), "exec" | "run") {
                return None;
            }
            j += 1;
            (DOCKER_RUN_VALUED, 1)
        }
        "kubectl" | "oc" => {
            // Only after `--`: `kubectl exec -it POD -- cmd…`.
            let dash = (rest.start..rest.end).find(|&k| word(k) == "--")?;
            let exec = (rest.start..dash).any(|k| word(k) == "exec");
            return (exec && dash + 1 < rest.end).then_some(dash + 1..rest.end);
        }
        "ssh" => (SSH_VALUED, 1),
        _ => return None,
    };
    let mut operands = 0;
    while j < rest.end {
        let w = word(j);
        if w == "--" {
            j += 1;
            continue;
        }
        if w.starts_with('-') && w.len() > 1 {
            j += if valued.contains(&w) { 2 } else { 1 };
            continue;
        }
        if operands == operands_before {
            break;
        }
        operands += 1;
        j += 1;
    }
    (j < rest.end).then_some(j..rest.end)
}

/// The command a project's tool runner runs: `bundle exec cmd…`, `npm exec -- cmd…`, `pnpm
/// exec|dlx`, `yarn exec|dlx`, `bun x`, `uv run`, `poetry run`, `pipenv run`, `pdm run`,
/// `hatch run`.
fn runner(parsed: &Parsed, name: &str, rest: Range<usize>) -> Option<Range<usize>> {
    let runs: &[&str] = match name {
        "bundle" | "npm" => &["exec"],
        "pnpm" | "yarn" => &["exec", "dlx"],
        "bun" => &["x"],
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" => &["run"],
        _ => return None,
    };
    let first = (rest.start..rest.end).find(|&j| !parsed.word(j).starts_with('-'))?;
    if !runs.contains(&parsed.word(first)) {
        return None;
    }
    let mut j = first + 1;
    while j < rest.end {
        let word = parsed.word(j);
        if word == "--" {
            j += 1;
            break;
        }
        if !word.starts_with('-') || word.len() < 2 {
            break;
        }
        j += if RUNNER_VALUED.contains(&word) { 2 } else { 1 };
    }
    (j < rest.end).then_some(j..rest.end)
}

/// Options of the tool runners that take a value.
const RUNNER_VALUED: &[&str] =
    &["--with", "--python", "-p", "--package", "--from", "-w", "--workspace", "-C", "--dir"];

/// Global options of `docker` that take a value.
const DOCKER_GLOBAL_VALUED: &[&str] =
    &["-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--connection"];

/// Options of `docker exec` and `docker run` that take a value.
const DOCKER_RUN_VALUED: &[&str] = &[
    "-e",
    "--env",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "-v",
    "--volume",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "-p",
    "--publish",
    "--mount",
    "--env-file",
    "-l",
    "--label",
    "--platform",
    "--pull",
    "--restart",
    "-m",
    "--memory",
    "--cpus",
    "-h",
    "--hostname",
    "--add-host",
    "--device",
    "--dns",
    "--log-driver",
    "--tmpfs",
    "--ulimit",
    "--gpus",
    "--detach-keys",
    "--cidfile",
    "--ipc",
    "--pid",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--volumes-from",
    "--link",
    "--expose",
    "--label-file",
];

/// Options of `ssh` that take a value.
const SSH_VALUED: &[&str] = &[
    "-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-W", "-b", "-c", "-E", "-e", "-m", "-O",
    "-Q", "-S", "-w", "-B", "-I",
];

/// Whether `name` (lowercase) is an interpreter whose inline code may run commands.
fn is_interpreter(name: &str) -> bool {
    name.starts_with("python")
        || matches!(name, "node" | "nodejs" | "deno" | "bun" | "perl" | "ruby" | "php")
}

/// The options after which an interpreter's inline code comes.
const CODE_FLAGS: &[&str] = &["-c", "-e", "-E", "--eval", "-r", "-p", "--print"];

/// The calls with which code runs a command line (or a program and its arguments).
const EXEC_CALLS: &[&str] = &[
    "system",
    "popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "execSync",
    "execFileSync",
    "spawnSync",
    "spawn",
    "exec",
    "execFile",
    "shell_exec",
    "passthru",
    "Deno.Command",
    "Bun.spawn",
    "Bun.spawnSync",
    "IO.popen",
    "Open3.capture2",
    "Open3.capture3",
];

/// The command lines `code` runs through [`EXEC_CALLS`]: a call's first argument when it is a
/// string, or the strings of a list it starts with (`['git', 'reset', '--hard']`), joined by
/// spaces. Each byte of `code` is looked at a bounded number of times.
fn code_commands(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'(') {
        let open = i + offset;
        i = open + 1;
        let before = &code[..open];
        let called = EXEC_CALLS.iter().any(|call| {
            before.ends_with(call)
                && !before[..before.len() - call.len()]
                    .bytes()
                    .next_back()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        if !called {
            continue;
        }
        let mut j = open + 1;
        while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let list = bytes.get(j) == Some(&b'[');
        let mut strings = Vec::new();
        while let Some(&b) = bytes.get(j) {
            match b {
                b'\'' | b'"' | b'`' => {
                    let (string, end) = string_literal(bytes, j);
                    strings.push(string);
                    j = end;
                    if !list {
                        break;
                    }
                }
                b']' | b')' => break,
                _ => j += 1,
            }
        }
        i = i.max(j);
        if !strings.is_empty() {
            found.push(strings.join(" "));
        }
    }
    found
}

/// The string literal that opens at `at` (its quote), unescaped, and where it ends.
fn string_literal(bytes: &[u8], at: usize) -> (String, usize) {
    let quote = bytes[at];
    let mut out = Vec::new();
    let mut j = at + 1;
    while let Some(&b) = bytes.get(j) {
        j += 1;
        match b {
            _ if b == quote => break,
            b'\\' => {
                if let Some(&next) = bytes.get(j) {
                    out.push(next);
                    j += 1;
                }
            }
            _ => out.push(b),
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), j)
}

/// Words that open or close a compound command, skipped before a program.
pub const RESERVED: &[&str] =
    &["if", "then", "elif", "else", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"];

/// Whether `word` is one of [`RESERVED`] (as a number: no word is compared byte by byte).
fn is_reserved(word: &str) -> bool {
    /// A word of up to 7 bytes as a number (its length in the top byte).
    const fn key(word: &[u8]) -> u64 {
        let mut key = (word.len() as u64) << 56;
        let mut i = 0;
        while i < word.len() {
            key |= (word[i] as u64) << (8 * i);
            i += 1;
        }
        key
    }
    const KEYS: [u64; RESERVED.len()] = {
        let mut keys = [0; RESERVED.len()];
        let mut i = 0;
        while i < RESERVED.len() {
            keys[i] = key(RESERVED[i].as_bytes());
            i += 1;
        }
        keys
    };
    word.len() <= 5 && KEYS.contains(&key(word.as_bytes()))
}

/// Shells whose `-c` operand, or standard input, is a command line.
fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "fish" | "busybox-sh")
}

/// `find` options that run a command.
const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// A program that runs the command after its options.
struct Wrapper {
    name: &'static str,
    /// Options followed by a value.
    valued: &'static [&'static str],
    /// Options with which it runs nothing (`command -v`).
    queries: &'static [&'static str],
    /// Whether an operand comes before the command (`timeout DURATION cmd`).
    operand: bool,
}

const fn wrapper(name: &'static str, valued: &'static [&'static str]) -> Wrapper {
    Wrapper { name, valued, queries: &[], operand: false }
}

/// In order of name.
const WRAPPERS: &[Wrapper] = &[
    wrapper("builtin", &[]),
    wrapper("bunx", &["-p", "--package"]),
    wrapper("busybox", &[]),
    wrapper("caffeinate", &["-t", "-w"]),
    wrapper("chrt", &[]),
    Wrapper { name: "command", valued: &[], queries: &["-v", "-V"], operand: false },
    wrapper("doas", &["-u", "-C"]),
    wrapper("env", &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"]),
    wrapper("exec", &["-a"]),
    Wrapper { name: "flock", valued: &["-w", "-E", "--timeout"], queries: &[], operand: true },
    wrapper("ionice", &["-c", "-n", "-p", "--class", "--classdata"]),
    wrapper("ltrace", &["-o", "-e", "-p", "-s"]),
    wrapper("nice", &["-n", "--adjustment"]),
    wrapper("nohup", &[]),
    wrapper("npx", &["-p", "--package", "--node-options", "--registry"]),
    wrapper("pkexec", &["--user"]),
    wrapper("pnpx", &["-p", "--package"]),
    wrapper("run0", &["-u", "--user"]),
    wrapper("setsid", &[]),
    wrapper("stdbuf", &["-i", "-o", "-e"]),
    wrapper("strace", &["-o", "-e", "-p", "-s"]),
    wrapper("sudo", &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"]),
    Wrapper { name: "taskset", valued: &[], queries: &[], operand: true },
    wrapper("time", &["-f", "-o", "--format", "--output"]),
    Wrapper {
        name: "timeout",
        valued: &["-s", "-k", "--signal", "--kill-after"],
        queries: &[],
        operand: true,
    },
    wrapper("unbuffer", &[]),
    wrapper("uvx", &["--from", "--with", "--python", "-p"]),
    wrapper("watch", &["-n", "-d", "--interval", "-c"]),
    wrapper(
        "xargs",
        &[
            "-I",
            "-i",
            "-n",
            "-P",
            "-d",
            "-L",
            "-l",
            "-s",
            "-E",
            "-e",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--replace",
            "--eof",
        ],
    ),
];

/// For each length up to 16, the first and the last bytes (bit `b % 64` of each) of the names
/// of that length in a list: most names are told from the list's without a search ([`may_be`]).
type Ends = [(u64, u64); 17];

/// Marks `name` (ASCII lowercase) in `ends`.
const fn mark(ends: &mut Ends, name: &[u8]) {
    ends[name.len()].0 |= 1 << (name[0] % 64);
    ends[name.len()].1 |= 1 << (name[name.len() - 1] % 64);
}

/// The ends of the wrappers' names.
const WRAPPER_ENDS: Ends = {
    let mut ends = [(0, 0); 17];
    let mut i = 0;
    while i < WRAPPERS.len() {
        mark(&mut ends, WRAPPERS[i].name.as_bytes());
        i += 1;
    }
    ends
};

/// The wrapper `name` (the last part of a program's path, in any case) is.
fn wrapper_named(name: &str) -> Option<&'static Wrapper> {
    /// The wrappers' names as numbers ([`name_key`]).
    const KEYS: [u128; WRAPPERS.len()] = {
        let mut keys = [0; WRAPPERS.len()];
        let mut i = 0;
        while i < WRAPPERS.len() {
            keys[i] = name_key(WRAPPERS[i].name.as_bytes());
            i += 1;
        }
        keys
    };
    if !may_be(&WRAPPER_ENDS, name.as_bytes()) {
        return None;
    }
    let key = name_key(name.as_bytes());
    KEYS.iter().position(|&k| k == key).and_then(|at| WRAPPERS.get(at))
}

/// Whether `name` (the last part of a program's path, in any case) is one whose arguments or
/// input `settle` reads as commands ([`INLINE_NAMES`], or a `python…`).
fn runs_inline(name: &str) -> bool {
    /// [`INLINE_NAMES`] as numbers ([`name_key`]).
    const KEYS: [u128; INLINE_NAMES.len()] = {
        let mut keys = [0; INLINE_NAMES.len()];
        let mut i = 0;
        while i < INLINE_NAMES.len() {
            keys[i] = name_key(INLINE_NAMES[i].as_bytes());
            i += 1;
        }
        keys
    };
    let bytes = name.as_bytes();
    may_be(&INLINE_ENDS, bytes)
        && (KEYS.contains(&name_key(bytes))
            || (bytes.len() <= 16
                && bytes.get(..6).is_some_and(|b| b.eq_ignore_ascii_case(b"python"))))
}

/// A name of up to 15 bytes in ASCII lowercase as a number (its length in the top byte), for a
/// name to be found in a short list without comparing bytes; 0 for a longer one.
const fn name_key(name: &[u8]) -> u128 {
    if name.len() > 15 {
        return 0;
    }
    let mut key = (name.len() as u128) << 120;
    let mut i = 0;
    while i < name.len() {
        key |= (name[i].to_ascii_lowercase() as u128) << (8 * i);
        i += 1;
    }
    key
}

/// Whether `name`, in any case, may be one of the names whose `ends` these are.
fn may_be(ends: &Ends, name: &[u8]) -> bool {
    let (Some(first), Some(last)) = (name.first(), name.last()) else {
        return false;
    };
    ends.get(name.len()).is_some_and(|(starts, ends)| {
        starts & (1 << (first.to_ascii_lowercase() % 64)) != 0
            && ends & (1 << (last.to_ascii_lowercase() % 64)) != 0
    })
}

/// The programs (in ASCII lowercase) whose arguments or input `settle` reads as commands: tool
/// runners, interpreters (and every `python…`), `eval`, programs that run commands elsewhere,
/// shells, `find`. A name not here is told apart by its length and ends alone
/// ([`may_be`]); a debug assertion in `settle` catches a reader of a name left out.
const INLINE_NAMES: &[&str] = &[
    "bundle",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "rye",
    "python",
    "node",
    "nodejs",
    "deno",
    "perl",
    "ruby",
    "php",
    "eval",
    "docker",
    "podman",
    "nerdctl",
    "kubectl",
    "oc",
    "ssh",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "ash",
    "mksh",
    "fish",
    "busybox-sh",
    "find",
];

/// The ends of [`INLINE_NAMES`], and of every name from `python` up to 16 bytes long.
const INLINE_ENDS: Ends = {
    let mut ends = [(0, 0); 17];
    let mut i = 0;
    while i < INLINE_NAMES.len() {
        mark(&mut ends, INLINE_NAMES[i].as_bytes());
        i += 1;
    }
    let mut len = b"python".len();
    while len < ends.len() {
        ends[len].0 |= 1 << (b'p' % 64);
        ends[len].1 = u64::MAX;
        len += 1;
    }
    ends
};

/// `word` in ASCII lowercase, in `buffer`; empty when it is longer than the buffer (no program
/// these lists name is).
pub(crate) fn lowercase<'b>(word: &'b str, buffer: &'b mut [u8; 16]) -> &'b str {
    if word.len() > buffer.len() {
        return "";
    }
    if !word.bytes().any(|b| b.is_ascii_uppercase()) {
        return word;
    }
    let Some(lower) = buffer.get_mut(..word.len()) else { return "" };
    lower.copy_from_slice(word.as_bytes());
    lower.make_ascii_lowercase();
    std::str::from_utf8(lower).unwrap_or_default()
}

/// A program's name: the last part of its path, without a Windows program's extension.
fn program_name(program: &str) -> &str {
    program.get(name_range(program)).unwrap_or_default()
}

/// Where [`program_name`] is in `program` (at ASCII bytes: whole characters).
fn name_range(program: &str) -> Range<usize> {
    let bytes = program.as_bytes();
    let start = bytes.iter().rposition(|&b| b == b'/' || b == b'\\').map_or(0, |at| at + 1);
    let end = bytes.len();
    if end - start >= 5 && bytes[end - 4] == b'.' {
        let extension = &bytes[end - 3..];
        if [b"exe", b"cmd", b"bat", b"com"].iter().any(|e| extension.eq_ignore_ascii_case(*e)) {
            return start..end - 4;
        }
    }
    start..end
}

fn basename(word: &str) -> &str {
    match word.bytes().rposition(|b| b == b'/' || b == b'\\') {
        Some(at) => &word[at + 1..],
        None => word,
    }
}

/// `NAME=value` (a variable assignment before a command).
fn is_assignment(word: &str) -> bool {
    let bytes = word.as_bytes();
    if !bytes.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') {
        return false;
    }
    let name = bytes.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    matches!(&bytes[name..], [b'=', ..] | [b'+', b'=', ..])
}

/// Bytes that end a plain run of a word: blanks, operators, quotes, escapes, expansions.
const SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let special = b" \t\r\n;|&<>()`\\'\"$";
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
};

/// Bytes of the text as a string: cut at ASCII bytes, they are whole characters and borrowed.
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// A heredoc whose body comes after the current line.
struct Pending {
    delimiter: String,
    strip_tabs: bool,
    command: usize,
}

/// Reads one level of a command line; a nested level (a subshell, `$(…)`) is read by a lexer
/// of its own over the same bytes, so that every word is built whole before it is stored.
struct Lexer<'s, 'p, 't> {
    /// The text, and its bytes.
    t: &'s str,
    s: &'s [u8],
    /// Where the text's copy begins in `parsed.text`.
    base: usize,
    i: usize,
    dialect: Dialect,
    depth: u8,
    parsed: &'p mut Parsed<'t>,
    /// The command whose output the next command reads (after `|`).
    pipe: Option<usize>,
    /// The command being read, its words so far and the files it writes to (ranges of
    /// `parsed.text`).
    current: Option<usize>,
    words: Vec<Span>,
    writes: Vec<Span>,
    /// The word being read.
    word: String,
    /// Heredocs opened on the current line.
    line: Vec<Pending>,
}

impl<'s, 't> Lexer<'s, '_, 't> {
    fn new<'p>(
        t: &'s str,
        base: usize,
        i: usize,
        dialect: Dialect,
        depth: u8,
        parsed: &'p mut Parsed<'t>,
    ) -> Lexer<'s, 'p, 't> {
        Lexer {
            t,
            s: t.as_bytes(),
            base,
            i,
            dialect,
            depth,
            parsed,
            pipe: None,
            current: None,
            words: Vec::new(),
            writes: Vec::new(),
            word: String::new(),
            line: Vec::new(),
        }
    }

    fn peek(&self, at: usize) -> Option<u8> {
        self.s.get(self.i + at).copied()
    }

    /// Reads commands until the end, or the `)` that ends a subshell or `$(` when `closed`.
    fn list(&mut self, closed: bool) {
        while let Some(b) = self.peek(0) {
            match b {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' => {
                    self.i += 1;
                    self.end();
                    self.pipe = None;
                    self.heredocs();
                }
                b'#' => self.skip_comment(),
                // `&>file`: both streams to a file.
                b'&' if self.peek(1) == Some(b'>') => self.i += 1,
                b'&' => {
                    self.i += 1;
                    // PowerShell's `&` calls the command after it; `&&` ends one either way.
                    if self.dialect == Dialect::Posix || self.peek(0) == Some(b'&') {
                        self.end();
                        self.pipe = None;
                    }
                }
                b')' if closed => {
                    self.i += 1;
                    break;
                }
                // A pipe: the next command reads what this one writes (`|&` with its errors).
                b'|' if self.peek(1) != Some(b'|') => {
                    self.i += 1;
                    if self.peek(0) == Some(b'&') {
                        self.i += 1;
                    }
                    let from = self.current;
                    self.end();
                    self.pipe = from;
                }
                // `;`, `||`; a stray `)` (a `case` pattern's), a group's braces: separators.
                b';' | b'|' | b')' | b'}' => {
                    self.i += 1;
                    self.end();
                    self.pipe = None;
                }
                b'{' if self.peek(1).is_none_or(|b| b.is_ascii_whitespace()) => {
                    self.i += 1;
                    self.end();
                }
                b'(' => {
                    self.i += 1;
                    self.end();
                    self.nested();
                }
                b'<' | b'>' => {
                    self.open();
                    self.redirect();
                }
                _ => {
                    self.open();
                    // A word of digits right before `<` or `>` is a file descriptor.
                    let mut j = self.i;
                    while self.s.get(j).is_some_and(u8::is_ascii_digit) {
                        j += 1;
                    }
                    if j > self.i && matches!(self.s.get(j), Some(b'<' | b'>')) {
                        self.i = j;
                        continue;
                    }
                    if self.parsed.shortcuts && (self.plain_word() || self.quoted_word()) {
                        // The blank after a word, skipped here: one turn of this loop fewer.
                        if self.s.get(self.i) == Some(&b' ') {
                            self.i += 1;
                        }
                        continue;
                    }
                    if self.read_word() {
                        let word = self.store_word();
                        self.words.push(word);
                    }
                }
            }
        }
        self.end();
        // Heredocs whose body never came.
        self.line.clear();
    }

    /// Starts a command unless one is being read.
    fn open(&mut self) {
        if self.current.is_none() {
            let at = self.parsed.words.len();
            self.parsed.commands.push(Raw {
                words: Span::new(at..at),
                writes_end: index(at),
                program: index(at),
                piped_from: self.pipe.take().map_or(NONE, index),
                name: NONE,
                depth: self.depth,
            });
            self.current = Some(self.parsed.commands.len() - 1);
        }
    }

    /// Ends the command being read: its words go into `parsed`, one after the other.
    fn end(&mut self) {
        let Some(at) = self.current.take() else { return };
        let start = self.parsed.words.len();
        self.parsed.words.append(&mut self.words);
        let middle = self.parsed.words.len();
        if !self.writes.is_empty() {
            self.parsed.words.append(&mut self.writes);
        }
        let raw = &mut self.parsed.commands[at];
        raw.words = Span::new(start..middle);
        raw.writes_end = index(self.parsed.words.len());
        raw.program = index(start);
    }

    /// Moves the word just read into `parsed.text`; returns its range there.
    fn store_word(&mut self) -> Span {
        self.parsed.push(&self.word)
    }

    /// Reads a nested list (a subshell, `$(…)`, `<(…)`) up to its `)`; past [`MAX_DEPTH`],
    /// skips it, balancing parentheses.
    fn nested(&mut self) {
        if self.depth + 1 < MAX_DEPTH {
            let mut inner =
                Lexer::new(self.t, self.base, self.i, self.dialect, self.depth + 1, self.parsed);
            inner.list(true);
            self.i = inner.i;
        } else {
            let mut open = 1usize;
            while let Some(b) = self.peek(0) {
                self.i += 1;
                if b == b'(' {
                    open += 1;
                } else if b == b')' {
                    open -= 1;
                    if open == 0 {
                        return;
                    }
                }
            }
        }
    }

    fn skip_comment(&mut self) {
        if self.dialect == Dialect::PowerShell && self.i > 0 && self.s[self.i - 1] == b'<' {
            // `<# … #>`, a block comment.
            while self.i < self.s.len() && !(self.s[self.i] == b'#' && self.peek(1) == Some(b'>')) {
                self.i += 1;
            }
            self.i = (self.i + 2).min(self.s.len());
            return;
        }
        while self.peek(0).is_some_and(|b| b != b'\n') {
            self.i += 1;
        }
    }

    /// A redirection of the current command: its target is not an argument; a heredoc's body
    /// and a here-string become its standard input.
    fn redirect(&mut self) {
        let Some(at) = self.current else { return };
        if self.dialect == Dialect::Posix && self.s[self.i..].starts_with(b"<<<") {
            self.i += 3;
            self.blanks();
            if self.read_word() {
                let word = self.store_word();
                self.set_stdin(at, word);
            }
            return;
        }
        if self.dialect == Dialect::Posix && self.s[self.i..].starts_with(b"<<") {
            self.i += 2;
            let strip_tabs = self.peek(0) == Some(b'-');
            if strip_tabs {
                self.i += 1;
            }
            self.blanks();
            if self.read_word() {
                let delimiter = std::mem::take(&mut self.word);
                self.line.push(Pending { delimiter, strip_tabs, command: at });
            }
            return;
        }
        if self.dialect == Dialect::PowerShell && self.s[self.i..].starts_with(b"<#") {
            self.i += 1;
            self.skip_comment();
            return;
        }
        // `<(…)` and `>(…)`: commands whose output is a file name.
        if self.peek(1) == Some(b'(') {
            self.i += 2;
            self.nested();
            return;
        }
        // `>`, `>>`, `>|`, `<`, `<>`, `>&2`; then the target, which is not an argument. What
        // `>` writes to is kept (a descriptor it duplicates, `>&2`, is not a file).
        let output = self.s[self.i] == b'>';
        self.i += 1;
        let mut duplicates = false;
        while let Some(b @ (b'>' | b'|' | b'&')) = self.peek(0) {
            duplicates |= b == b'&';
            self.i += 1;
        }
        self.blanks();
        if self.read_word()
            && output
            && !(duplicates && self.word.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
        {
            let target = self.store_word();
            self.writes.push(target);
        }
    }

    fn set_stdin(&mut self, at: usize, word: Span) {
        self.parsed.words.push(word);
        let word = index(self.parsed.words.len() - 1);
        self.parsed.stdins.insert(index(at), word);
    }

    fn blanks(&mut self) {
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// After a newline: the bodies of the heredocs its line opened.
    fn heredocs(&mut self) {
        for pending in std::mem::take(&mut self.line) {
            let start = self.parsed.end();
            while let Some(rest) = self.s.get(self.i..).filter(|r| !r.is_empty()) {
                let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                self.i += (len + 1).min(rest.len());
                let mut line = &rest[..len];
                if pending.strip_tabs {
                    while let [b'\t', tail @ ..] = line {
                        line = tail;
                    }
                }
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line == pending.delimiter.as_bytes() {
                    break;
                }
                self.parsed.text.push_str(&lossy(line));
                self.parsed.text.push('\n');
            }
            let word = start..self.parsed.end();
            self.set_stdin(pending.command, Span::new(word));
        }
    }

    /// Reads one word, unquoted, into `self.word`; `false` when there is none here (an
    /// operator follows).
    fn read_word(&mut self) -> bool {
        self.word.clear();
        // Whether a word is here: a line continuation alone is none, `''` is an empty word.
        let mut seen = false;
        let escape = match self.dialect {
            Dialect::Posix => b'\\',
            Dialect::PowerShell => b'`',
        };
        while let Some(b) = self.peek(0) {
            if b == escape && self.peek(1) == Some(b'\n') {
                self.i += 2;
                continue;
            }
            match b {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')' => {
                    break;
                }
                b'`' if self.dialect == Dialect::Posix => self.backticks(),
                _ if b == escape => {
                    self.i += 1;
                    self.char();
                }
                b'\'' => {
                    self.i += 1;
                    self.single_quoted();
                }
                b'"' => {
                    self.i += 1;
                    self.double_quoted(escape);
                }
                b'$' => self.dollar(),
                _ => self.plain(),
            }
            seen = true;
        }
        seen
    }

    /// A word of bytes that mean nothing to the shell (most words are), stored at once: `false`
    /// when the word here is not one.
    fn plain_word(&mut self) -> bool {
        let len = self.run(|b| SPECIAL[usize::from(b)]);
        let ends = self.s.get(self.i + len).is_none_or(|&b| {
            matches!(
                b,
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')'
            )
        });
        if len == 0 || !ends || self.t.get(self.i..self.i + len).is_none() {
            return false;
        }
        let start = self.base + self.i;
        self.words.push(Span::new(start..start + len));
        self.i += len;
        true
    }

    /// A word that is one quoted string whose bytes are all as written (`'TODO'`, `"a b"`: no
    /// escape, expansion or doubled quote in it), stored at once: `false` when the word here is
    /// not one.
    fn quoted_word(&mut self) -> bool {
        let Some(quote @ (b'\'' | b'"')) = self.peek(0) else { return false };
        let escape = match self.dialect {
            Dialect::Posix => b'\\',
            Dialect::PowerShell => b'`',
        };
        let rest = &self.s[self.i + 1..];
        let len = if quote == b'\'' {
            rest.iter().position(|&b| b == b'\'')
        } else {
            rest.iter().position(|&b| matches!(b, b'"' | b'`' | b'$') || b == escape)
        };
        let Some(len) = len.filter(|&len| rest[len] == quote) else { return false };
        // What follows ends the word (a PowerShell `''` inside single quotes does not).
        let ends = rest.get(len + 1).is_none_or(|&b| {
            matches!(
                b,
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')'
            )
        });
        let start = self.i + 1;
        if !ends || self.t.get(start..start + len).is_none() {
            return false;
        }
        self.words.push(Span::new(self.base + start..self.base + start + len));
        self.i = start + len + 1;
        true
    }

    /// Copies a run of bytes that mean nothing to the shell, at once.
    fn plain(&mut self) {
        let len = self.run(|b| SPECIAL[usize::from(b)]);
        if len > 0 {
            self.copy(len);
        } else {
            self.char();
        }
    }

    /// The length of the run of bytes from here that `ends` does not end (it ends only at
    /// ASCII bytes, so the run is whole characters).
    fn run(&self, ends: impl Fn(u8) -> bool) -> usize {
        let rest = &self.s[self.i..];
        rest.iter().position(|&b| ends(b)).unwrap_or(rest.len())
    }

    /// Copies the next `len` bytes into the word, and moves past them.
    fn copy(&mut self, len: usize) {
        let end = (self.i + len).min(self.s.len());
        match self.t.get(self.i..end) {
            Some(run) => self.word.push_str(run),
            None => self.word.push_str(&lossy(&self.s[self.i..end])),
        }
        self.i = end;
    }

    /// Copies one character (a whole UTF-8 sequence) into the word.
    fn char(&mut self) {
        let rest = &self.s[self.i..];
        let len = match rest.first() {
            Some(&b) if b < 0x80 => 1,
            Some(&b) if b >= 0xF0 => 4,
            Some(&b) if b >= 0xE0 => 3,
            Some(_) => 2,
            None => return,
        };
        self.copy(len);
    }

    fn single_quoted(&mut self) {
        loop {
            let len = self.run(|b| b == b'\'');
            self.copy(len);
            self.i = (self.i + 1).min(self.s.len());
            // PowerShell doubles a quote inside single quotes.
            if self.dialect == Dialect::PowerShell && self.peek(0) == Some(b'\'') {
                self.word.push('\'');
                self.i += 1;
            } else {
                return;
            }
        }
    }

    fn double_quoted(&mut self, escape: u8) {
        while let Some(b) = self.peek(0) {
            match b {
                b'"' => {
                    self.i += 1;
                    return;
                }
                _ if b == escape => {
                    self.i += 1;
                    match self.peek(0) {
                        Some(b'\n') => self.i += 1,
                        Some(b'$' | b'`' | b'"' | b'\\') => self.char(),
                        Some(_) if self.dialect == Dialect::PowerShell => self.char(),
                        Some(_) => self.word.push('\\'),
                        None => {}
                    }
                }
                b'`' if self.dialect == Dialect::Posix => self.backticks(),
                b'$' => self.dollar(),
                _ => {
                    let len = self.run(|b| matches!(b, b'"' | b'`' | b'$') || b == escape);
                    self.copy(len.max(1));
                }
            }
        }
    }

    /// `$(…)` (its commands read; the word keeps it as written), `${…}`, `$'…'`, or a `$`.
    fn dollar(&mut self) {
        match self.peek(1) {
            Some(b'(') => {
                let begin = self.i;
                self.i += 2;
                self.nested();
                self.word.push_str(&lossy(&self.s[begin..self.i]));
            }
            Some(b'{') => {
                let len = self.run(|b| b == b'}');
                self.copy(len + 1);
            }
            Some(b'\'') if self.dialect == Dialect::Posix => {
                self.i += 2;
                self.ansi_c();
            }
            _ => self.char(),
        }
    }

    /// `$'…'`: the escapes that spell characters (`$'\x72m'` is `rm`).
    fn ansi_c(&mut self) {
        while let Some(b) = self.peek(0) {
            self.i += 1;
            match b {
                b'\'' => return,
                b'\\' => {
                    let Some(e) = self.peek(0) else { return };
                    self.i += 1;
                    let (radix, max) = match e {
                        b'n' => (0, '\n' as u32),
                        b't' => (0, '\t' as u32),
                        b'r' => (0, '\r' as u32),
                        b'a' => (0, 7),
                        b'e' | b'E' => (0, 0x1b),
                        b'\\' | b'\'' | b'"' | b'?' => (0, u32::from(e)),
                        b'x' => (16, 2),
                        b'0'..=b'7' => {
                            self.i -= 1;
                            (8, 3)
                        }
                        _ => {
                            self.word.push('\\');
                            self.i -= 1;
                            continue;
                        }
                    };
                    if radix == 0 {
                        self.word.push(char::from_u32(max).unwrap_or('?'));
                        continue;
                    }
                    let mut value = 0u32;
                    let mut digits = 0;
                    while digits < max
                        && let Some(d) = self.peek(0).and_then(|d| (d as char).to_digit(radix))
                    {
                        value = value * radix + d;
                        digits += 1;
                        self.i += 1;
                    }
                    let c = char::from_u32(value).filter(|c| c.is_ascii() && digits > 0);
                    self.word.push(c.unwrap_or('?'));
                }
                _ => {
                    self.i -= 1;
                    self.char();
                }
            }
        }
    }

    /// `` `…` ``: its commands, read from its text with the escapes removed; the word keeps it
    /// as written.
    fn backticks(&mut self) {
        let begin = self.i;
        self.i += 1;
        let mut inner = Vec::new();
        while let Some(b) = self.peek(0) {
            self.i += 1;
            match b {
                b'`' => break,
                b'\\' if matches!(self.peek(0), Some(b'`' | b'\\' | b'$')) => {
                    inner.push(self.s[self.i]);
                    self.i += 1;
                }
                _ => inner.push(b),
            }
        }
        self.word.push_str(&lossy(&self.s[begin..self.i]));
        if self.depth + 1 < MAX_DEPTH {
            let inner = String::from_utf8_lossy(&inner);
            read(self.parsed, &inner, self.dialect, self.depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
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
        for name in ["echo", "git", "sud", "sudoo", "pytho", "python3.12345678901", "", "e"] {
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
            "a", "rm", "-rf", "/", " ", " ", "\t", "\n", ";", "|", "&", "(", ")", "<", ">", "'",
            "\"", "`", "\\", "$", "$(", "${", "=", "#", "'a b'", "\"x y\"", "''", "\"\"", "é",
            "sudo", "bash -c ", "<<EOF\n", "EOF", "x=1", "\\\n", "'it''s'", "`$x`",
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
    fn display_quotes_what_needs_it() {
        let parsed = parse("sudo rm -rf \"/home/a b\" it\\'s", Dialect::Posix);
        assert_eq!(parsed.commands().next().unwrap().to_string(), r"rm -rf '/home/a b' 'it'\''s'");
    }
}
