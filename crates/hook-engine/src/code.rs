//! Calls in the inline code an interpreter runs (`python -c`, `node -e`, `ruby -e`, `perl -e`,
//! `php -r`, or a heredoc fed to one), found by name, each with the path its first argument
//! names: what a `command` pattern's `calls` looks for (reference §2.1), so that
//! `shutil.rmtree(os.path.expanduser("~"))` is judged as `rm -r ~` is.
//!
//! It is a reader for guards, not a parser: a call is a name (not part of a longer identifier)
//! followed by `(` or, as in Ruby and Perl, by a space and an argument; its first argument is
//! read up to `,` or the closing bracket, and made a path when it is a string literal, a
//! language's spelling of the home (`Path.home()`, `os.homedir()`, `Dir.home`,
//! `process.env.HOME`, `$ENV{HOME}`, `os.path.expanduser("~/x")`), a `Path(…)`, or a join of
//! such parts. A method call (`.unlink`, `.rmdir`) takes its receiver instead
//! (`Path("/etc").unlink()`). Anything else (a variable, a computed path) is kept as a variable
//! (`$name`), which [`crate::paths`] judges by what its name says. Linear: each occurrence of a
//! name reads at most [`MAX_ARGUMENT`] bytes around it.

use std::borrow::Cow;

/// The most bytes of an argument (or receiver) read.
pub const MAX_ARGUMENT: usize = 512;

/// The options after which an interpreter's inline code comes.
pub const CODE_OPTIONS: &[&str] = &["-c", "-e", "-E", "-r", "--eval", "-p", "--print", "-x"];

/// Every call to one of `names` in `code`, with what its first argument (or, for a `.method`
/// name, its receiver) stands for as a shell word (`~`, `/etc`, `$path`), in the order found.
pub fn calls<'c>(code: &'c str, names: &[&str]) -> Vec<(String, Cow<'c, str>)> {
    let strings = strings(code);
    let in_string = |at: usize| {
        let i = strings.partition_point(|&(start, _)| start <= at);
        i > 0 && at < strings[i - 1].1
    };
    let mut found = Vec::new();
    for name in names {
        let method = name.starts_with('.');
        let mut from = 0;
        while let Some(at) = code[from..].find(name).map(|i| i + from) {
            from = at + name.len();
            // A name in a string is text (`print('shutil.rmtree …')`).
            if in_string(at) {
                continue;
            }
            let before = code[..at].chars().next_back();
            let after = &code[at + name.len()..];
            // Not part of a longer name: `xunlink`, `rmtree_all`.
            if !method && before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            if after.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let word = if method {
                receiver(&code[..at]).map(|r| word(r))
            } else {
                argument(after).map(|a| word(a))
            };
            if let Some(word) = word {
                found.push(((*name).to_owned(), word));
            }
        }
    }
    found
}

/// Where the string literals of `code` are (`'…'`, `"…"`, `` `…` ``, a `\` escaping the next
/// character), as byte ranges in order, each from its opening quote to past its closing one. A
/// `#` comment (at a line's start or after a space) is skipped, so that its apostrophes open
/// nothing.
fn strings(code: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut open: Option<(char, usize)> = None;
    let mut escaped = false;
    let mut comment = false;
    let mut previous = '\n';
    for (i, c) in code.char_indices() {
        let before = std::mem::replace(&mut previous, c);
        if comment {
            comment = c != '\n';
            continue;
        }
        if open.is_none() && c == '#' && before.is_whitespace() {
            comment = true;
            continue;
        }
        match open {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some((quote, start)) if c == quote => {
                found.push((start, i + 1));
                open = None;
            }
            None if matches!(c, '\'' | '"' | '`') => open = Some((c, i)),
            Some(_) | None => {}
        }
    }
    if let Some((_, start)) = open {
        found.push((start, code.len()));
    }
    found
}

/// The first argument of a call whose name ends where `after` starts: `("/x", …)`, ` "/x"`,
/// `(Dir.home)`. `None` when nothing follows the name as an argument would.
fn argument(after: &str) -> Option<&str> {
    let trimmed = after.trim_start_matches([' ', '\t']);
    let (open, rest) = match trimmed.strip_prefix('(') {
        Some(rest) => (true, rest.trim_start()),
        // Without brackets, an argument follows a space (`FileUtils.rm_rf Dir.home`).
        None if trimmed.len() < after.len() => (false, trimmed),
        None => return None,
    };
    let end = expression_end(rest, open);
    let argument = rest[..end].trim();
    (!argument.is_empty()).then_some(argument)
}

/// Where the expression at the start of `text` ends: at a `,`, `;`, a line's end or (inside
/// brackets) the closing one, outside any string or nested bracket; at most [`MAX_ARGUMENT`].
fn expression_end(text: &str, bracketed: bool) -> usize {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if i >= MAX_ARGUMENT {
            return i;
        }
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ')' | ']' | '}' => return i,
            ',' | ';' | '\n' if depth == 0 => return i,
            ' ' if depth == 0 && !bracketed && text[i..].trim_start().starts_with(['|', '&']) => {
                return i;
            }
            _ => {}
        }
    }
    text.len()
}

/// The receiver of a method whose `.` is at the end of `before`: `Path("/etc")` in
/// `Path("/etc").unlink()`, `p` in `p.unlink()`.
fn receiver(before: &str) -> Option<&str> {
    let start = before.len().saturating_sub(MAX_ARGUMENT);
    let start = (start..before.len()).find(|&i| before.is_char_boundary(i)).unwrap_or(before.len());
    let window = &before[start..];
    let mut depth = 0usize;
    let mut begin = window.len();
    for (i, c) in window.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c if c.is_alphanumeric() || c == '_' || c == '.' || c == '$' || c == ':' => {}
            _ => break,
        }
        begin = i;
    }
    let receiver = window[begin..].trim_start_matches('.');
    (!receiver.is_empty()).then_some(receiver)
}

/// What an expression stands for as a shell word: a literal's text, `~` for the home, parts
/// joined with `/`, or `$name` for anything else.
fn word(expression: &str) -> Cow<'_, str> {
    let e = expression.trim().trim_end_matches(['.', ' ']);
    if let Some(text) = literal(e) {
        return Cow::Borrowed(text);
    }
    if is_home(e) {
        return Cow::Borrowed("~");
    }
    // `os.path.expanduser("~/x")`, `File.expand_path("~/x")`, `Path("x")`, `Path.new("x")`,
    // `pathlib.Path("x")`, `path.resolve("x")`: the path its one argument names.
    for wrapper in [
        "os.path.expanduser",
        "expanduser",
        "File.expand_path",
        "os.path.abspath",
        "os.path.realpath",
        "pathlib.Path",
        "Path.new",
        "Path",
        "path.resolve",
        "resolve",
        "String",
    ] {
        if let Some(inner) = e.strip_prefix(wrapper).and_then(|r| r.strip_prefix('('))
            && let Some(inner) = inner.strip_suffix(')')
            && !inner.contains(',')
        {
            return word(inner);
        }
    }
    // Joins: `os.path.join(a, b)`, `path.join(a, b)`, `File.join(a, b)`, `Path.home() / "x"`.
    for join in ["os.path.join", "path.join", "File.join", "join"] {
        if let Some(inner) = e.strip_prefix(join).and_then(|r| r.strip_prefix('('))
            && let Some(inner) = inner.strip_suffix(')')
        {
            let parts: Vec<Cow<'_, str>> = split_top(inner, ',').into_iter().map(word).collect();
            return Cow::Owned(parts.join("/"));
        }
    }
    let slashed = split_top(e, '/');
    if slashed.len() > 1 && slashed.iter().all(|p| !p.trim().is_empty()) {
        let parts: Vec<Cow<'_, str>> = slashed.into_iter().map(word).collect();
        return Cow::Owned(parts.join("/"));
    }
    // A variable, or what only running the code tells: judged by its name.
    let name: String =
        e.chars().filter(|c| c.is_alphanumeric() || *c == '_').take(64).collect::<String>();
    Cow::Owned(format!("${}", if name.is_empty() { "_" } else { &name }))
}

/// The text of a string literal (`'x'`, `"x"`, `` `x` ``, `r"x"`, `f"x"` without `{`).
fn literal(e: &str) -> Option<&str> {
    let e =
        e.strip_prefix(['r', 'b', 'f', 'u']).filter(|r| r.starts_with(['\'', '"'])).unwrap_or(e);
    let quote = e.chars().next().filter(|q| matches!(q, '\'' | '"' | '`'))?;
    let inner = e.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote) && !inner.contains("${") && !inner.contains('{')).then_some(inner)
}

/// Whether an expression is a language's spelling of the home folder.
fn is_home(e: &str) -> bool {
    let compact: String = e.chars().filter(|c| !c.is_whitespace()).collect();
    let compact = compact.replace('\'', "\"");
    [
        "Path.home()",
        "pathlib.Path.home()",
        "os.homedir()",
        "require(\"os\").homedir()",
        "Dir.home",
        "Dir.home()",
        "process.env.HOME",
        "process.env[\"HOME\"]",
        "os.environ[\"HOME\"]",
        "os.environ.get(\"HOME\")",
        "os.getenv(\"HOME\")",
        "ENV[\"HOME\"]",
        "$ENV{HOME}",
        "$ENV{\"HOME\"}",
        "getenv(\"HOME\")",
        "Deno.env.get(\"HOME\")",
        "$HOME",
        "homedir()",
    ]
    .contains(&compact.as_str())
}

/// `text` split at `separator` outside strings and brackets.
fn split_top(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0);
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ if c == separator && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(code: &str, names: &[&str]) -> Option<String> {
        calls(code, names).into_iter().next().map(|(_, w)| w.into_owned())
    }

    #[test]
    fn a_call_gives_the_path_its_argument_names() {
        let py = ["shutil.rmtree", "rmtree", "os.remove", ".unlink", ".rmdir"];
        for (code, word) in [
            ("import shutil; shutil.rmtree('/')", "/"),
            ("import shutil, os; shutil.rmtree(os.path.expanduser(\"~\"))", "~"),
            ("shutil.rmtree( os.path.expanduser('~/Documents') )", "~/Documents"),
            ("from shutil import rmtree\nrmtree(Path.home())", "~"),
            ("shutil.rmtree(os.path.join(os.environ['HOME'], 'src'))", "~/src"),
            ("shutil.rmtree(Path.home() / 'src')", "~/src"),
            ("import pathlib; pathlib.Path('/etc/passwd').unlink()", "/etc/passwd"),
            ("Path.home().rmdir()", "~"),
            ("shutil.rmtree(tmp_dir)", "$tmp_dir"),
            ("shutil.rmtree(f'{base}/x')", "$fbasex"),
            ("os.remove(r\"C:\\Windows\\x\")", "C:\\Windows\\x"),
        ] {
            assert_eq!(first(code, &py).as_deref(), Some(word), "{code}");
        }
        let js = ["fs.rmSync", "rmSync", "fs.rm", "fs.unlinkSync"];
        for (code, word) in [
            ("require('fs').rmSync(process.env.HOME, {recursive: true, force: true})", "~"),
            ("require('fs').rmSync('/', {recursive:true})", "/"),
            ("fs.rm(require('os').homedir(), {recursive: true}, () => {})", "~"),
            ("fs.rmSync(path.join(os.homedir(), '.ssh'), {recursive: true})", "~/.ssh"),
        ] {
            assert_eq!(first(code, &js).as_deref(), Some(word), "{code}");
        }
        let rb = ["FileUtils.rm_rf", "File.delete"];
        assert_eq!(
            first("require \"fileutils\"; FileUtils.rm_rf(Dir.home)", &rb).as_deref(),
            Some("~")
        );
        assert_eq!(first("FileUtils.rm_rf Dir.home", &rb).as_deref(), Some("~"));
        assert_eq!(first("FileUtils.rm_rf '/etc'; puts 1", &rb).as_deref(), Some("/etc"));
        let pl = ["remove_tree", "rmtree", "unlink"];
        assert_eq!(
            first("use File::Path qw(remove_tree); remove_tree(\"/etc\")", &pl).as_deref(),
            Some("/etc")
        );
        assert_eq!(first("unlink $ENV{HOME}", &pl).as_deref(), Some("~"));
    }

    #[test]
    fn names_inside_longer_names_or_text_without_a_call_are_not_calls() {
        let py = ["rmtree", "os.remove"];
        assert_eq!(first("my_rmtree('/')", &py), None);
        assert_eq!(first("rmtree_all('/')", &py), None);
        assert_eq!(first("print('use rmtree')", &py), None);
        assert_eq!(first("x = os.remove", &py), None);
        assert_eq!(first("print('shutil.rmtree is dangerous'); os.remove", &py), None);
        assert_eq!(first("print(\"it's rmtree('/')\")", &py), None);
        assert_eq!(first("# don't\nrmtree('/')", &py).as_deref(), Some("/"));
    }

    #[test]
    fn odd_code_reads_as_far_as_it_goes() {
        let names = ["rmtree", ".unlink"];
        for code in [
            "rmtree(",
            "rmtree('",
            "rmtree((((",
            ".unlink()",
            "é.unlink()",
            "rmtree(\"é\\",
            ")))).unlink",
        ] {
            let _ = calls(code, &names);
        }
        let long = format!("rmtree({})", "(".repeat(10_000));
        assert_eq!(calls(&long, &names).len(), 1);
    }
}
