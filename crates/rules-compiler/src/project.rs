//! Scopes, config and precedence (CONTRACT §3): which packs a project uses, layered
//! builtin < user < project < local < env, merged by full rule id.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use toml::de::DeTable;

use crate::compile::{DirStamp, Settings, SourceFileStamp, Sources};
use crate::model::{Pack, Rule};
use crate::{Diagnostics, SourceFile, builtin, parse_pack, shape};
use hook_engine::artifact::sources::{fnv1a, names_hash};

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
        self.project.as_ref().map(|p| p.join(".claude/hookpack"))
    }

    /// The folder the hooks answer from: the project's, else the user's.
    pub fn installation_dir(&self) -> Option<PathBuf> {
        self.project_dir().or_else(|| self.user.clone())
    }

    /// Where the artifact goes: the project's `compiled/rules.hpk`, else the user's.
    pub fn artifact_path(&self) -> Option<PathBuf> {
        self.installation_dir().map(|d| d.join("compiled/rules.hpk"))
    }

    fn pack_dirs(&self) -> Vec<(Scope, PathBuf)> {
        let mut dirs = Vec::new();
        if let Some(user) = &self.user {
            dirs.push((Scope::User, user.join("packs")));
        }
        if let Some(project) = self.project_dir() {
            dirs.push((Scope::Project, project.join("packs")));
            dirs.push((Scope::Local, project.join("local")));
        }
        dirs
    }

    fn config_files(&self) -> Vec<(Scope, PathBuf)> {
        let mut files = Vec::new();
        if let Some(user) = &self.user {
            files.push((Scope::User, user.join("hookpack.toml")));
        }
        if let Some(project) = self.project_dir() {
            files.push((Scope::Project, project.join("hookpack.toml")));
            files.push((Scope::Local, project.join("hookpack.local.toml")));
        }
        files
    }
}

/// The config after layering (`hookpack.toml` files, then `HOOKPACK_*` variables).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Namespaces.
    pub namespaces: Vec<String>,
    /// Marker shorthands.
    pub aliases: BTreeMap<String, String>,
    /// Private tags.
    pub private_tags: Vec<String>,
}

impl Config {
    /// The settings the hooks need, defaults filled in.
    pub fn settings(&self) -> Settings {
        let d = Settings::default();
        Settings {
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
            namespaces: self.settings_namespaces(),
            aliases: self.aliases(),
            private_tags: if self.memory.private_tags.is_empty() {
                d.private_tags
            } else {
                self.memory.private_tags.clone()
            },
        }
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
}

impl Loaded {
    /// The rules in effect: each full id once (the highest scope's), minus `disable`.
    pub fn rules(&self) -> Vec<&Rule> {
        self.active.iter().map(|&(p, r)| &self.packs[p].1.rules[r]).collect()
    }
}

/// Reads every pack and config of `layout`, checks them, and merges the rules.
/// `env` gives the `HOOKPACK_*` variables (the process environment in the CLI).
pub fn load(layout: &Layout, env: &[(String, String)]) -> Loaded {
    let mut loaded = Loaded::default();

    // Config: each file checked with places, then layered.
    let mut figment = Figment::from(Serialized::defaults(Config::default()));
    for (_, path) in layout.config_files() {
        let Some(text) = read_source(&path, &mut loaded.sources) else { continue };
        let source = Arc::new(SourceFile::new(display(&path), text));
        match DeTable::parse(source.text()) {
            Ok(table) => {
                shape::check(&source, &table, &shape::CONFIG_FILE, &mut loaded.diagnostics);
            }
            Err(err) => loaded.diagnostics.error(
                &source,
                err.span().unwrap_or(0..0),
                format!("invalid TOML: {}", err.message()),
            ),
        }
        figment = figment.admerge(Toml::string(source.text()));
    }
    figment = figment.admerge(Toml::string(&env_toml(env)));
    if !loaded.diagnostics.has_errors() {
        match figment.extract::<Config>() {
            Ok(config) => loaded.config = config,
            Err(err) => loaded
                .diagnostics
                .error_without_place(format!("config: {}", err.to_string().to_lowercase())),
        }
    }
    let b = loaded.config.settings().brackets;
    if !(b[0] >= b[1] && b[1] >= b[2]) {
        loaded.diagnostics.error_without_place(format!(
            "config: bracket thresholds must not increase: fresh {} >= moderate {} >= depleted {}",
            b[0], b[1], b[2]
        ));
    }

    for problem in loaded.config.memory_problems() {
        loaded.diagnostics.error_without_place(problem);
    }

    // Packs: builtin ones named in the config, then each scope's folder.
    for name in &loaded.config.builtin.clone() {
        match builtin::PACKS.iter().find(|(n, _)| n == name) {
            Some((_, text)) => {
                let source = Arc::new(SourceFile::new(format!("<builtin>/{name}.toml"), *text));
                add_pack(&mut loaded, Scope::Builtin, &source, Path::new("."));
            }
            None => {
                let known: Vec<&str> = builtin::PACKS.iter().map(|(n, _)| *n).collect();
                let hint = shape::suggestion(name, known.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                loaded.diagnostics.error_without_place(format!(
                    "config: no builtin pack `{name}` (there are: {}){hint}",
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ));
            }
        }
    }
    for (scope, dir) in layout.pack_dirs() {
        let files = pack_files(&dir);
        let names: Vec<String> =
            files.iter().filter_map(|f| f.file_name()?.to_str().map(str::to_owned)).collect();
        let names_hash = if dir.is_dir() { names_hash(&names) } else { 0 };
        loaded.sources.dirs.push(DirStamp { path: display(&dir), names_hash });
        for file in files {
            let Some(text) = read_source(&file, &mut loaded.sources) else { continue };
            let source = Arc::new(SourceFile::new(display(&file), text));
            add_pack(&mut loaded, scope, &source, &dir);
        }
    }

    merge(&mut loaded);
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

fn add_pack(loaded: &mut Loaded, scope: Scope, source: &Arc<SourceFile>, dir: &Path) {
    let (pack, diagnostics) = parse_pack(source, dir);
    loaded.diagnostics.extend(diagnostics);
    if let Some(pack) = pack {
        // `context_file`s are sources too: editing one makes the artifact stale.
        for file in &pack.context_files {
            read_source(file, &mut loaded.sources);
        }
        loaded.packs.push((scope, pack));
    }
}

/// The `HOOKPACK_*` variables as TOML: `HOOKPACK_WINDOW_TOKENS=1000000` is
/// `window_tokens = 1000000`, `HOOKPACK_BRACKETS__FRESH=70` is `brackets.fresh = 70`,
/// `HOOKPACK_DISABLE=a/x,b/*` is `disable = ["a/x", "b/*"]`. `HOOKPACK_ARTIFACT` is a path,
/// not config.
fn env_toml(env: &[(String, String)]) -> String {
    let mut text = String::new();
    for (name, value) in env {
        let Some(key) = name.strip_prefix("HOOKPACK_") else { continue };
        if key == "ARTIFACT" || key.is_empty() {
            continue;
        }
        let key = key.to_ascii_lowercase().replace("__", ".");
        let quoted = |v: &str| serde_json::Value::from(v.trim()).to_string();
        let value = if matches!(
            key.as_str(),
            "builtin" | "disable" | "memory.namespaces" | "memory.private_tags"
        ) {
            format!(
                "[{}]",
                value
                    .split(',')
                    .filter(|v| !v.trim().is_empty())
                    .map(quoted)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else if value.parse::<i64>().is_ok() || value == "true" || value == "false" {
            value.clone()
        } else {
            quoted(value)
        };
        let _ = writeln!(text, "{key} = {value}");
    }
    text
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
    let disabled = |id: &str| {
        loaded.config.disable.iter().any(|pattern| match pattern.strip_suffix("/*") {
            Some(pack) => id.split_once('/').is_some_and(|(p, _)| p == pack),
            None => pattern == id,
        })
    };
    loaded.active = order.iter().filter(|id| !disabled(id)).map(|id| winner[id]).collect();
}

/// The `*.toml` files of `dir`, sorted.
fn pack_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .collect();
    files.sort();
    files
}

/// Reads `path` and records it as a source; a missing file is recorded too (creating it
/// makes the artifact stale) and gives `None`.
fn read_source(path: &Path, sources: &mut Sources) -> Option<String> {
    let stamp = |len, mtime_ns, hash| SourceFileStamp { path: display(path), len, mtime_ns, hash };
    match (std::fs::metadata(path), std::fs::read_to_string(path)) {
        (Ok(meta), Ok(text)) => {
            sources.files.push(stamp(Some(meta.len()), mtime_ns(&meta), fnv1a(text.as_bytes())));
            Some(text)
        }
        _ => {
            sources.files.push(stamp(None, 0, 0));
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
