//! The names a reader knows: reserved words, wrappers and their options, the programs that run
//! something inline; and finding a command's name (its path's last part, in any case), by
//! number rather than byte by byte.

use std::ops::Range;

/// Words that open or close a compound command, skipped before a program.
pub const RESERVED: &[&str] =
    &["if", "then", "elif", "else", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"];

/// Whether `word` is one of [`RESERVED`] (as a number: no word is compared byte by byte).
pub(super) fn is_reserved(word: &str) -> bool {
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
pub(super) fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "fish" | "busybox-sh")
}

/// `find` options that run a command.
pub(super) const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// A program that runs the command after its options.
pub(super) struct Wrapper {
    pub(super) name: &'static str,
    /// Options followed by a value.
    pub(super) valued: &'static [&'static str],
    /// Options with which it runs nothing (`command -v`).
    pub(super) queries: &'static [&'static str],
    /// Whether an operand comes before the command (`timeout DURATION cmd`).
    pub(super) operand: bool,
}

const fn wrapper(name: &'static str, valued: &'static [&'static str]) -> Wrapper {
    Wrapper { name, valued, queries: &[], operand: false }
}

/// In order of name.
pub(super) const WRAPPERS: &[Wrapper] = &[
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
    wrapper(
        "parallel",
        &[
            "-j",
            "--jobs",
            "-S",
            "--sshlogin",
            "--joblog",
            "-a",
            "--arg-file",
            "--delay",
            "--timeout",
            "--results",
            "--tmpdir",
            "--workdir",
            "--colsep",
            "-N",
            "-n",
            "--max-args",
            "-P",
        ],
    ),
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
pub(super) fn wrapper_named(name: &str) -> Option<&'static Wrapper> {
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
pub(super) fn runs_inline(name: &str) -> bool {
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
pub(super) const INLINE_NAMES: &[&str] = &[
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
    "git",
    "script",
    "su",
    "ansible",
    "tmux",
    "pssh",
    "parallel-ssh",
    "at",
    "batch",
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
pub(super) fn program_name(program: &str) -> &str {
    program.get(name_range(program)).unwrap_or_default()
}

/// Where [`program_name`] is in `program` (at ASCII bytes: whole characters).
pub(super) fn name_range(program: &str) -> Range<usize> {
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

pub(super) fn basename(word: &str) -> &str {
    match word.bytes().rposition(|b| b == b'/' || b == b'\\') {
        Some(at) => &word[at + 1..],
        None => word,
    }
}

/// `NAME=value` (a variable assignment before a command).
pub(super) fn is_assignment(word: &str) -> bool {
    let bytes = word.as_bytes();
    if !bytes.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') {
        return false;
    }
    let name = bytes.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    matches!(&bytes[name..], [b'=', ..] | [b'+', b'=', ..])
}
