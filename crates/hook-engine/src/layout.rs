//! Where hookpack's files are (reference §1 and §5), and the environment variables it reads:
//! the names the hooks, the compiler and the `hookpack` command agree on, in one place.
//!
//! ```text
//! <project>/.claude/hookpack/        PROJECT_SUBDIR (or the user's folder, USER_SUBDIR)
//!   hookpack.toml                    CONFIG_FILE
//!   hookpack.local.toml              LOCAL_CONFIG_FILE (personal, not committed)
//!   packs/*.toml                     PACKS_DIR
//!   local/*.toml                     LOCAL_PACKS_DIR (personal, not committed)
//!   compiled/rules.hpk               COMPILED_DIR, ARTIFACT_FILE (and its stamp, `.ok`)
//!   compiled/fail-closed.txt         FAIL_CLOSED_FILE
//!   state/hookpack.db                STATE_DIR, DATABASE_FILE
//! ```

use std::path::{Path, PathBuf};

/// The folder under a project's root that holds hookpack's files.
pub const PROJECT_SUBDIR: &str = ".claude/hookpack";
/// The user's hookpack folder, under `$XDG_CONFIG_HOME` (or `$HOME/.config`).
pub const USER_SUBDIR: &str = "hookpack";
/// A folder's config, committed with the project.
pub const CONFIG_FILE: &str = "hookpack.toml";
/// A project's personal config, not committed.
pub const LOCAL_CONFIG_FILE: &str = "hookpack.local.toml";
/// A folder's packs.
pub const PACKS_DIR: &str = "packs";
/// A project's personal packs, not committed.
pub const LOCAL_PACKS_DIR: &str = "local";
/// What `hookpack compile` writes.
pub const COMPILED_DIR: &str = "compiled";
/// The compiled rules, in [`COMPILED_DIR`].
pub const ARTIFACT_FILE: &str = "rules.hpk";
/// The ids of the fail-closed rules of the last compile, in [`COMPILED_DIR`]: what a hook
/// that cannot read the artifact still enforces.
pub const FAIL_CLOSED_FILE: &str = "fail-closed.txt";
/// The session state, the memories and what hooks record.
pub const STATE_DIR: &str = "state";
/// The database in [`STATE_DIR`].
pub const DATABASE_FILE: &str = "hookpack.db";

/// The compiled artifact's path in the hookpack folder `dir`.
pub fn artifact_in(dir: &Path) -> PathBuf {
    dir.join(COMPILED_DIR).join(ARTIFACT_FILE)
}

/// The user's hookpack folder: `$XDG_CONFIG_HOME/hookpack`, else `$HOME/.config/hookpack`.
pub fn user_dir(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match xdg_config_home {
        Some(config) => config.to_path_buf(),
        None => home?.join(".config"),
    };
    Some(base.join(USER_SUBDIR))
}

/// The names of the environment variables hookpack reads.
#[derive(Debug)]
pub struct EnvVars;

impl EnvVars {
    /// The project's root, set by Claude Code for every hook.
    pub const CLAUDE_PROJECT_DIR: &'static str = "CLAUDE_PROJECT_DIR";
    /// Overrides the compiled artifact's path.
    pub const HOOKPACK_ARTIFACT: &'static str = "HOOKPACK_ARTIFACT";
    /// The user's configuration root (default `~/.config`).
    pub const XDG_CONFIG_HOME: &'static str = "XDG_CONFIG_HOME";
    /// The user's home.
    pub const HOME: &'static str = "HOME";
    /// Overrides the context window's size in tokens.
    pub const HOOKPACK_WINDOW_TOKENS: &'static str = "HOOKPACK_WINDOW_TOKENS";
    /// What begins the variables that set the config (`HOOKPACK_DISABLE=a/x`, …), but for
    /// [`EnvVars::HOOKPACK_ARTIFACT`].
    pub const CONFIG_PREFIX: &'static str = "HOOKPACK_";
}
