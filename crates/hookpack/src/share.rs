//! `hookpack memory push | pull | sync`: team memory through git notes.
//!
//! The memories of the shared namespaces (`[memory] share`, or `--namespace`) travel as one git
//! note on a ref of their own, `refs/notes/hookpack`, attached to the empty blob (an object
//! every repository can have). The note holds one memory per line, a JSON object with an id
//! made from its namespace and text, sorted: two clones that each add memories merge their
//! notes with git's `cat_sort_uniq` strategy (the union of the lines), so concurrent edits
//! never conflict and nothing is lost. Forgetting a memory is not shared: the union keeps it.
//!
//! Nothing is sent without the user's command: `push` fetches the remote's note, merges it
//! into the local one, adds the store's memories and pushes (again, if another clone pushed in
//! between); `pull` fetches and merges, then stores the memories the note has and the store
//! lacks; `sync` does both. What is read from a note is checked as anything from outside: a
//! namespace the config does not have, a line that is not a memory, text over the size of a
//! memory, are skipped; private tags are stripped again. What is pushed and what is stored
//! passes `hook_engine::screen`: private parts removed, and a memory a rule of the project
//! blocks as a prompt (a key a guard pattern blocks) withheld and counted.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use anyhow::Context;
use hook_engine::Engine;
use hook_engine::artifact::Artifact;
use hook_engine::memory::{self, Captured, MAX_MEMORY_CHARS};
use hook_engine::screen::{Screen, Verdict, Withheld};
use hook_engine::text::shows;
use hook_runtime::Installation;
use hook_runtime::state::{PULLED_RULE, PULLED_SESSION_PREFIX, Store, database_path};
use rules_compiler::Layout;
use serde_json::{Value, json};

use rules_compiler::load;

use crate::commands::{environment, installation, printable, rules_in_memory};

/// The notes ref the memories travel on.
pub(crate) const NOTES_REF: &str = "refs/notes/hookpack";
/// Where the remote's note is fetched to before it is merged.
const FETCHED_REF: &str = "refs/notes/hookpack-fetched";
/// The program git runs for a remote to fetch from it, and to push to it: git's own, never
/// one the repository's config names for the remote (`remote.<name>.uploadpack`,
/// `receivepack`).
const UPLOAD_PACK: &str = "--upload-pack=git-upload-pack";
const RECEIVE_PACK: &str = "--receive-pack=git-receive-pack";
/// Where the local and the fetched notes are merged before the local ref is moved there.
const MERGING_REF: &str = "refs/notes/hookpack-merging";
/// The most notes a notes ref read may hold (hookpack writes one).
const MAX_NOTES: usize = 64;
/// The namespaces shared when neither the config nor the command names any.
pub(crate) const DEFAULT_SHARED: [&str; 3] = ["decisions", "learnings", "patterns"];
/// The most memories read from one namespace of the store.
const MAX_SHARED: u32 = 10_000;
/// The largest note read.
const MAX_NOTE_BYTES: usize = 16 << 20;
/// The most lines of a note read (the rest are not looked at): far more than clones share
/// (`MAX_SHARED` of each namespace each), far fewer than would make a pull slow.
const MAX_NOTE_LINES: usize = 100_000;
/// The longest line of a note read: a memory at its longest, every character escaped in JSON.
const MAX_LINE_BYTES: usize = MAX_MEMORY_CHARS * 6 + 256;
/// Tries of fetch, merge and push when another clone pushes in between.
const PUSH_TRIES: usize = 4;

/// What `memory push | pull | sync` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Push,
    Pull,
    Sync,
}

pub(crate) fn share(
    layout: &Layout,
    direction: Direction,
    remote: &str,
    namespaces: &[String],
) -> anyhow::Result<bool> {
    let root = layout.project.clone().context(
        "team memory lives in a project's git repository: run it in one, or give --project",
    )?;
    anyhow::ensure!(
        !remote.starts_with('-') && !remote.is_empty(),
        "`{}` is no git remote",
        printable(remote)
    );
    let installation = installation(layout).context("no project folder")?;
    let loaded = load(layout, &environment());
    anyhow::ensure!(
        !loaded.diagnostics.has_errors(),
        "the config has errors (`hookpack lint` says which)"
    );
    let settings = loaded.config.settings();
    let shared: Vec<String> = if !namespaces.is_empty() {
        namespaces.iter().map(|n| n.to_ascii_lowercase()).collect()
    } else if let Some(share) = &loaded.config.memory.share {
        share.iter().map(|n| n.to_ascii_lowercase()).collect()
    } else {
        DEFAULT_SHARED.map(str::to_owned).to_vec()
    };
    for namespace in &shared {
        anyhow::ensure!(
            settings.namespaces.contains(namespace),
            "`{}` is not a memory namespace (namespaces: {})",
            printable(namespace),
            settings.namespaces.join(", ")
        );
    }
    // What is shared or stored is screened against the rules as they are now.
    let rules = rules_in_memory(layout)?;
    let engine = Engine::new(Artifact::parse(rules.as_slice())?)?;
    let screen = Screen::new(&engine, Some(&root))?;
    let git = Git::new(&root)?;
    let anchor = git.anchor()?;
    let sharing = Sharing { git: &git, anchor: &anchor, remote, shared: &shared, screen: &screen };

    if direction != Direction::Push {
        let private: Vec<&str> = settings.private_tags.iter().map(String::as_str).collect();
        sharing.pull(&installation, &private, settings.memory_max)?;
    }
    if direction != Direction::Pull {
        sharing.push(&installation)?;
    }
    Ok(true)
}

/// What `push` and `pull` work with.
struct Sharing<'s, 'e, 'a> {
    git: &'s Git<'s>,
    anchor: &'s str,
    remote: &'s str,
    shared: &'s [String],
    screen: &'s Screen<'e, 'a>,
}

impl Sharing<'_, '_, '_> {
    /// Fetches and merges the remote's note, then stores the memories it has that the store
    /// lacks, as many as `[memory] max` (`max`) leaves room for beside the store's own.
    fn pull(&self, installation: &Installation, private: &[&str], max: u32) -> anyhow::Result<()> {
        let (git, remote) = (self.git, self.remote);
        let fetched = git.fetch_and_merge(remote, self.anchor)?;
        let lines = git.note(self.anchor)?;
        let mut withheld = Withheld::default();
        let mut memories = Vec::new();
        for mut memory in lines.iter().filter_map(|line| from_line(line, self.shared, private)) {
            if let Some(text) = withheld.count(self.screen.check(&memory.text)?) {
                memory.text = text;
                memories.push(memory);
            }
        }
        let mut store = Store::open(installation)?;
        let session = format!("{PULLED_SESSION_PREFIX}{remote}");
        let (new, dropped) = store.remember_pulled(&session, &memories, max)?;
        // A store past `max` (pulled into before it was kept): pulled memories go first.
        let evicted = if max > 0 { store.prune(max, 0, u32::MAX)? } else { 0 };
        let mut over = String::new();
        if dropped > 0 {
            over = format!("; {dropped} dropped: [memory] max is {max}, the store's own first");
        }
        if evicted > 0 {
            let _ = write!(over, "; {evicted} evicted to keep within [memory] max");
        }
        println!(
            "pulled {} shared memories from {}{}: {new} new{over}{}",
            memories.len(),
            printable(remote),
            if fetched { "" } else { " (it has none yet)" },
            withheld.said()
        );
        Ok(())
    }

    /// Fetches and merges the remote's note, adds the store's memories and pushes, again
    /// when another clone pushed in between.
    fn push(&self, installation: &Installation) -> anyhow::Result<()> {
        let (git, remote) = (self.git, self.remote);
        let mut withheld = Withheld::default();
        let mut mine = BTreeSet::new();
        if database_path(installation.dir()).is_file() {
            let store = Store::open(installation)?;
            for namespace in self.shared {
                for m in store.memories(Some(namespace), MAX_SHARED)? {
                    if let Some(text) = withheld.count(self.screen.check(&m.text)?) {
                        mine.insert(to_line(&m.namespace, &text));
                    }
                }
            }
        }
        for _ in 0..PUSH_TRIES {
            git.fetch_and_merge(remote, self.anchor)?;
            let note = git.note(self.anchor)?;
            // The note's lines pass the same screen: what reached the local note before
            // (another clone's lines, or this store's from before) is not pushed on as it is.
            let mut dropped = 0;
            let mut lines = BTreeSet::new();
            for line in &note {
                match screened_line(line, self.screen)? {
                    Some(kept) => {
                        lines.insert(kept);
                    }
                    None => dropped += 1,
                }
            }
            lines.extend(mine.iter().cloned());
            if lines.is_empty() && !git.has_notes()? {
                println!(
                    "nothing to push to {}: no shared memories here or there{}",
                    printable(remote),
                    withheld.said()
                );
                return Ok(());
            }
            if lines != note {
                git.write_note(self.anchor, &lines)?;
            }
            if git.push(remote)? {
                let left_out = if dropped > 0 {
                    format!(
                        "; {dropped} lines of the shared note left out (a rule blocks them, or they are private)"
                    )
                } else {
                    String::new()
                };
                println!(
                    "pushed {} shared memories to {} ({} of them this store's){}{left_out}",
                    lines.len(),
                    printable(remote),
                    mine.len(),
                    withheld.said(),
                );
                return Ok(());
            }
        }
        anyhow::bail!("{} kept changing while pushing: try again", printable(remote))
    }
}

/// A memory as a line of the note: the same wherever it was captured or when, so that the
/// union of two notes holds each memory once.
fn to_line(namespace: &str, text: &str) -> String {
    let id = hook_engine::artifact::sources::fnv1a(format!("{namespace}\0{text}").as_bytes());
    json!({"id": format!("{id:016x}"), "namespace": namespace, "text": text}).to_string()
}

/// `line` as it may be pushed on: as it is, with its private parts removed, or `None` when a
/// rule blocks it or all of it is private. A line that is not a memory of any namespace is not
/// one this command reads: it goes as it is.
fn screened_line(line: &str, screen: &Screen<'_, '_>) -> anyhow::Result<Option<String>> {
    let Ok(value) = serde_json::from_str::<Value>(line) else { return Ok(Some(line.to_owned())) };
    let (Some(namespace), Some(text)) =
        (value.get("namespace").and_then(Value::as_str), value.get("text").and_then(Value::as_str))
    else {
        return Ok(Some(line.to_owned()));
    };
    Ok(match screen.check(text)? {
        Verdict::Keep(kept) if kept == text => Some(line.to_owned()),
        Verdict::Keep(kept) => Some(to_line(namespace, &kept)),
        Verdict::Private | Verdict::Blocked(_) => None,
    })
}

/// The lines of a note that are memories: at most [`MAX_NOTE_LINES`] lines looked at, and none
/// longer than [`MAX_LINE_BYTES`] parsed.
fn memory_lines(text: &[u8]) -> BTreeSet<String> {
    text.split(|&b| b == b'\n')
        .take(MAX_NOTE_LINES)
        .filter(|line| line.len() <= MAX_LINE_BYTES)
        .filter_map(|line| std::str::from_utf8(line).ok())
        .map(str::trim)
        .filter(|line| is_memory_line(line))
        .map(str::to_owned)
        .collect()
}

/// Whether a line of a note is a memory (of any namespace: other clones may share others).
fn is_memory_line(line: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(line) else { return false };
    let text = value.get("text").and_then(Value::as_str);
    value.get("namespace").and_then(Value::as_str).is_some_and(|n| !n.is_empty() && n.len() <= 64)
        && text.is_some_and(|t| t.chars().count() <= MAX_MEMORY_CHARS)
}

/// The memory a line of a note holds, when it is one of a shared namespace.
fn from_line(line: &str, shared: &[String], private: &[&str]) -> Option<Captured> {
    let value: Value = serde_json::from_str(line).ok()?;
    let namespace = value.get("namespace")?.as_str()?.to_ascii_lowercase();
    let text = value.get("text")?.as_str()?;
    if !shared.contains(&namespace) || text.chars().count() > MAX_MEMORY_CHARS {
        return None;
    }
    let text = memory::strip_private(text, private)?;
    // A remote's text goes into the model's context: only what shows as it reads.
    let text: String = text.chars().filter(|&c| shows(c)).collect();
    let text = text.trim();
    (!text.is_empty()).then(|| Captured {
        rule: PULLED_RULE.to_owned(),
        namespace,
        text: text.to_owned(),
        confidence: 1.0,
        note: None,
    })
}

/// Git, run in the project.
struct Git<'r> {
    root: &'r Path,
    /// `-c user.name=… -c user.email=…` when the repository has no identity for the notes'
    /// commits.
    identity: Vec<String>,
}

impl<'r> Git<'r> {
    fn new(root: &'r Path) -> anyhow::Result<Git<'r>> {
        let mut git = Git { root, identity: Vec::new() };
        let inside = git.run(&["rev-parse", "--is-inside-work-tree"], None)?;
        anyhow::ensure!(inside.status.success(), "{} is not in a git repository", root.display());
        for (key, fallback) in [("user.name", "hookpack"), ("user.email", "hookpack@localhost")] {
            let set = git.run(&["config", "--get", key], None)?;
            if !set.status.success() || set.stdout.trim_ascii().is_empty() {
                git.identity.extend(["-c".to_owned(), format!("{key}={fallback}")]);
            }
        }
        Ok(git)
    }

    /// Git with `args`, in the project, as hookpack runs it (`hook_runtime::git::command`: none
    /// of the programs the repository's config names, no prompt); stdout piped.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = hook_runtime::git::command(self.root);
        command
            .args(&self.identity)
            .args(args)
            .env("GIT_NOTES_REF", NOTES_REF)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str], input: Option<&[u8]>) -> anyhow::Result<Output> {
        let mut command = self.command(args);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().context("cannot run git")?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin.write_all(input)?;
        }
        Ok(child.wait_with_output()?)
    }

    /// Runs `args`, failing with git's own words.
    fn check(&self, args: &[&str], input: Option<&[u8]>) -> anyhow::Result<Output> {
        let out = self.run(args, input)?;
        anyhow::ensure!(
            out.status.success(),
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Ok(out)
    }

    /// The object the note is attached to: the empty blob, written if the repository lacks it.
    fn anchor(&self) -> anyhow::Result<String> {
        let out = self.check(&["hash-object", "-w", "--stdin"], Some(b""))?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// The note's lines that are memories (none when there is no note), read at most
    /// [`MAX_NOTE_BYTES`] of it: what another clone pushed is checked like any outside input.
    fn note(&self, anchor: &str) -> anyhow::Result<BTreeSet<String>> {
        let mut child = self
            .command(&["notes", "--ref", NOTES_REF, "show", anchor])
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run git")?;
        let mut text = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            stdout.take(MAX_NOTE_BYTES as u64 + 1).read_to_end(&mut text)?;
        }
        if text.len() > MAX_NOTE_BYTES {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("the shared memories' note is over {} MiB", MAX_NOTE_BYTES >> 20);
        }
        if !child.wait()?.success() {
            return Ok(BTreeSet::new());
        }
        Ok(memory_lines(&text))
    }

    fn write_note(&self, anchor: &str, lines: &BTreeSet<String>) -> anyhow::Result<()> {
        let mut text = lines.iter().cloned().collect::<Vec<_>>().join("\n");
        text.push('\n');
        self.check(
            &["notes", "--ref", NOTES_REF, "add", "-f", "-F", "-", anchor],
            Some(text.as_bytes()),
        )?;
        Ok(())
    }

    /// Fetches the remote's note and merges it into the local one (the union of their lines);
    /// whether the remote had one.
    ///
    /// What the remote holds is fetched to a ref of its own and checked ([`Git::sound`]) before
    /// anything is merged, and the merge is made on another ref and checked too before the
    /// local notes ref is moved to it: a remote whose notes hookpack does not read (a ref
    /// naming a blob, a note over [`MAX_NOTE_BYTES`], a tree of many notes) is said to be one,
    /// and the local notes stay as they were.
    fn fetch_and_merge(&self, remote: &str, anchor: &str) -> anyhow::Result<bool> {
        let refspec = format!("+{NOTES_REF}:{FETCHED_REF}");
        let has = self.run(&["ls-remote", UPLOAD_PACK, "--exit-code", remote, NOTES_REF], None)?;
        if has.status.code() == Some(2) {
            return Ok(false);
        }
        anyhow::ensure!(
            has.status.success(),
            "cannot reach the git remote `{}`: {}",
            printable(remote),
            String::from_utf8_lossy(&has.stderr).trim()
        );
        let local = self.run(&["rev-parse", "--verify", "--quiet", NOTES_REF], None)?;
        let local = String::from_utf8_lossy(&local.stdout).trim().to_owned();
        if !local.is_empty()
            && let Err(err) = self.sound(NOTES_REF)
        {
            anyhow::bail!(
                "the local notes ref {NOTES_REF} is damaged ({err:#}): `git update-ref -d \
                 {NOTES_REF}` removes it (the memories stay in the store; a push shares them \
                 again)"
            );
        }
        self.check(
            &["fetch", UPLOAD_PACK, "--quiet", "--no-write-fetch-head", remote, &refspec],
            None,
        )?;
        let refused = |err: anyhow::Error| {
            for temporary in [FETCHED_REF, MERGING_REF] {
                let _ = self.run(&["update-ref", "-d", temporary], None);
            }
            anyhow::anyhow!(
                "the git remote `{}` holds shared memories hookpack does not read ({err:#}): \
                 nothing was merged, the local notes are as they were",
                printable(remote)
            )
        };
        self.sound(FETCHED_REF).map_err(refused)?;
        if local.is_empty() {
            self.check(&["update-ref", NOTES_REF, FETCHED_REF], None)?;
        } else {
            self.check(&["update-ref", MERGING_REF, &local], None)?;
            self.check(
                &[
                    "notes",
                    "--ref",
                    MERGING_REF,
                    "merge",
                    "--quiet",
                    "-s",
                    "cat_sort_uniq",
                    FETCHED_REF,
                ],
                None,
            )
            .map_err(refused)?;
            self.sound(MERGING_REF).map_err(refused)?;
            // Moved only from where it was: a concurrent run's merge is not lost.
            self.check(&["update-ref", NOTES_REF, MERGING_REF, &local], None)?;
            self.check(&["update-ref", "-d", MERGING_REF], None)?;
        }
        // The merged note, written back sorted (a merge may leave it as the two notes' lines
        // concatenated when one side had none on the anchor).
        let lines = self.note(anchor)?;
        if !lines.is_empty() {
            let text = lines.iter().cloned().collect::<Vec<_>>().join("\n") + "\n";
            let now = self.run(&["notes", "--ref", NOTES_REF, "show", anchor], None)?;
            if now.stdout != text.as_bytes() {
                self.write_note(anchor, &lines)?;
            }
        }
        Ok(true)
    }

    /// Whether the local notes ref exists.
    fn has_notes(&self) -> anyhow::Result<bool> {
        Ok(self.run(&["rev-parse", "--verify", "--quiet", NOTES_REF], None)?.status.success())
    }

    /// Whether `reference` holds notes as hookpack writes them: a commit, whose tree holds at
    /// most [`MAX_NOTES`] notes, each a blob of at most [`MAX_NOTE_BYTES`]; the listing is read
    /// with a cap.
    fn sound(&self, reference: &str) -> anyhow::Result<()> {
        let kind = self.check(&["cat-file", "-t", reference], None)?;
        let kind = String::from_utf8_lossy(&kind.stdout).trim().to_owned();
        anyhow::ensure!(kind == "commit", "its notes ref names a {kind}, not a commit");
        let mut child = self
            .command(&["ls-tree", "-r", "-l", "--full-tree", reference])
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run git")?;
        // An entry is well under 256 bytes: a listing longer than that many has too many.
        let cap = MAX_NOTES as u64 * 256;
        let mut listing = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            stdout.take(cap + 1).read_to_end(&mut listing)?;
        }
        if listing.len() as u64 > cap {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("more than {MAX_NOTES} notes");
        }
        anyhow::ensure!(child.wait()?.success(), "its tree cannot be read");
        let listing = String::from_utf8_lossy(&listing);
        let entries: Vec<&str> = listing.lines().collect();
        anyhow::ensure!(entries.len() <= MAX_NOTES, "more than {MAX_NOTES} notes");
        for entry in entries {
            // `<mode> <type> <object> <size>\t<path>`
            let fields: Vec<&str> =
                entry.split('\t').next().unwrap_or("").split_whitespace().collect();
            anyhow::ensure!(fields.get(1) == Some(&"blob"), "a note that is not a blob");
            let size: u64 = fields.get(3).and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
            anyhow::ensure!(
                size <= MAX_NOTE_BYTES as u64,
                "a note over {} MiB",
                MAX_NOTE_BYTES >> 20
            );
        }
        Ok(())
    }

    /// Pushes the note's ref; `false` when the remote moved on meanwhile (not a fast-forward).
    fn push(&self, remote: &str) -> anyhow::Result<bool> {
        let refspec = format!("{NOTES_REF}:{NOTES_REF}");
        let out = self.run(&["push", RECEIVE_PACK, "--quiet", remote, &refspec], None)?;
        if out.status.success() {
            return Ok(true);
        }
        let said = String::from_utf8_lossy(&out.stderr);
        if said.contains("non-fast-forward")
            || said.contains("fetch first")
            || said.contains("rejected")
        {
            return Ok(false);
        }
        anyhow::bail!("git push {} failed: {}", printable(remote), said.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_read_within_bounds() {
        let line = |n: usize| to_line("decisions", &format!("memory {n}"));
        let many: String = (0..MAX_NOTE_LINES + 10).map(|n| line(n) + "\n").collect();
        assert_eq!(memory_lines(many.as_bytes()).len(), MAX_NOTE_LINES);
        let long = to_line("decisions", &"\u{1}".repeat(MAX_MEMORY_CHARS));
        assert!(long.len() <= MAX_LINE_BYTES, "a memory at its longest is read");
        let over = format!("{}\n{}\n", line(1), " ".repeat(MAX_LINE_BYTES + 1) + &line(2));
        assert_eq!(memory_lines(over.as_bytes()).len(), 1);
    }

    #[test]
    fn a_line_is_a_memory_of_a_shared_namespace_or_nothing() {
        let shared = vec!["decisions".to_owned()];
        let line = to_line("decisions", "use RS256\nand rotate");
        let m = from_line(&line, &shared, &["private"]).unwrap();
        assert_eq!((m.namespace.as_str(), m.text.as_str()), ("decisions", "use RS256\nand rotate"));
        assert_eq!(from_line(&to_line("secrets", "x"), &shared, &[]), None);
        assert_eq!(from_line("not json", &shared, &[]), None);
        let private = to_line("decisions", "<private>key</private>");
        assert_eq!(from_line(&private, &shared, &["private"]), None);
        let long = to_line("decisions", &"x".repeat(MAX_MEMORY_CHARS + 1));
        assert_eq!(from_line(&long, &shared, &[]), None);
        // A remote's controls do not reach the context: bidi overrides, escapes, a bell, tags.
        let odd = to_line(
            "decisions",
            "use \u{202E}txt.exe\u{2066}\u{1b}[2J\u{7}\u{E0041}\u{E0042}\u{200B}\tRS256\n",
        );
        let m = from_line(&odd, &shared, &[]).unwrap();
        assert_eq!(m.text, "use txt.exe[2J\tRS256");
        assert_eq!(from_line(&to_line("decisions", "\u{202E}\u{200F}"), &shared, &[]), None);
        assert_eq!(
            to_line("decisions", "t"),
            r#"{"id":"c7f9a5d2e0c1b3a4","namespace":"decisions","text":"t"}"#.replace(
                "c7f9a5d2e0c1b3a4",
                &format!("{:016x}", hook_engine::artifact::sources::fnv1a(b"decisions\0t"))
            )
        );
    }
}
