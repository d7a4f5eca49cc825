//! What a session did, observed without a model: the files it read and edited, the commands it
//! ran and those that failed, the other tools it used, and its first prompt as its title. A
//! rule with `observe = true` adds its event's observation to the session's books
//! ([`Observed`], kept with the session state); `recall = { from = "sessions" }` gives an index
//! of the recent sessions at the start of the next.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hook_model::{EventKind, HookInput, ToolName};
use serde_json::Value;

use crate::codec::{Reader, put_option, put_str, put_u64};
use crate::eval::tool_path;
use crate::memory::{self, Memory};

/// Files kept per list (read, edited), the first touched first.
pub const MAX_FILES: usize = 50;
/// Commands kept (the newest).
pub const MAX_COMMANDS: usize = 30;
/// Failures kept (the newest).
pub const MAX_FAILURES: usize = 20;
/// Other tools counted, at most.
pub const MAX_TOOLS: usize = 32;
/// Characters of a title, a path, a command or a failure kept.
pub const MAX_LINE: usize = 160;
/// Characters of a tool's name kept.
const MAX_TOOL_NAME: usize = 64;

/// What a session did, as its books keep it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// The session's first prompt (its first line, private parts removed).
    pub title: Option<String>,
    /// The project's root the session worked in (an installation of the user's own serves
    /// every project: its index names only the current project's sessions).
    pub project: Option<String>,
    /// Files read, relative to the project where inside it.
    pub read: Vec<String>,
    /// Files written or edited.
    pub edited: Vec<String>,
    /// Commands run (the first line of each).
    pub ran: Vec<String>,
    /// Tool calls that failed: the command or tool and the error's first line.
    pub failed: Vec<String>,
    /// Other tools, by name, and how often each was used.
    pub tools: BTreeMap<String, u32>,
    /// Commands run in all (`ran` keeps the newest).
    pub commands: u32,
}

/// What one event adds to a session's books.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// A prompt: the session's title, if it has none yet.
    Prompt(String),
    /// A file read.
    Read(String),
    /// A file written or edited.
    Edited(String),
    /// A command run.
    Ran(String),
    /// A tool call that failed: what it was, and why.
    Failed(String),
    /// Another tool used.
    Tool(String),
}

impl Observed {
    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        *self == Observed::default()
    }

    /// Adds `observation`, within the limits.
    pub fn add(&mut self, observation: Observation) {
        let once = |list: &mut Vec<String>, item: String| {
            if list.len() < MAX_FILES && !list.contains(&item) {
                list.push(item);
            }
        };
        // A command run again moves to the end rather than taking a second place: a session
        // that runs `cargo test` twenty times still shows the other commands it ran.
        let newest = |list: &mut Vec<String>, item: String, max: usize| {
            if let Some(at) = list.iter().position(|kept| *kept == item) {
                list.remove(at);
            }
            list.push(item);
            if list.len() > max {
                list.remove(0);
            }
        };
        match observation {
            Observation::Prompt(title) => {
                self.title.get_or_insert(title);
            }
            Observation::Read(path) => once(&mut self.read, path),
            Observation::Edited(path) => once(&mut self.edited, path),
            Observation::Ran(command) => {
                self.commands = self.commands.saturating_add(1);
                newest(&mut self.ran, command, MAX_COMMANDS);
            }
            Observation::Failed(what) => newest(&mut self.failed, what, MAX_FAILURES),
            Observation::Tool(name) => {
                if let Some(count) = self.tools.get_mut(&name) {
                    *count = count.saturating_add(1);
                } else if self.tools.len() < MAX_TOOLS {
                    self.tools.insert(name, 1);
                }
            }
        }
    }

    /// Appends its encoding (a session record's, [`crate::codec`]).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_option(out, self.title.as_deref());
        put_option(out, self.project.as_deref());
        for list in [&self.read, &self.edited, &self.ran, &self.failed] {
            put_u64(out, list.len() as u64);
            for item in list {
                put_str(out, item);
            }
        }
        put_u64(out, self.tools.len() as u64);
        for (tool, uses) in &self.tools {
            put_str(out, tool);
            put_u64(out, u64::from(*uses));
        }
        put_u64(out, u64::from(self.commands));
    }

    /// Reads what [`Observed::encode`] wrote; `None` when `r` does not hold it.
    pub fn decode(r: &mut Reader<'_>) -> Option<Observed> {
        let mut o =
            Observed { title: r.option()?.0, project: r.option()?.0, ..Observed::default() };
        for list in [&mut o.read, &mut o.edited, &mut o.ran, &mut o.failed] {
            *list = (0..r.count()?).map(|_| r.string()).collect::<Option<_>>()?;
        }
        for _ in 0..r.count()? {
            let tool = r.string()?;
            o.tools.insert(tool, u32::try_from(r.u64()?).ok()?);
        }
        o.commands = u32::try_from(r.u64()?).ok()?;
        Some(o)
    }

    /// Passes over what [`Observed::encode`] wrote, copying nothing; `None` when `r` does not
    /// hold it.
    fn skip(r: &mut Reader<'_>) -> Option<()> {
        r.skip_option()?;
        r.skip_option()?;
        for _ in 0..4 {
            for _ in 0..r.count()? {
                r.bytes()?;
            }
        }
        for _ in 0..r.count()? {
            r.bytes()?;
            r.u64()?;
        }
        r.u64().map(|_| ())
    }
}

/// A session's books as its state holds them: decoded only when an event adds to them or
/// something reads them. Most hooks read a session's state and write it back without looking
/// at what it did (a prompt's hook adds the title only when there is none), and decoding every
/// path and command, then copying them with the state, was the largest part of reading it.
#[derive(Clone, Debug, Default)]
pub struct Books {
    /// What was read, when it was not decoded since (`observed` is then empty).
    encoded: Option<Vec<u8>>,
    observed: Observed,
}

impl Books {
    /// Passes over the books encoded at the front of `r` ([`Observed::encode`]) and keeps
    /// them as they are; `None` when `r` does not hold them. Their strings are checked to be
    /// UTF-8 when they are decoded (books that do not decode then read as empty).
    pub fn read(r: &mut Reader<'_>) -> Option<Books> {
        let start = r.0;
        Observed::skip(r)?;
        let encoded = start.get(..start.len() - r.0.len())?.to_vec();
        Some(Books { encoded: Some(encoded), observed: Observed::default() })
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        match &self.encoded {
            Some(encoded) => encoded.is_empty(),
            None => self.observed.is_empty(),
        }
    }

    /// The books, decoded (a copy when they were not decoded yet).
    pub fn get(&self) -> std::borrow::Cow<'_, Observed> {
        match &self.encoded {
            Some(encoded) => std::borrow::Cow::Owned(decode(encoded)),
            None => std::borrow::Cow::Borrowed(&self.observed),
        }
    }

    /// The project the session worked in, read without decoding the rest.
    pub fn project(&self) -> Option<std::borrow::Cow<'_, str>> {
        let Some(encoded) = &self.encoded else {
            return self.observed.project.as_deref().map(std::borrow::Cow::Borrowed);
        };
        let mut r = Reader(encoded);
        r.skip_option()?;
        r.option()?.0.map(std::borrow::Cow::Owned)
    }

    /// The books, decoded, to change.
    pub fn get_mut(&mut self) -> &mut Observed {
        if let Some(encoded) = self.encoded.take() {
            self.observed = decode(&encoded);
        }
        &mut self.observed
    }

    /// The books, decoded.
    pub fn into_observed(self) -> Observed {
        match self.encoded {
            Some(encoded) => decode(&encoded),
            None => self.observed,
        }
    }

    /// Whether they name the session's title (read without decoding them).
    pub fn has_title(&self) -> bool {
        match &self.encoded {
            Some(encoded) => Reader(encoded).skip_option() == Some(true),
            None => self.observed.title.is_some(),
        }
    }

    /// Adds `observation`, and `project()` as the project when the books have none.
    ///
    /// A prompt adds only a title, so when the books have a title and a project, it changes
    /// nothing and they stay encoded.
    pub fn add(&mut self, observation: Observation, project: impl FnOnce() -> Option<String>) {
        if let (Observation::Prompt(_), Some(encoded)) = (&observation, &self.encoded) {
            let mut r = Reader(encoded);
            if r.skip_option() == Some(true) && r.skip_option() == Some(true) {
                return;
            }
        }
        let observed = self.get_mut();
        observed.add(observation);
        if observed.project.is_none() {
            observed.project = project();
        }
    }

    /// Appends their encoding: what was read when they were not decoded.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match &self.encoded {
            Some(encoded) => out.extend_from_slice(encoded),
            None => self.observed.encode(out),
        }
    }
}

impl From<Observed> for Books {
    fn from(observed: Observed) -> Books {
        Books { encoded: None, observed }
    }
}

impl PartialEq for Books {
    fn eq(&self, other: &Books) -> bool {
        match (&self.encoded, &other.encoded) {
            (Some(a), Some(b)) => a == b,
            _ => *self.get() == *other.get(),
        }
    }
}

impl Eq for Books {}

/// Encoded books, decoded; empty when they do not decode.
fn decode(encoded: &[u8]) -> Observed {
    let mut r = Reader(encoded);
    Observed::decode(&mut r).filter(|_| r.0.is_empty()).unwrap_or_default()
}

/// What event `input` (`payload`) shows of the session, private parts (`private_tags`) removed;
/// `None` when it shows nothing (or only private text).
pub fn of(
    input: &HookInput,
    payload: &Value,
    project_root: Option<&std::path::Path>,
    private_tags: &[&str],
) -> Option<Observation> {
    let line = |text: &str| {
        let text = memory::strip_private(text, private_tags)?;
        let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
        Some(memory::cut(first, MAX_LINE))
    };
    match input.kind() {
        EventKind::UserPromptSubmit => {
            line(payload.get("prompt").and_then(Value::as_str)?).map(Observation::Prompt)
        }
        EventKind::PostToolUse | EventKind::PostToolUseFailure => {
            let failed = input.kind() == EventKind::PostToolUseFailure;
            let name = memory::cut(input.tool_name()?, MAX_TOOL_NAME);
            let tool = ToolName::from(name.as_str());
            let argument = |key: &str| payload.get("tool_input")?.get(key)?.as_str().and_then(line);
            let path = || tool_path(payload, project_root).as_deref().and_then(line);
            let what = match tool {
                ToolName::Bash | ToolName::PowerShell | ToolName::Monitor => {
                    argument("command").map(|c| ("ran", c))
                }
                ToolName::Read => path().map(|p| ("read", p)),
                ToolName::Write | ToolName::Edit | ToolName::MultiEdit | ToolName::NotebookEdit => {
                    path().map(|p| ("edited", p))
                }
                _ => None,
            };
            if failed {
                let error = payload.get("error").and_then(Value::as_str).and_then(line);
                let subject = what.map_or_else(|| name.clone(), |(_, s)| s);
                let shown = match error {
                    Some(error) => format!("{subject}: {error}"),
                    None => subject,
                };
                return Some(Observation::Failed(memory::cut(&shown, MAX_LINE)));
            }
            Some(match what {
                Some(("ran", command)) => Observation::Ran(command),
                Some(("read", path)) => Observation::Read(path),
                Some((_, path)) => Observation::Edited(path),
                None => Observation::Tool(name),
            })
        }
        _ => None,
    }
}

/// A recent session, as the index of recent sessions shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSummary {
    /// Its id.
    pub id: String,
    /// When it was last active (unix seconds).
    pub updated: i64,
    /// The git branch it was last on, when a hook read it.
    pub branch: Option<String>,
    /// What it did.
    pub observed: Observed,
    /// The memories it kept last.
    pub memories: Vec<Memory>,
}

/// Characters one session takes in the index, at most.
const MAX_SESSION_CHARS: usize = 500;

/// The index of recent sessions, newest first: for each its date, id (what
/// `hookpack memory show session:<id>` takes), title, the files it edited, its commands and
/// failures, and the memories it kept; `None` when there is none.
pub fn render_index(sessions: &[SessionSummary]) -> Option<String> {
    if sessions.is_empty() {
        return None;
    }
    let mut out = String::from(
        "Recent sessions in this project (hookpack; details: `hookpack memory show session:<id>`):",
    );
    for s in sessions {
        let o = &s.observed;
        let short: String = s.id.chars().take(8).collect();
        let mut entry = format!("\n- {} session:{short}", memory::date(s.updated));
        if let Some(branch) = &s.branch {
            let _ = write!(entry, " on `{}`", memory::cut(branch, 60));
        }
        if let Some(title) = &o.title {
            let _ = write!(entry, " \"{}\"", memory::cut(title, 80));
        }
        let mut did = Vec::new();
        if !o.edited.is_empty() {
            did.push(format!("edited {}", listed(&o.edited, 4)));
        }
        if o.commands > 0 {
            did.push(format!("ran {} command{}", o.commands, plural(o.commands as usize)));
        }
        if !o.failed.is_empty() {
            let last = memory::cut(o.failed.last().map_or("", String::as_str), 60);
            did.push(format!("{} failed (last: {last})", o.failed.len()));
        }
        if did.is_empty() && !o.read.is_empty() {
            did.push(format!("read {}", listed(&o.read, 3)));
        }
        if !did.is_empty() {
            entry.push_str(" — ");
            entry.push_str(&did.join("; "));
        }
        for m in s.memories.iter().rev().take(3) {
            let text = memory::cut(m.text.lines().next().unwrap_or(""), 100);
            let _ = write!(entry, "\n  kept [{} #{}] {text}", m.namespace, m.id);
        }
        out.push_str(&memory::cut(&entry, MAX_SESSION_CHARS));
    }
    Some(out)
}

/// `items`, the first `max` named and the rest counted.
fn listed(items: &[String], max: usize) -> String {
    let mut shown: Vec<&str> = items.iter().take(max).map(String::as_str).collect();
    let more = items.len().saturating_sub(max);
    let more = format!("{more} more");
    if items.len() > max {
        shown.push(&more);
    }
    shown.join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn observe(payload: &Value) -> Option<Observation> {
        let kind = EventKind::from_name(payload["hook_event_name"].as_str().unwrap()).unwrap();
        let mut full = json!({"session_id": "s", "transcript_path": "/t", "cwd": "/p"});
        full.as_object_mut().unwrap().extend(payload.as_object().unwrap().clone());
        let input = HookInput::from_value(kind, &full).unwrap();
        of(&input, &full, Some(std::path::Path::new("/p")), &["private"])
    }

    #[test]
    fn events_show_what_the_session_did() {
        let post = |tool: &str, input: Value| {
            observe(&json!({"hook_event_name": "PostToolUse", "tool_name": tool,
                "tool_input": input, "tool_response": {}, "tool_use_id": "t"}))
        };
        assert_eq!(
            post("Read", json!({"file_path": "/p/src/a.rs"})),
            Some(Observation::Read("src/a.rs".into()))
        );
        assert_eq!(
            post("Edit", json!({"file_path": "/p/src/a.rs", "old_string": "a", "new_string": "b"})),
            Some(Observation::Edited("src/a.rs".into()))
        );
        assert_eq!(
            post(
                "Bash",
                json!({"command": "cargo test <private>--token abc</private>\necho done"})
            ),
            Some(Observation::Ran("cargo test".into()))
        );
        assert_eq!(
            post("TodoWrite", json!({"todos": []})),
            Some(Observation::Tool("TodoWrite".into()))
        );
        let failed = observe(&json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo build"}, "tool_use_id": "t",
            "error": "error[E0308]: mismatched types\n  --> src/a.rs"}));
        assert_eq!(
            failed,
            Some(Observation::Failed("cargo build: error[E0308]: mismatched types".into()))
        );
        let prompt = observe(
            &json!({"hook_event_name": "UserPromptSubmit", "prompt": "\n  fix the login bug\nthen tests"}),
        );
        assert_eq!(prompt, Some(Observation::Prompt("fix the login bug".into())));
        let private = observe(
            &json!({"hook_event_name": "UserPromptSubmit", "prompt": "<private>secret</private>"}),
        );
        assert_eq!(private, None);
    }

    /// Books read from a record are decoded only when an observation changes them, and
    /// written back as they were read until then.
    #[test]
    fn books_are_decoded_only_when_they_change() {
        let mut observed = Observed {
            title: Some("fix the login bug".into()),
            project: Some("/p".into()),
            ran: vec!["cargo test".into()],
            commands: 1,
            ..Observed::default()
        };
        observed.tools.insert("TodoWrite".into(), 2);
        let mut bytes = Vec::new();
        observed.encode(&mut bytes);
        let read = |bytes: &[u8]| {
            let mut r = Reader(bytes);
            let books = Books::read(&mut r).unwrap();
            assert!(r.0.is_empty());
            books
        };
        let mut books = read(&bytes);
        assert_eq!(*books.get(), observed);
        assert_eq!(books.project().as_deref(), Some("/p"));
        assert_eq!(books, Books::from(observed.clone()));
        // A prompt names a title only where there is none: nothing to decode.
        let no_project = || panic!("the books have a project");
        books.add(Observation::Prompt("another".into()), no_project);
        assert!(books.encoded.is_some());
        let mut again = Vec::new();
        books.encode(&mut again);
        assert_eq!(again, bytes);
        // A command is added to the decoded books.
        books.add(Observation::Ran("cargo build".into()), no_project);
        assert!(books.encoded.is_none());
        observed.add(Observation::Ran("cargo build".into()));
        assert_eq!(books.into_observed(), observed);
        // Books without a title or a project take them from the prompt and the project.
        let mut bytes = Vec::new();
        Observed::default().encode(&mut bytes);
        let mut books = read(&bytes);
        books.add(Observation::Prompt("first".into()), || Some("/q".into()));
        assert_eq!(books.get().title.as_deref(), Some("first"));
        assert_eq!(books.get().project.as_deref(), Some("/q"));
        // Cut anywhere, the books do not read; with a string that is not UTF-8, they read as
        // empty once decoded.
        let mut full = Vec::new();
        observed.encode(&mut full);
        for end in 0..full.len() {
            assert!(Books::read(&mut Reader(&full[..end])).is_none(), "cut at {end}");
        }
        let at = full.windows(5).position(|w| w == b"cargo").unwrap();
        full[at] = 0xFF;
        assert!(read(&full).get().is_empty());
    }

    #[test]
    fn the_books_stay_within_their_limits() {
        let mut o = Observed::default();
        o.add(Observation::Prompt("first".into()));
        o.add(Observation::Prompt("second".into()));
        assert_eq!(o.title.as_deref(), Some("first"));
        for i in 0..100 {
            o.add(Observation::Edited(format!("f{}", i % 60)));
            o.add(Observation::Ran(format!("c{i}")));
            o.add(Observation::Failed(format!("x{i}")));
            o.add(Observation::Tool(format!("T{i}")));
        }
        assert_eq!(o.edited.len(), MAX_FILES);
        assert_eq!((o.ran.len(), o.ran[0].as_str(), o.commands), (MAX_COMMANDS, "c70", 100));
        assert_eq!((o.failed.len(), o.failed.last().unwrap().as_str()), (MAX_FAILURES, "x99"));
        assert_eq!(o.tools.len(), MAX_TOOLS);
        // Repeated, a command keeps one place, the newest; the count counts every run.
        let mut o = Observed::default();
        for command in ["cargo test", "git status", "cargo test", "cargo test"] {
            o.add(Observation::Ran(command.into()));
            o.add(Observation::Failed(format!("{command}: failed")));
        }
        assert_eq!((o.ran, o.commands), (vec!["git status".to_owned(), "cargo test".into()], 4));
        assert_eq!(o.failed, ["git status: failed", "cargo test: failed"]);
    }

    #[test]
    fn the_index_names_each_session_briefly() {
        let mut observed = Observed {
            title: Some("fix the login bug".into()),
            commands: 7,
            ..Observed::default()
        };
        for f in ["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs", "src/e.rs"] {
            observed.add(Observation::Edited(f.into()));
        }
        observed.add(Observation::Failed("cargo test: 2 failed".into()));
        let memory = Memory {
            id: 4,
            namespace: "decisions".into(),
            text: "use RS256".into(),
            confidence: 1.0,
            created: 0,
        };
        let index = render_index(&[SessionSummary {
            id: "0123456789abcdef".into(),
            updated: 1_764_000_000,
            branch: Some("fix/login".into()),
            observed,
            memories: vec![memory],
        }])
        .unwrap();
        assert_eq!(
            index,
            "Recent sessions in this project (hookpack; details: `hookpack memory show session:<id>`):\n\
             - 2025-11-24 session:01234567 on `fix/login` \"fix the login bug\" — edited src/a.rs, src/b.rs, src/c.rs, src/d.rs, 1 more; ran 7 commands; 1 failed (last: cargo test: 2 failed)\n  kept [decisions #4] use RS256"
        );
        assert_eq!(render_index(&[]), None);
    }
}
