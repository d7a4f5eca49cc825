//! `hookpack memory export`: the conventions and anti-patterns kept in memory, written where
//! Claude Code reads them without hookpack (`hook_runtime::export` says where and how): run by
//! the user, or by a hook whose rule says `export = true`. Private parts are left out, and so is a
//! memory a rule of the project blocks as a prompt (`hook_engine::screen`).

use anyhow::Context;
use hook_engine::Engine;
use hook_engine::artifact::Artifact;
use hook_engine::screen::Screen;
use hook_runtime::export;
use hook_runtime::state::{Store, database_path};
use rules_compiler::Layout;

use crate::commands::{installation, rules_in_memory};
use crate::install::diff;

pub(crate) use hook_runtime::export::DEFAULT_NAMESPACES;

pub(crate) fn export(
    layout: &Layout,
    namespaces: &[String],
    dry_run: bool,
) -> anyhow::Result<bool> {
    let root = layout
        .project
        .clone()
        .context("`memory export` writes into a project: run it in one, or give --project")?;
    let installation = installation(layout).context("no project folder")?;
    if !database_path(installation.dir()).is_file() {
        println!("no memories yet: nothing to export");
        return Ok(true);
    }
    let rules = rules_in_memory(layout)?;
    let engine = Engine::new(Artifact::parse(rules.as_slice())?)?;
    let screen = Screen::new(&engine, Some(&root))?;
    let store = Store::open(&installation)?;
    let (memories, withheld) = export::screened(export::memories(&store, namespaces)?, &screen)?;
    let plan = export::plan(&root, &memories)?;
    for name in &plan.left_alone {
        eprintln!("hookpack: {name} is not one `memory export` wrote: left as it is");
    }
    let written = if dry_run {
        for change in plan.changed() {
            print!("{}", diff(&change.path, change.before.as_deref(), change.after.as_deref()));
        }
        plan.changed().count()
    } else {
        export::write(&root, &plan).with_context(|| format!("writing into {}", root.display()))?
    };
    let verb = if dry_run { "would change" } else { "changed" };
    println!(
        "{} conventions in CLAUDE.md, {} folders in .claude/rules/: {verb} {written} files{}",
        plan.conventions,
        plan.folders,
        withheld.said()
    );
    Ok(true)
}
