//! `hookpack init`: a project's (or the user's) hookpack folder, ready to compile: the config
//! with a default set of builtin packs, a starter pack with tests, the JSON Schemas the
//! `#:schema` lines of both point at (so that editors complete and check them), and a
//! `.gitignore` for what hookpack writes and the user keeps to themselves.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use hook_engine::layout;
use hook_runtime::confined::{Confined, ConfinedDir};
use rules_compiler::Layout;

/// The config `init` writes (checked against its schema by `rules-compiler`'s schema tests).
const CONFIG: &str = include_str!("init/hookpack.toml");

/// The starter pack `init` writes (checked against its schema, as the config).
const STARTER: &str = include_str!("init/project.toml");

/// What hookpack writes or the user keeps local: never committed.
pub(crate) const IGNORED: [&str; 4] = ["compiled/", "state/", "local/", "hookpack.local.toml"];

/// The schemas, as this build of hookpack reads packs and configs.
const SCHEMAS: [(&str, &str); 2] = [
    ("config.schema.json", include_str!("../../../schemas/config.schema.json")),
    ("rule-pack.schema.json", include_str!("../../../schemas/rule-pack.schema.json")),
];

/// The folder `init` sets up without `--project` or `--user`: the project of
/// `$CLAUDE_PROJECT_DIR`, else the nearest folder up from here that holds `.claude/hookpack/`,
/// else the nearest one that holds `.git` (a repository's root, where Claude Code's project
/// is), else the working folder.
pub(crate) fn default_project() -> Option<PathBuf> {
    let env = hook_runtime::Env::from_process();
    if let Some(dir) = env.project_dir {
        return Some(dir);
    }
    let cwd = std::env::current_dir().ok()?;
    let up =
        |marker: &str| cwd.ancestors().find(|d| d.join(marker).exists()).map(Path::to_path_buf);
    Some(up(layout::PROJECT_SUBDIR).or_else(|| up(".git")).unwrap_or(cwd))
}

/// Writes a new hookpack folder for the project (or, with `user`, the user's own): refuses,
/// writing nothing, where a config or the starter pack is already there, or the project folder
/// does not exist. Every folder below the project is checked to be a real one, and every file
/// is created or replaced without following a link (a cloned repository may plant them).
///
/// # Errors
///
/// When there is no folder to write to, one is set up already, or a file cannot be written.
pub(crate) fn init(layout: &Layout, user: bool, scope: &str) -> anyhow::Result<bool> {
    let (confined, pack) = if user {
        let dir = layout
            .user
            .clone()
            .context("no user folder: neither XDG_CONFIG_HOME nor HOME is set")?;
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        (Confined::new(&dir, Path::new("")), "user")
    } else {
        let root = layout.project.as_ref().context("no project folder")?;
        if !root.is_dir() {
            bail!("{} is not a folder; nothing written", root.display());
        }
        (Confined::new(root, Path::new(layout::PROJECT_SUBDIR)), "project")
    };
    let dir = confined.path();
    let starter_file = format!("{pack}.toml");
    let config = dir.join(layout::CONFIG_FILE);
    let starter = dir.join(layout::PACKS_DIR).join(&starter_file);
    for existing in [&config, &starter] {
        if std::fs::symlink_metadata(existing).is_ok() {
            bail!(
                "{} exists: hookpack is set up here already; nothing written",
                existing.display()
            );
        }
    }
    let top = confined.dir("").with_context(|| format!("checking {}", dir.display()))?;
    let packs =
        confined.dir(layout::PACKS_DIR).with_context(|| format!("checking {}", dir.display()))?;
    let schemas = confined.dir("schemas").with_context(|| format!("checking {}", dir.display()))?;
    // What the .gitignore lacks, read before anything is written; a problem with it is said,
    // not fatal.
    let ignore = ignore_text(&top);

    write_new(&top, layout::CONFIG_FILE, CONFIG)?;
    write_new(
        &packs,
        &starter_file,
        &STARTER
            .replace("name = \"project\"", &format!("name = \"{pack}\""))
            .replace("project/", &format!("{pack}/")),
    )?;
    // The schemas are this build's: written anew, so that they match the hookpack that reads.
    for (name, schema) in SCHEMAS {
        schemas
            .replace(name, schema.as_bytes(), false)
            .with_context(|| format!("writing {}", dir.join("schemas").join(name).display()))?;
    }
    let added = match ignore {
        Ok(Some((text, added))) => match top.replace(".gitignore", text.as_bytes(), false) {
            Ok(()) => added,
            Err(err) => {
                eprintln!(
                    "warning: {}: {err}; add {} yourself",
                    dir.join(".gitignore").display(),
                    IGNORED.join(", ")
                );
                Vec::new()
            }
        },
        Ok(None) => Vec::new(),
        Err(err) => {
            eprintln!("warning: {err}; add {} to it yourself", IGNORED.join(", "));
            Vec::new()
        }
    };

    println!("hookpack is set up in {}:", dir.display());
    println!("  {}  the builtin packs on: guard, memory", layout::CONFIG_FILE);
    println!("  {}/{starter_file}  a starter pack with its tests", layout::PACKS_DIR);
    println!("  schemas/  what editors complete and check the two files with (#:schema)");
    if !added.is_empty() {
        println!("  .gitignore  {}", added.join(", "));
    }
    println!("\nnext:");
    println!("  hookpack test{scope}      run the packs' tests");
    println!("  hookpack compile{scope}   write the rules the hooks answer from");
    println!(
        "  hookpack install{scope}   wire the hooks the rules need into Claude Code's settings"
    );
    Ok(true)
}

/// Creates file `name` in `dir` with `text`: never over anything there (a link included).
fn write_new(dir: &ConfinedDir, name: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.path().join(name);
    let mut file = dir.create_new(name).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

/// The `.gitignore` of `dir` with the lines of [`IGNORED`] it lacks, and those lines; `None`
/// when it has them all.
pub(crate) fn ignore_text(
    dir: &ConfinedDir,
) -> anyhow::Result<Option<(String, Vec<&'static str>)>> {
    let path = dir.path().join(".gitignore");
    let existing = match std::fs::symlink_metadata(&path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        Ok(meta) if !meta.is_file() => bail!("{} is not a regular file", path.display()),
        Ok(_) => {
            let bytes = hook_engine::bounded::read_regular(&path, 1 << 20)
                .with_context(|| format!("reading {}", path.display()))?;
            String::from_utf8(bytes).with_context(|| format!("reading {}", path.display()))?
        }
    };
    let has = |line: &str| existing.lines().any(|l| l.trim() == line);
    let missing: Vec<&str> = IGNORED.into_iter().filter(|line| !has(line)).collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let mut text = existing.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if existing.is_empty() {
        text.push_str(
            "# Written by hookpack: what it keeps per machine, and your local settings.\n",
        );
    }
    for line in &missing {
        text.push_str(line);
        text.push('\n');
    }
    Ok(Some((text, missing)))
}
