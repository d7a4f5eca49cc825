//! The environment a hook reads, captured once so that tests can supply their own.

use std::path::PathBuf;

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
}

/// The values of [`EnvVars`] for one run.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `$CLAUDE_PROJECT_DIR`.
    pub project_dir: Option<PathBuf>,
    /// `$HOOKPACK_ARTIFACT`.
    pub artifact: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$HOOKPACK_WINDOW_TOKENS`.
    pub window_tokens: Option<u32>,
    /// Answer without writing anything: no session state saved, no notice or failure recorded
    /// (`hookpack explain`). Never set by the environment.
    pub dry_run: bool,
}

impl Env {
    /// Reads the process environment. Empty values count as unset.
    pub fn from_process() -> Self {
        Env {
            project_dir: var(EnvVars::CLAUDE_PROJECT_DIR),
            artifact: var(EnvVars::HOOKPACK_ARTIFACT),
            xdg_config_home: var(EnvVars::XDG_CONFIG_HOME),
            home: var(EnvVars::HOME),
            window_tokens: std::env::var(EnvVars::HOOKPACK_WINDOW_TOKENS)
                .ok()
                .and_then(|v| v.trim().parse().ok()),
            dry_run: false,
        }
    }

    /// The user's hookpack configuration folder: `$XDG_CONFIG_HOME/hookpack`, else
    /// `$HOME/.config/hookpack`.
    pub fn user_config_dir(&self) -> Option<PathBuf> {
        let base =
            self.xdg_config_home.clone().or_else(|| Some(self.home.as_ref()?.join(".config")))?;
        Some(base.join("hookpack"))
    }
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}
