//! `cargo xtask compile-rules [--check]`: the workspace's builtin packs (`rules/*.toml`),
//! linted, tested and compiled together into `target/hookpack/builtin.hpk`.
//! `--check` writes nothing and fails on any error or failing test.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use rules_compiler::{ConfigSettings, SourceFile, Sources, compile, parse_pack, run_tests};

use crate::workspace::{Mode, root};

pub(crate) fn run(mode: Mode) -> anyhow::Result<()> {
    let dir = root().join("rules");
    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();

    let mut packs = Vec::new();
    let mut problems = 0;
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let shown = Path::new("rules").join(file.file_name().context("pack name")?);
        let (pack, diagnostics) = parse_pack(&Arc::new(SourceFile::new(shown, text)), &dir);
        if !diagnostics.is_silent() {
            eprint!("{}", diagnostics.render());
        }
        problems += diagnostics.error_count() + diagnostics.warning_count();
        packs.extend(pack);
    }
    let mut failed = 0;
    for pack in &packs {
        for outcome in run_tests(pack)? {
            if !outcome.passed() {
                failed += 1;
                eprintln!("test {}/{} ... FAILED ({})", outcome.pack, outcome.name, outcome.place);
                for failure in &outcome.failures {
                    eprintln!("    {failure}");
                }
            }
        }
    }
    if problems > 0 || failed > 0 {
        bail!("builtin packs: {problems} diagnostics, {failed} failing tests");
    }
    let rules: Vec<_> = packs.iter().flat_map(|p| &p.rules).collect();
    let tests: usize = packs.iter().map(|p| p.tests.len()).sum();
    let compiled = compile(&rules, &ConfigSettings::default(), &Sources::default())?;
    let summary = format!(
        "{} builtin packs, {} rules, {tests} tests passed; {} bytes compiled",
        packs.len(),
        compiled.rules,
        compiled.bytes.len()
    );
    match mode {
        Mode::Check => println!("{summary}"),
        Mode::Write => {
            let out = root().join("target/hookpack/builtin.hpk");
            std::fs::create_dir_all(out.parent().context("output folder")?)?;
            std::fs::write(&out, &compiled.bytes)?;
            println!("{summary} into {}", out.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo test` runs the builtin packs' lint and their own tests, as
    /// `cargo xtask compile-rules --check` does.
    #[test]
    fn the_builtin_packs_pass_their_lint_and_their_tests() {
        if let Err(err) = run(Mode::Check) {
            panic!("{err:#}");
        }
    }
}
