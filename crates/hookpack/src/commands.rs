//! The commands. Each returns whether it found the project healthy (`Ok(false)`: problems
//! found, exit 1).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use hook_engine::Engine;
use hook_engine::artifact::{AlignedBytes, Artifact, MAX_ARTIFACT_BYTES};
use hook_engine::layout::{self, EnvVars};
use hook_engine::screen::{Screen, Verdict};
use hook_runtime::Installation;
use hook_runtime::confined::{Confined, ConfinedDir};
use hook_runtime::state::Store;
use rules_compiler::{
    InProject, Layout, Loaded, compile as compile_rules, fail_closed_list, load, run_project_tests,
};

/// How much the commands say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// Problems and results.
    Quiet = 0,
    /// And what was done.
    Normal = 1,
    /// And every passing test.
    Verbose = 2,
}

static VERBOSITY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);

/// Sets how much the commands say (`-q`, `-v`), once, before any runs.
pub(crate) fn set_verbosity(verbosity: Verbosity) {
    VERBOSITY.store(verbosity as u8, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn verbosity() -> Verbosity {
    match VERBOSITY.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// The project and user folders for this run.
pub(crate) fn layout(project: Option<&Path>, user_only: bool) -> Layout {
    // Absolute, so that what is recorded and said does not depend on where it runs from.
    let project = project.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    let env = hook_runtime::Env::from_process();
    let user = env.user_config_dir();
    let project = project.or_else(|| {
        if user_only {
            return None;
        }
        env.project_dir.or_else(|| {
            let cwd = std::env::current_dir().ok()?;
            let found = cwd
                .ancestors()
                .find(|d| d.join(layout::PROJECT_SUBDIR).is_dir())
                .map(Path::to_path_buf);
            Some(found.unwrap_or(cwd))
        })
    });
    Layout { project, user }
}

pub(crate) fn environment() -> Vec<(String, String)> {
    std::env::vars().filter(|(k, _)| k.starts_with(EnvVars::CONFIG_PREFIX)).collect()
}

/// The rules of `layout` as they are now (every scope's packs, compiled in memory, nothing
/// written), which memories are screened against before they are shared or exported
/// (`hook_engine::screen`). Loaded with [`rules_compiler::load`], so a config or pack with
/// errors refuses it.
pub(crate) fn rules_in_memory(layout: &Layout) -> anyhow::Result<AlignedBytes> {
    let loaded = load(layout, &environment());
    anyhow::ensure!(
        !loaded.diagnostics.has_errors(),
        "the packs or the config have errors (`hookpack lint` says which): memories are checked \
         against the rules before they are shared or exported"
    );
    let compiled = compile_rules(&loaded.rules(), &loaded.config.settings(), &loaded.sources)
        .context("the rules do not compile")?;
    Ok(AlignedBytes::new(&compiled.bytes))
}

/// Loads every pack and prints the problems (and, with `infos`, the info lines: `lint`'s, and
/// every command's with `-v`); `None` when there are errors.
fn checked(layout: &Layout, infos: bool) -> Option<Loaded> {
    let mut loaded = load(layout, &environment());
    if !(infos || verbosity() >= Verbosity::Verbose) {
        loaded.diagnostics.drop_infos();
    }
    if !loaded.diagnostics.is_silent() {
        eprint!("{}", loaded.diagnostics.render());
    }
    (!loaded.diagnostics.has_errors()).then_some(loaded)
}

/// `hookpack lint`.
pub(crate) fn lint(layout: &Layout) -> bool {
    let Some(loaded) = checked(layout, true) else { return false };
    let rules = loaded.rules().len();
    println!("{} packs, {rules} rules: no errors", loaded.packs.len());
    true
}

/// How the tests of a project went ([`run_all_tests`]).
#[derive(Debug, Default)]
struct Tally {
    passed: usize,
    /// Failed on their pack alone.
    failed: usize,
    /// Passed alone, failed against the project's rules.
    differ: usize,
    /// About a rule the project replaces or turns off.
    not_in_force: usize,
}

/// Runs every pack's tests, alone and in the project, and prints them.
fn run_all_tests(loaded: &Loaded, out: &mut dyn std::io::Write) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    for outcome in run_project_tests(loaded)? {
        let name = format!("{}/{}", outcome.pack, outcome.name);
        if !outcome.passed() {
            tally.failed += 1;
            writeln!(out, "test {name} ... FAILED ({})", outcome.place)?;
            for failure in &outcome.failures {
                writeln!(out, "    {failure}")?;
            }
            continue;
        }
        match &outcome.in_project {
            None | Some(InProject::Same) => {
                tally.passed += 1;
                if verbosity() >= Verbosity::Verbose {
                    writeln!(out, "test {name} ... ok")?;
                }
            }
            Some(InProject::NotInForce { rule, fate }) => {
                tally.not_in_force += 1;
                if verbosity() >= Verbosity::Verbose {
                    writeln!(
                        out,
                        "test {name} ... ok alone, not in force here: `{rule}` is {fate}"
                    )?;
                }
            }
            Some(InProject::Differs(failures)) => {
                tally.differ += 1;
                writeln!(
                    out,
                    "test {name} ... ok alone, DIFFERS with this project's rules ({})",
                    outcome.place
                )?;
                for failure in failures {
                    writeln!(out, "    {failure}")?;
                }
            }
        }
    }
    let Tally { passed, failed, differ, not_in_force } = tally;
    let mut summary = format!("{passed} passed, {failed} failed");
    if differ > 0 {
        let _ = write!(summary, ", {differ} differ with this project's rules");
    }
    if not_in_force > 0 {
        let _ = write!(summary, ", {not_in_force} about rules not in force here");
        if verbosity() < Verbosity::Verbose {
            summary.push_str(" (-v names them)");
        }
    }
    if verbosity() > Verbosity::Quiet || failed > 0 || differ > 0 {
        writeln!(out, "{summary}")?;
    }
    Ok(tally)
}

/// `hookpack test`: whether every test passes, alone and with the project's rules.
pub(crate) fn test(layout: &Layout) -> anyhow::Result<bool> {
    let Some(loaded) = checked(layout, false) else { return Ok(false) };
    let tally = run_all_tests(&loaded, &mut std::io::stdout())?;
    Ok(tally.failed == 0 && tally.differ == 0)
}

/// `hookpack compile [--check]`.
pub(crate) fn compile(layout: &Layout, check: bool) -> anyhow::Result<bool> {
    compile_to(layout, check, &mut std::io::stdout())
}

/// [`compile`], what it reports written to `out`.
pub(crate) fn compile_to(
    layout: &Layout,
    check: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<bool> {
    let started = Instant::now();
    if let Some(project) = layout.project.as_ref().filter(|p| !p.is_dir()) {
        anyhow::bail!("{} is not a folder; nothing was written", project.display());
    }
    let Some(loaded) = checked(layout, false) else { return Ok(false) };
    // A pack's own tests must pass; how they go with the project's other rules is told, and
    // `hookpack test` fails on it, but it does not keep the rules from being compiled.
    if run_all_tests(&loaded, out)?.failed > 0 {
        eprintln!("error: pack tests failed; the compiled rules were not written");
        return Ok(false);
    }
    let rules = loaded.rules();
    let compiled = compile_rules(&rules, &loaded.config.settings(), &loaded.sources)?;
    let (dir, name) = artifact_place(layout)?;
    let path = dir.join(&name);

    if check {
        // Bounded, regular files only: the artifact may be a planted link to a device.
        let current = hook_engine::bounded::read_regular(&path, MAX_ARTIFACT_BYTES).ok();
        if current.as_deref() == Some(compiled.bytes.as_slice()) {
            // The right bytes, but hooks answer only from what `hookpack compile` wrote here.
            if let Err(err) = hook_runtime::load_artifact(&path) {
                writeln!(out, "stale: {}: {err} (run `hookpack compile`)", path.display())?;
                return Ok(false);
            }
            writeln!(out, "up to date: {}", path.display())?;
            return Ok(true);
        }
        writeln!(out, "stale: {} (run `hookpack compile`)", path.display())?;
        return Ok(false);
    }

    // The bytes must load before they replace what the hooks use.
    let aligned = AlignedBytes::new(&compiled.bytes);
    Artifact::parse(aligned.as_slice())
        .and_then(|a| a.verify())
        .context("the compiled artifact does not load")?;
    let dir = match dir {
        ArtifactDir::Confined(confined) => confined.dir(layout::COMPILED_DIR),
        ArtifactDir::Given(folder) => {
            std::fs::create_dir_all(&folder).map(|()| ConfinedDir::trusting(&folder))
        }
    }
    .with_context(|| format!("writing {}", path.display()))?;
    hook_runtime::write_compiled(&dir, &name, &compiled.bytes, &fail_closed_list(&rules))
        .with_context(|| format!("writing {}", path.display()))?;
    if verbosity() > Verbosity::Quiet {
        writeln!(
            out,
            "compiled {} rules ({} keywords, {} globs, {} regexes) from {} packs into {} ({} bytes) in {} ms",
            compiled.rules,
            compiled.keywords,
            compiled.globs,
            compiled.regexes,
            loaded.packs.len(),
            path.display(),
            compiled.bytes.len(),
            started.elapsed().as_millis()
        )?;
    }
    match forget_what_the_rules_block(layout, &aligned) {
        Ok(0) => {}
        Ok(n) => writeln!(
            out,
            "forgot {} that a rule now blocks as a prompt (`memory list` shows what is kept)",
            if n == 1 { "1 memory".to_owned() } else { format!("{n} memories") }
        )?,
        Err(err) => eprintln!("warning: the stored memories were not checked: {err:#}"),
    }
    match refresh_user_guards(layout) {
        Ok(Some((n, path))) if n > 0 && verbosity() > Verbosity::Quiet => {
            let guards = if n == 1 {
                "fail-closed guard".to_owned()
            } else {
                format!("{n} fail-closed guards")
            };
            writeln!(
                out,
                "your {guards} hold in every project, whatever its files: {}",
                path.display()
            )?;
        }
        Ok(_) => {}
        Err(err) => eprintln!("warning: your fail-closed guards were not listed: {err:#}"),
    }
    Ok(true)
}

/// Forgets the stored memories that the rules just compiled (`compiled`) would block as a
/// prompt ([`Screen`]): stored before the rule existed, or before hookpack screened what it
/// stores, they would otherwise come back in recall. How many were forgotten.
fn forget_what_the_rules_block(layout: &Layout, compiled: &AlignedBytes) -> anyhow::Result<usize> {
    let Some(installation) = installation(layout) else { return Ok(0) };
    if !hook_runtime::state::database_path(installation.dir()).is_file() {
        return Ok(0);
    }
    let engine = Engine::new(Artifact::parse(compiled.as_slice())?)?;
    let screen = Screen::new(&engine, layout.project.as_deref())?;
    let mut store = Store::open(&installation)?;
    let mut blocked = Vec::new();
    for memory in store.memories(None, u32::MAX)? {
        if matches!(screen.check(&memory.text)?, Verdict::Blocked(_)) {
            blocked.push(memory.id);
        }
    }
    if blocked.is_empty() {
        return Ok(0);
    }
    Ok(store.forget(&blocked)?)
}

/// Where the compiled rules go.
enum ArtifactDir {
    /// `compiled/` in the project's or the user's hookpack folder, checked on the way.
    Confined(Confined),
    /// The folder of `$HOOKPACK_ARTIFACT`, which the user chose.
    Given(PathBuf),
}

/// The folder and file name of the artifact: `$HOOKPACK_ARTIFACT`, else `compiled/rules.hpk`
/// in the project's hookpack folder, else in the user's.
fn artifact_place(layout: &Layout) -> anyhow::Result<(ArtifactDir, String)> {
    if let Some(path) = hook_runtime::Env::from_process().artifact {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .context("HOOKPACK_ARTIFACT names no file")?
            .to_owned();
        let folder = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok((ArtifactDir::Given(folder), name));
    }
    let installation = installation(layout).context("no project and no user folder")?;
    Ok((ArtifactDir::Confined(Confined::of(&installation)), layout::ARTIFACT_FILE.to_owned()))
}

/// Lists the user's own fail-closed rules (builtin and user scopes, as `compile --user` would,
/// without the environment's `HOOKPACK_*` variables, which a project's tools may set) in the
/// user folder, on every project compile: a hook in a project whose rules cannot be read (a
/// missing, committed or damaged artifact) denies what they cover too (reference §5). Returns
/// how many there are and where the list is; `None` without a project or a user folder.
fn refresh_user_guards(layout: &Layout) -> anyhow::Result<Option<(usize, PathBuf)>> {
    let (Some(_), Some(user)) = (&layout.project, &layout.user) else { return Ok(None) };
    if !user.is_dir() {
        return Ok(None);
    }
    let loaded = load(&Layout { project: None, user: Some(user.clone()) }, &[]);
    // Errors in the user's packs stopped the project's compile already.
    anyhow::ensure!(!loaded.diagnostics.has_errors(), "the user's packs have errors");
    let list = fail_closed_list(&loaded.rules());
    let confined = Confined::of(&Installation::User { dir: user.clone() });
    let path = confined.path().join(layout::COMPILED_DIR).join(layout::FAIL_CLOSED_FILE);
    // The folder is made only for a list to write.
    let dir = if list.is_empty() {
        confined.existing_dir(layout::COMPILED_DIR)?
    } else {
        Some(confined.dir(layout::COMPILED_DIR)?)
    };
    if let Some(dir) = dir {
        hook_runtime::write_fail_closed(&dir, &list)?;
    }
    Ok(Some((list.lines().count(), path)))
}

/// The installation the hooks of `layout` answer from: its project, else the user's folder.
pub(crate) fn installation(layout: &Layout) -> Option<Installation> {
    match (&layout.project, &layout.user) {
        (Some(root), _) => Some(Installation::Project {
            root: root.clone(),
            dir: root.join(layout::PROJECT_SUBDIR),
        }),
        (None, Some(dir)) => Some(Installation::User { dir: dir.clone() }),
        (None, None) => None,
    }
}

/// Where the hooks of `layout` read the compiled rules: `$HOOKPACK_ARTIFACT`, else the
/// installation's `compiled/rules.hpk`.
pub(crate) fn artifact_path(layout: &Layout) -> Option<PathBuf> {
    Some(installation(layout)?.artifact_path(&hook_runtime::Env::from_process()))
}

impl ArtifactDir {
    fn join(&self, name: &str) -> PathBuf {
        match self {
            ArtifactDir::Confined(confined) => {
                confined.path().join(layout::COMPILED_DIR).join(name)
            }
            ArtifactDir::Given(folder) => folder.join(name),
        }
    }
}

/// `path` relative to `base` when below it.
pub(crate) fn shown(base: &Path, path: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).display().to_string()
}

/// `text` on one line without control characters: what a database holds may have been
/// written to move a terminal's cursor or rewrite what it shows.
pub(crate) fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// `hookpack memory list|search|forget`: the memory store of the project.
pub(crate) fn memory(
    layout: &Layout,
    words: &[String],
    namespace: Option<&str>,
    limit: Option<u32>,
) -> anyhow::Result<bool> {
    use hook_engine::memory::{self, Recall, RecallFrom};
    use hook_runtime::state::{Store, database_path};

    let installation = installation(layout).context("no project and no user folder")?;
    let dir = installation.dir().to_path_buf();
    let (sub, rest) = words.split_first().context("`memory` needs `list`, `search` or `forget`")?;
    if let ("show", [id]) = (sub.as_str(), rest)
        && let Some(prefix) = id.strip_prefix("session:")
    {
        return show_session(&dir, prefix);
    }
    if !database_path(&dir).is_file() {
        println!("no memories yet ({} does not exist)", database_path(&dir).display());
        return Ok(true);
    }
    let open = || -> anyhow::Result<Store> {
        let store = Store::open(&installation)?;
        if let Some(aside) = store.set_aside() {
            eprintln!(
                "hookpack: the memory database was not usable ({}); set aside as {}",
                aside.why,
                aside.path.display()
            );
        }
        Ok(store)
    };
    let show = |memories: &[memory::Memory]| {
        if memories.is_empty() {
            println!("(none)");
        }
        for m in memories {
            println!(
                "#{:<5} {}  {:<13} {}",
                m.id,
                memory::date(m.created),
                printable(&m.namespace),
                printable(&m.text)
            );
        }
    };
    match sub.as_str() {
        "list" => {
            anyhow::ensure!(rest.is_empty(), "`memory list` takes no words; try `memory search`");
            // Opened to write: a database of an older schema is migrated first.
            let store = open()?;
            let namespace = namespace.map(str::to_ascii_lowercase);
            show(&store.memories(namespace.as_deref(), limit.unwrap_or(50))?);
            Ok(true)
        }
        "search" => {
            let terms = memory::terms(&rest.join(" "));
            anyhow::ensure!(!terms.is_empty(), "`memory search` needs words to look for");
            let store = open()?;
            let recall =
                // Any shared word counts, as for a file path.
                Recall { from: RecallFrom::Path, max: limit.unwrap_or(10) as usize, terms };
            show(&store.search(&recall)?);
            Ok(true)
        }
        "forget" => {
            let ids: Vec<i64> = rest
                .iter()
                .map(|id| {
                    id.trim_start_matches('#')
                        .parse()
                        .with_context(|| format!("`{id}` is no memory id"))
                })
                .collect::<anyhow::Result<_>>()?;
            anyhow::ensure!(!ids.is_empty(), "`memory forget` needs the ids to remove");
            let removed = open()?.forget(&ids)?;
            println!("forgot {removed} of {} memories", ids.len());
            Ok(removed == ids.len())
        }
        "show" => {
            let [id] = rest else { anyhow::bail!("`memory show` takes one id") };
            let number: i64 = id
                .trim_start_matches('#')
                .parse()
                .with_context(|| format!("`{id}` is no memory id"))?;
            let Some((m, session, rule)) = open()?.memory(number)? else {
                println!("no memory #{number}");
                return Ok(false);
            };
            println!("memory #{}", m.id);
            println!("namespace:  {}", printable(&m.namespace));
            println!("stored:     {}", memory::date(m.created));
            println!("session:    {}", printable(&session));
            println!("rule:       {}", printable(&rule));
            println!("confidence: {}", m.confidence);
            println!();
            // The whole text, line by line, control characters shown.
            for line in m.text.lines() {
                println!("  {}", printable(line));
            }
            Ok(true)
        }
        other => anyhow::bail!("unknown `memory` command `{other}`: list, search, show or forget"),
    }
}

/// `hookpack memory show session:<id>`: what the session whose id starts with `prefix` did
/// and kept, as its books say.
fn show_session(dir: &Path, prefix: &str) -> anyhow::Result<bool> {
    use hook_engine::memory;
    use hook_runtime::state::sessions;

    anyhow::ensure!(!prefix.is_empty(), "`memory show session:<id>` needs the session's id");
    let matching = sessions::recent(dir, "", 2, |r| r.id.starts_with(prefix));
    let record = match matching.as_slice() {
        [] => {
            println!(
                "no session `{}` (sessions are kept for `[state] max_age_days`)",
                printable(prefix)
            );
            return Ok(false);
        }
        [one] => one,
        more => anyhow::bail!(
            "`{}` starts {} sessions' ids: give more of it",
            printable(prefix),
            more.len()
        ),
    };
    let o = record.state.observed.get();
    println!("session {}", printable(&record.id));
    println!("started:  {}", memory::date(record.started));
    println!("last:     {}", memory::date(record.updated));
    println!("prompts:  {}", record.state.prompt_count);
    if let Some(title) = &o.title {
        println!("title:    {}", printable(title));
    }
    let list = |name: &str, items: &[String]| {
        if !items.is_empty() {
            println!("{name}:");
            for item in items {
                println!("  {}", printable(item));
            }
        }
    };
    list("edited", &o.edited);
    list("read", &o.read);
    if o.commands > 0 {
        let shown = o.ran.len();
        println!("commands: {} (the last {shown}:)", o.commands);
        for command in &o.ran {
            println!("  {}", printable(command));
        }
    }
    list("failed", &o.failed);
    if !o.tools.is_empty() {
        let tools: Vec<String> =
            o.tools.iter().map(|(t, n)| format!("{} ×{n}", printable(t))).collect();
        println!("tools:    {}", tools.join(", "));
    }
    if let Some(stored) = record.stored.as_deref().filter(|s| !s.is_empty()) {
        let ids: Vec<String> = stored.iter().map(|id| format!("#{id}")).collect();
        println!("kept:     {} (`hookpack memory show <id>`)", ids.join(" "));
    }
    Ok(true)
}

/// `hookpack memory prune`: removes the memories past `[memory] max` and `max_age_days` (the
/// config's, or `max` and `max_age_days` given), oldest first; `dry_run` lists them instead.
pub(crate) fn memory_prune(
    layout: &Layout,
    max: Option<u32>,
    max_age_days: Option<u32>,
    dry_run: bool,
) -> anyhow::Result<bool> {
    use hook_runtime::state::{Store, database_path};

    let installation = installation(layout).context("no project and no user folder")?;
    let loaded = load(layout, &environment());
    anyhow::ensure!(
        !loaded.diagnostics.has_errors(),
        "the config has errors (`hookpack lint` says which)"
    );
    let settings = loaded.config.settings();
    let max = max.unwrap_or(settings.memory_max);
    let max_age_days = max_age_days.unwrap_or(settings.memory_max_age_days);
    let limits = match (max, max_age_days) {
        (0, 0) => "no limit".to_owned(),
        (0, days) => format!("memories older than {days} days"),
        (max, 0) => format!("past the newest {max}"),
        (max, days) => format!("past the newest {max}, and older than {days} days"),
    };
    if !database_path(installation.dir()).is_file() {
        println!("no memories yet");
        return Ok(true);
    }
    let mut store = Store::open(&installation)?;
    if dry_run {
        let ids = store.prunable(max, max_age_days, u32::MAX)?;
        println!("would remove {} memories ({limits})", ids.len());
        for id in ids.iter().take(20) {
            println!("  #{id}");
        }
        if ids.len() > 20 {
            println!("  and {} more", ids.len() - 20);
        }
        return Ok(true);
    }
    let removed = store.prune(max, max_age_days, u32::MAX)?;
    println!("removed {removed} memories ({limits})");
    Ok(true)
}
