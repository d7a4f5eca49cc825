//! Reading the text: one level of a command line at a time, into words and commands (quotes,
//! escapes, expansions, redirections, heredocs and nesting). One state machine over the bytes,
//! kept whole: its states share the word being built and the command it belongs to.

use super::{Dialect, MAX_DEPTH, NONE, Parsed, Raw, Span, index, read};

/// Bytes that end a word: blanks and operators.
const BREAKS: &[u8] = b" \t\r\n;|&<>()";

/// Bytes that end a plain run of a word: [`BREAKS`], quotes, escapes, expansions.
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

/// Bytes that end a run of a double-quoted string as written: its end, expansions and escapes
/// (`\\` in POSIX shells, `` ` `` in `PowerShell`), by dialect.
const DOUBLE_QUOTED: [[bool; 256]; 2] = {
    let mut tables = [[false; 256]; 2];
    let mut b: u8 = 0;
    loop {
        let stops = matches!(b, b'"' | b'`' | b'$');
        tables[0][b as usize] = stops || b == b'\\';
        tables[1][b as usize] = stops;
        if b == u8::MAX {
            break tables;
        }
        b += 1;
    }
};

/// [`BREAKS`] as a table.
const BREAK: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < BREAKS.len() {
        table[BREAKS[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether the byte at `at` of `s` ends a word (the end of the text does).
fn breaks(s: &[u8], at: usize) -> bool {
    s.get(at).is_none_or(|&b| BREAK[usize::from(b)])
}

/// Bytes that begin a plain word (`git`, `-rf`, `src/`) where a command's words are read (not
/// special, not a comment's `#`, a group's brace or a digit, as in `2>`), and quotes. Most words
/// begin with one, and are read at once (when plain or one quoted string), before the jump table
/// of [`Lexer::list`].
const WORD_START: [bool; 256] = {
    let mut table = [false; 256];
    let mut b: u8 = 0;
    loop {
        table[b as usize] = matches!(b, b'\'' | b'"')
            || !SPECIAL[b as usize] && !matches!(b, b'#' | b'{' | b'}' | b'0'..=b'9');
        if b == u8::MAX {
            break table;
        }
        b += 1;
    }
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
pub(super) struct Lexer<'s, 'p, 't> {
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
    /// The command being read, and the files it writes to (ranges of `parsed.text`). Its words
    /// go straight to the end of `parsed.words`, unless a nested reading or a standard input
    /// wrote there while it was read: they are then set `aside` in `words` until it ends.
    current: Option<usize>,
    aside: bool,
    words: Vec<Span>,
    /// The files it truncates (`>`, `>|`, `&>`), then those it appends to (`>>`).
    writes: Vec<Span>,
    appends: Vec<Span>,
    /// The word being read.
    word: String,
    /// Heredocs opened on the current line.
    line: Vec<Pending>,
}

impl<'s, 't> Lexer<'s, '_, 't> {
    pub(super) fn new<'p>(
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
            aside: false,
            words: Vec::new(),
            writes: Vec::new(),
            appends: Vec::new(),
            word: String::new(),
            line: Vec::new(),
        }
    }

    fn peek(&self, at: usize) -> Option<u8> {
        self.s.get(self.i + at).copied()
    }

    /// Reads commands until the end, or the `)` that ends a subshell or `$(` when `closed`.
    pub(super) fn list(&mut self, closed: bool) {
        while let Some(b) = self.peek(0) {
            if WORD_START[usize::from(b)] && self.parsed.shortcuts {
                self.open();
                if self.plain_word() || self.quoted_word() {
                    // The blank after a word, skipped here: one turn of this loop fewer.
                    if self.s.get(self.i) == Some(&b' ') {
                        self.i += 1;
                    }
                    continue;
                }
            }
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
                        self.push_word(word);
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
                appended: 0,
                program: index(at),
                piped_from: self.pipe.take().map_or(NONE, index),
                name: NONE,
                depth: self.depth,
            });
            self.current = Some(self.parsed.commands.len() - 1);
        }
    }

    /// Adds a word to the command being read.
    fn push_word(&mut self, word: Span) {
        if self.aside {
            self.words.push(word);
        } else {
            self.parsed.words.push(word);
        }
    }

    /// Before something else writes to `parsed.words` while a command is read (a nested
    /// reading, a standard input): the command's words so far are set aside.
    fn set_aside(&mut self) {
        let Some(at) = self.current else { return };
        if !self.aside {
            let start =
                (self.parsed.commands[at].words.start as usize).min(self.parsed.words.len());
            self.words.extend(self.parsed.words.drain(start..));
            self.aside = true;
        }
    }

    /// Ends the command being read: its words are in `parsed`, one after the other.
    fn end(&mut self) {
        let Some(at) = self.current.take() else { return };
        let start = if std::mem::take(&mut self.aside) {
            let start = self.parsed.words.len();
            self.parsed.words.append(&mut self.words);
            start
        } else {
            self.parsed.commands[at].words.start as usize
        };
        let middle = self.parsed.words.len();
        self.parsed.words.append(&mut self.writes);
        let appended = u8::try_from(self.appends.len()).unwrap_or(u8::MAX);
        self.parsed.words.append(&mut self.appends);
        let raw = &mut self.parsed.commands[at];
        raw.words = Span::new(start..middle);
        raw.appended = appended;
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
            self.set_aside();
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
        let (mut duplicates, mut appends) = (false, false);
        while let Some(b @ (b'>' | b'|' | b'&')) = self.peek(0) {
            duplicates |= b == b'&';
            appends |= b == b'>';
            self.i += 1;
        }
        self.blanks();
        if self.read_word()
            && output
            && !(duplicates && self.word.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
        {
            let target = self.store_word();
            if appends {
                self.appends.push(target);
            } else {
                self.writes.push(target);
            }
        }
    }

    fn set_stdin(&mut self, at: usize, word: Span) {
        self.set_aside();
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
    #[allow(
        clippy::inline_always,
        reason = "measured: inlined in `list`'s loop, a word is read without a call's saves and \
                  restores (about a tenth of a 50 KB script's reading)"
    )]
    #[inline(always)]
    fn plain_word(&mut self) -> bool {
        let len = self.plain_run();
        // The run ends at an ASCII byte or the text's end: a boundary of characters.
        if len == 0 || !breaks(self.s, self.i + len) || !self.t.is_char_boundary(self.i) {
            return false;
        }
        let start = self.base + self.i;
        self.push_word(Span::new(start..start + len));
        self.i += len;
        true
    }

    /// A word that is one quoted string whose bytes are all as written (`'TODO'`, `"a b"`: no
    /// escape, expansion or doubled quote in it), stored at once: `false` when the word here is
    /// not one.
    fn quoted_word(&mut self) -> bool {
        let Some(quote @ (b'\'' | b'"')) = self.peek(0) else { return false };
        let rest = &self.s[self.i + 1..];
        let len = if quote == b'\'' {
            rest.iter().position(|&b| b == b'\'')
        } else {
            let stops = &DOUBLE_QUOTED[usize::from(self.dialect == Dialect::PowerShell)];
            rest.iter().position(|&b| stops[usize::from(b)])
        };
        let Some(len) = len.filter(|&len| rest[len] == quote) else { return false };
        // What follows ends the word (a PowerShell `''` inside single quotes does not).
        let ends = breaks(rest, len + 1);
        let start = self.i + 1;
        if !ends || self.t.get(start..start + len).is_none() {
            return false;
        }
        self.push_word(Span::new(self.base + start..self.base + start + len));
        self.i = start + len + 1;
        true
    }

    /// Copies a run of bytes that mean nothing to the shell, at once.
    fn plain(&mut self) {
        let len = self.plain_run();
        if len > 0 {
            self.copy(len);
        } else {
            self.char();
        }
    }

    /// The length of the run of bytes from here that are not [`SPECIAL`], found 8 bytes at a
    /// time without a branch per byte: most words are shorter, so that the loop's end is foreseen
    /// (a branch per byte mispredicts at every word's end).
    #[inline]
    fn plain_run(&self) -> usize {
        let mut at = self.i;
        while let Some(chunk) = self.s.get(at..at + 8).and_then(|c| <&[u8; 8]>::try_from(c).ok()) {
            let mut special = 0u32;
            for (k, &b) in chunk.iter().enumerate() {
                special |= u32::from(SPECIAL[usize::from(b)]) << k;
            }
            if special != 0 {
                return at - self.i + special.trailing_zeros() as usize;
            }
            at += 8;
        }
        let rest = self.s.get(at..).unwrap_or_default();
        at - self.i + rest.iter().position(|&b| SPECIAL[usize::from(b)]).unwrap_or(rest.len())
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
            self.set_aside();
            let inner = String::from_utf8_lossy(&inner);
            read(self.parsed, &inner, self.dialect, self.depth + 1);
        }
    }
}
