//! What a `find` command deletes, for guards: its start points, and whether a deleting action
//! (`-delete`, or `-exec`/`-execdir`/`-ok`/`-okdir` running `rm`, `unlink` or `shred`) is
//! reached only for files a test has named (`-name`, `-path`, `-regex`, …). What a `command`
//! pattern's `find` judges (reference §2.1), with `targets` then judging the start points.
//!
//! find evaluates its expression left to right for each file, so order matters:
//! `find / -name x -delete` deletes the files named `x`, `find / -delete -name x` deletes
//! everything, and `find ~ -not -name keep -delete` everything but `keep`. The expression is
//! read with find's precedence (`!`, then `-a` or nothing, then `-o`, then `,`, brackets
//! first) and each action is placed in the context that reaches it: after an `-a` the left
//! side held, after an `-o` it failed. A test names the files when it is a naming test whose
//! pattern is not everything (`-name '*'`); type, size, age and depth tests do not count
//! (`find ~ -type f -mtime +30 -delete` still empties most of a home). Linear in the
//! arguments; brackets nested deeper than [`MAX_DEPTH`] are read as deleting everything.

/// What a find expression does with what it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// A deleting action is reached for files no test has named.
    DeleteAll,
    /// Every deleting action is reached only for files a test has named.
    DeleteNamed,
}

impl Effect {
    /// Every effect.
    pub const ALL: [Effect; 2] = [Effect::DeleteAll, Effect::DeleteNamed];

    /// Its name in a pack (`find = ["delete-all"]`).
    pub fn name(self) -> &'static str {
        match self {
            Effect::DeleteAll => "delete-all",
            Effect::DeleteNamed => "delete-named",
        }
    }

    /// The effect named `name`.
    pub fn from_name(name: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// How deep brackets are followed.
pub const MAX_DEPTH: usize = 32;

/// The tests that name the files they let through.
const NAMING: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-samefile",
    "-inum",
];

/// Tests, actions and options that take one value (the naming tests too).
const VALUED: &[&str] = &[
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-newer",
    "-anewer",
    "-cnewer",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-context",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-regextype",
    "-files0-from",
];

/// The programs whose running by `-exec` deletes the files found.
const DELETERS: &[&str] = &["rm", "unlink", "shred", "srm", "trash", "trash-put"];

/// What `find` with arguments `args` does: its start points (`.` when none is given) and the
/// effect of its expression, `None` when nothing in it deletes.
pub fn read<'a>(args: &[&'a str]) -> (Vec<&'a str>, Option<Effect>) {
    let mut at = 0;
    let mut starts = Vec::new();
    // Options before the start points: -H -L -P, -D list, -O3; BSD's -E -X -d -s -x, -f path.
    while let Some(&arg) = args.get(at) {
        match arg {
            "-H" | "-L" | "-P" | "-E" | "-X" | "-d" | "-s" | "-x" => at += 1,
            "-D" => at += 2,
            "-f" => {
                starts.extend(args.get(at + 1));
                at += 2;
            }
            _ if arg.starts_with("-O") && arg.len() <= 3 => at += 1,
            "--" => {
                at += 1;
                break;
            }
            _ => break,
        }
    }
    while let Some(&arg) = args.get(at) {
        if arg.starts_with('-') || matches!(arg, "(" | ")" | "!" | ",") {
            break;
        }
        starts.push(arg);
        at += 1;
    }
    if starts.is_empty() {
        starts.push(".");
    }
    let mut reader = Reader { args: &args[at.min(args.len())..], at: 0, all: false, named: false };
    // Whatever is left after a stray `)` is read on as another expression.
    while reader.at < reader.args.len() {
        reader.comma(false, 0);
        reader.at += 1;
    }
    let effect = if reader.all {
        Some(Effect::DeleteAll)
    } else if reader.named {
        Some(Effect::DeleteNamed)
    } else {
        None
    };
    (starts, effect)
}

/// What an expression's truth says: when it holds (`pos`) or fails (`neg`), whether a naming
/// test has let the file through.
#[derive(Clone, Copy)]
struct Says {
    pos: bool,
    neg: bool,
}

const NOTHING: Says = Says { pos: false, neg: false };

/// Reads an expression by recursive descent, each level given `named`: whether a naming test
/// has let the file through whenever the evaluation reaches it.
struct Reader<'r, 'a> {
    args: &'r [&'a str],
    at: usize,
    /// A deleting action is reached unnamed.
    all: bool,
    /// A deleting action is reached named.
    named: bool,
}

impl<'a> Reader<'_, 'a> {
    fn peek(&self) -> Option<&'a str> {
        self.args.get(self.at).copied()
    }

    /// `a , b`: both are evaluated; the list's truth is the last one's.
    fn comma(&mut self, named: bool, depth: usize) -> Says {
        let mut says = self.or(named, depth);
        while self.peek() == Some(",") {
            self.at += 1;
            says = self.or(named, depth);
        }
        says
    }

    /// `a -o b`: b is reached when a failed.
    fn or(&mut self, named: bool, depth: usize) -> Says {
        let mut says = self.and(named, depth);
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.at += 1;
            let right = self.and(named || says.neg, depth);
            says = Says { pos: says.pos && right.pos, neg: says.neg || right.neg };
        }
        says
    }

    /// `a -a b` or `a b`: b is reached when a held.
    fn and(&mut self, named: bool, depth: usize) -> Says {
        let mut says = self.not(named, depth);
        loop {
            match self.peek() {
                None | Some(")" | "," | "-o" | "-or") => return says,
                Some("-a" | "-and") => self.at += 1,
                Some(_) => {}
            }
            let right = self.not(named || says.pos, depth);
            says = Says { pos: says.pos || right.pos, neg: says.neg && right.neg };
        }
    }

    /// `! a`, `-not a`: holds when a fails.
    fn not(&mut self, named: bool, depth: usize) -> Says {
        if matches!(self.peek(), Some("!" | "-not")) {
            self.at += 1;
            let says = self.not(named, depth);
            return Says { pos: says.neg, neg: says.pos };
        }
        self.primary(named, depth)
    }

    fn primary(&mut self, named: bool, depth: usize) -> Says {
        let Some(arg) = self.peek() else { return NOTHING };
        self.at += 1;
        match arg {
            "(" if depth >= MAX_DEPTH => {
                // Too deep to follow: judged by whether anything in the rest deletes.
                let rest = &self.args[self.at..];
                self.at = self.args.len();
                let deletes = rest.contains(&"-delete")
                    || rest.windows(2).any(|w| is_exec(w[0]) && deletes(&w[1..]));
                self.all |= deletes;
                NOTHING
            }
            "(" => {
                let says = self.comma(named, depth + 1);
                if self.peek() == Some(")") {
                    self.at += 1;
                }
                says
            }
            "-delete" => {
                self.reached(named);
                NOTHING
            }
            _ if is_exec(arg) => {
                let start = self.at;
                let end = self.args[start..]
                    .iter()
                    .position(|a| matches!(*a, ";" | "\\;" | "+"))
                    .map_or(self.args.len(), |i| start + i);
                if deletes(&self.args[start..end]) {
                    self.reached(named);
                }
                self.at = (end + 1).min(self.args.len());
                NOTHING
            }
            _ if NAMING.contains(&arg) => {
                let value = self.peek().unwrap_or("");
                self.at += 1;
                Says { pos: !names_everything(arg, value), neg: false }
            }
            "-empty" => Says { pos: true, neg: false },
            "-fprintf" => {
                self.at += 2;
                NOTHING
            }
            _ if VALUED.contains(&arg) || arg.starts_with("-newer") => {
                self.at += 1;
                NOTHING
            }
            _ => NOTHING,
        }
    }

    fn reached(&mut self, named: bool) {
        if named {
            self.named = true;
        } else {
            self.all = true;
        }
    }
}

fn is_exec(arg: &str) -> bool {
    matches!(arg, "-exec" | "-execdir" | "-ok" | "-okdir")
}

/// Whether the command an `-exec` runs deletes what it is given: `rm`, `unlink`, `shred` (by
/// any path, behind `sudo` or `command`), or a shell whose `-c` code begins with one.
fn deletes(command: &[&str]) -> bool {
    let name = |word: &str| word.rsplit(['/', '\\']).next().unwrap_or(word).to_owned();
    let mut words =
        command.iter().copied().skip_while(|w| matches!(*w, "sudo" | "command" | "env"));
    let Some(first) = words.next() else { return false };
    let first = name(first);
    if DELETERS.contains(&first.as_str()) {
        return true;
    }
    if matches!(first.as_str(), "sh" | "bash" | "zsh" | "dash" | "ksh") {
        let mut rest = words.skip_while(|w| *w != "-c");
        rest.next();
        if let Some(code) = rest.next() {
            return code.split([';', '&', '|', '\n']).any(|part| {
                part.split_whitespace().next().is_some_and(|w| DELETERS.contains(&name(w).as_str()))
            });
        }
    }
    false
}

/// Whether a naming test's pattern lets every file through (`-name '*'`, `-regex '.*'`).
fn names_everything(test: &str, value: &str) -> bool {
    if test.ends_with("regex") {
        let value = value.trim_start_matches('^').trim_end_matches('$');
        return matches!(value, ".*" | ".+" | "" | "./.*" | ".*/.*");
    }
    let value = value.strip_prefix("./").unwrap_or(value);
    value.bytes().all(|b| matches!(b, b'*' | b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(line: &str) -> Option<Effect> {
        let args: Vec<&str> = line.split_whitespace().collect();
        read(&args).1
    }

    #[test]
    fn order_and_negation_decide_what_is_deleted() {
        use Effect::{DeleteAll, DeleteNamed};
        let cases = [
            ("/ -name x -delete", Some(DeleteNamed)),
            ("/ -delete -name x", Some(DeleteAll)),
            ("~ -not -name keep -delete", Some(DeleteAll)),
            ("~ ! -name keep -delete", Some(DeleteAll)),
            ("~ ! ! -name x -delete", Some(DeleteNamed)),
            (". -name x -o -delete", Some(DeleteAll)),
            (". ! -name x -o -delete", Some(DeleteNamed)),
            (". ( -name a -o -name b ) -delete", Some(DeleteNamed)),
            (". ( -name a -o -type f ) -delete", Some(DeleteAll)),
            (". -type f -mtime +30 -delete", Some(DeleteAll)),
            (". -name * -delete", Some(DeleteAll)),
            (". -regex .* -delete", Some(DeleteAll)),
            (". -path ./build/* -delete", Some(DeleteNamed)),
            (". -empty -delete", Some(DeleteNamed)),
            (". -name *.pyc -exec rm -f {} +", Some(DeleteNamed)),
            (". -type f -exec /bin/rm {} ;", Some(DeleteAll)),
            (". -name *.log -print , -delete", Some(DeleteAll)),
            (". -name x -exec grep -l y {} ;", None),
            (". -name x -print", None),
            ("-delete", Some(DeleteAll)),
        ];
        for (line, want) in cases {
            assert_eq!(effect(line), want, "find {line}");
        }
    }

    #[test]
    fn a_shell_that_runs_rm_deletes() {
        assert!(deletes(&["sh", "-c", "rm -rf \"$1\"", "_", "{}"]));
        assert!(deletes(&["sudo", "/usr/bin/rm", "-f", "{}"]));
        assert!(!deletes(&["sh", "-c", "echo rm", "_", "{}"]));
        assert!(!deletes(&["chmod", "644", "{}"]));
    }

    #[test]
    fn start_points_come_before_the_expression() {
        let read_starts = |line: &str| {
            let args: Vec<&str> = line.split_whitespace().collect();
            read(&args).0.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        assert_eq!(read_starts("-L /a ~/b -name x -delete"), ["/a", "~/b"]);
        assert_eq!(read_starts("-name x -delete"), ["."]);
        assert_eq!(read_starts("-E -f /etc -delete"), ["/etc"]);
        assert_eq!(read_starts("( -name x ) -delete"), ["."]);
    }

    #[test]
    fn deep_brackets_and_stray_ones_stay_bounded() {
        let deep = format!("/ {} -name x {} -delete", "( ".repeat(10_000), ") ".repeat(10_000));
        assert_eq!(effect(&deep), Some(Effect::DeleteAll));
        assert_eq!(effect(". ) ) -delete"), Some(Effect::DeleteAll));
        assert_eq!(effect(". -name x ) -delete"), Some(Effect::DeleteAll));
        assert_eq!(effect(". -exec"), None);
        assert_eq!(effect(". -name"), None);
    }
}
