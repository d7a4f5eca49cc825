//! The plugin's `hooks/run` script, which Claude Code runs in the session's folder: it finds
//! the installed hooks in `~/.local/bin` or the absolute folders of `PATH`, never in a folder
//! a relative or empty `PATH` entry names (the repository's own).

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// A script at `path` that leaves `marker` behind when run.
fn planted(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_plugin_runs_no_hook_found_through_a_relative_path_entry() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin/hooks/run");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-plugin-path");
    let _ = std::fs::remove_dir_all(&base);
    // The session's folder: a repository with the hook's name in it and in `bin/`.
    let repo = base.join("repo");
    let planted_marker = base.join("planted-ran");
    planted(&repo.join("hookpack-stop"), &planted_marker);
    planted(&repo.join("bin/hookpack-stop"), &planted_marker);
    let installed = base.join("installed");
    let installed_marker = base.join("installed-ran");
    planted(&installed.join("hookpack-stop"), &installed_marker);
    for path in [
        ":/usr/bin:/bin".to_owned(),
        ".:/usr/bin:/bin".to_owned(),
        "bin:/usr/bin:/bin".to_owned(),
        "/usr/bin::/bin".to_owned(),
        format!("bin:.::{}:/usr/bin:/bin", installed.display()),
    ] {
        let status = Command::new("/bin/sh")
            .arg(&run)
            .arg("stop")
            .current_dir(&repo)
            .env_clear()
            .env("PATH", &path)
            .stdin(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{path}");
        assert!(!planted_marker.exists(), "PATH={path} ran the repository's hookpack-stop");
    }
    // The installed one, in an absolute folder, runs.
    assert!(installed_marker.exists());
}
