//! The commands. Each returns whether it found the project healthy (`Ok(false)`: problems
//! found, exit 1).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use hook_engine::artifact::{AlignedBytes, Artifact};
use rules_compiler::{Layout, Loaded, compile as compile_rules, load, run_tests};

/// The project and user folders for this run.
pub(crate) fn layout(project: Option<&Path>) -> Layout {
    let project = project.map(Path::to_path_buf).or_else(|| {
        let env =
            std::env::var_os("CLAUDE_PROJECT_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
        env.or_else(|| {
            let cwd = std::env::current_dir().ok()?;
            let found = cwd
                .ancestors()
                .find(|d| d.join(".claude/hookpack").is_dir())
                .map(Path::to_path_buf);
            Some(found.unwrap_or(cwd))
        })
    });
    let user = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".config")))
        .map(|d| d.join("hookpack"));
    Layout { project, user }
}

fn environment() -> Vec<(String, String)> {
    std::env::vars().filter(|(k, _)| k.starts_with("HOOKPACK_")).collect()
}

/// Loads every pack and prints the diagnostics; `None` when there are errors.
fn checked(layout: &Layout) -> Option<Loaded> {
    let loaded = load(layout, &environment());
    if !loaded.diagnostics.is_empty() {
        eprint!("{}", loaded.diagnostics.render());
    }
    (!loaded.diagnostics.has_errors()).then_some(loaded)
}

/// `hookpack lint`.
pub(crate) fn lint(layout: &Layout) -> bool {
    let Some(loaded) = checked(layout) else { return false };
    let rules = loaded.rules().len();
    println!("{} packs, {rules} rules: no errors", loaded.packs.len());
    true
}

/// Runs every pack's tests and prints them; whether all passed.
fn run_all_tests(loaded: &Loaded) -> anyhow::Result<bool> {
    let (mut passed, mut failed) = (0, 0);
    for (_, pack) in &loaded.packs {
        for outcome in run_tests(pack).map_err(anyhow::Error::msg)? {
            if outcome.passed() {
                passed += 1;
                println!("test {}/{} ... ok", outcome.pack, outcome.name);
            } else {
                failed += 1;
                println!("test {}/{} ... FAILED ({})", outcome.pack, outcome.name, outcome.place);
                for failure in &outcome.failures {
                    println!("    {failure}");
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}

/// `hookpack test`.
pub(crate) fn test(layout: &Layout) -> anyhow::Result<bool> {
    let Some(loaded) = checked(layout) else { return Ok(false) };
    run_all_tests(&loaded)
}

/// `hookpack compile [--check]`.
pub(crate) fn compile(layout: &Layout, check: bool) -> anyhow::Result<bool> {
    let started = Instant::now();
    let Some(loaded) = checked(layout) else { return Ok(false) };
    if !run_all_tests(&loaded)? {
        eprintln!("error: pack tests failed; the compiled rules were not written");
        return Ok(false);
    }
    let rules = loaded.rules();
    let compiled = compile_rules(&rules, &loaded.config.settings(), &loaded.sources)
        .map_err(anyhow::Error::msg)?;
    let path = std::env::var_os("HOOKPACK_ARTIFACT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| layout.artifact_path())
        .context("no project and no user folder to write the compiled rules to")?;

    if check {
        let current = std::fs::read(&path).ok();
        if current.as_deref() == Some(compiled.bytes.as_slice()) {
            println!("up to date: {}", path.display());
            return Ok(true);
        }
        println!("stale: {} (run `hookpack compile`)", path.display());
        return Ok(false);
    }

    // The bytes must load before they replace what the hooks use.
    let aligned = AlignedBytes::new(&compiled.bytes);
    Artifact::parse(aligned.as_slice())
        .and_then(|a| a.verify())
        .context("the compiled artifact does not load")?;
    write_atomically(&path, &compiled.bytes)?;
    let _ = std::fs::remove_file(hook_runtime::stamp_path(&path));
    println!(
        "compiled {} rules ({} keywords, {} globs, {} regexes) from {} packs into {} ({} bytes) in {} ms",
        compiled.rules,
        compiled.keywords,
        compiled.globs,
        compiled.regexes,
        loaded.packs.len(),
        path.display(),
        compiled.bytes.len(),
        started.elapsed().as_millis()
    );
    Ok(true)
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it over `path`:
/// a hook never sees a half-written file, and a hook that has the old one mapped keeps it.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().context("artifact path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let staged = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("rules"),
        std::process::id()
    ));
    let mut file =
        std::fs::File::create(&staged).with_context(|| format!("creating {}", staged.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", staged.display()))?;
    std::fs::rename(&staged, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
