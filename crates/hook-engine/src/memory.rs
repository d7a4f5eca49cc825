//! Memory (reference §2.5): privacy stripping, prompt markers, the terms memories are found by,
//! ranking, and how recalled memories and the compaction handoff read. Pure functions: the
//! runtime keeps the store.

use std::fmt::Write as _;

use crate::session::SessionState;

/// The namespaces when the config names none.
pub const DEFAULT_NAMESPACES: [&str; 10] = [
    "decisions",
    "learnings",
    "blockers",
    "progress",
    "patterns",
    "research",
    "reviews",
    "retrospective",
    "inception",
    "elicitation",
];

/// The marker shorthands every project has (`[decision] text`); the config adds its own.
pub const DEFAULT_ALIASES: [(&str, &str); 14] = [
    ("decision", "decisions"),
    ("learned", "learnings"),
    ("learning", "learnings"),
    ("insight", "learnings"),
    ("til", "learnings"),
    ("blocker", "blockers"),
    ("block", "blockers"),
    ("pattern", "patterns"),
    ("review", "reviews"),
    ("retro", "retrospective"),
    ("requirement", "elicitation"),
    ("progress", "progress"),
    ("research", "research"),
    ("inception", "inception"),
];

/// The tags whose content is never stored, when the config names none.
pub const DEFAULT_PRIVATE_TAGS: [&str; 1] = ["private"];

/// Where memories go when nothing says otherwise, if the project has it.
pub const FALLBACK_NAMESPACE: &str = "learnings";

/// The longest memory kept, in characters; longer texts are cut.
pub const MAX_MEMORY_CHARS: usize = 4000;

/// The most memories a session's handoff lists (its most recent).
pub const HANDOFF_MEMORIES: u32 = 5;

/// The longest memory shown when recalled, in characters.
const MAX_RECALLED_CHARS: usize = 600;

/// The memory settings a project compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySettings<'a> {
    /// The namespaces memories may go to.
    pub namespaces: Vec<&'a str>,
    /// Shorthand → namespace.
    pub aliases: Vec<(&'a str, &'a str)>,
    /// Tags whose content is removed before anything is stored.
    pub private_tags: Vec<&'a str>,
}

impl Default for MemorySettings<'static> {
    fn default() -> Self {
        MemorySettings {
            namespaces: DEFAULT_NAMESPACES.to_vec(),
            aliases: DEFAULT_ALIASES.to_vec(),
            private_tags: DEFAULT_PRIVATE_TAGS.to_vec(),
        }
    }
}

impl MemorySettings<'_> {
    /// The namespace a memory goes to when none is named: `learnings`, or the first configured.
    pub fn fallback(&self) -> &str {
        if self.namespaces.contains(&FALLBACK_NAMESPACE) {
            FALLBACK_NAMESPACE
        } else {
            self.namespaces.first().copied().unwrap_or(FALLBACK_NAMESPACE)
        }
    }

    /// The namespace `name` (a namespace or a shorthand, any case) stands for.
    pub fn namespace(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        if let Some(ns) = self.namespaces.iter().find(|ns| **ns == name) {
            return Some(ns);
        }
        self.aliases.iter().find(|(alias, _)| *alias == name).map(|(_, ns)| *ns)
    }

    /// The marker that keeps text in `namespace`, without its brackets: its shorthand that is
    /// the namespace in the singular (`decision`), else one that is the namespace, else its
    /// first, else `remember:namespace`.
    pub fn marker_for(&self, namespace: &str) -> String {
        let singular = namespace.strip_suffix('s').unwrap_or(namespace);
        let mine = || self.aliases.iter().filter(|(_, ns)| ns.eq_ignore_ascii_case(namespace));
        let best = mine()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(singular))
            .or_else(|| mine().find(|(alias, _)| alias.eq_ignore_ascii_case(namespace)))
            .or_else(|| mine().next());
        match best {
            Some((alias, _)) => (*alias).to_owned(),
            None => format!("remember:{namespace}"),
        }
    }

    /// `name` resolved, or the fallback with a note saying so.
    pub fn resolve(&self, name: &str) -> (String, Option<String>) {
        match self.namespace(name) {
            Some(ns) => (ns.to_owned(), None),
            None => {
                let fallback = self.fallback();
                // The first few: a note is made per marker, the list may be long.
                let mut known =
                    self.namespaces.iter().take(16).copied().collect::<Vec<_>>().join(", ");
                if self.namespaces.len() > 16 {
                    known.push_str(", …");
                }
                let note = format!(
                    "unknown memory namespace `{name}`, kept in `{fallback}` (namespaces: {known})"
                );
                (fallback.to_owned(), Some(note))
            }
        }
    }
}

/// `text` without the content of the private tags (`<private>…</private>`, attributes
/// allowed, tag names in any case, nested ones counted). An unclosed (or self-closing) tag
/// hides everything after it: privacy wins over completeness. Trimmed; `None` when nothing is left.
pub fn strip_private(text: &str, tags: &[&str]) -> Option<String> {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, tag, after_open)) = next_open(rest, tags) {
        kept.push_str(&rest[..start]);
        rest = match close_of(&rest[after_open..], tag) {
            Some(end) => &rest[after_open + end..],
            None => "",
        };
    }
    kept.push_str(rest);
    let kept = kept.trim();
    (!kept.is_empty()).then(|| kept.to_owned())
}

/// The first opening private tag in `text`: (its start, the tag, the index after its `>`). A
/// self-closing `<private/>` opens too (privacy wins over markup).
fn next_open<'t>(text: &str, tags: &[&'t str]) -> Option<(usize, &'t str, usize)> {
    // No tag opens after the last `>`: stop there rather than rescan the rest for every `<`.
    let last = text.rfind('>')?;
    let mut from = 0;
    while let Some(offset) = text[from..=last].find('<') {
        let start = from + offset;
        for &tag in tags {
            if let Some(after) = tag_end(text, start + 1, tag) {
                return Some((start, tag, after));
            }
        }
        from = start + 1;
    }
    None
}

/// When `text[at..]` opens `tag` (its name, then `>` or whitespace and attributes up to `>`),
/// the index after the `>`.
fn tag_end(text: &str, at: usize, tag: &str) -> Option<usize> {
    let name = text.get(at..at + tag.len())?;
    if !name.eq_ignore_ascii_case(tag) {
        return None;
    }
    let after_name = at + tag.len();
    match text[after_name..].chars().next()? {
        '>' => Some(after_name + 1),
        c if c.is_whitespace() || c == '/' => {
            text[after_name..].find('>').map(|end| after_name + end + 1)
        }
        _ => None,
    }
}

/// The index just after the `</tag>` closing the tag opened before `text`, counting nested
/// openings of the same tag.
fn close_of(text: &str, tag: &str) -> Option<usize> {
    let last = text.rfind('>')?;
    let mut depth = 1usize;
    let mut from = 0;
    while let Some(offset) = text[from..=last].find('<') {
        let at = from + offset;
        if text[at + 1..].starts_with('/')
            && let Some(end) = tag_end(text, at + 2, tag)
        {
            depth -= 1;
            if depth == 0 {
                return Some(end);
            }
            from = end;
        } else if let Some(end) = tag_end(text, at + 1, tag) {
            depth += 1;
            from = end;
        } else {
            from = at + 1;
        }
    }
    None
}

/// A memory about to be stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Captured {
    /// The rule that captured it.
    pub rule: String,
    /// Its namespace.
    pub namespace: String,
    /// The text, privacy tags stripped, at most [`MAX_MEMORY_CHARS`].
    pub text: String,
    /// How sure the rule is, 0 to 1.
    pub confidence: f32,
    /// Something the user should know (an unknown namespace).
    pub note: Option<String>,
}

/// How a rule captures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CaptureSpec<'a> {
    /// The namespace of the text (with `markers`: of `[capture]` / `@memory` without one).
    pub namespace: Option<&'a str>,
    /// How sure, 0 to 1.
    pub confidence: f32,
    /// Only the marked parts are kept, each in its marker's namespace; without markers,
    /// nothing.
    pub markers: bool,
}

/// The memories `rule` captures from `text`: the whole text (reference §2.2), or with
/// `markers` its marked parts (reference §2.5). Private tags are stripped first: a fully private text
/// captures nothing.
pub fn capture(
    rule: &str,
    text: &str,
    spec: CaptureSpec<'_>,
    config: &MemorySettings<'_>,
) -> Vec<Captured> {
    let Some(text) = strip_private(text, &config.private_tags) else { return Vec::new() };
    let text = text.replace("\r\n", "\n");
    let parts: Vec<(Target<'_>, &str)> =
        if spec.markers { markers(&text, config) } else { vec![(Target::Default, text.as_str())] };
    parts
        .into_iter()
        .filter_map(|(target, body)| {
            let body = body.trim();
            if body.is_empty() {
                return None;
            }
            let (namespace, note) = match target {
                Target::Named(name) => config.resolve(name),
                Target::Fallback => (config.fallback().to_owned(), None),
                Target::Default => match spec.namespace {
                    Some(name) => config.resolve(name),
                    None => (config.fallback().to_owned(), None),
                },
            };
            Some(Captured {
                rule: rule.to_owned(),
                namespace,
                text: cut(body, MAX_MEMORY_CHARS),
                confidence: spec.confidence,
                note,
            })
        })
        .collect()
}

/// Where a marker sends its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target<'t> {
    /// A namespace or shorthand named in the marker.
    Named(&'t str),
    /// `[capture]` / `@memory` without a namespace, or text without markers: the rule's.
    Default,
    /// `[remember]`: the fallback namespace.
    Fallback,
}

/// Whether `text` has a memory marker.
pub fn has_marker(text: &str, config: &MemorySettings<'_>) -> bool {
    strip_private(text, &config.private_tags).is_some_and(|text| !markers(&text, config).is_empty())
}

/// The marked parts of `text`, in order: `[remember] …`, `[remember:ns] …`, `[capture:ns] …`,
/// `@memory:ns …`, `[shorthand] …` (the first of a line, at its start or after a space; the text
/// runs to the end of the paragraph or the next line with a marker), `:::ns text:::` and
/// `:::ns title` … `:::` blocks (`ns` a namespace or shorthand: `:::tip` is Markdown, not a
/// marker).
fn markers<'t>(text: &'t str, config: &MemorySettings<'_>) -> Vec<(Target<'t>, &'t str)> {
    let mut found: Vec<(Target<'t>, usize, usize)> = Vec::new();
    let mut lines = line_spans(text).peekable();
    // The marker whose text is still running: its target and where its text starts.
    let mut open: Option<(Target<'t>, usize)> = None;
    let mut end_of_open = 0;
    let close_open = |open: &mut Option<(Target<'t>, usize)>, end: usize, found: &mut Vec<_>| {
        if let Some((target, start)) = open.take() {
            found.push((target, start, end));
        }
    };
    while let Some((start, line)) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            close_open(&mut open, end_of_open, &mut found);
            continue;
        }
        if let Some(block) = trimmed.strip_prefix(":::")
            && let Some((name, rest)) = word(block)
            && config.namespace(name).is_some()
            && (rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with(":::"))
        {
            close_open(&mut open, end_of_open, &mut found);
            if let Some(single) = rest.trim_end().strip_suffix(":::") {
                let body_start = start + (single.as_ptr() as usize - line.as_ptr() as usize);
                found.push((Target::Named(name), body_start, body_start + single.len()));
                continue;
            }
            // A block: the title line, then every line up to a line of `:::`.
            let body_start = start + (rest.as_ptr() as usize - line.as_ptr() as usize);
            let mut body_end = start + line.len();
            for (next_start, next) in lines.by_ref() {
                if next.trim() == ":::" {
                    break;
                }
                body_end = next_start + next.len();
            }
            found.push((Target::Named(name), body_start, body_end));
            continue;
        }
        if let Some((target, body)) = inline_marker(line, config) {
            close_open(&mut open, end_of_open, &mut found);
            open = Some((target, start + body));
        }
        end_of_open = start + line.len();
    }
    close_open(&mut open, end_of_open, &mut found);
    found.into_iter().map(|(target, s, e)| (target, &text[s..e])).collect()
}

/// Each line of `text` with its byte offset, without its line ending.
fn line_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n').map(move |raw| {
        let start = offset;
        offset += raw.len();
        (start, raw.trim_end_matches(['\n', '\r']))
    })
}

/// The leading `\w+` of `text` (ASCII, and not cut short by a non-ASCII letter) and what
/// follows it.
fn word(text: &str) -> Option<(&str, &str)> {
    let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    let (word, rest) = text.split_at(end);
    (end > 0 && !rest.starts_with(char::is_alphanumeric)).then_some((word, rest))
}

/// The first marker of `line` that starts it or follows a space: its target and where its
/// text starts in the line.
fn inline_marker<'t>(line: &'t str, config: &MemorySettings<'_>) -> Option<(Target<'t>, usize)> {
    let mut from = 0;
    while let Some(offset) = line[from..].find(['[', '@']) {
        let at = from + offset;
        from = at + 1;
        if at > 0 && !line[..at].ends_with(char::is_whitespace) {
            continue;
        }
        let rest = &line[at + 1..];
        let (target, length) = if line[at..].starts_with('[') {
            let Some((name, after)) = word(rest) else { continue };
            let remember = name.eq_ignore_ascii_case("remember");
            let explicit = remember || name.eq_ignore_ascii_case("capture");
            let (target, after) = match (after.strip_prefix(':').and_then(word), explicit) {
                (Some((ns, after)), true) => (Target::Named(ns), after),
                (None, true) if remember => (Target::Fallback, after),
                (None, true) => (Target::Default, after),
                (None, false) if config.namespace(name).is_some() => (Target::Named(name), after),
                _ => continue,
            };
            let Some(after) = after.strip_prefix(']') else { continue };
            (target, line.len() - after.len())
        } else {
            let Some(after) = rest.strip_prefix("memory") else { continue };
            let (target, after) = match after.strip_prefix(':').and_then(word) {
                Some((ns, after)) => (Target::Named(ns), after),
                None => (Target::Default, after),
            };
            if !after.is_empty() && !after.starts_with(char::is_whitespace) {
                continue;
            }
            (target, line.len() - after.len())
        };
        return Some((target, length));
    }
    None
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Words too common to find a memory by.
const STOP_WORDS: [&str; 58] = [
    "about", "after", "again", "all", "also", "and", "any", "are", "but", "can", "could", "did",
    "does", "for", "from", "had", "has", "have", "her", "his", "how", "into", "its", "just", "let",
    "like", "make", "not", "now", "our", "out", "please", "should", "some", "than", "that", "the",
    "their", "them", "then", "there", "these", "this", "those", "use", "was", "what", "when",
    "where", "which", "while", "who", "why", "will", "with", "would", "you", "your",
];

/// Path parts that say nothing about what a file is about.
/// (Compared after the plural `s` is dropped.)
const PATH_WORDS: [&str; 14] = [
    "src", "lib", "main", "mod", "index", "crate", "package", "pkg", "internal", "cmd", "dist",
    "build", "target", "vendor",
];

/// The most terms a query is made of: the first ones of a long prompt.
pub const MAX_QUERY_TERMS: usize = 64;

/// The terms memories are found by: words of 3+ letters or digits, lowercased, split at case
/// changes (`parseJson` → parse, json), a plural `s` dropped, common words left out; each once,
/// in order.
pub fn terms(text: &str) -> Vec<String> {
    first_terms(text, usize::MAX)
}

/// The first `max` distinct [`terms`] of `text`: a query reads no further.
pub fn first_terms(text: &str, max: usize) -> Vec<String> {
    // Up to `LINEAR` terms, a new one is compared with each kept; past that, with a set.
    const LINEAR: usize = 64;
    let mut out: Vec<String> = Vec::new();
    let mut seen: Option<std::collections::BTreeSet<String>> = None;
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut rest = word;
        while !rest.is_empty() {
            let part = &rest[..camel_end(rest)];
            rest = &rest[part.len()..];
            if out.len() >= max {
                return out;
            }
            // An ASCII word lowers in place, its length its count of characters.
            let lower =
                if part.is_ascii() { part.to_ascii_lowercase() } else { part.to_lowercase() };
            let short = if lower.is_ascii() { lower.len() < 3 } else { lower.chars().count() < 3 };
            if short || STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
                continue;
            }
            let term = singular(lower);
            let new = match &mut seen {
                Some(seen) => seen.insert(term.clone()),
                None => !out.contains(&term),
            };
            if new {
                out.push(term);
                if out.len() == LINEAR && max > LINEAR {
                    seen = Some(out.iter().cloned().collect());
                }
            }
        }
    }
    out
}

/// The terms of a file path (relative to the project): [`terms`] without the parts every path
/// has (`src`, `lib`, `index`, …) and its extension.
pub fn path_terms(path: &str) -> Vec<String> {
    let without_extension = match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') && ext.len() <= 5 => stem,
        _ => path,
    };
    terms(without_extension).into_iter().filter(|t| !PATH_WORDS.contains(&t.as_str())).collect()
}

/// Where the first part of `word` ends, split at case changes: `parseJSONValue` → parse,
/// JSON, Value.
fn camel_end(word: &str) -> usize {
    let mut chars = word.char_indices().peekable();
    let Some((_, mut prev)) = chars.next() else { return 0 };
    while let Some((at, c)) = chars.next() {
        let next_lower = chars.peek().is_some_and(|(_, n)| n.is_lowercase());
        if c.is_uppercase() && (prev.is_lowercase() || (prev.is_uppercase() && next_lower)) {
            return at;
        }
        prev = c;
    }
    word.len()
}

fn singular(mut term: String) -> String {
    if term.len() > 3 && term.ends_with('s') && !term.ends_with("ss") {
        term.pop();
    }
    term
}

pub use crate::rule::RecallFrom;

/// What a rule that fired asks to recall.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recall {
    /// Where it looks.
    pub from: RecallFrom,
    /// At most this many memories.
    pub max: usize,
    /// The terms to find them by (none for the handoff).
    pub terms: Vec<String>,
}

impl Recall {
    /// The distinct terms a memory must share: one of a path's few terms or a short prompt's,
    /// two of a longer prompt's (one shared word in a paragraph is chance).
    pub fn min_terms(&self) -> usize {
        match self.from {
            RecallFrom::Prompt if self.terms.len() > 3 => 2,
            _ => 1,
        }
    }
}

/// A stored memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// Its id in the store.
    pub id: i64,
    /// Its namespace.
    pub namespace: String,
    /// Its text.
    pub text: String,
    /// How sure its rule was.
    pub confidence: f32,
    /// When it was stored, seconds since the epoch.
    pub created: i64,
}

/// Ranks the memories that share terms with a query: `hits` holds (query term index, memory
/// id) for the shared terms read; `frequency` holds, for each query term, how many memories
/// it finds (which may be more than `hits` holds of it: recall reads a common term's newest
/// postings only); `total` is the number of memories stored. A rarer term weighs more; a
/// memory needs `min_terms` distinct query terms (at most all of them). The best `max` ids,
/// best first; ties go to the newer memory.
pub fn rank(
    hits: &[(usize, i64)],
    frequency: &[usize],
    total: usize,
    min_terms: usize,
    max: usize,
) -> Vec<i64> {
    let query_terms = frequency.len();
    // The bits of 1 + total / frequency: a logarithm in integers (a float `ln` would link
    // libm into every hook).
    let weight = |term: usize| {
        let df = frequency[term].max(1);
        u64::from(usize::BITS - (total.max(df).saturating_add(df) / df).leading_zeros())
    };
    // By memory, so that each memory's hits lie together.
    let mut by_memory: Vec<(i64, usize)> =
        hits.iter().filter(|(term, _)| *term < query_terms).map(|&(t, m)| (m, t)).collect();
    by_memory.sort_unstable();
    let needed = min_terms.min(query_terms).max(1);
    let mut ranked: Vec<(i64, u64)> = by_memory
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|shared| shared.len() >= needed)
        .map(|shared| (shared[0].0, shared.iter().map(|&(_, term)| weight(term)).sum()))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    ranked.into_iter().take(max).map(|(id, _)| id).collect()
}

/// [`rank`] over memories at hand (a pack test's): the best `max` for `recall`.
pub fn search<'m>(memories: &'m [Memory], recall: &Recall) -> Vec<&'m Memory> {
    let mut hits = Vec::new();
    let mut frequency = vec![0; recall.terms.len()];
    for m in memories {
        let terms = terms(&m.text);
        for (i, term) in recall.terms.iter().enumerate() {
            if terms.contains(term) {
                hits.push((i, m.id));
                frequency[i] += 1;
            }
        }
    }
    rank(&hits, &frequency, memories.len(), recall.min_terms(), recall.max)
        .into_iter()
        .filter_map(|id| memories.iter().find(|m| m.id == id))
        .collect()
}

/// Recalled memories as the model reads them.
pub fn render_recalled(memories: &[Memory]) -> Option<String> {
    if memories.is_empty() {
        return None;
    }
    let mut text = String::from("Remembered (hookpack memory):");
    for m in memories {
        let _ = write!(
            text,
            "\n- [{} #{}, {}] {}",
            m.namespace,
            m.id,
            date(m.created),
            cut(&m.text.replace('\n', " "), MAX_RECALLED_CHARS)
        );
    }
    Some(text)
}

/// The handoff `PreCompact` writes for the `SessionStart` after the compaction: the active
/// agent, workflow and task, the flags, the rules tied to them, and the memories captured in the
/// session (newest last). `None` when there is nothing to hand over.
pub fn handoff(state: &SessionState, active_rules: &[String], recent: &[Memory]) -> Option<String> {
    let mut lines = Vec::new();
    let active: Vec<String> =
        [("agent", &state.agent), ("workflow", &state.workflow), ("task", &state.task)]
            .into_iter()
            .filter_map(|(what, value)| Some(format!("{what} `{}`", value.as_deref()?)))
            .collect();
    if !active.is_empty() {
        lines.push(format!("- active: {}", active.join("; ")));
    }
    if !state.flags.is_empty() {
        let flags: Vec<&str> = state.flags.iter().map(String::as_str).collect();
        lines.push(format!("- flags: {}", flags.join(", ")));
    }
    if !active_rules.is_empty() {
        lines.push(format!("- rules in force for them: {}", active_rules.join(", ")));
    }
    if !recent.is_empty() {
        lines.push("- captured in this session:".to_owned());
        for m in recent {
            let text = cut(&m.text.replace('\n', " "), MAX_RECALLED_CHARS);
            lines.push(format!("  - [{} #{}] {text}", m.namespace, m.id));
        }
    }
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "Handoff from before the compaction (hookpack, prompt {}):\n{}",
        state.prompt_count,
        lines.join("\n")
    ))
}

/// `YYYY-MM-DD` (UTC) of a time in seconds since the epoch.
pub fn date(unix: i64) -> String {
    // Howard Hinnant's days-to-civil.
    let days = unix.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(text: &str) -> Option<String> {
        strip_private(text, &["private", "secret"])
    }

    #[test]
    fn private_tags_are_stripped_before_anything_is_kept() {
        assert_eq!(
            strip("public content <private>secret stuff</private> more public").as_deref(),
            Some("public content  more public")
        );
        assert_eq!(strip("line1\n<private>x</private>\nline2").as_deref(), Some("line1\n\nline2"));
        // Any case, attributes, nesting, several tags.
        assert_eq!(strip("a <PRIVATE>x</Private> b").as_deref(), Some("a  b"));
        assert_eq!(strip("a <private reason=\"key\">x</private> b").as_deref(), Some("a  b"));
        assert_eq!(strip("a <private>x<private>y</private>z</private> b").as_deref(), Some("a  b"));
        assert_eq!(
            strip("a <secret>k</secret> b <private>p</private> c").as_deref(),
            Some("a  b  c")
        );
        // An unclosed tag hides the rest; look-alike tags are text.
        assert_eq!(strip("keep <private>token=abc and more").as_deref(), Some("keep"));
        assert_eq!(
            strip("<private-x>kept</private-x>").as_deref(),
            Some("<private-x>kept</private-x>")
        );
        // A self-closing tag opens all the same: privacy wins over markup.
        assert_eq!(strip("a <private/> b").as_deref(), Some("a"));
        assert_eq!(strip("a <private />secret</private> b").as_deref(), Some("a  b"));
        assert_eq!(strip("a <private x=\"/>\">secret</private> b").as_deref(), Some("a  b"));
        // Many opening tags and no `>`: text, found quickly.
        let many = "<private ".repeat(20_000);
        assert_eq!(strip(&many).as_deref(), Some(many.trim()));
        // Nothing left: nothing to keep.
        assert_eq!(strip("  <private>all of it</private>\n"), None);
        assert_eq!(strip(""), None);
    }

    fn captured(text: &str, spec: CaptureSpec<'_>) -> Vec<(String, String, Option<String>)> {
        capture("p/r", text, spec, &MemorySettings::default())
            .into_iter()
            .map(|c| (c.namespace, c.text, c.note))
            .collect()
    }

    const MARKERS: CaptureSpec<'static> =
        CaptureSpec { namespace: None, confidence: 1.0, markers: true };

    fn one(ns: &str, text: &str) -> Vec<(String, String, Option<String>)> {
        vec![(ns.to_owned(), text.to_owned(), None)]
    }

    #[test]
    fn markers_name_their_namespace() {
        assert_eq!(
            captured("[remember] tabs, not spaces", MARKERS),
            one("learnings", "tabs, not spaces")
        );
        assert_eq!(captured("[remember:decisions] use JWT", MARKERS), one("decisions", "use JWT"));
        assert_eq!(captured("[capture:blocker] CI is red", MARKERS), one("blockers", "CI is red"));
        assert_eq!(
            captured("@memory:blockers stuck on auth", MARKERS),
            one("blockers", "stuck on auth")
        );
        assert_eq!(captured("@memory keep it short", MARKERS), one("learnings", "keep it short"));
        assert_eq!(captured("[decision] Use JWT", MARKERS), one("decisions", "Use JWT"));
        assert_eq!(
            captured("please [TIL] cargo can vendor", MARKERS),
            one("learnings", "cargo can vendor")
        );
        assert_eq!(captured(":::learned a quick one:::", MARKERS), one("learnings", "a quick one"));
        assert_eq!(
            captured(
                "intro\n:::decision Storage\nPostgres, not SQLite.\nBecause of load.\n:::\nafter",
                MARKERS
            ),
            one("decisions", "Storage\nPostgres, not SQLite.\nBecause of load.")
        );
    }

    #[test]
    fn a_prompt_may_carry_several_markers_each_running_to_its_paragraph_end() {
        let text = "[decision] use JWT\nsigned with RS256\n\nunrelated\n[blocker] the staging key";
        assert_eq!(
            captured(text, MARKERS),
            [one("decisions", "use JWT\nsigned with RS256"), one("blockers", "the staging key")]
                .concat()
        );
    }

    #[test]
    fn look_alikes_are_not_markers() {
        for text in [
            "[todo] x",
            "[d] x",
            "arr[decision] = 1",
            "email me@memory.dev",
            "[remember:decisions]",
            "a list [1, 2]",
            "no markers here",
            ":::tip\nsee the docs\n:::",
            ":::décision x:::",
            "[decisioné] x",
        ] {
            assert_eq!(captured(text, MARKERS), [], "{text}");
        }
    }

    #[test]
    fn windows_line_endings_are_kept_as_plain_ones() {
        assert_eq!(captured("[decision] a\r\nb\r\n\r\nc", MARKERS), one("decisions", "a\nb"));
    }

    #[test]
    fn an_unknown_namespace_falls_back_to_learnings_and_says_so() {
        let got = captured("[remember:foo] x", MARKERS);
        assert_eq!(got[0].0, "learnings");
        assert!(got[0].2.as_deref().unwrap().contains("unknown memory namespace `foo`"), "{got:?}");
    }

    #[test]
    fn without_markers_the_whole_text_goes_to_the_rules_namespace() {
        let spec = CaptureSpec { namespace: Some("decisions"), confidence: 0.9, markers: false };
        assert_eq!(
            captured("We decided to use Postgres.", spec),
            one("decisions", "We decided to use Postgres.")
        );
        // Without `markers`, markers are text like any other.
        assert_eq!(
            captured("[remember:blockers] x", spec),
            one("decisions", "[remember:blockers] x")
        );
        // `[capture]` without a namespace takes the rule's.
        let marked = CaptureSpec { markers: true, ..spec };
        assert_eq!(captured("[capture] pick Axum", marked), one("decisions", "pick Axum"));
        // Privacy first: a fully private text keeps nothing; a marked private part is gone.
        assert_eq!(captured("<private>we decided x</private>", spec), []);
        assert_eq!(
            captured("[decision] rotate keys <private>key=abc123</private> monthly", MARKERS),
            one("decisions", "rotate keys  monthly")
        );
    }

    #[test]
    fn long_texts_are_cut() {
        let long = "x".repeat(MAX_MEMORY_CHARS + 10);
        let got = captured(&format!("[remember] {long}"), MARKERS);
        assert_eq!(got[0].1.chars().count(), MAX_MEMORY_CHARS + 1);
        assert!(got[0].1.ends_with('…'));
    }

    #[test]
    fn configured_namespaces_and_aliases_are_honoured() {
        let config = MemorySettings {
            namespaces: vec!["adr", "notes"],
            aliases: vec![("a", "adr")],
            private_tags: vec!["private"],
        };
        let got: Vec<_> =
            capture("p/r", "[a] one\n\n[remember] two\n\n[decision] three", MARKERS, &config)
                .into_iter()
                .map(|c| (c.namespace, c.text))
                .collect();
        // Without `learnings`, `[remember]` goes to the first namespace; `[decision]` is no
        // shorthand here, so that paragraph is no memory.
        assert_eq!(
            got,
            [("adr".to_owned(), "one".to_owned()), ("adr".to_owned(), "two".to_owned())]
        );
    }

    #[test]
    fn terms_are_words_that_say_something() {
        assert_eq!(
            terms("Use the JWT tokens for parseJSONValue!"),
            ["jwt", "token", "parse", "json", "value"]
        );
        assert_eq!(path_terms("src/auth/jwt_tokens.rs"), ["auth", "jwt", "token"]);
        assert_eq!(path_terms("crates/hook-engine/src/memory.rs"), ["hook", "engine", "memory"]);
        assert_eq!(path_terms("Makefile"), ["makefile"]);
    }

    #[test]
    fn terms_are_distinct_however_many() {
        assert!(STOP_WORDS.is_sorted(), "searched by halves");
        let text = (0..200).map(|i| format!("word{i} Word{i}")).collect::<Vec<_>>().join(", ");
        let found = terms(&text);
        assert_eq!(found.len(), 200);
        assert_eq!(found[199], "word199");
        assert_eq!(first_terms(&text, 3), ["word0", "word1", "word2"]);
        assert_eq!(
            terms("Die GRÖẞE der Übersicht, dieÜbersicht"),
            ["die", "größe", "der", "übersicht"]
        );
        assert_eq!(terms("HTTPServer über_es ab"), ["http", "server", "über"]);
    }

    #[test]
    fn ranking_prefers_more_and_rarer_terms_then_newer_memories() {
        // Query terms: 0 = "jwt" (rare), 1 = "auth" (common).
        let hits = [(1, 1), (1, 2), (1, 3), (0, 3), (1, 4), (0, 5)];
        assert_eq!(rank(&hits, &[2, 4], 10, 1, 3), [3, 5, 4]);
        // Needing both terms leaves one.
        assert_eq!(rank(&hits, &[2, 4], 10, 2, 3), [3]);
        assert_eq!(rank(&[], &[2, 4], 10, 1, 3), Vec::<i64>::new());
        // The weights come from the counts given, not from the hits read: a common term's
        // few postings read do not make it rare.
        let read = [(1, 3), (0, 2), (1, 4)];
        assert_eq!(rank(&read, &[2, 900], 1000, 1, 3), [2, 4, 3]);
    }

    #[test]
    fn the_handoff_names_what_was_active_and_what_was_captured() {
        let mut state =
            SessionState { agent: Some("dev".into()), prompt_count: 12, ..SessionState::default() };
        state.flags.insert("edited".into());
        let recent = [Memory {
            id: 3,
            namespace: "decisions".into(),
            text: "use JWT".into(),
            confidence: 1.0,
            created: 0,
        }];
        assert_eq!(
            handoff(&state, &["context/agent-dev".to_owned()], &recent).unwrap(),
            "Handoff from before the compaction (hookpack, prompt 12):\n\
             - active: agent `dev`\n\
             - flags: edited\n\
             - rules in force for them: context/agent-dev\n\
             - captured in this session:\n  - [decisions #3] use JWT"
        );
        assert_eq!(handoff(&SessionState::default(), &[], &[]), None);
    }

    #[test]
    fn recalled_memories_name_namespace_id_and_date() {
        let m = Memory {
            id: 7,
            namespace: "decisions".into(),
            text: "use JWT\nRS256".into(),
            confidence: 1.0,
            created: 1_763_683_200,
        };
        assert_eq!(
            render_recalled(&[m]).unwrap(),
            "Remembered (hookpack memory):\n- [decisions #7, 2025-11-21] use JWT RS256"
        );
        assert_eq!(render_recalled(&[]), None);
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400), "2000-02-29");
    }
}
