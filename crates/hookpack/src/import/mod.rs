//! `hookpack import synapse|claude-rules|hookify <dir>`: the setups hookpack replaces, turned
//! into packs. Each importer reads its setup (bounded reads, regular files only) and returns a
//! [`Translation`]: the packs, with `[[test]]` cases drawn from what it read, and every part it
//! could not translate or translated with a change of meaning, said, never dropped silently.
//! The command writes the packs into the project (never over a file), then lints them and runs
//! their tests. In a project, the folder read must be inside the project's repository once its
//! links are resolved (`hook_runtime::git::Repository`).

mod claude_rules;
mod hookify;
mod synapse;
mod yaml;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use hook_engine::layout;
use hook_runtime::Installation;
use hook_runtime::confined::Confined;
use hook_runtime::git::Repository;
use rules_compiler::Layout;

use crate::commands::{installation, printable, shown};

/// The largest file an importer reads.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most files an importer reads from one setup.
const MAX_FILES: usize = 2_000;

/// What an importer made of a setup.
#[derive(Debug, Default)]
pub(crate) struct Translation {
    pub(crate) packs: Vec<Pack>,
    /// What could not be translated: the source, and why.
    pub(crate) untranslated: Vec<String>,
    /// What was translated with a difference the user should know of.
    pub(crate) notes: Vec<String>,
}

/// A pack being written.
#[derive(Debug)]
pub(crate) struct Pack {
    pub(crate) name: String,
    description: String,
    rules: Vec<String>,
    tests: Vec<String>,
}

impl Pack {
    pub(crate) fn new(name: &str, description: &str) -> Pack {
        Pack {
            name: name.to_owned(),
            description: description.to_owned(),
            rules: Vec::new(),
            tests: Vec::new(),
        }
    }

    /// Adds a rule: `comment` (its source) above, then `keys` in order, each `key = <TOML value>`.
    pub(crate) fn rule(&mut self, comment: &str, keys: &[(&str, String)]) {
        let mut text = String::new();
        for line in comment.lines() {
            let _ = writeln!(text, "# {}", printable(line));
        }
        text.push_str("[[rule]]\n");
        for (key, value) in keys {
            let _ = writeln!(text, "{key} = {value}");
        }
        self.rules.push(text);
    }

    /// Adds a test: `name`, the inline table of its `event`, that of its `expect`, and its
    /// `given` (empty: none).
    pub(crate) fn test(&mut self, name: &str, event: &str, expect: &str, given: &str) {
        let mut text = format!("[[test]]\nname = {}\n", toml_str(name));
        if !given.is_empty() {
            let _ = writeln!(text, "given = {given}");
        }
        let _ = writeln!(text, "event = {event}\nexpect = {expect}");
        self.tests.push(text);
    }

    pub(crate) fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// The pack's file.
    fn text(&self, source: &Path) -> String {
        let mut text = format!(
            "#:schema ../schemas/rule-pack.schema.json\n# Imported by `hookpack import` from {}.\n\n[pack]\nname = {}\ndescription = {}\n",
            printable(&source.display().to_string()),
            toml_str(&self.name),
            toml_str(&self.description)
        );
        for part in self.rules.iter().chain(&self.tests) {
            text.push('\n');
            text.push_str(part);
        }
        text
    }
}

/// `text` as a TOML string: a literal one where it can be (`'…'`, or `'''…'''` over several
/// lines), else a basic one with escapes.
pub(crate) fn toml_str(text: &str) -> String {
    let plain = |c: char| !c.is_control() || c == '\t';
    if !text.contains('\'') && text.chars().all(plain) {
        return format!("'{text}'");
    }
    let multiline = |c: char| !c.is_control() || c == '\t' || c == '\n';
    if text.contains('\n')
        && !text.contains("'''")
        && !text.ends_with('\'')
        && text.chars().all(multiline)
    {
        return format!("'''\n{text}'''");
    }
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML array of strings.
pub(crate) fn toml_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|i| toml_str(i)).collect::<Vec<_>>().join(", "))
}

/// A rule id from a name: lowercase letters, digits and `-`, starting with a letter.
pub(crate) fn rule_id(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') && !id.is_empty() {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-').to_owned();
    match id.chars().next() {
        None => "rule".to_owned(),
        Some(c) if !c.is_ascii_lowercase() => format!("r-{id}"),
        Some(_) => id,
    }
}

/// `base`, or `base-2`, `base-3`, … if `taken` has it.
pub(crate) fn unique(base: &str, taken: &mut Vec<String>) -> String {
    let mut id = base.to_owned();
    let mut n = 2;
    while taken.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    taken.push(id.clone());
    id
}

/// A file's text: a regular file (not through a link), at most [`MAX_FILE_BYTES`], UTF-8.
pub(crate) fn read(path: &Path) -> anyhow::Result<String> {
    let meta =
        std::fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let bytes = hook_engine::bounded::read_regular(path, MAX_FILE_BYTES)
        .with_context(|| format!("reading {}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{} is not UTF-8", path.display()))
}

/// A path `glob` matches, drawn from it: every wildcard given its simplest text.
pub(crate) fn sample_path(glob: &str) -> Option<String> {
    if glob.starts_with('!') {
        return None;
    }
    let mut path = String::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                } else {
                    path.push('x');
                }
            }
            '*' | '?' => path.push('x'),
            '{' => {
                let inner: String = chars.by_ref().take_while(|&c| c != '}').collect();
                path.push_str(inner.split(',').next().unwrap_or(""));
            }
            '[' => {
                // A class: its first character; for a negated one, a letter outside it.
                let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                let picked = match inner.strip_prefix(['!', '^']) {
                    Some(excluded) => "xyzqk".chars().find(|c| !excluded.contains(*c)),
                    None => inner.chars().next(),
                };
                path.push(picked.unwrap_or('x'));
            }
            '\\' => path.extend(chars.next()),
            c => path.push(c),
        }
    }
    let matcher =
        globset::GlobBuilder::new(glob).literal_separator(true).build().ok()?.compile_matcher();
    (!path.is_empty() && matcher.is_match(&path)).then_some(path)
}

/// The files below `dir` (`depth` folders deep at most: 0 for `dir`'s own) that `keep`
/// accepts, sorted; and what was passed over: links (never followed: a repository's link may
/// point at the user's secrets), hidden folders, folders too deep.
pub(crate) fn files(
    dir: &Path,
    depth: usize,
    keep: &dyn Fn(&str) -> bool,
) -> anyhow::Result<(Vec<PathBuf>, Vec<String>)> {
    let mut found = Vec::new();
    let mut passed = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, level)) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).with_context(|| format!("reading {}", folder.display()))?;
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            let place = shown(dir, &entry.path());
            if kind.is_symlink() && keep(&name) {
                passed.push(format!("{place}: a symbolic link, not followed"));
            } else if kind.is_dir() && depth > 0 {
                if name.starts_with('.') {
                    passed.push(format!("{place}/: a hidden folder, not read"));
                } else if level >= depth {
                    passed.push(format!("{place}/: deeper than {depth} folders, not read"));
                } else {
                    folders.push((entry.path(), level + 1));
                }
            } else if kind.is_file() && keep(&name) {
                found.push(entry.path());
            }
            if found.len() > MAX_FILES {
                bail!("more than {MAX_FILES} files below {}", dir.display());
            }
        }
    }
    found.sort();
    passed.sort();
    Ok((found, passed))
}

/// The files below `dir` that `keep` accepts ([`files`]), each read: its place (relative to
/// `dir`), its path and its text. What could not be read, and what was passed over, is said in
/// `out`.
pub(crate) fn texts(
    dir: &Path,
    depth: usize,
    keep: &dyn Fn(&str) -> bool,
    out: &mut Translation,
) -> anyhow::Result<Vec<(String, PathBuf, String)>> {
    let (found, passed) = files(dir, depth, keep)?;
    out.untranslated.extend(passed);
    let mut read_ones = Vec::new();
    for path in found {
        let place = shown(dir, &path);
        match read(&path) {
            Ok(text) => read_ones.push((place, path, text)),
            Err(err) => out.untranslated.push(format!("{place}: {err:#}")),
        }
    }
    Ok(read_ones)
}

/// `hookpack import <kind> <dir> [--dry-run]`.
pub(crate) fn import(
    layout: &Layout,
    kind: &str,
    source: &Path,
    dry_run: bool,
) -> anyhow::Result<bool> {
    if !source.is_dir() {
        bail!("{} is not a folder", source.display());
    }
    let installation = installation(layout).context("no project and no user folder")?;
    // A repository can link a folder of its own anywhere: a project's import reads its own.
    if let Installation::Project { root, .. } = &installation {
        let repository = Repository::of(root);
        if !repository.contains(source) {
            let real = hook_runtime::git::resolved(source).unwrap_or_else(|| source.to_owned());
            bail!(
                "{} leads to {}, outside the repository (or the project) {}: hookpack imports only \
                 from the project's own folders, never through a link out of them; copy the \
                 setup into the project to import it",
                source.display(),
                real.display(),
                repository.roots().first().unwrap_or(root).display()
            );
        }
    }
    let translation = match kind {
        "synapse" => synapse::translate(source),
        "claude-rules" => claude_rules::translate(source)?,
        "hookify" => hookify::translate(source)?,
        other => {
            bail!("cannot import `{other}`: the importers are synapse, claude-rules and hookify")
        }
    };
    let confined = Confined::of(&installation);
    let packs_dir = confined.path().join(layout::PACKS_DIR);
    let written: Vec<(PathBuf, String, &Pack)> = translation
        .packs
        .iter()
        .map(|pack| (packs_dir.join(format!("{}.toml", pack.name)), pack.text(source), pack))
        .collect();
    if dry_run {
        for (path, text, _) in &written {
            println!("# {}\n{text}", path.display());
        }
    } else {
        for (path, _, _) in &written {
            if std::fs::symlink_metadata(path).is_ok() {
                bail!(
                    "{} exists; nothing written (move it away, or import elsewhere)",
                    path.display()
                );
            }
        }
        let dir = confined
            .dir(layout::PACKS_DIR)
            .with_context(|| format!("writing {}", packs_dir.display()))?;
        for (path, text, _) in &written {
            let name = path.file_name().and_then(|n| n.to_str()).context("a pack's file name")?;
            let mut file =
                dir.create_new(name).with_context(|| format!("writing {}", path.display()))?;
            std::io::Write::write_all(&mut file, text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    for (path, _, pack) in &written {
        println!(
            "{verb} {} ({} rules, {} tests)",
            path.display(),
            pack.rules.len(),
            pack.tests.len()
        );
    }
    if written.is_empty() {
        println!("nothing to import from {}", source.display());
    }
    if !translation.untranslated.is_empty() {
        println!("\nnot translated:");
        for line in &translation.untranslated {
            println!("  {line}");
        }
    }
    if !translation.notes.is_empty() {
        println!("\ntranslated with a difference:");
        for line in &translation.notes {
            println!("  {line}");
        }
    }
    if dry_run || written.is_empty() {
        return Ok(true);
    }
    println!("\nthe packs, as `hookpack test` runs them:");
    let tested = crate::commands::test(layout)?;
    if tested {
        println!("next: `hookpack compile`, then `hookpack install`");
    }
    Ok(tested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_ids_are_written_as_toml_reads_them() {
        for text in ["plain", "it's", "two\nlines", "ends with '", "tab\there", "bell\u{7}", "'''"]
        {
            let doc = format!("v = {}", toml_str(text));
            let parsed: toml::Table = toml::from_str(&doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
            assert_eq!(parsed["v"].as_str(), Some(text), "{doc}");
        }
        assert_eq!(rule_id("Block dangerous rm!"), "block-dangerous-rm");
        assert_eq!(rule_id("2fa"), "r-2fa");
        assert_eq!(rule_id("--"), "rule");
        let mut taken = vec!["a".to_owned()];
        assert_eq!(unique("a", &mut taken), "a-2");
    }
}
