//! `cargo xtask link-order`: the list of the functions the hooks run, which their link lays
//! side by side (`crates/hook-bins/build.rs`), made from the binaries that ship and from those
//! `cargo build` makes.
//!
//! The hook binaries and the floor are built as `dist` (static) and `bench` (dynamic) build
//! them, then run under callgrind (valgrind) on every event's examples against the builtin
//! packs (with 2,000 memories stored, so that recall's code is listed too), on recall by a
//! file's terms, and as a `Bash` `PreToolUse` under every guard pack on the guard benchmark's
//! commands; the floor on the same payloads. Every function that ran is listed by its symbol:
//! those run by the most events first, and those run by the same events side by side, so that
//! each event's hook touches the fewest pages of code. The floor is laid out from the same list
//! (it defines few of its names), so that the benchmarks compare binaries built alike.
//!
//! A symbol carries a hash of the build's configuration (the toolchain, the dependencies'
//! versions, the profile, the compiler's flags: the static and the dynamic build name the same
//! function apart, and the list holds both names), not of the code: editing a function keeps
//! its name, while a new toolchain or a dependency update renames them all, and the list then
//! places nothing until it is made again. `cargo xtask bench` says how much of it the binaries
//! it measures define.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};
use hook_model::EventKind;

use crate::release::{build_dynamic, build_static};
use crate::workspace::{examples, root};

/// The list, read by `crates/hook-bins/build.rs`.
const LIST: &str = "crates/hook-bins/link-order.txt";

const HEADER: &str = "\
# The functions the hook binaries run, by symbol, laid side by side at link time
# (crates/hook-bins/build.rs): those run by the most events first, those of one set of events
# together. Written by `cargo xtask link-order` from the static and the dynamic `hooks` builds
# (each names a function its own way); do not edit. A name a build does not define is passed
# over (`cargo xtask bench` says how many it defines).
";

pub(crate) fn run() -> anyhow::Result<()> {
    for tool in ["valgrind", "nm"] {
        let found = Command::new(tool).arg("--version").stdout(Stdio::null()).status();
        ensure!(found.is_ok_and(|s| s.success()), "`{tool}` is needed to make the list");
    }
    // Both builds: a symbol's hash covers the build's flags, so the static (shipped) and the
    // dynamic (`cargo build`) binaries name the same function differently, and each picks its
    // own names from the list.
    let linkings = [
        build_static(&["hook-bins", "hook-floor"])?
            .context("the list is made from the static binaries, which this host does not build")?,
        build_dynamic(&["hook-bins", "hook-floor"])?,
    ];
    let hookpack = build_dynamic(&["hookpack"])?.bin_dir.join("hookpack");
    let scratch = root().join("target/link-order");
    std::fs::create_dir_all(&scratch)?;

    let payloads = payloads(&hookpack, &scratch)?;

    // Each payload to its event's hook and to the floor, in both builds.
    let mut calls: Vec<(PathBuf, PathBuf, PathBuf)> = Vec::new();
    for linking in &linkings {
        for (kind, payload, project) in &payloads {
            for binary in [kind.binary_name(), "hook-floor"] {
                calls.push((linking.bin_dir.join(binary), payload.clone(), project.clone()));
            }
        }
    }

    // Per symbol: the events whose calls ran it, and in how many calls it ran.
    let mut seen: BTreeMap<String, (BTreeSet<&str>, usize)> = BTreeMap::new();
    let mut defined: BTreeMap<PathBuf, Functions> = BTreeMap::new();
    let profile = scratch.join("callgrind.out");
    for (binary, payload, project) in &calls {
        if !defined.contains_key(binary) {
            let symbols = text_symbols(binary)?
                .with_context(|| format!("{} has no symbol table", binary.display()))?;
            defined.insert(binary.clone(), symbols);
        }
        let symbols = defined.get(binary).context("symbols just read")?;
        let _ = std::fs::remove_file(&profile);
        let status = Command::new("valgrind")
            .args(["--tool=callgrind", "--demangle=no", "--quiet"])
            .arg(format!("--callgrind-out-file={}", profile.display()))
            .arg(binary)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("CLAUDE_PROJECT_DIR", project)
            .env("XDG_CONFIG_HOME", project)
            .current_dir(project)
            .stdin(File::open(payload)?)
            .stdout(Stdio::null())
            .status()
            .context("running valgrind")?;
        ensure!(
            status.success(),
            "{} on {} failed under valgrind",
            binary.display(),
            payload.display()
        );
        let ran: BTreeSet<String> = functions_run(&std::fs::read_to_string(&profile)?)
            .into_iter()
            .filter_map(|name| symbols.named(name))
            .collect();
        // The floor counts as an event of its own: what it runs, every hook runs too.
        let event = binary.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        for name in ran {
            let (events, calls) = seen.entry(name).or_default();
            events.insert(event);
            *calls += 1;
        }
    }
    if seen.is_empty() {
        bail!("no function was seen running: is valgrind working?");
    }
    // A hook faults in each 64 KiB of code it touches: what one event runs should lie in as
    // few of them as can be. Those run by the most events come first (what every hook runs,
    // then what the hooks that keep state run, …); those run by the same events lie together,
    // so that an event's own code is not strewn among the guard's (whose many calls would
    // otherwise put it first); among those, the most calls first, then by name (a module's
    // functions together, and the same list from the same runs).
    let mut order: Vec<(String, (BTreeSet<&str>, usize))> = seen.into_iter().collect();
    order.sort_by(|(a, (a_events, a_calls)), (b, (b_events, b_calls))| {
        b_events
            .len()
            .cmp(&a_events.len())
            .then_with(|| a_events.cmp(b_events))
            .then_with(|| b_calls.cmp(a_calls))
            .then_with(|| a.cmp(b))
    });
    let mut text = HEADER.to_owned();
    for (name, _) in &order {
        text.push_str(name);
        text.push('\n');
    }
    let list = root().join(LIST);
    std::fs::write(&list, text).with_context(|| format!("writing {}", list.display()))?;
    println!("{} functions seen in {} calls, listed in {LIST}", order.len(), calls.len());
    Ok(())
}

/// Every payload the hooks are profiled on, with its event and its project: each event's
/// examples against the builtin packs (with memories stored), recall by a file's terms, and a
/// `Bash` `PreToolUse` under every guard pack on the guard benchmark's commands.
fn payloads(hookpack: &Path, scratch: &Path) -> anyhow::Result<Vec<(EventKind, PathBuf, PathBuf)>> {
    let mut payloads: Vec<(EventKind, PathBuf, PathBuf)> = Vec::new();
    let packs = ["context", "guard", "memory", "workflow"];
    let builtin = crate::bench_rules::builtin_project(hookpack, "link-order-builtin", &packs)?;
    // With memories stored, as the benchmark's projects and a user's have them: recall reads
    // them through the index (a store that is empty or missing runs none of that code).
    crate::bench_builtin::store_memories(&builtin, 0, 2_000)?;
    let missing = scratch.join("no-transcript.jsonl");
    // The worktree hooks run git: what they run is git's.
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        for (n, example) in examples(kind)?.into_iter().enumerate() {
            let path = scratch.join(format!("{}-{n}.json", kind.kebab()));
            crate::bench_builtin::write_payload(&example, &path, &missing)?;
            if kind == EventKind::PostToolUse && n == 0 {
                // Recall by a file's terms, as the benchmark measures it.
                let read = scratch.join("read-orders.json");
                crate::bench_builtin::read_payload(&builtin, &path, &read)?;
                payloads.push((kind, read, builtin.clone()));
            }
            payloads.push((kind, path, builtin.clone()));
        }
    }
    let guard_packs = crate::bench_guard::guard_packs()?;
    let names: Vec<&str> = guard_packs.iter().map(String::as_str).collect();
    let guard = crate::bench_rules::builtin_project(hookpack, "link-order-guard", &names)?;
    for (_, payload, _) in crate::bench_guard::payloads(&scratch.join("guard"), &guard)? {
        payloads.push((EventKind::PreToolUse, payload, guard.clone()));
    }
    Ok(payloads)
}

/// Says how much of the list the hook `binary` and the `floor` hold, and what to do when the
/// hook holds little of it.
pub(crate) fn report(binary: &Path, floor: &Path) {
    let name = binary.file_name().unwrap_or_default().to_string_lossy();
    let floor_found = placed(floor).map_or_else(|| "?".to_owned(), |(found, _)| found.to_string());
    match placed(binary) {
        // The list names most functions twice (the static and the dynamic build's names).
        Some((found, listed)) if found * 3 >= listed => println!(
            "link order: {name} defines {found} of the {listed} functions listed in {LIST}, \
             the floor {floor_found}"
        ),
        Some((found, listed)) => println!(
            "link order: {name} defines only {found} of the {listed} functions listed in {LIST}: \
             the list was made for another toolchain or other dependencies; run `cargo xtask \
             link-order`"
        ),
        None => println!("link order: cannot tell how much of {LIST} {name} holds (no nm?)"),
    }
}

/// How many of the list's names `binary` defines, of how many: `None` when that cannot be
/// told (no list, no `nm`, a binary without symbols).
pub(crate) fn placed(binary: &Path) -> Option<(usize, usize)> {
    let list = std::fs::read_to_string(root().join(LIST)).ok()?;
    let symbols = text_symbols(binary).ok()??;
    let names: Vec<&str> =
        list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    Some((names.iter().filter(|name| symbols.names.contains(**name)).count(), names.len()))
}

/// The functions a binary defines, by name and by address.
struct Functions {
    names: BTreeSet<String>,
    /// The first name `nm` gives at each address.
    at: BTreeMap<u64, String>,
}

impl Functions {
    /// The name the list gives a function a profile names `name`, when the binary defines it.
    /// Callgrind names some functions by their address (it skips local symbols of some objects,
    /// such as the C start-up's `frame_dummy`, which runs before `main`): they are listed by
    /// the symbol at that address, else the linker would leave them among the cold code and a
    /// hook would fault in a page of it at every start. (The profile's object is not checked:
    /// an address in a shared library that is also one of the binary's functions lists that
    /// function, which costs nothing but its place.)
    fn named(&self, name: String) -> Option<String> {
        match name.strip_prefix("0x").map(|hex| u64::from_str_radix(hex, 16)) {
            Some(Ok(address)) => self.at.get(&address).cloned(),
            _ => self.names.contains(&name).then_some(name),
        }
    }
}

/// The functions `binary` defines (`nm`); `None` when it has no symbol table.
fn text_symbols(binary: &Path) -> anyhow::Result<Option<Functions>> {
    let output =
        Command::new("nm").arg("--defined-only").arg(binary).output().context("running nm")?;
    Ok(functions(&String::from_utf8_lossy(&output.stdout)))
}

/// The functions of `nm`'s output (`address kind name` lines).
fn functions(nm: &str) -> Option<Functions> {
    let mut found = Functions { names: BTreeSet::new(), at: BTreeMap::new() };
    for line in nm.lines() {
        let mut fields = line.split_whitespace();
        let (Some(address), Some(kind), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T" | "w" | "W") {
            continue;
        }
        if let Ok(address) = u64::from_str_radix(address, 16) {
            found.at.entry(address).or_insert_with(|| name.to_owned());
        }
        found.names.insert(name.to_owned());
    }
    (!found.names.is_empty()).then_some(found)
}

/// The functions a callgrind profile names (`fn=(id) name` where a function is first named,
/// whether it ran or was called).
fn functions_run(profile: &str) -> Vec<String> {
    profile
        .lines()
        .filter_map(|line| line.strip_prefix("fn=").or_else(|| line.strip_prefix("cfn=")))
        .filter_map(|rest| {
            let name = match rest.strip_prefix('(') {
                Some(numbered) => numbered.split_once(") ")?.1,
                None => rest,
            };
            Some(name.trim().to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{functions, functions_run};

    #[test]
    fn a_profile_names_each_function_where_it_first_appears() {
        let profile = "events: Ir\nfn=(1) main\n0 3\ncfn=(2) _ZN4core3fmt5write17h0123456789abcdefE\n\
                       calls=1 0\n0 5\nfn=(2)\n0 7\nfn=(3) 0x00000000002b1680\n";
        assert_eq!(
            functions_run(profile),
            ["main", "_ZN4core3fmt5write17h0123456789abcdefE", "0x00000000002b1680"]
        );
    }

    #[test]
    fn a_function_named_by_its_address_is_listed_by_its_symbol() {
        let nm = "000000000038a5b0 t frame_dummy\n00000000004b7200 t _init\n\
                  00000000004c1d60 d some_data\n0000000000267180 T main\n\
                  0000000000267180 T main_alias\n                 U malloc\n";
        let found = functions(nm).unwrap();
        let named = |name: &str| found.named(name.to_owned());
        assert_eq!(named("0x000000000038a5b0").as_deref(), Some("frame_dummy"));
        assert_eq!(named("0x0000000000267180").as_deref(), Some("main"));
        assert_eq!(named("main_alias").as_deref(), Some("main_alias"));
        // Data, another address, an undefined or unknown name: not a function of the binary.
        for name in ["0x00000000004c1d60", "0x0000000000001050", "some_data", "malloc", "0xzz"] {
            assert_eq!(named(name), None, "{name}");
        }
    }
}
