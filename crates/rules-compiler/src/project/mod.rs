//! Scopes, config and precedence (reference §1): which packs a project uses, layered
//! builtin < user < project < local < env, merged by full rule id. `env` reads the config the
//! `HOOKPACK_*` variables give.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use toml::de::{DeTable, DeValue};

mod env;

use env::env_config;

use crate::compile::{
    ConfigSettings, DirStamp, FileStamp, MAX_AUTOMATA_BYTES, Sources, automata_over_budget,
};
use crate::model::{Automaton, Pack, Rule};
use crate::pack::{PackFolder, parse_pack_in};
use crate::{Diagnostics, SourceFile, builtin, files, shape};
use hook_engine::artifact::sources::{MAX_SOURCE_BYTES, fnv1a, names_hash};
use hook_engine::layout::{
    CONFIG_FILE, LOCAL_CONFIG_FILE, LOCAL_PACKS_DIR, PACKS_DIR, PROJECT_SUBDIR,
};

/// Where a pack or a config comes from, lowest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Shipped with hookpack (`rules/`), used when the config names it in `builtin`.
    Builtin,
    /// `$XDG_CONFIG_HOME/hookpack/`.
    User,
    /// `<project>/.claude/hookpack/`, committed.
    Project,
    /// `<project>/.claude/hookpack/local/` and `hookpack.local.toml`, personal.
    Local,
}

impl Scope {
    /// Its name, for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Builtin => "builtin",
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// The folders of one hookpack installation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// `<project>`, when a project is in use.
    pub project: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME/hookpack` (default `~/.config/hookpack`).
    pub user: Option<PathBuf>,
}

impl Layout {
    /// `<project>/.claude/hookpack`.
    pub fn project_dir(&self) -> Option<PathBuf> {
        self.project.as_ref().map(|p| p.join(PROJECT_SUBDIR))
    }

    /// The folder the hooks answer from: the project's, else the user's.
    pub fn installation_dir(&self) -> Option<PathBuf> {
        self.project_dir().or_else(|| self.user.clone())
    }

    /// Each scope's pack folder, with the folder of the scope (what its `context_file`s must
    /// stay in).
    fn pack_dirs(&self) -> Vec<(Scope, PathBuf, PathBuf)> {
        let mut dirs = Vec::new();
        if let Some(user) = &self.user {
            dirs.push((Scope::User, user.join(PACKS_DIR), user.clone()));
        }
        if let Some(project) = self.project_dir() {
            dirs.push((Scope::Project, project.join(PACKS_DIR), project.clone()));
            dirs.push((Scope::Local, project.join(LOCAL_PACKS_DIR), project));
        }
        dirs
    }

    /// Each scope's config file, with the folder of the scope.
    fn config_files(&self) -> Vec<(Scope, PathBuf, PathBuf)> {
        let mut files = Vec::new();
        if let Some(user) = &self.user {
            files.push((Scope::User, user.join(CONFIG_FILE), user.clone()));
        }
        if let Some(project) = self.project_dir() {
            files.push((Scope::Project, project.join(CONFIG_FILE), project.clone()));
            files.push((Scope::Local, project.join(LOCAL_CONFIG_FILE), project));
        }
        files
    }
}

/// The config after layering (`hookpack.toml` files, then `HOOKPACK_*` variables).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Builtin packs in use.
    pub builtin: Vec<String>,
    /// Rules turned off: `pack/rule` or `pack/*`.
    pub disable: Vec<String>,
    /// The context window in tokens.
    pub window_tokens: Option<u32>,
    /// Bracket thresholds.
    pub brackets: BracketConfig,
    /// Context budget per bracket.
    pub budget: BudgetConfig,
    /// Session state.
    pub state: StateConfig,
    /// Memory.
    pub memory: MemoryConfig,
    /// The git branch.
    pub branch: BranchConfig,
}

/// `[branch]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BranchConfig {
    /// The templates `{issue}` is found by.
    pub issues: Option<Vec<String>>,
}

/// `[brackets]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BracketConfig {
    /// Remaining % for fresh.
    pub fresh: Option<u32>,
    /// Remaining % for moderate.
    pub moderate: Option<u32>,
    /// Remaining % for depleted.
    pub depleted: Option<u32>,
}

/// `[budget]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Tokens when fresh.
    pub fresh: Option<u32>,
    /// Tokens when moderate.
    pub moderate: Option<u32>,
    /// Tokens when depleted.
    pub depleted: Option<u32>,
    /// Tokens when critical.
    pub critical: Option<u32>,
}

/// `[state]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct StateConfig {
    /// Days a session is kept.
    pub max_age_days: Option<u32>,
}

/// `[memory]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Namespaces.
    pub namespaces: Vec<String>,
    /// Marker shorthands.
    pub aliases: BTreeMap<String, String>,
    /// Private tags.
    pub private_tags: Vec<String>,
    /// The most memories kept (0: no limit).
    pub max: Option<u32>,
    /// Days a memory is kept (0: for ever).
    pub max_age_days: Option<u32>,
    /// Whether signal rules are in force.
    pub signals: Option<bool>,
    /// The confidence at which a signal is captured.
    pub auto: Option<f64>,
    /// The confidence at which a signal is suggested.
    pub suggest: Option<f64>,
    /// The most signals one event captures or suggests.
    pub max_signals: Option<u32>,
    /// The namespaces `hookpack memory push | pull | sync` share.
    pub share: Option<Vec<String>>,
}

impl Config {
    /// The settings the hooks need, defaults filled in.
    pub fn settings(&self) -> ConfigSettings {
        let d = ConfigSettings::default();
        ConfigSettings {
            window_tokens: self.window_tokens.unwrap_or(d.window_tokens),
            brackets: [
                self.brackets.fresh.unwrap_or(d.brackets[0]),
                self.brackets.moderate.unwrap_or(d.brackets[1]),
                self.brackets.depleted.unwrap_or(d.brackets[2]),
            ],
            budget: [
                self.budget.fresh.unwrap_or(d.budget[0]),
                self.budget.moderate.unwrap_or(d.budget[1]),
                self.budget.depleted.unwrap_or(d.budget[2]),
                self.budget.critical.unwrap_or(d.budget[3]),
            ],
            max_age_days: self.state.max_age_days.unwrap_or(d.max_age_days),
            memory_max: self.memory.max.unwrap_or(d.memory_max),
            memory_max_age_days: self.memory.max_age_days.unwrap_or(d.memory_max_age_days),
            signal_auto: self.memory.auto.map_or(d.signal_auto, permille),
            signal_suggest: self.memory.suggest.map_or(d.signal_suggest, permille),
            signal_max: self.memory.max_signals.unwrap_or(d.signal_max),
            issues: self.branch.issues.clone(),
            namespaces: self.settings_namespaces(),
            aliases: self.aliases(),
            private_tags: if self.memory.private_tags.is_empty() {
                d.private_tags
            } else {
                self.memory.private_tags.clone()
            },
        }
    }

    /// Whether `capture = { signal = true }` rules are in force (`[memory] signals`).
    pub fn signals(&self) -> bool {
        self.memory.signals.unwrap_or(true)
    }

    /// The marker shorthands: the defaults whose namespace the project has, then its own
    /// (which win).
    fn aliases(&self) -> Vec<(String, String)> {
        let namespaces = self.settings_namespaces();
        let mut aliases: BTreeMap<String, String> = hook_engine::memory::DEFAULT_ALIASES
            .iter()
            .filter(|(_, ns)| namespaces.iter().any(|n| n == ns))
            .map(|&(a, ns)| (a.to_owned(), ns.to_owned()))
            .collect();
        for (alias, ns) in &self.memory.aliases {
            aliases.insert(alias.to_ascii_lowercase(), ns.to_ascii_lowercase());
        }
        aliases.into_iter().collect()
    }

    fn settings_namespaces(&self) -> Vec<String> {
        if self.memory.namespaces.is_empty() {
            hook_engine::memory::DEFAULT_NAMESPACES.iter().map(|&n| n.to_owned()).collect()
        } else {
            self.memory.namespaces.iter().map(|n| n.to_ascii_lowercase()).collect()
        }
    }

    /// What is wrong with `[memory]`: names that markers cannot spell, shorthands for
    /// namespaces that do not exist.
    fn memory_problems(&self) -> Vec<String> {
        let namespaces = self.settings_namespaces();
        let word =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut problems = Vec::new();
        for name in &namespaces {
            if !word(name) {
                problems.push(format!(
                    "config: memory namespace `{name}` must be letters, digits or `_` (markers spell it `[remember:{name}]`)"
                ));
            }
        }
        for (alias, ns) in &self.memory.aliases {
            if !word(alias) {
                problems.push(format!(
                    "config: memory shorthand `{alias}` must be letters, digits or `_`"
                ));
            }
            if !namespaces.iter().any(|n| n.eq_ignore_ascii_case(ns)) {
                problems.push(format!(
                    "config: memory shorthand `{alias}` names `{ns}`, which is not a namespace (namespaces: {})",
                    namespaces.join(", ")
                ));
            }
        }
        for template in self.branch.issues.iter().flatten() {
            if let Some(problem) = hook_engine::text::issue_template_problem(template) {
                problems.push(format!("config: {problem}"));
            }
        }
        // As the hooks will have them, defaults filled in.
        let settings = self.settings();
        if settings.signal_suggest > settings.signal_auto {
            let (auto, suggest) = (
                f64::from(settings.signal_auto) / 1000.0,
                f64::from(settings.signal_suggest) / 1000.0,
            );
            problems.push(format!(
                "config: memory `suggest = {suggest}` is above `auto = {auto}`: a signal sure enough to suggest would be captured anyway"
            ));
        }
        for tag in &self.memory.private_tags {
            if !word(&tag.replace('-', "_")) {
                problems.push(format!(
                    "config: private tag `{tag}` must be a tag name such as `private`"
                ));
            }
        }
        problems
    }
}

/// Everything a project's hooks answer from, read and checked.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every pack read, with its scope, in precedence order.
    pub packs: Vec<(Scope, Pack)>,
    /// The config after layering.
    pub config: Config,
    /// Every problem found.
    pub diagnostics: Diagnostics,
    /// What was read, for staleness checks.
    pub sources: Sources,
    /// `(pack, rule)` indices of the rules in effect, in order.
    active: Vec<(usize, usize)>,
    /// Where each config file's `disable` entries are written, to point lint at them.
    disable_places: Vec<(String, Arc<SourceFile>, Range<usize>)>,
}

impl Loaded {
    /// The rules in effect: each full id once (the highest scope's), minus `disable`.
    pub fn rules(&self) -> Vec<&Rule> {
        self.active.iter().map(|&(p, r)| &self.packs[p].1.rules[r]).collect()
    }

    /// Why rule `rule` of pack `pack` (indices into [`Loaded::packs`]) is not in the rules in
    /// effect; `None` when it is (or there is no such rule).
    pub fn fate(&self, pack: usize, rule: usize) -> Option<Fate> {
        if self.active.contains(&(pack, rule)) {
            return None;
        }
        let id = self.packs.get(pack)?.1.rules.get(rule)?.full_id();
        let full_id = |&&(p, r): &&(usize, usize)| self.packs[p].1.rules[r].full_id();
        if let Some(&(p, r)) = self.active.iter().find(|at| full_id(at) == id) {
            let (scope, winner) = &self.packs[p];
            let (line, _) = winner.source.line_col(winner.rules[r].span.start);
            let by = format!("{}:{line}", winner.source.path().display());
            return Some(Fate::Replaced { by, scope: *scope });
        }
        let by = self.config.disable.iter().find(|pattern| disables(pattern, &id));
        match by {
            Some(by) => Some(Fate::Disabled { by: by.clone() }),
            None if !self.config.signals() => Some(Fate::SignalsOff),
            None => Some(Fate::Disabled { by: id }),
        }
    }
}

/// Why a rule a pack defines is not in the rules in effect ([`Loaded::fate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// A rule of the same full id in a scope that takes precedence replaces it.
    Replaced {
        /// Where the rule in force is: `file:line`.
        by: String,
        /// Its scope.
        scope: Scope,
    },
    /// `disable` turns it off.
    Disabled {
        /// The `disable` entry that does.
        by: String,
    },
    /// A signal rule, and `[memory] signals = false`.
    SignalsOff,
}

impl std::fmt::Display for Fate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fate::Replaced { by, scope } => {
                write!(f, "replaced by the {} rule at {by}", scope.as_str())
            }
            Fate::Disabled { by } => write!(f, "turned off by `disable = [\"{by}\"]`"),
            Fate::SignalsOff => f.write_str("a signal, and `[memory] signals = false`"),
        }
    }
}

/// Whether the `disable` entry `pattern` (`pack/rule` or `pack/*`) turns off rule `id`.
fn disables(pattern: &str, id: &str) -> bool {
    match pattern.strip_suffix("/*") {
        Some(pack) => id.split_once('/').is_some_and(|(p, _)| p == pack),
        None => pattern == id,
    }
}

/// Reads the config files of `layout` and `env`'s variables into `loaded.config`: each file
/// checked with places, then layered.
fn load_config(layout: &Layout, env: &[(String, String)], loaded: &mut Loaded) {
    let mut figment = Figment::from(Serialized::defaults(Config::default()));
    for (scope, path, root) in layout.config_files() {
        let confined = project_scope(scope).then_some(root.as_path());
        let Some(text) = read_source(&path, "config file", confined, false, loaded) else {
            continue;
        };
        let source = Arc::new(SourceFile::new(display(&path), text));
        match DeTable::parse(source.text()) {
            Ok(table) => {
                shape::check(&source, &table, &shape::CONFIG_FILE, &mut loaded.diagnostics);
                if let Some(DeValue::Array(entries)) =
                    table.get_ref().get("disable").map(toml::Spanned::get_ref)
                {
                    for entry in entries {
                        if let DeValue::String(pattern) = entry.get_ref() {
                            let place = (pattern.to_string(), source.clone(), entry.span());
                            loaded.disable_places.push(place);
                        }
                    }
                }
            }
            Err(err) => loaded.diagnostics.error(
                &source,
                err.span().unwrap_or(0..0),
                format!("invalid TOML: {}", err.message()),
            ),
        }
        figment = figment.admerge(Toml::string(source.text()));
    }
    figment = figment.admerge(Serialized::defaults(env_config(env, &mut loaded.diagnostics)));
    if !loaded.diagnostics.has_errors() {
        match figment.extract::<Config>() {
            Ok(config) => loaded.config = config,
            Err(err) => loaded
                .diagnostics
                .error_without_place(format!("config: {}", err.to_string().to_lowercase())),
        }
    }
}

/// Reads every pack and config of `layout`, checks them, and merges the rules.
/// `env` gives the `HOOKPACK_*` variables (the process environment in the CLI).
pub fn load(layout: &Layout, env: &[(String, String)]) -> Loaded {
    let mut loaded = Loaded::default();

    load_config(layout, env, &mut loaded);
    check_brackets(&mut loaded);

    for problem in loaded.config.memory_problems() {
        loaded.diagnostics.error_without_place(problem);
    }

    // Packs: builtin ones named in the config, then each scope's folder.
    for name in &loaded.config.builtin.clone() {
        match builtin::PACKS.iter().find(|(n, _)| n == name) {
            Some((_, text)) => {
                let source = Arc::new(SourceFile::new(format!("<builtin>/{name}.toml"), *text));
                add_pack(&mut loaded, Scope::Builtin, &source, None);
            }
            None => {
                let known: Vec<&str> = builtin::PACKS.iter().map(|(n, _)| *n).collect();
                let hint = shape::did_you_mean(name, known.iter().copied());
                loaded.diagnostics.error_without_place(format!(
                    "config: no builtin pack `{name}` (there are: {}){hint}",
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ));
            }
        }
    }
    stray_files(layout, &mut loaded);
    for (scope, dir, root) in layout.pack_dirs() {
        let files = pack_files(&dir);
        // As the hooks list them (`hook-runtime`'s `pack_names_hash`): the regular files. Any
        // other entry is an error below, so an artifact is written only when both agree.
        let names: Vec<String> = files
            .iter()
            .filter(|f| f.is_file())
            .filter_map(|f| f.file_name()?.to_str().map(str::to_owned))
            .collect();
        let names_hash = if dir.is_dir() { names_hash(&names) } else { 0 };
        loaded.sources.dirs.push(DirStamp { path: display(&dir), names_hash });
        for file in files {
            let confined = project_scope(scope).then_some(root.as_path());
            let Some(text) = read_source(&file, "pack file", confined, true, &mut loaded) else {
                continue;
            };
            let source = Arc::new(SourceFile::new(display(&file), text));
            add_pack(&mut loaded, scope, &source, Some(PackFolder { dir: &dir, root: &root }));
        }
    }

    merge(&mut loaded);
    keep_users_guards(&mut loaded, layout);
    note_replacements(&mut loaded);
    check_unset_state(&mut loaded, layout);
    check_budgets(&mut loaded);
    check_automata(&mut loaded);
    let namespaces = loaded.config.settings_namespaces();
    let aliases = loaded.config.aliases();
    let unknown: Vec<String> = loaded
        .rules()
        .iter()
        .filter_map(|r| {
            let ns = r.then.capture.as_ref()?.namespace.as_deref()?;
            let known = namespaces.iter().any(|n| n.eq_ignore_ascii_case(ns))
                || aliases.iter().any(|(a, _)| a.eq_ignore_ascii_case(ns));
            (!known).then(|| {
                format!(
                    "rule `{}`: `capture.namespace = \"{ns}\"` is not a memory namespace (namespaces: {}; add it to `[memory] namespaces`)",
                    r.full_id(),
                    namespaces.join(", ")
                )
            })
        })
        .collect();
    for problem in unknown {
        loaded.diagnostics.error_without_place(problem);
    }
    loaded
}

fn add_pack(
    loaded: &mut Loaded,
    scope: Scope,
    source: &Arc<SourceFile>,
    folder: Option<PackFolder<'_>>,
) {
    let (pack, diagnostics) = parse_pack_in(source, folder);
    loaded.diagnostics.extend(diagnostics);
    if let (Some(pack), Some(folder)) = (&pack, folder) {
        // `context_file`s are sources too: editing one makes the artifact stale.
        for file in &pack.context_files {
            read_source(file, "context_file", Some(folder.root), true, loaded);
        }
    }
    if let Some(pack) = pack {
        loaded.packs.push((scope, pack));
    }
}

/// Whether the globs and regexes of the rules in effect fit [`MAX_AUTOMATA_BYTES`] together, as
/// `compile` would lay them out (each distinct pattern once, its DFA aligned to 8 bytes); if not,
/// an error at the largest one, naming the rules that cost most.
fn check_automata(loaded: &mut Loaded) {
    let mut seen = BTreeSet::new();
    let mut total = 0;
    let mut contributions = Vec::new();
    for &(p, r) in &loaded.active {
        let (_, pack) = &loaded.packs[p];
        let rule = &pack.rules[r];
        if rule.when.never {
            continue;
        }
        let mut added = 0;
        let mut largest: Option<&Automaton> = None;
        for automaton in &rule.automata {
            if seen.insert((automaton.glob, automaton.pattern.as_str())) {
                added += automaton.bytes.next_multiple_of(8);
                if largest.is_none_or(|l| automaton.bytes > l.bytes) {
                    largest = Some(automaton);
                }
            }
        }
        if let Some(largest) = largest {
            total += added;
            contributions.push((added, rule.full_id(), pack.source.clone(), largest.span.clone()));
        }
    }
    if total <= MAX_AUTOMATA_BYTES {
        return;
    }
    // Stable: rules of equal cost stay in rule order.
    contributions.sort_by_key(|c| std::cmp::Reverse(c.0));
    let named: Vec<(usize, String, Option<String>)> = contributions
        .iter()
        .map(|(added, id, source, span)| {
            let (line, column) = source.line_col(span.start);
            (*added, id.clone(), Some(format!("{}:{line}:{column}", source.path().display())))
        })
        .collect();
    let message = automata_over_budget(total, &named);
    // At the largest automaton of the rule that costs most.
    if let Some((_, _, source, span)) = contributions.first() {
        loaded.diagnostics.error(source, span.clone(), message);
    }
}

/// A confidence, 0 to 1, in thousandths (the shape of the config checked it is in range).
fn permille(confidence: f64) -> u32 {
    // In range, so the cast is exact enough.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 to 1000")]
    let permille = (confidence.clamp(0.0, 1.0) * 1000.0).round() as u32;
    permille
}

/// Each full id once, the highest scope's, at the place of its first definition; then
/// `disable`.
fn merge(loaded: &mut Loaded) {
    let mut order: Vec<String> = Vec::new();
    let mut winner: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (p, (_, pack)) in loaded.packs.iter().enumerate() {
        for (r, rule) in pack.rules.iter().enumerate() {
            let id = rule.full_id();
            if winner.insert(id.clone(), (p, r)).is_none() {
                order.push(id);
            }
        }
    }
    let disabled = |id: &str| loaded.config.disable.iter().any(|pattern| disables(pattern, id));
    let signals_off = |&(p, r): &(usize, usize)| {
        !loaded.config.signals()
            && loaded.packs[p].1.rules[r].then.capture.as_ref().is_some_and(|c| c.signal)
    };
    loaded.active = order
        .iter()
        .filter(|id| !disabled(id))
        .map(|id| winner[id])
        .filter(|at| !signals_off(at))
        .collect();
    // An entry that turns nothing off in a pack that is here is a typo, or names a rule since
    // renamed (one naming a pack that is not here may be for another project).
    for pattern in &loaded.config.disable {
        let pack = pattern.split('/').next().unwrap_or_default();
        let here = order.iter().any(|id| id.split('/').next() == Some(pack));
        if !here || order.iter().any(|id| disables(pattern, id)) {
            continue;
        }
        let hint = crate::shape::did_you_mean(pattern, order.iter().map(String::as_str));
        let message = format!(
            "`disable = [\"{pattern}\"]` turns off no rule: no pack has one of that id{hint} (if \
             it is meant for another project, put it in that project's config)"
        );
        // At the entry when a config file has it (the environment's has no place).
        match loaded.disable_places.iter().rev().find(|(p, _, _)| p == pattern) {
            Some((_, source, span)) => loaded.diagnostics.warning(source, span.clone(), message),
            None => loaded.diagnostics.warning_without_place(format!("config: {message}")),
        }
    }
}

/// An info line at each rule that replaces another scope's rule of the same id, naming both; a
/// warning where the two are of one scope (two packs of one name).
fn note_replacements(loaded: &mut Loaded) {
    let mut notes = Vec::new();
    for (p, (scope, pack)) in loaded.packs.iter().enumerate() {
        for (r, rule) in pack.rules.iter().enumerate() {
            let Some(Fate::Replaced { .. }) = loaded.fate(p, r) else { continue };
            let id = rule.full_id();
            let Some(&(wp, wr)) = loaded
                .active
                .iter()
                .find(|&&(wp, wr)| loaded.packs[wp].1.rules[wr].full_id() == id)
            else {
                continue;
            };
            let (winner_scope, winner) = &loaded.packs[wp];
            let (line, column) = pack.source.line_col(rule.span.start);
            let place = format!("{}:{line}:{column}", pack.source.path().display());
            // Within one scope, two packs of one name: one rule silently hides the other.
            let same_scope = winner_scope == scope;
            let message = if same_scope {
                format!(
                    "rule `{id}` is also defined at {place}, in another pack named `{}` of the \
                     same scope: this one, read later, hides it (rename one of the packs)",
                    pack.name
                )
            } else {
                format!("rule `{id}` replaces the {} rule of that id at {place}", scope.as_str())
            };
            notes.push((winner.source.clone(), winner.rules[wr].span.clone(), message, same_scope));
        }
    }
    for (source, span, message, same_scope) in notes {
        if same_scope {
            loaded.diagnostics.warning(&source, span, message);
        } else {
            loaded.diagnostics.info(&source, span, message);
        }
    }
}

/// Puts back the user's own fail-closed guards (those in force for the user alone: the builtin
/// packs and the user's packs, minus the user's `disable`) that the project's files turned off
/// or replaced. A cloned repository must not be able to switch off the guards its user relies
/// on in every project (reference §5); the user turns them off in their own config. The
/// environment's `HOOKPACK_*` variables do not count here: they may be set by a project's tools
/// (direnv) as much as by the user.
fn keep_users_guards(loaded: &mut Loaded, layout: &Layout) {
    if layout.project.is_none() || layout.user.is_none() {
        return;
    }
    let own = load(&Layout { project: None, user: layout.user.clone() }, &[]);
    if own.diagnostics.has_errors() {
        return;
    }
    for &(own_p, own_r) in &own.active {
        let (own_scope, own_pack) = &own.packs[own_p];
        let guard = &own_pack.rules[own_r];
        if !guard.then.fail_closed || guard.when.never {
            continue;
        }
        let id = guard.full_id();
        // The same rule in this load: the same scope, the same file (a user pack may replace a
        // builtin rule of the same id: the user's version is the guard).
        let Some(at) = loaded.packs.iter().enumerate().find_map(|(p, (scope, pack))| {
            if scope != own_scope || pack.source.path() != own_pack.source.path() {
                return None;
            }
            Some((p, pack.rules.iter().position(|r| r.full_id() == id)?))
        }) else {
            continue;
        };
        let active =
            loaded.active.iter().position(|&(p, r)| loaded.packs[p].1.rules[r].full_id() == id);
        if active.is_some_and(|i| loaded.active[i] == at) {
            continue;
        }
        match active {
            Some(i) => loaded.active[i] = at,
            None => loaded.active.push(at),
        }
        let pack = &loaded.packs[at.0].1;
        let (source, span) = (pack.source.clone(), pack.rules[at.1].span.clone());
        loaded.diagnostics.warning(
            &source,
            span,
            format!(
                "`{id}` is one of your own fail-closed guards; the project's files turn it off or \
                 replace it, so yours stays in force here (turn it off in your own config)"
            ),
        );
    }
}

/// Rules that wait for session state no rule in force sets (a flag, an agent, a workflow, a
/// task): they can never fire.
fn check_unset_state(loaded: &mut Loaded, layout: &Layout) {
    // The user's own packs alone may wait for state the packs of the projects set.
    if layout.project.is_none() {
        return;
    }
    let mut set: BTreeMap<&str, std::collections::BTreeSet<String>> = BTreeMap::new();
    for &(p, r) in &loaded.active {
        let then = &loaded.packs[p].1.rules[r].then.set;
        let entry = |key: &'static str, set: &mut BTreeMap<&str, _>, value: &str| {
            set.entry(key).or_insert_with(std::collections::BTreeSet::new).insert(value.to_owned());
        };
        for flag in &then.flags {
            entry("flag", &mut set, flag);
        }
        for (key, value) in
            [("agent", &then.agent), ("workflow", &then.workflow), ("task", &then.task)]
        {
            if let Some(value) = value {
                entry(key, &mut set, value);
            }
        }
    }
    let mut found = Vec::new();
    for &(p, r) in &loaded.active {
        let pack = &loaded.packs[p].1;
        let rule = &pack.rules[r];
        let wants = [
            ("flag", &rule.when.flags),
            ("agent", &rule.when.agent),
            ("workflow", &rule.when.workflow),
            ("task", &rule.when.task),
        ];
        for (key, values) in wants {
            let known = set.get(key);
            // A list is any of its values (flags: all of them).
            let dead: Vec<&String> =
                values.iter().filter(|v| !known.is_some_and(|k| k.contains(*v))).collect();
            let never = if key == "flag" {
                !dead.is_empty()
            } else {
                !values.is_empty() && dead.len() == values.len()
            };
            if never {
                let names = dead.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
                // A value close to one that is set is a typo of it.
                let hint = dead
                    .iter()
                    .map(|v| {
                        let set = known.into_iter().flatten().map(String::as_str);
                        shape::did_you_mean(v, set)
                    })
                    .find(|hint| !hint.is_empty())
                    .unwrap_or_default();
                found.push((
                    pack.source.clone(),
                    rule.span.clone(),
                    format!(
                        "rule `{}` never fires: no rule in force sets {key} {names}{hint} (`set = {{ {} }}`)",
                        rule.full_id(),
                        if key == "flag" { "flags = [...]".to_owned() } else { format!("{key} = ...") }
                    ),
                ));
            }
        }
    }
    for (source, span, message) in found {
        loaded.diagnostics.warning(&source, span, message);
    }
}

/// Rules whose context is longer than the budget of every bracket they can fire in, and not
/// `pinned`: the budget drops it each time, so it never reaches the model.
fn check_budgets(loaded: &mut Loaded) {
    let budget = loaded.config.settings().budget;
    let mut found = Vec::new();
    for &(p, r) in &loaded.active {
        let pack = &loaded.packs[p].1;
        let rule = &pack.rules[r];
        let Some(context) = rule.then.context.as_deref().filter(|_| !rule.then.pinned) else {
            continue;
        };
        let admits = |i: usize| {
            rule.when.bracket.is_empty() || rule.when.bracket.iter().any(|b| *b as usize == i)
        };
        let most = (0..4).filter(|&i| admits(i)).map(|i| budget[i] as usize * 4).max().unwrap_or(0);
        // As the hook measures it: the bytes of the section, its `[hookpack: id]` line included.
        let chars = context.len() + rule.full_id().len() + "[hookpack: ]\n".len();
        if chars > most {
            found.push((
                pack.source.clone(),
                rule.span.clone(),
                format!(
                    "rule `{}` never reaches the model: its context ({chars} bytes) is over the \
                     budget of every bracket it fires in (at most {most} bytes); shorten it, raise \
                     `[budget]`, or make it `pinned = true`",
                    rule.full_id()
                ),
            ));
        }
    }
    for (source, span, message) in found {
        loaded.diagnostics.warning(&source, span, message);
    }
}

/// The bracket thresholds of the config: they must not increase.
fn check_brackets(loaded: &mut Loaded) {
    let b = loaded.config.settings().brackets;
    if !(b[0] >= b[1] && b[1] >= b[2]) {
        loaded.diagnostics.error_without_place(format!(
            "config: bracket thresholds must not increase: fresh {} >= moderate {} >= depleted {}",
            b[0], b[1], b[2]
        ));
    }
}

/// Files a user meant as packs that are not read: another extension in a packs folder, a
/// `.toml` beside the config instead of in `packs/`.
fn stray_files(layout: &Layout, loaded: &mut Loaded) {
    let names = |dir: &Path| -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    };
    for (_, dir, _) in layout.pack_dirs() {
        for name in names(&dir) {
            // Files of other kinds may be a pack's `context_file`: only what looks like a pack
            // in another format is said.
            let extension = Path::new(&name).extension().and_then(|e| e.to_str()).unwrap_or("");
            let pack_like = matches!(
                extension.to_ascii_lowercase().as_str(),
                "toml" | "yaml" | "yml" | "json" | "tml"
            );
            if pack_like && extension != "toml" {
                loaded.diagnostics.warning_without_place(format!(
                    "{} is not read: packs are `.toml` files (in TOML, named in lower case)",
                    display(&dir.join(&name))
                ));
            }
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for (_, _, root) in layout.config_files() {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    for dir in &roots {
        for name in names(dir) {
            let toml = Path::new(&name).extension().is_some_and(|e| e == "toml");
            if toml && name != CONFIG_FILE && name != LOCAL_CONFIG_FILE {
                loaded.diagnostics.warning_without_place(format!(
                    "{} is not read: packs go in {}/",
                    display(&dir.join(&name)),
                    display(&dir.join(PACKS_DIR))
                ));
            }
        }
    }
}

/// The `*.toml` entries of `dir`, sorted: files, and anything else named so (a FIFO, a device,
/// a symbolic link), which [`read_source`] refuses with a diagnostic.
fn pack_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Whether the files of `scope` come with the project, a cloned repository perhaps: its packs
/// and configs must then stay in `.claude/hookpack/`, or a symbolic link committed as a pack
/// would make hookpack read (and show in diagnostics, line by line) the user's other files.
fn project_scope(scope: Scope) -> bool {
    matches!(scope, Scope::Project | Scope::Local)
}

/// Reads `path`, a `what`, and records it as a source: a regular file of at most
/// [`MAX_SOURCE_BYTES`], read without blocking, and inside `confined` when given (symbolic links
/// included). A missing file is recorded too (creating it makes the artifact stale) and gives
/// `None`, with an error when `required`. Anything else gives `None` and an error.
fn read_source(
    path: &Path,
    what: &str,
    confined: Option<&Path>,
    required: bool,
    loaded: &mut Loaded,
) -> Option<String> {
    let stamp = |len, mtime_ns, hash| FileStamp { path: display(path), len, mtime_ns, hash };
    let read =
        confined.map_or(Ok(()), |root| files::confine(root, path).map(|_| ())).and_then(|()| {
            // `stat` does not open the file, so it cannot block on a FIFO.
            let meta = std::fs::metadata(path).map_err(|_| files::Refused::Missing)?;
            files::read_text(path, MAX_SOURCE_BYTES).map(|text| (meta, text))
        });
    match read {
        Ok((meta, text)) => {
            let len = text.len() as u64;
            loaded.sources.files.push(stamp(Some(len), mtime_ns(&meta), fnv1a(text.as_bytes())));
            Some(text)
        }
        Err(files::Refused::Missing) if !required => {
            loaded.sources.files.push(stamp(None, 0, 0));
            None
        }
        Err(refused) => {
            let what = format!("{what} `{}`", path.display());
            let root = confined.unwrap_or(Path::new("/"));
            loaded.diagnostics.error_without_place(refused.message(&what, root));
            None
        }
    }
}

/// A file's modification time in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
