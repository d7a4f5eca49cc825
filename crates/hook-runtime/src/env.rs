//! The environment a hook reads, captured once so that tests can supply their own.

use std::path::PathBuf;

use hook_engine::layout;
pub use hook_engine::layout::EnvVars;

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
        layout::user_dir(self.xdg_config_home.as_deref(), self.home.as_deref())
    }
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}
