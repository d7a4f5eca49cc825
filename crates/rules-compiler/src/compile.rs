//! Compiling rules into the artifact.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use hook_engine::EventSet;
use hook_engine::Settings;
use hook_engine::artifact::format::{Section, command, rule};
use hook_engine::artifact::sources::sources_section;
pub use hook_engine::artifact::sources::{DirStamp, FileStamp};
use hook_engine::artifact::{
    Brackets, CaptureRecord, EventRecord, ListRef, RuleRecord, SettingsRecord, Unset,
};
use hook_engine::command::Pattern;
use hook_model::EventKind;

use crate::emit::{
    MatcherSection, Writer, encode_prefilter, fnv1a, glob_dfa, keyword_section, regex_dfa,
    regex_prefilter, regex_reverse_dfa,
};
use crate::error::Error;
use crate::model::{Once, RecallFrom, Rule, StateSet, StateUnset, ToolMatcher};

/// What the config sets for the hooks (the window, the brackets, the budget, the state's age,
/// the memory vocabulary); `compile` adds what the rules need and writes [`hook_engine::Settings`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigSettings {
    /// The context window, in tokens; 0 for the model's (`hook_model::context_window`).
    pub window_tokens: u32,
    /// Remaining % at or above which fresh, moderate and depleted start.
    pub brackets: [u32; 3],
    /// Tokens of injected context for fresh, moderate, depleted and critical.
    pub budget: [u32; 4],
    /// Sessions older than this many days are removed.
    pub max_age_days: u32,
    /// At most this many memories are kept; 0: no limit.
    pub memory_max: u32,
    /// Memories older than this many days are removed; 0: kept however old.
    pub memory_max_age_days: u32,
    /// A signal this sure (in thousandths) is captured (`[memory] auto`).
    pub signal_auto: u32,
    /// A signal this sure (in thousandths) is suggested (`[memory] suggest`).
    pub signal_suggest: u32,
    /// The most signals one event captures or suggests (`[memory] max_signals`).
    pub signal_max: u32,
    /// `[branch] issues`: the templates `{issue}` is found by, when configured.
    pub issues: Option<Vec<String>>,
    /// Memory namespaces.
    pub namespaces: Vec<String>,
    /// Marker shorthand → namespace.
    pub aliases: Vec<(String, String)>,
    /// Tags whose content is never stored.
    pub private_tags: Vec<String>,
}

impl Default for ConfigSettings {
    fn default() -> Self {
        use hook_engine::memory::{DEFAULT_ALIASES, DEFAULT_NAMESPACES, DEFAULT_PRIVATE_TAGS};
        let owned = |items: &[&str]| items.iter().map(|&s| s.to_owned()).collect();
        ConfigSettings {
            window_tokens: 0,
            brackets: [60, 40, 25],
            budget: [800, 1500, 2000, 2500],
            max_age_days: 7,
            memory_max: DEFAULT_MEMORY_MAX,
            memory_max_age_days: 0,
            signal_auto: 850,
            signal_suggest: 700,
            signal_max: 10,
            issues: None,
            namespaces: owned(&DEFAULT_NAMESPACES),
            aliases: DEFAULT_ALIASES.iter().map(|&(a, n)| (a.to_owned(), n.to_owned())).collect(),
            private_tags: owned(&DEFAULT_PRIVATE_TAGS),
        }
    }
}

/// The most memories kept by default (`[memory] max`).
pub(crate) const DEFAULT_MEMORY_MAX: u32 = 20_000;

/// What the artifact was compiled from, so that a hook can tell cheaply that it is stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    /// Every file read: packs, context files, configs (a config that does not exist counts,
    /// with `len = None`, so that creating it makes the artifact stale).
    pub files: Vec<FileStamp>,
    /// Every folder whose `*.toml` files are packs: adding or removing one makes it stale.
    pub dirs: Vec<DirStamp>,
}

impl Sources {
    /// One number for all of it: the artifact header's source fingerprint.
    pub fn fingerprint(&self) -> u64 {
        let mut text = String::new();
        for f in &self.files {
            let _ = writeln!(text, "f {} {:?} {}", f.path, f.len, f.hash);
        }
        for d in &self.dirs {
            let _ = writeln!(text, "d {} {}", d.path, d.names_hash);
        }
        fnv1a(text.as_bytes())
    }
}

/// The compiled artifact and what is in it.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Rules in it.
    pub rules: usize,
    /// Distinct keyword terms.
    pub keywords: usize,
    /// Distinct globs.
    pub globs: usize,
    /// Distinct regexes.
    pub regexes: usize,
}

/// The most bytes the DFAs of one artifact's globs and regexes may take together.
///
/// One regex's DFA is capped (1 MiB while it is built); without a total, a hundred regexes just
/// under that cap made an 87 MB artifact that cost every prompt 600 ms. The builtin packs need
/// about 0.2 MiB; 4 MiB is twenty times that, an eighth of what a hook loads at most
/// (`hook_engine::artifact::MAX_ARTIFACT_BYTES`).
pub const MAX_AUTOMATA_BYTES: usize = 4 << 20;

/// What to say when the automata of the rules in effect take `total` bytes, over
/// [`MAX_AUTOMATA_BYTES`]: `contributions` are the bytes each rule adds, its full id and
/// perhaps its place (`file:line:col`), largest first.
pub(crate) fn automata_over_budget(
    total: usize,
    contributions: &[(usize, String, Option<String>)],
) -> String {
    const SHOWN: usize = 5;
    let largest: Vec<String> = contributions
        .iter()
        .take(SHOWN)
        .map(|(bytes, id, place)| {
            let place = place.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
            format!("`{id}` {} KiB{place}", bytes.div_ceil(1024))
        })
        .collect();
    let more = match contributions.len().saturating_sub(SHOWN) {
        0 => String::new(),
        1 => " and 1 more rule".to_owned(),
        n => format!(" and {n} more rules"),
    };
    let tenths = (total * 10).div_ceil(1 << 20);
    format!(
        "the globs and regexes of the rules in effect compile to {}.{} MiB of automata, over \
         the budget of {} MiB per artifact; the largest: {}{more}; simplify their patterns \
         (fewer alternatives and counted repetitions such as `{{20}}`, ASCII classes such as \
         `[a-z0-9_]` instead of `\\w`) or turn rules off",
        tenths / 10,
        tenths % 10,
        MAX_AUTOMATA_BYTES >> 20,
        largest.join(", ")
    )
}

/// The compiler's fingerprint: artifacts written by another version are stale.
pub fn compiler_fingerprint() -> u64 {
    hook_engine::artifact::sources::hookpack_fingerprint()
}

/// Compiles `rules` (already merged across scopes, in order) into an artifact.
///
/// # Errors
///
/// When a glob or a regex cannot be compiled (the parser has checked every one, so this means
/// an automaton over the size limit), or when their automata together exceed
/// [`MAX_AUTOMATA_BYTES`] (`load` reports that with places).
pub fn compile(
    rules: &[&Rule],
    settings: &ConfigSettings,
    sources: &Sources,
) -> Result<Compiled, Error> {
    use hook_engine::artifact::sources::{MAX_SOURCE_DIRS, MAX_SOURCE_FILES};
    if sources.files.len() > MAX_SOURCE_FILES || sources.dirs.len() > MAX_SOURCE_DIRS {
        return Err(Error::TooManySources { files: sources.files.len(), dirs: sources.dirs.len() });
    }
    let rules: Vec<&Rule> = rules.iter().copied().filter(|r| !r.when.never).collect();
    let mut e = Emitter::new(&rules);

    let mut records = Vec::with_capacity(rules.len() * rule::LEN * 4);
    let mut automata: Vec<(usize, String)> = Vec::new();
    for (index, r) in rules.iter().enumerate() {
        let automata_before = e.automata_bytes();
        let record = e.rule_record(u32::try_from(index).unwrap_or(u32::MAX), r)?;
        for word in record.words() {
            records.extend_from_slice(&word.to_le_bytes());
        }
        let added = e.automata_bytes() - automata_before;
        if added > 0 {
            automata.push((added, r.full_id()));
        }
    }
    let automata_bytes = e.automata_bytes();
    if automata_bytes > MAX_AUTOMATA_BYTES {
        // Stable: rules of equal cost stay in rule order.
        automata.sort_by_key(|a| std::cmp::Reverse(a.0));
        return Err(Error::AutomataOverBudget { total: automata_bytes, contributions: automata });
    }

    let mut events = Vec::new();
    for &kind in EventKind::ALL {
        for word in event_record(&mut e.w, &rules, kind).words() {
            events.extend_from_slice(&word.to_le_bytes());
        }
    }

    let Emitter { mut w, terms, postings, globs, glob_ids, regexes, regex_ids } = e;
    let mut patterns = vec![String::new(); terms.len()];
    for (term, &id) in &terms {
        patterns[id as usize].clone_from(term);
    }
    let posting_refs: Vec<_> = postings.iter().map(|p| w.list(p)).collect();
    let keyword_bytes = keyword_section(&patterns, &posting_refs);

    let aliases: Vec<&str> =
        settings.aliases.iter().flat_map(|(a, n)| [a.as_str(), n.as_str()]).collect();
    let settings_words = SettingsRecord {
        settings: hook_settings(&rules, settings),
        namespaces: w.str_list(&settings.namespaces),
        aliases: w.str_list(&aliases),
        private_tags: w.str_list(&settings.private_tags),
        issues: settings.issues.as_ref().map(|issues| w.str_list(issues)),
    }
    .words();
    let source_bytes = sources_section(&sources.files, &sources.dirs, |path| w.str(path));

    let (glob_count, regex_count) = (glob_ids.len(), regex_ids.len());
    w.section(Section::Rules, records);
    w.section(Section::Events, events);
    w.section(Section::Keywords, keyword_bytes);
    w.section(Section::Globs, globs.finish());
    w.section(Section::Regexes, regexes.finish());
    w.section(Section::Sources, source_bytes);
    w.section(Section::Settings, settings_words.iter().flat_map(|x| x.to_le_bytes()).collect());
    let bytes = w.finish(sources.fingerprint(), compiler_fingerprint());
    Ok(Compiled {
        bytes,
        rules: rules.len(),
        keywords: patterns.len(),
        globs: glob_count,
        regexes: regex_count,
    })
}

/// What `compile` builds as it goes: the strings and lists, the keyword terms with the rules
/// each finds, and the automata (each glob and regex stored once, however many rules name it).
struct Emitter<'r> {
    w: Writer,
    /// One pattern per distinct ASCII-lowercased term.
    terms: BTreeMap<String, u32>,
    /// The rules each term's keyword finds.
    postings: Vec<Vec<u32>>,
    globs: MatcherSection,
    glob_ids: BTreeMap<String, u32>,
    regexes: MatcherSection,
    regex_ids: BTreeMap<&'r str, u32>,
}

impl<'r> Emitter<'r> {
    fn new(rules: &[&Rule]) -> Self {
        let mut terms: BTreeMap<String, u32> = BTreeMap::new();
        for r in rules {
            for term in r.when.keywords.iter().chain(&r.when.keywords_all).chain(&r.when.exclude) {
                let next = u32::try_from(terms.len()).unwrap_or(u32::MAX);
                terms.entry(term.to_ascii_lowercase()).or_insert(next);
            }
        }
        Emitter {
            w: Writer::default(),
            postings: vec![Vec::new(); terms.len()],
            terms,
            globs: MatcherSection::default(),
            glob_ids: BTreeMap::new(),
            regexes: MatcherSection::default(),
            regex_ids: BTreeMap::new(),
        }
    }

    /// The bytes of the automata so far.
    fn automata_bytes(&self) -> usize {
        self.globs.blob_len() + self.regexes.blob_len()
    }

    /// Rule `r`'s record (it is rule `index`), its strings, lists and automata written.
    fn rule_record(&mut self, index: u32, r: &'r Rule) -> Result<RuleRecord, Error> {
        let (t, c) = (&r.then, &r.when);
        let w = &mut self.w;
        let mut rec = RuleRecord {
            id: w.str(&r.full_id()),
            events: EventSet::of(r.on.iter().copied()),
            pinned: t.pinned,
            fail_closed: t.fail_closed,
            repeat: t.repeat,
            has_context: t.context.is_some(),
            changes_state: t.set != StateSet::default() || t.unset != StateUnset::default(),
            uses_state: uses_state(r),
            priority: t.priority,
            layer: t.layer,
            decision: t.decision,
            once: t.once,
            field: w.str(c.field.as_deref().unwrap_or("")),
            context: w.str(t.context.as_deref().unwrap_or("")),
            reason: w.str(t.reason.as_deref().unwrap_or("")),
            message: w.str(t.message.as_deref().unwrap_or("")),
            stop: w.str(t.stop.as_deref().unwrap_or("")),
            session_title: w.str(t.session_title.as_deref().unwrap_or("")),
            watch_paths: w.str_list(&t.watch_paths),
            every: c.every,
            branch_changed: c.branch_changed,
            brackets: Brackets::of(c.bracket.iter().copied()),
            recall: t.recall,
            observe: t.observe,
            export: t.export,
            ..RuleRecord::default()
        };
        let rewrite: Vec<String> = t
            .rewrite
            .iter()
            .flat_map(|(field, template)| [field.clone(), template.clone()])
            .collect();
        rec.rewrite = w.str_list(&rewrite);

        match &c.tool {
            Some(ToolMatcher::Names(names)) => rec.tool_names = self.w.str_list(names),
            Some(ToolMatcher::Regex(pattern)) => rec.tool_regex = Some(self.regex(pattern, false)?),
            None => {}
        }
        let paths = self.glob_list(&c.paths)?;
        let excluded = self.glob_list(&c.paths_excluded)?;
        rec.paths = self.w.list(&paths);
        rec.paths_excluded = self.w.list(&excluded);
        let keywords = self.term_ids(&c.keywords);
        for &k in &keywords {
            self.postings[k as usize].push(index);
        }
        rec.keywords = self.w.list(&keywords);
        let all = self.term_ids(&c.keywords_all);
        rec.keywords_all = self.w.list(&all);
        let exclude = self.term_ids(&c.exclude);
        rec.exclude = self.w.list(&exclude);
        let signal = t.capture.as_ref().is_some_and(|c| c.signal);
        let regex_list: Vec<u32> =
            c.regex.iter().map(|p| self.regex(p, signal)).collect::<Result<_, _>>()?;
        let w = &mut self.w;
        rec.regex = w.list(&regex_list);
        rec.star = w.str_list(&c.star);
        rec.command = command_list(w, &c.command);
        let mut field_words = Vec::new();
        for condition in &c.fields {
            let path = w.str(&condition.path);
            let values = w.str(&serde_json::Value::Array(condition.values.clone()).to_string());
            field_words.extend_from_slice(&[path.offset, path.len, values.offset, values.len]);
        }
        rec.fields = w.list(&field_words);
        rec.agent = w.str_list(&c.agent);
        rec.branch = w.str_list(&c.branch);
        rec.workflow = w.str_list(&c.workflow);
        rec.task = w.str_list(&c.task);
        rec.flags = w.str_list(&c.flags);
        rec.not_flags = w.str_list(&c.not_flags);
        rec.permission_mode = w.str_list(&c.permission_mode);
        rec.set_agent = w.str(t.set.agent.as_deref().unwrap_or(""));
        rec.set_workflow = w.str(t.set.workflow.as_deref().unwrap_or(""));
        rec.set_task = w.str(t.set.task.as_deref().unwrap_or(""));
        rec.set_flags = w.str_list(&t.set.flags);
        rec.unset = Unset { agent: t.unset.agent, workflow: t.unset.workflow, task: t.unset.task };
        rec.unset_flags = w.str_list(&t.unset.flags);
        if let Some(capture) = &t.capture {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "a confidence in [0, 1] fits an f32"
            )]
            let confidence = capture.confidence as f32;
            rec.capture = Some(CaptureRecord {
                namespace: w.str(capture.namespace.as_deref().unwrap_or("")),
                confidence,
                markers: capture.markers,
                signal: capture.signal,
            });
        }
        Ok(rec)
    }

    /// The distinct term ids of `list`, in order.
    fn term_ids(&self, list: &[String]) -> Vec<u32> {
        let set: BTreeSet<u32> = list.iter().map(|t| self.terms[&t.to_ascii_lowercase()]).collect();
        set.into_iter().collect()
    }

    /// The glob ids of `list`, each glob's automaton stored the first time.
    fn glob_list(&mut self, list: &[String]) -> Result<Vec<u32>, Error> {
        list.iter()
            .map(|g| {
                if let Some(&id) = self.glob_ids.get(g.as_str()) {
                    return Ok(id);
                }
                let dfa = glob_dfa(g)?;
                let source = self.w.str(g);
                let id = self.globs.push(Some(&dfa), 0, (source.offset, source.len), &[]);
                self.glob_ids.insert(g.clone(), id);
                Ok(id)
            })
            .collect()
    }

    /// The regex id of `pattern`, its automaton stored the first time; with `spans` (a
    /// signal's, whose matches are found whole), its reverse automaton too, named by the
    /// entry's flags.
    fn regex(&mut self, pattern: &'r str, spans: bool) -> Result<u32, Error> {
        let id = match self.regex_ids.get(pattern) {
            Some(&id) => id,
            None => {
                let dfa = regex_dfa(pattern)?;
                let source = self.w.str(pattern);
                let prefilter = encode_prefilter(&regex_prefilter(pattern));
                let id = self.regexes.push(Some(&dfa), 0, (source.offset, source.len), &prefilter);
                self.regex_ids.insert(pattern, id);
                id
            }
        };
        if spans && self.regexes.flags(id) == 0 {
            let reverse = regex_reverse_dfa(pattern)?;
            let source = self.w.str(pattern);
            let at = self.regexes.push(Some(&reverse), 0, (source.offset, source.len), &[]);
            self.regexes.set_flags(id, at + 1);
        }
        Ok(id)
    }
}

/// A rule's `command` patterns as the list `format::command` describes: each pattern's `NEXT`
/// entry, then its parts, those that find its commands first.
fn command_list(w: &mut Writer, patterns: &[Pattern<String>]) -> ListRef {
    let mut words = Vec::new();
    for pattern in patterns {
        let parts = [
            (command::PROGRAM, &pattern.program),
            (command::SUBCOMMAND, &pattern.subcommand),
            (command::WRITE, &pattern.writes),
            (command::OVERWRITE, &pattern.overwrites),
            (command::FLAG, &pattern.flags),
            (command::ARG, &pattern.args),
            (command::PIPED_FROM, &pattern.piped_from),
            (command::TARGET, &pattern.targets),
            (command::CALL, &pattern.calls),
            (command::SQL, &pattern.sql),
            (command::FIND, &pattern.find),
            (command::EMPTY, &pattern.empties),
        ];
        let entries = parts.iter().map(|(_, p)| p.len()).sum::<usize>();
        words.extend_from_slice(&[command::NEXT, u32::try_from(entries).unwrap_or(u32::MAX), 0]);
        for (kind, parts) in parts {
            for part in parts {
                let part = w.str(part);
                words.extend_from_slice(&[kind, part.offset, part.len]);
            }
        }
    }
    w.list(&words)
}

/// Event `kind`'s record: the rules found without the automaton, the shell-tool rules by the
/// programs their commands need, and the texts its keyword rules read.
fn event_record(w: &mut Writer, rules: &[&Rule], kind: EventKind) -> EventRecord {
    let of_event: Vec<(usize, &&Rule)> =
        rules.iter().enumerate().filter(|(_, r)| r.on.contains(&kind)).collect();
    let always: Vec<u32> = of_event
        .iter()
        .filter(|(_, r)| {
            r.when.keywords.is_empty() && program_keys(r).is_none() && !path_indexed(r)
        })
        .map(|(i, _)| u32::try_from(*i).unwrap_or(u32::MAX))
        .collect();
    let by_path = path_index(&of_event);
    let mut path_words = Vec::with_capacity(by_path.len() * 3);
    for (key, rule) in &by_path {
        let key = w.str(key);
        path_words.extend_from_slice(&[key.offset, key.len, *rule]);
    }
    let paths = w.list(&path_words);
    let keyed: Vec<(ProgramKeys, u32)> = of_event
        .iter()
        .filter_map(|(i, r)| Some((program_keys(r)?, u32::try_from(*i).unwrap_or(u32::MAX))))
        .collect();
    let mut programs: Vec<(&str, &str, u32)> = keyed
        .iter()
        .flat_map(|(keys, i)| keys.names.iter().map(move |(n, w)| (n.as_str(), w.as_str(), *i)))
        .collect();
    programs.sort_unstable();
    let mut program_words = Vec::with_capacity(programs.len() * 5);
    for (name, first, rule) in programs {
        let (name, first) = (w.str(name), w.str(first));
        program_words.extend_from_slice(&[name.offset, name.len, first.offset, first.len, rule]);
    }
    let programs = w.list(&program_words);
    let mut glob_words = Vec::new();
    for (keys, rule) in &keyed {
        for (glob, writes) in &keys.globs {
            let glob = w.str(glob);
            glob_words.extend_from_slice(&[glob.offset, glob.len, u32::from(*writes), *rule]);
        }
    }
    let globs = w.list(&glob_words);
    let fields: BTreeSet<&str> = of_event
        .iter()
        .filter(|(_, r)| {
            !(r.when.keywords.is_empty()
                && r.when.keywords_all.is_empty()
                && r.when.exclude.is_empty())
        })
        .map(|(_, r)| r.when.field.as_deref().unwrap_or(""))
        .collect();
    let always = w.list(&always);
    let fields: Vec<&str> = fields.into_iter().collect();
    let fields = w.str_list(&fields);
    EventRecord { always, fields, programs, globs, paths }
}

/// The path rules of an event by key (`hook_engine::path_keys`), sorted: each rule without
/// keywords or command keys whose every include glob requires some literal of the path, under
/// each glob's rarest requirement.
fn path_index(of_event: &[(usize, &&Rule)]) -> Vec<(String, u32)> {
    use hook_engine::path_keys::{choose, glob_requirements};
    let rules: Vec<(u32, Vec<Vec<Vec<String>>>)> = of_event
        .iter()
        .filter(|(_, r)| path_indexed(r))
        .map(|(i, r)| {
            let index = u32::try_from(*i).unwrap_or(u32::MAX);
            (index, r.when.paths.iter().map(|g| glob_requirements(g)).collect())
        })
        .collect();
    let all: Vec<Vec<Vec<String>>> = rules.iter().flat_map(|(_, globs)| globs.clone()).collect();
    let mut chosen = choose(&all).into_iter();
    let mut by_path = Vec::new();
    for (rule, globs) in &rules {
        for _ in globs {
            by_path.extend(chosen.next().flatten().into_iter().flatten().map(|key| (key, *rule)));
        }
    }
    by_path.sort_unstable();
    by_path.dedup();
    by_path
}

/// Whether a rule is found by its path (`path_index`) rather than checked on every call: no
/// keywords or command keys find it, and each of its include globs requires a literal.
fn path_indexed(r: &Rule) -> bool {
    r.when.keywords.is_empty()
        && program_keys(r).is_none()
        && !r.when.paths.is_empty()
        && r.when.paths.iter().all(|g| !hook_engine::path_keys::glob_requirements(g).is_empty())
}

/// What a shell-tool rule with `command` patterns on the default text is found by: each
/// program they name (and, for a pattern whose subcommand begins with plain words, those words
/// as the command's first operand), or a program matching a glob (and, for a pattern on what
/// commands write, some command writing). `None`: the rule is always checked.
fn program_keys(r: &Rule) -> Option<ProgramKeys> {
    let c = &r.when;
    let shell_tools = matches!(&c.tool, Some(ToolMatcher::Names(names))
        if names.iter().all(|n| matches!(n.as_str(), "Bash" | "PowerShell" | "Monitor")));
    if !shell_tools || !c.keywords.is_empty() || c.field.is_some() || c.command.is_empty() {
        return None;
    }
    let mut keys = ProgramKeys::default();
    for pattern in &c.command {
        if pattern.program.is_empty() {
            return None;
        }
        let firsts: Vec<String> = match pattern.first_words() {
            Some(words) => words.map(str::to_ascii_lowercase).collect(),
            None => vec![String::new()],
        };
        // A `!` entry only narrows what the others find.
        let found = pattern.program.iter().filter(|p| !p.starts_with('!'));
        for name in found.flat_map(|p| p.split('|')) {
            if name.is_empty() {
                return None;
            }
            if name.contains(['*', '?', '\\']) {
                keys.globs.insert((name.to_owned(), !pattern.writes.is_empty()));
                continue;
            }
            let name = name.to_ascii_lowercase();
            keys.names.extend(firsts.iter().map(|first| (name.clone(), first.clone())));
        }
    }
    Some(keys)
}

/// The tools that rules marked `fail = "closed"` cover, for the list hooks read when they cannot
/// evaluate the rules: one line per rule, `<pack/rule> <Tool>|<Tool>…`, or `*` for every tool
/// (also for a tool regex, which a hook could not evaluate then). Empty without such rules.
pub fn fail_closed_list(rules: &[&Rule]) -> String {
    let mut text = String::new();
    for r in rules.iter().filter(|r| r.then.fail_closed && !r.when.never) {
        let tools = match &r.when.tool {
            Some(ToolMatcher::Names(names)) if !names.is_empty() => names.join("|"),
            _ => "*".to_owned(),
        };
        let _ = writeln!(text, "{} {tools}", r.full_id());
    }
    text
}

/// Whether a rule reads or changes the session state, needs it to know its bracket, or reads
/// or writes the memories kept with it.
fn uses_state(r: &Rule) -> bool {
    let (c, t) = (&r.when, &r.then);
    !c.agent.is_empty()
        || !c.workflow.is_empty()
        || !c.task.is_empty()
        || !c.flags.is_empty()
        || !c.not_flags.is_empty()
        || c.every.is_some()
        || c.branch_changed
        || !c.bracket.is_empty()
        || t.once.is_some()
        || t.set != StateSet::default()
        || t.unset != StateUnset::default()
        || t.capture.is_some()
        || t.recall.is_some()
        || t.observe
        || t.export
        || names(r, "prompt_count")
        || names(r, "bracket")
        || names(r, "used_percent")
}

/// Whether rule `r`'s context or message names the variable `{var}` ([`hook_engine::text::expand`]).
fn names(r: &Rule, var: &str) -> bool {
    let var = format!("{{{var}}}");
    [&r.then.context, &r.then.message].into_iter().flatten().any(|text| text.contains(&var))
}

/// The settings flags: whether some rule reads the bracket (the hooks read the transcript), and
/// which books the hooks keep — prompts for `every` and the bracket estimate, compactions for
/// `once = "compaction"` and the estimate.
fn hook_settings(rules: &[&Rule], config: &ConfigSettings) -> Settings {
    let any = |f: &dyn Fn(&Rule) -> bool| rules.iter().any(|r| f(r));
    let needs_bracket =
        any(&|r| !r.when.bracket.is_empty() || names(r, "bracket") || names(r, "used_percent"));
    let recalls = |r: &Rule, handoff: bool| {
        r.then.recall.is_some_and(|r| (r.from == RecallFrom::Handoff) == handoff)
    };
    let mut hooks = Settings {
        window_tokens: config.window_tokens,
        brackets: config.brackets,
        budget: config.budget,
        max_age_days: config.max_age_days,
        memory_max: config.memory_max,
        memory_max_age_days: config.memory_max_age_days,
        signal_auto: config.signal_auto,
        signal_suggest: config.signal_suggest,
        signal_max: config.signal_max,
        needs_bracket,
        // The bracket's estimate counts prompts and compactions.
        counts_prompts: needs_bracket
            || any(&|r| r.when.every.is_some() || names(r, "prompt_count")),
        // A memory is recalled once between compactions, so recalls need them counted.
        counts_compactions: needs_bracket
            || any(&|r| r.then.once == Some(Once::Compaction))
            || any(&|r| recalls(r, false)),
        writes_handoff: any(&|r| recalls(r, true)),
        reads_conversation: any(&|r| r.on.contains(&EventKind::PreCompact) && reads_text(r)),
        branch_events: EventSet::of(
            rules
                .iter()
                .filter(|r| {
                    !r.when.branch.is_empty()
                        || r.when.branch_changed
                        || r.then.recall.is_some_and(|spec| spec.from == RecallFrom::Sessions)
                        || ["branch", "issue", "previous_branch"].iter().any(|v| names(r, v))
                })
                .flat_map(|r| r.on.iter().copied()),
        ),
        state_events: EventSet::default(),
    };
    hooks.state_events = state_events(rules, &hooks);
    hooks
}

/// Whether `r` reads its event's default text: its conditions on text, its `capture` or its
/// recall by the prompt's terms, without a `field`.
fn reads_text(r: &Rule) -> bool {
    let (c, t) = (&r.when, &r.then);
    c.field.is_none()
        && (!c.keywords.is_empty()
            || !c.keywords_all.is_empty()
            || !c.exclude.is_empty()
            || !c.regex.is_empty()
            || !c.command.is_empty()
            || t.capture.is_some()
            || t.recall.is_some_and(|spec| spec.from == RecallFrom::Prompt))
}

/// The events whose hooks may open the session state: those of every rule that uses it, and
/// those that keep the books `hooks` asks for (prompts on `UserPromptSubmit`, compactions on
/// `PreCompact` and `SessionStart`, the handoff on `PreCompact`).
fn state_events(rules: &[&Rule], hooks: &Settings) -> EventSet {
    let mut events = EventSet::default();
    for r in rules.iter().filter(|r| uses_state(r)) {
        events = events.union(EventSet::of(r.on.iter().copied()));
    }
    if hooks.counts_prompts {
        events = events.with(EventKind::UserPromptSubmit);
    }
    if hooks.counts_compactions {
        events = events.with(EventKind::PreCompact).with(EventKind::SessionStart);
    }
    if hooks.writes_handoff {
        events = events.with(EventKind::PreCompact);
    }
    events
}

/// What a shell-tool rule's `command` patterns need the command to run (see `compile`'s
/// per-event records).
#[derive(Default)]
struct ProgramKeys {
    /// Program names in ASCII lowercase, each with a first operand (empty: any).
    names: BTreeSet<(String, String)>,
    /// Program globs, each with whether its pattern is on what commands write.
    globs: BTreeSet<(String, bool)>,
}
