//! What a command runs: its program past reserved words, assignments and wrappers (with their
//! options), and what it runs inline (`bash -c`, `eval`, an interpreter's code, `find -exec`,
//! `docker exec`, `ssh`, what `xargs` is fed), read in turn by [`super::read`].

use std::ops::Range;

use super::names::{
    FIND_EXEC, basename, is_assignment, is_reserved, is_shell, lowercase, name_range, runs_inline,
    wrapper_named,
};
use super::{Command, Parsed, Span, first_key, index, quote, some};

/// What an inline shell runs.
pub(super) enum Inline {
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
pub(super) fn feed(parsed: &mut Parsed, index: usize) {
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
pub(super) fn settle(parsed: &mut Parsed, index: usize) -> Option<Inline> {
    let (words, stdin) = (parsed.commands[index].words.range(), parsed.stdin(index));
    let first = if parsed.shortcuts && words.start < words.end {
        first_key(parsed.word(words.start).as_bytes())
    } else {
        None
    };
    if let Some(name) = first.and_then(|key| parsed.settled(key)) {
        let raw = &mut parsed.commands[index];
        raw.program = self::index(words.start);
        raw.name = name;
        return None;
    }
    let found = program_of(parsed, words.clone());
    // Its first word is its program: nothing skipped, no question asked (`command -v`).
    let plain = found == Ok((words.start, false));
    let (i, xargs) = found.unwrap_or_else(|query| (query, false));
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
    // `watch 'rm -rf x'`, `parallel 'rm -rf {}' ::: a b`: they hand their words to a shell,
    // so a program word that is a command line is read as one.
    if !plain
        && parsed.word(i).contains([' ', '\t', '\n', ';', '&', '|'])
        && (words.start..i).any(|j| matches!(basename(parsed.word(j)), "watch" | "parallel"))
        // `parallel --dry-run` prints the command lines instead.
        && !(words.start..i).any(|j| parsed.word(j) == "--dry-run")
    {
        let line: Vec<&str> = (i..words.end).map(|j| parsed.word(j)).collect();
        return Some(Inline::Text(line.join(" ")));
    }
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
            if plain && let Some(key) = first {
                parsed.remember(key, parsed.commands[index].name);
            }
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
        // `eval "$(cat <<'EOF' … EOF)"`: the heredoc's body.
        if rest.len() == 1
            && let Some(body) = cat_heredoc(parsed.word(rest.start))
        {
            return Some(Inline::Text(body));
        }
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
        return shell_script(parsed, rest, stdin);
    }
    if name == "find" {
        // `find … -exec cmd … ;` (or `+`, `-execdir`, `-ok`).
        let start = rest.clone().find(|&j| FIND_EXEC.contains(&parsed.word(j)))? + 1;
        let end = (start..words.end)
            .find(|&j| matches!(parsed.word(j), ";" | "+" | "\\;"))
            .unwrap_or(words.end);
        return (start < end).then_some(Inline::Argv(start..end));
    }
    if matches!(name, "at" | "batch") {
        // `at now + 1 hour <<< CMD`, `echo CMD | at midnight`: a shell runs its input later.
        return stdin.map(Inline::Word);
    }
    runs_for_each(parsed, name, rest, words.end)
}

/// What a shell runs: `bash -c 'cmd'`, `bash -lc 'cmd'`, `sh -e -c 'cmd'` the first operand
/// after the options (the body of `"$(cat <<EOF … EOF)"` when it is one); without `-c`, its
/// standard input. `rest` are the words after the shell.
fn shell_script(parsed: &Parsed, rest: Range<usize>, stdin: Option<usize>) -> Option<Inline> {
    let mut c = false;
    for j in rest {
        let word = parsed.word(j);
        if word.starts_with('-') && !word.starts_with("--") && word.len() > 1 {
            c |= word[1..].contains('c');
            continue;
        }
        if word.starts_with("--") {
            continue;
        }
        if !c {
            return None;
        }
        return Some(match cat_heredoc(word) {
            Some(body) => Inline::Text(body),
            None => Inline::Word(j),
        });
    }
    if c { None } else { stdin.map(Inline::Word) }
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
pub(super) fn code_commands(code: &str) -> Vec<String> {
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

/// The body of the heredoc when `word` is a command substitution that only prints one with
/// `cat` (`$(cat <<EOF … EOF)`, `$(cat <<-'EOF' … EOF)`, `` `cat <<EOF …` ``): what the shell
/// that word is given to runs. Tabs are taken from the body's lines for `<<-`.
pub(super) fn cat_heredoc(word: &str) -> Option<String> {
    let inner = word.trim();
    let inner = inner
        .strip_prefix("$(")
        .and_then(|w| w.strip_suffix(')'))
        .or_else(|| inner.strip_prefix('`').and_then(|w| w.strip_suffix('`')))?;
    let rest = inner.trim_start().strip_prefix("cat")?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix("<<")?;
    let (strip_tabs, rest) = match rest.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let (first, body) = rest.split_once('\n')?;
    let delimiter: String =
        first.trim().chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    if delimiter.is_empty() {
        return None;
    }
    let mut text = String::new();
    let mut lines = body.split('\n');
    for line in lines.by_ref() {
        let line = if strip_tabs { line.trim_start_matches('\t') } else { line };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line == delimiter {
            // After the delimiter, only blanks before the substitution closes.
            return lines.all(|l| l.trim().is_empty()).then_some(text);
        }
        text.push_str(line);
        text.push('\n');
    }
    None
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

/// What `git submodule foreach`, `script -c`, `su -c`, `ansible -a`, `tmux new` and `pssh`
/// have a shell run (the readers of `settle` that are not shells, interpreters or runners): the
/// words after `foreach` (its options past), the value of `-c` (`-a`), the words after `tmux`'s
/// options, `pssh`'s last operand. `rest` are the words after the program, up to `end`.
fn runs_for_each(parsed: &Parsed, name: &str, rest: Range<usize>, end: usize) -> Option<Inline> {
    if name == "git" {
        // `git submodule foreach [--recursive] CMD…`: a shell runs CMD in every submodule.
        let submodule = rest.clone().position(|j| parsed.word(j) == "submodule")?;
        let mut j = rest.start + submodule + 1;
        while j < end && parsed.word(j).starts_with('-') {
            j += 1;
        }
        if j >= end || parsed.word(j) != "foreach" {
            return None;
        }
        j += 1;
        while j < end && parsed.word(j).starts_with('-') {
            j += 1;
        }
        return (j < end).then_some(Inline::Words(j..end));
    }
    if matches!(name, "su" | "ansible") {
        // `su -c CMD [user]`, `su -lc CMD`, `su --command=CMD`: a shell runs CMD as the user.
        // `ansible HOSTS -a CMD` with the command, shell or raw module (command by default).
        let option = if name == "su" { "c" } else { "a" };
        if name == "ansible" {
            let module = rest
                .clone()
                .find(|&j| matches!(parsed.word(j), "-m" | "--module-name"))
                .and_then(|j| (j + 1 < end).then(|| parsed.word(j + 1)));
            let module = module.map(|m| m.rsplit('.').next().unwrap_or(m));
            if !matches!(module, None | Some("command" | "shell" | "raw")) {
                return None;
            }
        }
        for j in rest.clone() {
            let word = parsed.word(j);
            let long = if name == "su" { "--command" } else { "--args" };
            if let Some(command) = word.strip_prefix(long).and_then(|w| w.strip_prefix('=')) {
                return Some(Inline::Text(command.to_owned()));
            }
            let short = word.len() > 1 && word.starts_with('-') && !word.starts_with("--");
            if word == long || (short && word[1..].ends_with(option)) {
                return (j + 1 < end).then_some(Inline::Word(j + 1));
            }
        }
        return None;
    }
    if name == "tmux" {
        // `tmux new -d -s NAME CMD…`, `split-window`, `respawn-pane`: a shell runs CMD.
        let verb = rest.clone().find(|&j| !parsed.word(j).starts_with('-'))?;
        if !matches!(
            parsed.word(verb),
            "new"
                | "new-session"
                | "new-window"
                | "neww"
                | "split-window"
                | "splitw"
                | "respawn-pane"
        ) {
            return None;
        }
        let mut j = verb + 1;
        while j < end && parsed.word(j).starts_with('-') {
            let valued = matches!(
                parsed.word(j),
                "-s" | "-n" | "-c" | "-t" | "-x" | "-y" | "-F" | "-e" | "-l"
            );
            j += if valued { 2 } else { 1 };
        }
        return (j < end).then_some(Inline::Words(j..end));
    }
    if matches!(name, "pssh" | "parallel-ssh") {
        // `pssh -h HOSTS -i CMD`: a shell on each host runs the last operand.
        return (rest.len() > 1).then_some(Inline::Word(end - 1));
    }
    if name == "script" {
        // `script -c CMD`, `script -qc CMD file`, `script --command=CMD`: a shell runs CMD.
        for j in rest.clone() {
            let word = parsed.word(j);
            if let Some(command) = word.strip_prefix("--command=") {
                return Some(Inline::Text(command.to_owned()));
            }
            let short = word.len() > 1 && word.starts_with('-') && !word.starts_with("--");
            if word == "--command" || (short && word[1..].contains('c')) {
                return (j + 1 < end).then_some(Inline::Word(j + 1));
            }
        }
        return None;
    }
    None
}
