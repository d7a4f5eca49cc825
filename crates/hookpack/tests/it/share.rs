//! `hookpack memory push | pull | sync`: two clones share memories through a bare remote, each
//! editing concurrently, and nothing is lost.

use std::path::{Path, PathBuf};
use std::process::Command;

use hook_model::EventKind;
use hook_runtime::ExitStatus;
use serde_json::json;

use crate::{hook, hookpack, text};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fresh(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-share").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A memory said in `clone`'s session as a marked prompt.
fn say(clone: &Path, prompt: &str) {
    let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "transcript_path": "/t", "cwd": clone, "prompt": prompt});
    let (status, stdout, stderr) = hook(EventKind::UserPromptSubmit, clone, &payload);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(stdout.contains("hookpack remembered"), "{stdout}");
}

fn memories(clone: &Path) -> String {
    text(&hookpack(clone, &["memory", "list"]).stdout)
}

fn run(clone: &Path, args: &[&str]) -> String {
    let out = hookpack(clone, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn two_clones_share_memories_through_a_bare_remote() {
    let root = fresh("two-clones");
    let bare = root.join("team.git");
    let (a, b) = (root.join("a"), root.join("b"));
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "--quiet"]);
    std::fs::create_dir_all(a.join(".claude/hookpack")).unwrap();
    git(&a, &["init", "--quiet"]);
    std::fs::write(a.join(".claude/hookpack/hookpack.toml"), "builtin = [\"memory\"]\n").unwrap();
    std::fs::write(a.join(".gitignore"), ".claude/hookpack/state/\n.claude/hookpack/compiled/\n")
        .unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "start"]);
    git(&a, &["remote", "add", "origin", bare.to_str().unwrap()]);
    git(&a, &["push", "--quiet", "origin", "HEAD:refs/heads/main"]);
    git(&root, &["clone", "--quiet", bare.to_str().unwrap(), "b"]);
    for clone in [&a, &b] {
        run(clone, &["compile"]);
    }

    // Before anyone pushed: nothing to pull, and said so.
    assert!(run(&b, &["memory", "pull"]).contains("(it has none yet): 0 new"));

    say(&a, "[decision] tokens are signed with RS256");
    say(&a, "[blocker] staging has no TLS certificate");
    say(&b, "[decision] deploys never happen on Fridays");
    say(&b, "[learning] cargo nextest is faster here");
    // A pushes; B, which has not pulled, pushes its own: the notes are merged, not replaced.
    assert!(run(&a, &["memory", "push"]).contains("pushed 1 shared memories"));
    assert!(run(&b, &["memory", "push"]).contains("pushed 3 shared memories"));
    assert!(run(&a, &["memory", "pull"]).contains("3 shared memories from origin: 2 new"));
    let listed = memories(&a);
    for kept in ["RS256", "Fridays", "nextest", "TLS"] {
        assert!(listed.contains(kept), "{kept}: {listed}");
    }
    // Blockers are not shared by default.
    assert!(run(&b, &["memory", "pull"]).contains("1 new"));
    assert!(!memories(&b).contains("TLS"), "{}", memories(&b));

    // Both add and push at the same time: whichever loses the race merges and pushes again.
    say(&a, "[decision] the API is versioned in its path");
    say(&b, "[pattern] errors are wrapped with context at each layer");
    let pushes: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|clone| std::thread::spawn(move || run(&clone, &["memory", "sync"])))
        .collect();
    for push in pushes {
        push.join().unwrap();
    }
    for clone in [&a, &b] {
        run(clone, &["memory", "pull"]);
        let listed = memories(clone);
        for kept in ["RS256", "Fridays", "nextest", "versioned in its path", "wrapped with context"]
        {
            assert!(listed.contains(kept), "{}: {kept}: {listed}", clone.display());
        }
    }
    // The note is one memory a line, each once.
    let note = git(&a, &["notes", "--ref", "refs/notes/hookpack", "list"]);
    assert_eq!(note.lines().count(), 1, "{note}");
    let blob = note.split_whitespace().nth(1).unwrap();
    let lines = git(&a, &["notes", "--ref", "refs/notes/hookpack", "show", blob]);
    assert_eq!(lines.lines().count(), 5, "{lines}");
}

#[test]
fn sharing_refuses_what_it_cannot_do() {
    let dir = fresh("refusals");
    std::fs::create_dir_all(dir.join(".claude/hookpack")).unwrap();
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), "builtin = [\"memory\"]\n").unwrap();
    // Not a git repository (the test's folder is inside this one's: git looks no higher).
    let ceiling = dir.parent().unwrap();
    let out =
        crate::hookpack_with(&dir, &["memory", "push"], &[("GIT_CEILING_DIRECTORIES", ceiling)]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("not in a git repository"), "{}", text(&out.stderr));
    git(&dir, &["init", "--quiet"]);
    // No such remote; an unknown namespace; a remote that looks like an option.
    let out = hookpack(&dir, &["memory", "push"]);
    assert!(
        text(&out.stderr).contains("cannot reach the git remote `origin`"),
        "{}",
        text(&out.stderr)
    );
    let out = hookpack(&dir, &["memory", "pull", "--namespace", "secrets"]);
    assert!(
        text(&out.stderr).contains("`secrets` is not a memory namespace"),
        "{}",
        text(&out.stderr)
    );
    let out = hookpack(&dir, &["memory", "pull", "--remote=--upload-pack=evil"]);
    assert!(text(&out.stderr).contains("is no git remote"), "{}", text(&out.stderr));
}

/// A session that moves to another branch is told at its next prompt (the branch the session
/// saw is kept with its record), with the issue `[branch] issues` finds in the new one.
#[test]
fn a_change_of_branch_is_said_with_its_issue() {
    let dir = fresh("branch-change");
    std::fs::create_dir_all(dir.join(".claude/hookpack")).unwrap();
    let config = "builtin = [\"memory\"]\n\n[branch]\nissues = [\"feature/{number}-*\"]\n";
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), config).unwrap();
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["commit", "--quiet", "--allow-empty", "-m", "start"]);
    run(&dir, &["compile"]);
    let prompt = || {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": dir, "prompt": "carry on"});
        let (status, stdout, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
        stdout
    };
    assert!(!prompt().contains("branch changed"));
    assert!(!prompt().contains("branch changed"), "still on main");
    git(&dir, &["checkout", "--quiet", "-b", "feature/77-login"]);
    let said = prompt();
    assert!(
        said.contains(
            "changed from `main` to `feature/77-login` since the last prompt (issue: 77)"
        ),
        "{said}"
    );
    assert!(!prompt().contains("branch changed"), "said once");
    // Another session, newer, on main; back on the feature branch, a new session's index
    // names the feature branch's session first.
    git(&dir, &["checkout", "--quiet", "main"]);
    let other = json!({"hook_event_name": "UserPromptSubmit", "session_id": "t",
        "transcript_path": "/t", "cwd": dir, "prompt": "tidy the docs"});
    assert_eq!(hook(EventKind::UserPromptSubmit, &dir, &other).0, ExitStatus::Proceed);
    git(&dir, &["checkout", "--quiet", "feature/77-login"]);
    let start = json!({"hook_event_name": "SessionStart", "session_id": "u",
        "transcript_path": "/t", "cwd": dir, "source": "startup"});
    let (_, said, _) = hook(EventKind::SessionStart, &dir, &start);
    let feature = said.find("session:s on `feature/77-login` \\\"carry on\\\"");
    let main = said.find("session:t on `main` \\\"tidy the docs\\\"");
    assert!(feature.is_some() && main.is_some() && feature < main, "{said}");
    // A template that is not one is refused.
    let wrong = "builtin = [\"memory\"]\n\n[branch]\nissues = [\"feature/*\"]\n";
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), wrong).unwrap();
    let out = hookpack(&dir, &["lint"]);
    assert!(
        text(&out.stderr).contains("must hold exactly one `{number}` or `{key}`"),
        "{}",
        text(&out.stderr)
    );
}

/// A project whose pack blocks prompts holding an AWS key, in a git repository with a bare
/// remote `origin`; `name` is its folder.
fn guarded(name: &str) -> (PathBuf, PathBuf) {
    let root = fresh(name);
    let (dir, bare) = (root.join("p"), root.join("team.git"));
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "--quiet"]);
    std::fs::create_dir_all(dir.join(".claude/hookpack/packs")).unwrap();
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["remote", "add", "origin", bare.to_str().unwrap()]);
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), "builtin = [\"memory\"]\n").unwrap();
    let pack = "[pack]\nname = \"keys\"\n\n[[rule]]\nid = \"aws\"\non = \"UserPromptSubmit\"\n\
                regex = 'AKIA[0-9A-Z]{16}'\ndecision = \"block\"\nreason = \"an AWS key\"\n";
    std::fs::write(dir.join(".claude/hookpack/packs/keys.toml"), pack).unwrap();
    run(&dir, &["compile"]);
    (dir, bare)
}

/// Stores `texts` in `namespace` as a store from before the rules screened memories, or a
/// pull, would hold them: straight into the database.
fn store(dir: &Path, namespace: &str, texts: &[&str]) {
    store_as(dir, ("s", "memory/markers"), namespace, texts);
}

/// [`store`], as session and rule `by`.
fn store_as(dir: &Path, by: (&str, &str), namespace: &str, texts: &[&str]) {
    let installation = hook_runtime::Installation::Project {
        root: dir.to_owned(),
        dir: dir.join(".claude/hookpack"),
    };
    let mut store = hook_runtime::state::Store::open(&installation).unwrap();
    for text in texts {
        let captured = hook_engine::memory::Captured {
            rule: by.1.to_owned(),
            namespace: namespace.to_owned(),
            text: (*text).to_owned(),
            confidence: 1.0,
            note: None,
        };
        store.remember(by.0, &captured).unwrap();
    }
}

const KEY: &str = "AKIAIOSFODNN7EXAMPLE";

/// A memory a blocking `UserPromptSubmit` rule of the project would block is not exported;
/// private parts are not either.
#[test]
fn export_withholds_what_a_rule_blocks_and_what_is_private() {
    let (dir, _) = guarded("export-screened");
    store(
        &dir,
        "patterns",
        &[
            &format!("deploys use the key {KEY} from the vault"),
            "tokens are signed with <private>hunter2</private> RS256",
            "always use pnpm",
        ],
    );
    let out = run(&dir, &["memory", "export"]);
    let claude = std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap();
    assert!(claude.contains("always use pnpm"), "{claude}");
    assert!(claude.contains("tokens are signed with RS256"), "{claude}");
    assert!(!claude.contains(KEY) && !claude.contains("hunter2"), "{claude}");
    assert!(out.contains("1 withheld"), "{out}");
    // A rule with `export = true` writes the same at the start of a session.
    std::fs::remove_file(dir.join("CLAUDE.md")).unwrap();
    let pack = "[pack]\nname = \"team\"\n\n[[rule]]\nid = \"export\"\non = \"SessionStart\"\nexport = true\n";
    std::fs::write(dir.join(".claude/hookpack/packs/team.toml"), pack).unwrap();
    let compiled = run(&dir, &["compile"]);
    // Compiling forgets the stored memory the rules block; one stored since (by a hookpack
    // before this one) is withheld by the hook.
    assert!(compiled.contains("forgot 1 memory that a rule now blocks"), "{compiled}");
    store(&dir, "patterns", &[&format!("deploys use the key {KEY} from the vault")]);
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s",
        "transcript_path": "/t", "cwd": dir, "source": "startup"});
    let (status, said, _) = hook(EventKind::SessionStart, &dir, &start);
    assert_eq!(status, ExitStatus::Proceed);
    assert!(said.contains("1 withheld"), "{said}");
    let claude = std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap();
    assert!(claude.contains("always use pnpm"), "{claude}");
    assert!(!claude.contains(KEY) && !claude.contains("hunter2"), "{claude}");
}

/// Neither is pushed; and a pulled memory a rule blocks is not stored.
#[test]
fn sharing_withholds_what_a_rule_blocks_and_what_is_private() {
    let (dir, bare) = guarded("share-screened");
    store(
        &dir,
        "decisions",
        &[
            &format!("the CI key is {KEY}"),
            "sign with <private>hunter2</private> RS256",
            "deploys never happen on Fridays",
        ],
    );
    let out = run(&dir, &["memory", "push"]);
    assert!(out.contains("1 withheld"), "{out}");
    let note = git(&bare, &["notes", "--ref", "refs/notes/hookpack", "list"]);
    let blob = note.split_whitespace().nth(1).unwrap();
    let lines = git(&bare, &["notes", "--ref", "refs/notes/hookpack", "show", blob]);
    assert!(lines.contains("Fridays") && lines.contains("RS256"), "{lines}");
    assert!(!lines.contains(KEY) && !lines.contains("hunter2"), "{lines}");

    // Another clone pushes a key and a private part: the pull keeps neither.
    let other = bare.parent().unwrap().join("other");
    git(bare.parent().unwrap(), &["clone", "--quiet", bare.to_str().unwrap(), "other"]);
    git(&other, &["fetch", "--quiet", "origin", "refs/notes/hookpack:refs/notes/hookpack"]);
    let empty = git(&other, &["hash-object", "-w", "/dev/null"]);
    let mut text = lines.clone();
    text.push_str(
        &json!({"id": "1", "namespace": "decisions", "text": format!("rotate {KEY} monthly")})
            .to_string(),
    );
    text.push('\n');
    text.push_str(
        "{\"id\":\"2\",\"namespace\":\"learnings\",\"text\":\"the <private>pin 1234</private> door code\"}\n",
    );
    let note_file = other.join("note.txt");
    std::fs::write(&note_file, text).unwrap();
    git(
        &other,
        &[
            "notes",
            "--ref",
            "refs/notes/hookpack",
            "add",
            "-f",
            "-F",
            note_file.to_str().unwrap(),
            empty.trim(),
        ],
    );
    git(&other, &["push", "--quiet", "origin", "refs/notes/hookpack:refs/notes/hookpack"]);
    let out = run(&dir, &["memory", "pull"]);
    assert!(out.contains("1 withheld"), "{out}");
    let listed = memories(&dir);
    assert!(listed.contains("door code"), "{listed}");
    assert!(!listed.contains("rotate") && !listed.contains("1234"), "{listed}");
}

/// Writes `lines` as the shared note of a clone of `bare` and pushes it, as a hostile or busy
/// remote would hold it.
fn remote_note(bare: &Path, text: &[u8]) {
    let root = bare.parent().unwrap();
    let other = root.join(format!("writer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&other);
    git(root, &["init", "--quiet", other.to_str().unwrap()]);
    let empty = git(&other, &["hash-object", "-w", "/dev/null"]);
    let note_file = root.join("note.txt");
    std::fs::write(&note_file, text).unwrap();
    let args = ["notes", "--ref", "refs/notes/hookpack", "add", "-f", "-F"];
    let mut args = args.to_vec();
    args.extend([note_file.to_str().unwrap(), empty.trim()]);
    git(&other, &args);
    git(
        &other,
        &[
            "push",
            "--quiet",
            "--force",
            bare.to_str().unwrap(),
            "refs/notes/hookpack:refs/notes/hookpack",
        ],
    );
    std::fs::remove_dir_all(&other).unwrap();
}

/// A pull never stores more than `[memory] max` in all: the store's own memories stay, the
/// pulled ones take the room left, and what does not fit is dropped and counted; memories a
/// hook captures past `max` evict pulled ones before the store's own.
#[test]
fn a_pull_keeps_within_memory_max_and_own_memories_first() {
    let (dir, bare) = guarded("pull-max");
    let config = "builtin = [\"memory\"]\n\n[memory]\nmax = 6\n";
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), config).unwrap();
    run(&dir, &["compile"]);
    for n in 0..3 {
        say(&dir, &format!("[decision] our own decision number {n}"));
    }
    let mut note = String::new();
    for n in 0..10 {
        let text = format!("a pulled decision number {n}");
        note.push_str(
            &json!({"id": n.to_string(), "namespace": "decisions", "text": text}).to_string(),
        );
        note.push('\n');
    }
    remote_note(&bare, note.as_bytes());
    let out = run(&dir, &["memory", "pull"]);
    assert!(out.contains("3 new") && out.contains("7 dropped"), "{out}");
    let listed = memories(&dir);
    assert_eq!(listed.matches("pulled decision").count(), 3, "{listed}");
    assert_eq!(listed.matches("our own decision").count(), 3, "{listed}");
    // Captured past `max`: a pulled memory goes, not an own one.
    for n in 3..6 {
        say(&dir, &format!("[decision] our own decision number {n}"));
    }
    let listed = memories(&dir);
    assert_eq!(listed.matches("our own decision").count(), 6, "{listed}");
    assert_eq!(listed.matches("pulled decision").count(), 0, "{listed}");
    // A pull into a full store keeps nothing more.
    let out = run(&dir, &["memory", "pull"]);
    assert!(out.contains("0 new") && out.contains("10 dropped"), "{out}");
    // A store a pull took past `max` before: the next pull evicts pulled memories, not own.
    let texts: Vec<String> = (0..10).map(|n| format!("an old pulled decision {n}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    store_as(&dir, ("git:origin", "git-notes"), "decisions", &texts);
    let out = run(&dir, &["memory", "pull"]);
    assert!(out.contains("10 evicted"), "{out}");
    let listed = memories(&dir);
    assert_eq!(listed.matches("our own decision").count(), 6, "{listed}");
    assert!(!listed.contains("pulled decision"), "{listed}");
}

/// A hostile remote (a note over 16 MiB, a notes ref that names a blob) is said to be one, its
/// note is not merged, and the local notes stay as they were: once the remote is sound again,
/// pulls and pushes work without repairing anything by hand.
#[test]
fn a_hostile_remote_is_refused_and_breaks_nothing() {
    let (dir, bare) = guarded("hostile-remote");
    let good =
        json!({"id": "1", "namespace": "decisions", "text": "deploys never happen on Fridays"});
    remote_note(&bare, format!("{good}\n").as_bytes());
    assert!(run(&dir, &["memory", "pull"]).contains("1 new"));
    let local = || git(&dir, &["rev-parse", "refs/notes/hookpack"]);
    let before = local();

    // A note over 16 MiB.
    let mut huge = format!("{good}\n");
    for n in 0..17 {
        // Lines that differ: merging keeps each once.
        huge.push_str(&n.to_string());
        huge.push_str(&"x".repeat(1 << 20));
        huge.push('\n');
    }
    remote_note(&bare, huge.as_bytes());
    for command in ["pull", "push"] {
        let out = hookpack(&dir, &["memory", command]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(text(&out.stderr).contains("16 MiB"), "{command}: {}", text(&out.stderr));
        assert_eq!(local(), before, "{command}");
    }

    // A notes ref that names a blob.
    let blob_file = bare.parent().unwrap().join("blob.txt");
    std::fs::write(&blob_file, "not a commit\n").unwrap();
    let blob = git(&bare, &["hash-object", "-w", blob_file.to_str().unwrap()]);
    git(&bare, &["update-ref", "refs/notes/hookpack", blob.trim()]);
    let out = hookpack(&dir, &["memory", "pull"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a commit"), "{}", text(&out.stderr));
    assert_eq!(local(), before);

    // Sound again: pull and push as before.
    git(&bare, &["update-ref", "-d", "refs/notes/hookpack"]);
    let other = json!({"id": "2", "namespace": "decisions", "text": "the API is versioned"});
    remote_note(&bare, format!("{good}\n{other}\n").as_bytes());
    assert!(run(&dir, &["memory", "pull"]).contains("1 new"));
    say(&dir, "[decision] tokens are signed with RS256");
    assert!(run(&dir, &["memory", "push"]).contains("(3 of them this store's)"));
}

/// A push with no memory to share, and none on the remote, says so and succeeds.
#[test]
fn a_push_with_nothing_to_push_says_so() {
    let (dir, bare) = guarded("nothing-to-push");
    let out = run(&dir, &["memory", "push"]);
    assert!(out.contains("nothing to push"), "{out}");
    // Only memories a rule withholds: nothing to push either.
    store(&dir, "decisions", &[&format!("the CI key is {KEY}")]);
    let out = run(&dir, &["memory", "push"]);
    assert!(out.contains("nothing to push") && out.contains("1 withheld"), "{out}");
    let refs = git(&bare, &["for-each-ref"]);
    assert!(!refs.contains("refs/notes/hookpack"), "{refs}");
}

/// What a repository's own `.git/config` names (hooks, an fsmonitor, an `ext::` remote, an
/// upload and a receive program, an ssh command, an askpass program) is never run by the git
/// processes hookpack starts: hookpack needs git's plumbing, not the repository's programs.
#[test]
fn git_runs_none_of_the_programs_a_repository_config_names() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, _) = guarded("planted-config");
    let root = dir.parent().unwrap().to_owned();
    let marker = root.join("ran");
    let hooks = root.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let planted = |path: &Path, then: &str| {
        let script = format!("#!/bin/sh\necho \"$0\" >> '{}'\n{then}\n", marker.display());
        std::fs::write(path, script).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    for hook in ["reference-transaction", "pre-push", "post-checkout", "post-index-change"] {
        planted(&hooks.join(hook), "exit 0");
    }
    let script = root.join("planted");
    planted(&script, "exit 0");
    let upload = root.join("upload");
    planted(&upload, "exec git-upload-pack \"$@\"");
    let receive = root.join("receive");
    planted(&receive, "exec git-receive-pack \"$@\"");
    let config = format!(
        "[core]\n\thooksPath = {hooks}\n\tfsmonitor = {script}\n\tsshCommand = {script}\n\
         \taskPass = {script}\n[protocol \"ext\"]\n\tallow = always\n\
         [remote \"origin\"]\n\tuploadpack = {upload}\n\treceivepack = {receive}\n\
         [remote \"evil\"]\n\turl = ext::sh -c touch% {marker}\n\
         [remote \"viassh\"]\n\turl = ssh://hookpack.invalid/team.git\n\
         [credential]\n\thelper = !{script}\n",
        hooks = hooks.display(),
        script = script.display(),
        upload = upload.display(),
        receive = receive.display(),
        marker = marker.display(),
    );
    let mut file = std::fs::OpenOptions::new().append(true).open(dir.join(".git/config")).unwrap();
    std::io::Write::write_all(&mut file, config.as_bytes()).unwrap();
    drop(file);

    say(&dir, "[decision] deploys never happen on Fridays");
    run(&dir, &["memory", "sync"]);
    for remote in ["evil", "viassh"] {
        let out = hookpack(&dir, &["memory", "pull", "--remote", remote]);
        assert_ne!(out.status.code(), Some(0), "{remote}");
    }
    let _ = hookpack(&dir, &["doctor"]);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(!marker.exists(), "planted programs ran: {ran}");
}
