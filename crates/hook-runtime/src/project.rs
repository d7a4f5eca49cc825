//! Where hookpack's files are for this run: the project, or the user's configuration alone.

use std::path::{Path, PathBuf};

use crate::Env;

pub use hook_engine::layout::PROJECT_SUBDIR;
use hook_engine::layout::{self, PACKS_DIR};

/// The hookpack installation a hook run answers from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installation {
    /// A project with `.claude/hookpack/`: the root and that folder.
    Project {
        /// The project's root.
        root: PathBuf,
        /// `<root>/.claude/hookpack`.
        dir: PathBuf,
    },
    /// No project uses hookpack, but the user has packs of their own.
    User {
        /// The user's hookpack configuration folder.
        dir: PathBuf,
    },
}

impl Installation {
    /// Finds the installation for a payload whose `cwd` is `cwd`: the project is
    /// `$CLAUDE_PROJECT_DIR`, else the nearest ancestor of `cwd` holding `.claude/hookpack/`;
    /// without one, the user's configuration folder if it has packs. `None` means hookpack is
    /// not in use here and the hook must stay silent.
    pub fn discover(env: &Env, cwd: &Path) -> Option<Installation> {
        let project = match &env.project_dir {
            Some(root) => Some(root.clone()).filter(|root| root.join(PROJECT_SUBDIR).is_dir()),
            None => {
                cwd.ancestors().find(|dir| dir.join(PROJECT_SUBDIR).is_dir()).map(Path::to_path_buf)
            }
        };
        if let Some(root) = project {
            let dir = root.join(PROJECT_SUBDIR);
            return Some(Installation::Project { root, dir });
        }
        let user = env.user_config_dir()?;
        user.join(PACKS_DIR).is_dir().then_some(Installation::User { dir: user })
    }

    /// The installation's hookpack folder: `<project>/.claude/hookpack` or the user's.
    pub fn dir(&self) -> &Path {
        match self {
            Installation::Project { dir, .. } | Installation::User { dir } => dir,
        }
    }

    /// The project's root, or the user's folder.
    pub fn root(&self) -> &Path {
        match self {
            Installation::Project { root, .. } => root,
            Installation::User { dir } => dir,
        }
    }

    /// Where the compiled artifact is: `$HOOKPACK_ARTIFACT`, else `compiled/rules.hpk` in the
    /// installation's folder.
    pub fn artifact_path(&self, env: &Env) -> PathBuf {
        if let Some(path) = &env.artifact {
            return path.clone();
        }
        match self {
            Installation::Project { dir, .. } | Installation::User { dir } => {
                layout::artifact_in(dir)
            }
        }
    }
}
