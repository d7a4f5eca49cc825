//! The conventions and anti-patterns kept in memory, written where Claude Code reads them
//! without hookpack: `CLAUDE.md` between `<!-- hookpack:start -->` and `<!-- hookpack:end -->`
//! (nothing outside the markers touched), and a convention that names a folder of the project in
//! `.claude/rules/hookpack-<folder>.md` with `paths:` front matter. Done by `hookpack memory
//! export`, and by a hook whose rule says `export = true` (a rule the user turned on).
//!
//! Written only to those two places, through real folders, each file replaced whole (a link at
//! its name is replaced, never written through); run twice, the second run changes nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use hook_engine::artifact::ArtifactError;
use hook_engine::memory::Memory;

use crate::confined::Confined;
use crate::state::Store;
use hook_engine::screen::{Screen, Withheld};

const START: &str = "<!-- hookpack:start -->";
const END: &str = "<!-- hookpack:end -->";
/// The first line of a rule file this command writes: only those are replaced or removed.
const RULE_FILE_MARK: &str =
    "<!-- Written by `hookpack memory export`; edits here are replaced. -->";
/// The most memories exported from one namespace.
const MAX_EXPORTED: u32 = 200;

/// The namespaces exported when none is named.
pub const DEFAULT_NAMESPACES: [&str; 1] = ["patterns"];

/// The largest file read.
const MAX_FILE_BYTES: u64 = 4 << 20;

/// One file's change: its path (relative to the project), its text before (`None`: no file)
/// and after (`None`: removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Relative to the project.
    pub path: PathBuf,
    /// Its text now.
    pub before: Option<String>,
    /// Its text after the export.
    pub after: Option<String>,
}

/// What an export changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Export {
    /// Every file it looks at, changed or not.
    pub changes: Vec<Change>,
    /// Conventions of the whole project (in `CLAUDE.md`).
    pub conventions: usize,
    /// Folders with conventions of their own.
    pub folders: usize,
    /// Rule files at a name it would write that it did not write: left as they are.
    pub left_alone: Vec<String>,
}

impl Export {
    /// The files it changes.
    pub fn changed(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.before != c.after)
    }
}

/// The memories of `namespaces` to export, oldest first.
///
/// # Errors
///
/// When the store cannot be read.
pub fn memories(store: &Store, namespaces: &[String]) -> rusqlite::Result<Vec<Memory>> {
    let mut memories = Vec::new();
    for namespace in namespaces {
        memories.extend(store.memories(Some(&namespace.to_ascii_lowercase()), MAX_EXPORTED)?);
    }
    // Oldest first, as they were said.
    memories.sort_by_key(|m| m.id);
    Ok(memories)
}

/// `memories` as they may be exported ([`Screen::check`]): private parts removed, and those a
/// rule of the project blocks as a prompt, or all private, left out and counted.
///
/// # Errors
///
/// When the artifact is damaged.
pub fn screened(
    memories: Vec<Memory>,
    screen: &Screen<'_, '_>,
) -> Result<(Vec<Memory>, Withheld), ArtifactError> {
    let mut withheld = Withheld::default();
    let mut kept = Vec::with_capacity(memories.len());
    for mut memory in memories {
        if let Some(text) = withheld.count(screen.check(&memory.text)?) {
            memory.text = text;
            kept.push(memory);
        }
    }
    Ok((kept, withheld))
}

/// What exporting `memories` into the project at `root` changes. Reads only. The memories are
/// written as they are: [`screened`] first.
///
/// # Errors
///
/// When a file cannot be read, or a link or folder is where a file or folder is written (at
/// `CLAUDE.md`, `.claude` or `.claude/rules`): nothing may be written then.
pub fn plan(root: &Path, memories: &[Memory]) -> io::Result<Export> {
    let mut global = Vec::new();
    let mut by_folder: BTreeMap<String, Vec<&Memory>> = BTreeMap::new();
    for memory in memories {
        match folder_named(root, &memory.text) {
            Some(folder) => by_folder.entry(folder).or_default().push(memory),
            None => global.push(memory),
        }
    }
    let mut export =
        Export { conventions: global.len(), folders: by_folder.len(), ..Export::default() };
    let claude_md = root.join("CLAUDE.md");
    let before = read_optional(&claude_md)?;
    let after = merge_block(before.as_deref().unwrap_or(""), &block(&global));
    let after = (before.is_some() || !global.is_empty()).then_some(after);
    export.changes.push(Change { path: PathBuf::from("CLAUDE.md"), before, after });

    // Every folder on the way checked before anything is read from it or written: a link at
    // `.claude` or `.claude/rules` stops the export before CLAUDE.md is touched.
    let confined = Confined::new(root, Path::new(""));
    let rules_dir = confined
        .existing_dir(".claude/rules")
        .map_err(|err| {
            io::Error::other(format!(
                "{} is not a real folder; nothing written ({err})",
                root.join(".claude/rules").display()
            ))
        })?
        .map(|dir| dir.path().to_path_buf());
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for (folder, memories) in &by_folder {
        wanted.insert(format!("hookpack-{}.md", slug(folder)), rule_file(folder, memories));
    }
    let mine = rules_dir.as_deref().map(ours).unwrap_or_default();
    let read_rule = |name: &str| -> io::Result<Option<String>> {
        rules_dir.as_deref().map(|d| read_optional(&d.join(name))).transpose().map(Option::flatten)
    };
    // Files this export wrote before and no longer wants go; others are the user's.
    for name in mine.iter().filter(|name| !wanted.contains_key(*name)) {
        let before = read_rule(name)?;
        export.changes.push(Change {
            path: Path::new(".claude/rules").join(name),
            before,
            after: None,
        });
    }
    for (name, text) in wanted {
        let before = read_rule(&name)?;
        if before.is_some() && !mine.contains(&name) {
            export.left_alone.push(format!(".claude/rules/{name}"));
            continue;
        }
        export.changes.push(Change {
            path: Path::new(".claude/rules").join(&name),
            before,
            after: Some(text),
        });
    }
    Ok(export)
}

/// Writes what `export` changes into the project at `root`; how many files changed.
///
/// # Errors
///
/// When a folder is refused or a file cannot be written.
pub fn write(root: &Path, export: &Export) -> io::Result<usize> {
    let confined = Confined::new(root, Path::new(""));
    let mut written = 0;
    for change in export.changed() {
        let parent = change.path.parent().and_then(Path::to_str).unwrap_or("");
        let name = change
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| io::Error::other("a file name"))?;
        let dir = confined.dir(parent)?;
        match &change.after {
            Some(text) => dir.replace(name, text.as_bytes(), true)?,
            None => dir.remove(name)?,
        }
        written += 1;
    }
    Ok(written)
}

/// The text of a file, or `None` when there is none; a link or a folder at the name is an
/// error (it is not the user's file to read through).
fn read_optional(path: &Path) -> io::Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
        Ok(meta) if !meta.is_file() => Err(io::Error::other(format!(
            "{} is not a regular file; nothing written",
            path.display()
        ))),
        Ok(_) => {
            let bytes = hook_engine::bounded::read_regular(path, MAX_FILE_BYTES)?;
            String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| io::Error::other(format!("{} is not UTF-8", path.display())))
        }
    }
}

/// The `hookpack-*.md` files of `dir` this command wrote (they start with its mark).
fn ours(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        let markdown = Path::new(&name).extension().is_some_and(|e| e.eq_ignore_ascii_case("md"));
        if !(name.starts_with("hookpack-") && markdown) {
            continue;
        }
        // The first line after the front matter is the mark.
        let text = read_optional(&entry.path()).ok().flatten().unwrap_or_default();
        let front_matter =
            |l: &&str| l.starts_with("---") || l.starts_with("paths:") || l.starts_with("  - ");
        if text.lines().find(|l| !front_matter(l)) == Some(RULE_FILE_MARK) {
            names.push(name);
        }
    }
    names.sort();
    names
}

/// Whether `text` says what not to do: it starts with never, don't, do not, stop or avoid.
fn is_anti_pattern(text: &str) -> bool {
    let lower = text.trim_start().to_ascii_lowercase();
    let lower = lower.strip_prefix("please ").unwrap_or(&lower);
    ["never ", "don't ", "don’t ", "do not ", "stop ", "avoid "]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// The lines between the markers: the conventions, then the anti-patterns.
fn block(memories: &[&Memory]) -> String {
    let mut text = String::new();
    let (anti, conventions): (Vec<&&Memory>, Vec<&&Memory>) =
        memories.iter().partition(|m| is_anti_pattern(&m.text));
    for (title, list) in [("Conventions", conventions), ("Anti-patterns", anti)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(text, "\n## {title} (kept by hookpack)\n");
        for memory in list {
            let _ = writeln!(text, "- {}", one_line(&memory.text));
        }
    }
    text
}

/// A memory on one line, without control characters, its imports defused ([`defuse_imports`]).
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    defuse_imports(&line)
}

/// `line` with every `@` that could start an import put in a code span.
///
/// Claude Code reads `@path` in `CLAUDE.md` and `.claude/rules/*.md` as an import and loads the
/// file into the model's context: a memory saying "read @.env" would load `.env`. It looks for
/// an `@` at the start of a text or after whitespace, followed by a path, and skips code spans
/// and code blocks (its memory docs say so). So each `@` outside the line's code spans that is
/// followed by something other than whitespace, and preceded by anything but a letter or a
/// digit (an address such as `ops@example.com` stays as it is), is put with the rest of its
/// word in a code span: ``read `@.env` `` reads the same and imports nothing. The span's fence
/// is one backtick longer than any run of backticks in the line, so no backtick of the memory
/// can close it early or pair with it; a space goes before it where a backtick or a backslash
/// would otherwise touch it. An invisible character or a backslash before the `@` would be
/// less robust: a Markdown reader drops the backslash, and a reader that only asks for no
/// letter before the `@` would still see an import.
fn defuse_imports(line: &str) -> String {
    if !line.contains('@') {
        return line.to_owned();
    }
    let chars: Vec<char> = line.chars().collect();
    let spans = code_spans(&chars);
    let longest = chars.chunk_by(|a, b| a == b).filter(|r| r[0] == '`').map(<[char]>::len).max();
    let fence = "`".repeat(longest.unwrap_or(0) + 1);
    let mut out = String::with_capacity(line.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        if let Some(&(_, end)) = spans.iter().find(|(start, _)| *start == i) {
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        let imports = chars[i] == '@'
            && (i == 0 || !chars[i - 1].is_alphanumeric())
            && chars.get(i + 1).is_some_and(|c| !c.is_whitespace());
        if !imports {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let end = (i..chars.len()).find(|&j| chars[j].is_whitespace()).unwrap_or(chars.len());
        if i > 0 && matches!(chars[i - 1], '`' | '\\') {
            out.push(' ');
        }
        let word: String = chars[i..end].iter().collect();
        // A span's content that ends with a backtick is padded on both sides (one space each
        // side is not part of it).
        let pad = if word.ends_with('`') { " " } else { "" };
        let _ = write!(out, "{fence}{pad}{word}{pad}{fence}");
        i = end;
    }
    out
}

/// The code spans of `chars` as `(start, end)`: a run of backticks (not escaped by a
/// backslash) opens one that the next run of the same length closes (`CommonMark`'s rule).
fn code_spans(chars: &[char]) -> Vec<(usize, usize)> {
    let run = |at: usize| chars[at..].iter().take_while(|&&c| c == '`').count();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        if i > 0 && chars[i - 1] == '\\' {
            // An escaped backtick is a character; the rest of its run is a run of its own.
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run(j);
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                spans.push((i, end));
                i = end;
            }
            None => i += n,
        }
    }
    spans
}

/// `existing` with hookpack's block holding `inner` (none when `inner` is empty). The block
/// replaces the first pair of markers; other pairs, and markers without their other half, are
/// removed (the lines between a pair are hookpack's; text after a lone marker is the user's
/// and stays). Without markers, the block is appended.
pub fn merge_block(existing: &str, inner: &str) -> String {
    let lines: Vec<&str> = existing.split_inclusive('\n').collect();
    let is = |line: &str, marker: &str| line.trim() == marker;
    let mut out = String::with_capacity(existing.len() + inner.len() + 64);
    let mut placed = false;
    let mut i = 0;
    let block = || format!("{START}\n{inner}{END}\n");
    while i < lines.len() {
        let line = lines[i];
        if is(line, START) {
            // Its end, before any other start.
            let end = lines[i + 1..]
                .iter()
                .position(|l| is(l, END) || is(l, START))
                .filter(|&j| is(lines[i + 1 + j], END));
            if !placed && !inner.is_empty() {
                out.push_str(&block());
            }
            placed = true;
            i = match end {
                Some(j) => i + 1 + j + 1,
                None => i + 1,
            };
            continue;
        }
        if is(line, END) {
            // A lone end: the marker goes.
            i += 1;
            continue;
        }
        out.push_str(line);
        i += 1;
    }
    if !placed && !inner.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&block());
    }
    out
}

/// A relative folder of the project that `text` names with a `/` (`src/api`, `src/api/`,
/// `docs/`), the first one whose every part is a real folder (no link) and not hidden; `None`
/// for a convention of the whole project.
fn folder_named(root: &Path, text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || "`'\"(),;:".contains(c))
        .filter(|word| word.contains('/') && !word.starts_with('/'))
        .map(|word| word.trim_end_matches('.').trim_end_matches('/'))
        .filter(|word| word.len() <= MAX_FOLDER_CHARS)
        .filter(|word| word.chars().all(|c| c.is_ascii_alphanumeric() || "/_-.".contains(c)))
        .filter(|word| word.split('/').all(|part| !part.is_empty() && !part.starts_with('.')))
        .find(|word| {
            let mut at = root.to_path_buf();
            word.split('/').all(|part| {
                at.push(part);
                std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir())
            })
        })
        .map(str::to_owned)
}

/// The longest folder path a rule file is written for (its name stays well within a file
/// system's 255 bytes).
const MAX_FOLDER_CHARS: usize = 120;

/// A file name's part for `folder`: its parts joined by `--` (`src/api` → `src--api`; `a-b/c` and
/// `a/b-c` stay apart), case kept; a folder whose name holds `--` itself gets its hash too, so
/// that `a--b` and `a/b` stay apart.
fn slug(folder: &str) -> String {
    let joined = folder.split('/').collect::<Vec<_>>().join("--");
    if folder.contains("--") {
        let hash = hook_engine::artifact::sources::fnv1a(folder.as_bytes());
        format!("{joined}-{:08x}", hash & 0xffff_ffff)
    } else {
        joined
    }
}

/// The rule file of the conventions of `folder`: Claude Code loads it when it works there.
fn rule_file(folder: &str, memories: &[&Memory]) -> String {
    let mut text = format!(
        "---\npaths:\n  - \"{folder}/**\"\n---\n{RULE_FILE_MARK}\n\n# {folder}/ (kept by hookpack)\n\n"
    );
    for memory in memories {
        let _ = writeln!(text, "- {}", one_line(&memory.text));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "\n## Conventions (kept by hookpack)\n\n- use pnpm\n";

    #[test]
    fn the_block_is_appended_then_replaced_in_place() {
        let first = merge_block("# Project\n\nRead the docs.\n", BLOCK);
        assert_eq!(first, format!("# Project\n\nRead the docs.\n\n{START}\n{BLOCK}{END}\n"));
        assert_eq!(merge_block(&first, BLOCK), first, "run twice, nothing changes");
        let edited = first.replace("Read the docs.", "Read the docs first.") + "After.\n";
        let other = "\n## Conventions (kept by hookpack)\n\n- use bun\n";
        assert_eq!(
            merge_block(&edited, other),
            format!("# Project\n\nRead the docs first.\n\n{START}\n{other}{END}\nAfter.\n")
        );
        assert_eq!(merge_block("", BLOCK), format!("{START}\n{BLOCK}{END}\n"));
        assert_eq!(
            merge_block("no newline", BLOCK),
            format!("no newline\n\n{START}\n{BLOCK}{END}\n")
        );
        // Nothing to keep: the block goes, the rest stays.
        assert_eq!(merge_block(&edited, ""), "# Project\n\nRead the docs first.\n\nAfter.\n");
    }

    #[test]
    fn broken_markers_are_repaired_without_touching_the_users_text() {
        // Two blocks: the first is rewritten, the second removed.
        let twice = format!("a\n{START}\nold\n{END}\nb\n{START}\nolder\n{END}\nc\n");
        assert_eq!(merge_block(&twice, BLOCK), format!("a\n{START}\n{BLOCK}{END}\nb\nc\n"));
        // A start without its end: the marker is replaced, what follows is the user's.
        let orphan = format!("a\n{START}\nmine\n");
        assert_eq!(merge_block(&orphan, BLOCK), format!("a\n{START}\n{BLOCK}{END}\nmine\n"));
        // An end without its start: the marker goes.
        let lone_end = format!("a\n{END}\nb\n");
        assert_eq!(merge_block(&lone_end, BLOCK), format!("a\nb\n\n{START}\n{BLOCK}{END}\n"));
        // Two starts, then an end: the second pair is the block; the first start is a lone one.
        let starts = format!("a\n{START}\nmine\n{START}\nold\n{END}\nb\n");
        assert_eq!(merge_block(&starts, BLOCK), format!("a\n{START}\n{BLOCK}{END}\nmine\nb\n"));
    }

    #[test]
    fn folders_get_file_names_of_their_own() {
        assert_eq!(slug("src/api"), "src--api");
        assert_ne!(slug("a--b"), slug("a/b"));
        assert!(slug("a--b").starts_with("a--b-"));
        assert_ne!(slug("a-b/c"), slug("a/b-c"));
    }

    /// The `@path` imports Claude Code would follow in `text`, read as it reads them, or more
    /// eagerly: code spans and fenced blocks skipped (`CommonMark` pairs a backtick run with the
    /// next run of the same length), and an `@` followed by a path character at the start of
    /// a line or after anything but a letter or digit (also right after a code span, where a
    /// new text token starts).
    fn imports(text: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            // Code spans replaced by a space.
            let chars: Vec<char> = line.chars().collect();
            let run = |at: usize| chars[at..].iter().take_while(|&&c| c == '`').count();
            let mut plain = String::new();
            let mut i = 0;
            while i < chars.len() {
                if chars[i] == '`' && (i == 0 || chars[i - 1] != '\\') {
                    let n = run(i);
                    let mut j = i + n;
                    let close = loop {
                        if j >= chars.len() {
                            break None;
                        }
                        if chars[j] == '`' {
                            let m = run(j);
                            if m == n {
                                break Some(j + m);
                            }
                            j += m;
                        } else {
                            j += 1;
                        }
                    };
                    if let Some(end) = close {
                        plain.push(' ');
                        i = end;
                        continue;
                    }
                    plain.extend(&chars[i..i + n]);
                    i += n;
                    continue;
                }
                plain.push(chars[i]);
                i += 1;
            }
            let plain: Vec<char> = plain.chars().collect();
            for (at, c) in plain.iter().enumerate() {
                let after = plain.get(at + 1).is_some_and(|c| !c.is_whitespace());
                let before = at == 0 || !plain[at - 1].is_alphanumeric();
                if *c == '@' && after && before {
                    found.push(plain[at..].iter().take_while(|c| !c.is_whitespace()).collect());
                }
            }
        }
        found
    }

    #[test]
    fn memories_exported_import_no_file() {
        let root = std::env::temp_dir().join(format!("hookpack-export-at-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("src/api")).unwrap();
        let texts = [
            "Read @.env before deploying",
            "@~/.ssh/id_rsa holds the deploy key",
            "see (@docs/secret.md), `a`@.env and x ` y @.env",
            "a `` b \\@.env and \\`@.env`",
            "In src/api always read @../.aws/credentials first",
            "mail ops@example.com, tabs\t@.npmrc, @@x and @`y`",
        ];
        let memories: Vec<Memory> = texts
            .iter()
            .zip(1..)
            .map(|(text, id)| Memory {
                id,
                namespace: "patterns".to_owned(),
                text: (*text).to_owned(),
                confidence: 1.0,
                created: 0,
            })
            .collect();
        let export = plan(&root, &memories).unwrap();
        write(&root, &export).unwrap();
        let claude = std::fs::read_to_string(root.join("CLAUDE.md")).unwrap();
        let rule =
            std::fs::read_to_string(root.join(".claude/rules/hookpack-src--api.md")).unwrap();
        for written in [&claude, &rule] {
            assert_eq!(imports(written), Vec::<String>::new(), "{written}");
        }
        // Still readable: every `@…` is there as it was said.
        for said in ["Read `@.env` before", "@~/.ssh/id_rsa", "@docs/secret.md", "ops@example.com"]
        {
            assert!(claude.contains(said), "{said}: {claude}");
        }
        assert!(rule.contains("@../.aws/credentials"), "{rule}");
        // What is in a code span already stays as it is.
        assert_eq!(
            one_line("add `@types/node` as a dev dependency"),
            "add `@types/node` as a dev dependency"
        );
        // The detector finds what the unescaped text would import.
        assert_eq!(imports("- Read @.env now"), ["@.env"]);
        assert_eq!(imports("`a`@.env"), ["@.env"]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn anti_patterns_are_told_apart() {
        for text in ["Never use var", "don't use npm", "Please do not commit .env", "Avoid sleeps"]
        {
            assert!(is_anti_pattern(text), "{text}");
        }
        for text in ["Always use pnpm", "Use tabs", "Nevertheless, prefer bun"] {
            assert!(!is_anti_pattern(text), "{text}");
        }
    }
}
