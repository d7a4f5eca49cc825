//! A hostile repository (reference §5): nothing in a project's packs or configs makes compile read
//! a file outside the pack's scope folder into an artifact, read without bound or hang; the
//! environment's unrelated `HOOKPACK_*` variables do not break it; the automata of one artifact
//! fit a budget.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rules_compiler::{ConfigSettings, Layout, Loaded, load};

/// A fresh folder for one test, holding a project and a user folder.
fn folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("project/.claude/hookpack/packs")).unwrap();
    std::fs::create_dir_all(dir.join("user/packs")).unwrap();
    dir
}

fn layout(dir: &Path) -> Layout {
    Layout { project: Some(dir.join("project")), user: Some(dir.join("user")) }
}

fn packs(dir: &Path) -> PathBuf {
    dir.join("project/.claude/hookpack/packs")
}

/// A pack named `name` whose one rule reads `context_file` (on line 7, column 16).
fn context_pack(name: &str, context_file: &str) -> String {
    format!(
        "[pack]\nname = \"{name}\"\n\n[[rule]]\nid = \"r\"\non = \"SessionStart\"\ncontext_file = \"{context_file}\"\n"
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Runs `f` on its own thread and fails, instead of hanging forever, when it takes longer than
/// a minute (the blocked thread is left behind; the test binary's exit ends it).
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    match receive.recv_timeout(Duration::from_mins(1)) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Loads the project of `dir` under a guard.
fn load_guarded(dir: &Path, env: &[(&str, &str)]) -> Loaded {
    let layout = layout(dir);
    let env: Vec<(String, String)> =
        env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    guarded("load", move || load(&layout, &env))
}

/// The one diagnostic of `loaded` that mentions `needle`, rendered.
fn diagnostic(loaded: &Loaded, needle: &str) -> String {
    let rendered = loaded.diagnostics.render();
    let found: Vec<String> = loaded
        .diagnostics
        .sorted()
        .into_iter()
        .map(ToString::to_string)
        .filter(|d| d.contains(needle))
        .collect();
    assert_eq!(found.len(), 1, "one diagnostic mentioning {needle:?} in:\n{rendered}");
    found.into_iter().next().unwrap()
}

/// Asserts that `loaded` has an error at line 7, column 16 of pack `name` saying `message`.
fn assert_context_error(loaded: &Loaded, name: &str, message: &str) {
    let rendered = loaded.diagnostics.render();
    let place = format!("packs/{name}.toml:7:16: error: ");
    let found = diagnostic(loaded, &place);
    assert!(found.contains(message), "{message:?} in:\n{rendered}");
    assert!(loaded.packs.iter().all(|(_, p)| p.name != name), "pack `{name}` was kept");
}

#[test]
fn context_file_with_an_absolute_path_outside_is_refused() {
    let dir = folder("context-absolute");
    write(&packs(&dir).join("abs.toml"), &context_pack("abs", "/etc/passwd"));
    let loaded = load_guarded(&dir, &[]);
    let root = dir.join("project/.claude/hookpack");
    assert_context_error(
        &loaded,
        "abs",
        &format!(
            "context_file `/etc/passwd` is outside `{}`, the folder it must stay in",
            root.display()
        ),
    );
}

#[test]
fn context_file_escaping_with_dot_dot_is_refused() {
    let dir = folder("context-escape");
    write(&dir.join("project/secret.md"), "a secret of the repository's parent");
    write(&packs(&dir).join("escape.toml"), &context_pack("escape", "../../../secret.md"));
    // Within the scope folder but outside `packs/` is fine.
    write(&dir.join("project/.claude/hookpack/context/shared.md"), "shared text\n");
    write(&packs(&dir).join("shared.toml"), &context_pack("shared", "../context/shared.md"));
    // The user scope's folder is `~/.config/hookpack/`: its packs cannot leave it either.
    write(&dir.join("user/packs/mine.toml"), &context_pack("mine", "../../project/secret.md"));
    let loaded = load_guarded(&dir, &[]);
    assert_context_error(&loaded, "escape", "context_file `../../../secret.md` is outside `");
    assert_context_error(&loaded, "mine", "context_file `../../project/secret.md` is outside `");
    let user = diagnostic(&loaded, "mine.toml");
    assert!(user.contains(&format!("{}`", dir.join("user").display())), "{user}");
    let shared = loaded.packs.iter().find(|(_, p)| p.name == "shared").unwrap();
    assert_eq!(shared.1.rules[0].then.context.as_deref(), Some("shared text"));
}

#[test]
fn context_file_symlinks_must_stay_in_the_folder() {
    let dir = folder("context-symlink");
    let key = dir.join("home/.ssh/id_rsa");
    write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    std::os::unix::fs::symlink(&key, packs(&dir).join("key.md")).unwrap();
    write(&packs(&dir).join("leak.toml"), &context_pack("leak", "key.md"));
    // A symlink to a file inside the folder is read.
    write(&dir.join("project/.claude/hookpack/texts/rules.md"), "the rules\n");
    std::os::unix::fs::symlink("../texts/rules.md", packs(&dir).join("alias.md")).unwrap();
    write(&packs(&dir).join("alias.toml"), &context_pack("alias", "alias.md"));
    // A symlinked folder leading out is refused too.
    std::os::unix::fs::symlink(dir.join("home/.ssh"), packs(&dir).join("ssh")).unwrap();
    write(&packs(&dir).join("through.toml"), &context_pack("through", "ssh/id_rsa"));

    let loaded = load_guarded(&dir, &[]);
    assert_context_error(
        &loaded,
        "leak",
        &format!("context_file `key.md` is a symbolic link to `{}`, outside `", key.display()),
    );
    assert_context_error(
        &loaded,
        "through",
        &format!("context_file `ssh/id_rsa` leads through a symbolic link to `{}`", key.display()),
    );
    assert!(!loaded.diagnostics.render().contains("OPENSSH"));
    let alias = loaded.packs.iter().find(|(_, p)| p.name == "alias").unwrap();
    assert_eq!(alias.1.rules[0].then.context.as_deref(), Some("the rules"));
}

#[test]
fn context_file_in_proc_is_refused() {
    let dir = folder("context-proc");
    write(&packs(&dir).join("environ.toml"), &context_pack("environ", "/proc/self/environ"));
    let loaded = load_guarded(&dir, &[]);
    assert_context_error(&loaded, "environ", "context_file `/proc/self/environ` is outside `");
}

#[test]
fn context_file_dev_zero_is_refused() {
    let dir = folder("context-dev-zero");
    write(&packs(&dir).join("zero.toml"), &context_pack("zero", "/dev/zero"));
    // The same device through a symlink inside the folder.
    std::os::unix::fs::symlink("/dev/zero", packs(&dir).join("zero.md")).unwrap();
    write(&packs(&dir).join("linked.toml"), &context_pack("linked", "zero.md"));
    let loaded = load_guarded(&dir, &[]);
    assert_context_error(&loaded, "zero", "context_file `/dev/zero` is outside `");
    assert_context_error(
        &loaded,
        "linked",
        "context_file `zero.md` is a symbolic link to `/dev/zero`, outside `",
    );
}

#[test]
fn context_file_fifo_is_refused_without_hanging() {
    let dir = folder("context-fifo");
    mkfifo(&packs(&dir).join("pipe.md"));
    write(&packs(&dir).join("pipe.toml"), &context_pack("pipe", "pipe.md"));
    let loaded = load_guarded(&dir, &[]);
    assert_context_error(&loaded, "pipe", "context_file `pipe.md` is not a regular file");
}

#[test]
fn context_file_larger_than_1_mib_is_refused() {
    let dir = folder("context-large");
    write(&packs(&dir).join("big.md"), &"x".repeat(2 << 20));
    write(&packs(&dir).join("big.toml"), &context_pack("big", "big.md"));
    // 1 MiB exactly is fine.
    write(&packs(&dir).join("fits.md"), &"y".repeat(1 << 20));
    write(&packs(&dir).join("fits.toml"), &context_pack("fits", "fits.md"));
    let loaded = load_guarded(&dir, &[]);
    assert_context_error(&loaded, "big", "context_file `big.md` is larger than 1 MiB");
    assert!(loaded.packs.iter().any(|(_, p)| p.name == "fits"), "{}", loaded.diagnostics.render());
}

#[test]
fn pack_entries_that_are_not_regular_files_give_a_diagnostic() {
    let dir = folder("pack-special");
    mkfifo(&packs(&dir).join("evil.toml"));
    std::os::unix::fs::symlink("/dev/zero", packs(&dir).join("zero.toml")).unwrap();
    std::fs::create_dir_all(dir.join("project/.claude/hookpack/local")).unwrap();
    mkfifo(&dir.join("project/.claude/hookpack/local/pipe.toml"));
    let loaded = load_guarded(&dir, &[]);
    let evil = diagnostic(&loaded, "evil.toml");
    assert!(evil.starts_with("error: ") && evil.contains("is not a regular file"), "{evil}");
    let zero = diagnostic(&loaded, "zero.toml");
    assert!(zero.contains("is a symbolic link to `/dev/zero`"), "{zero}");
    let pipe = diagnostic(&loaded, "pipe.toml");
    assert!(pipe.contains("is not a regular file"), "{pipe}");
}

#[test]
fn config_files_that_are_not_regular_files_give_a_diagnostic() {
    let dir = folder("config-special");
    mkfifo(&dir.join("project/.claude/hookpack/hookpack.toml"));
    std::os::unix::fs::symlink(
        "/dev/zero",
        dir.join("project/.claude/hookpack/hookpack.local.toml"),
    )
    .unwrap();
    let loaded = load_guarded(&dir, &[]);
    let config = diagnostic(&loaded, "hookpack.toml");
    assert!(config.starts_with("error: ") && config.contains("is not a regular file"), "{config}");
    let local = diagnostic(&loaded, "hookpack.local.toml");
    assert!(local.contains("is a symbolic link to `/dev/zero`"), "{local}");
}

#[test]
fn project_files_symlinked_out_of_the_project_folder_are_not_read() {
    let dir = folder("pack-symlink");
    // TOML-shaped secrets would otherwise be echoed line by line in the diagnostics.
    let credentials = dir.join("home/.aws/credentials");
    write(&credentials, "[default]\naws_secret_access_key = \"hunter2\"\n");
    std::os::unix::fs::symlink(&credentials, packs(&dir).join("creds.toml")).unwrap();
    std::os::unix::fs::symlink(&credentials, dir.join("project/.claude/hookpack/hookpack.toml"))
        .unwrap();
    let loaded = load_guarded(&dir, &[]);
    let rendered = loaded.diagnostics.render();
    assert!(!rendered.contains("hunter2"), "{rendered}");
    let pack = diagnostic(&loaded, "creds.toml");
    assert!(pack.contains(&format!("is a symbolic link to `{}`", credentials.display())), "{pack}");
    let config = diagnostic(&loaded, "hookpack.toml");
    assert!(config.contains("is a symbolic link to"), "{config}");
}

#[test]
fn pack_files_larger_than_the_source_cap_are_refused() {
    let dir = folder("pack-large");
    let mut text = context_pack("huge", "x.md");
    writeln!(text, "# {}", "x".repeat(5 << 20)).unwrap();
    write(&packs(&dir).join("huge.toml"), &text);
    let loaded = load_guarded(&dir, &[]);
    let huge = diagnostic(&loaded, "huge.toml");
    assert!(huge.contains("is larger than 4 MiB"), "{huge}");
}

#[test]
fn unrelated_hookpack_variables_do_not_break_compile() {
    let dir = folder("env-unrelated");
    let loaded = load_guarded(
        &dir,
        &[
            ("HOOKPACK_FOO", "bar"),
            ("HOOKPACK_ARTIFACT", "/elsewhere/rules.hpk"),
            ("HOOKPACK_WINDOW_TOKENS", "300000"),
        ],
    );
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    assert_eq!(loaded.config.settings().window_tokens, 300_000);
    let foo = diagnostic(&loaded, "HOOKPACK_FOO");
    assert!(foo.starts_with("warning: ") && foo.contains("is not a hookpack setting"), "{foo}");
    assert!(!loaded.diagnostics.render().contains("HOOKPACK_ARTIFACT"));
    assert!(!loaded.diagnostics.render().contains(".toml"), "{}", loaded.diagnostics.render());
}

#[test]
fn misspelled_hookpack_variables_are_named_with_the_right_one() {
    let dir = folder("env-typo");
    let loaded = load_guarded(&dir, &[("HOOKPACK_WINDOW_TOKEN", "300000")]);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let typo = diagnostic(&loaded, "HOOKPACK_WINDOW_TOKEN");
    assert!(typo.starts_with("warning: "), "{typo}");
    assert!(typo.contains("did you mean `HOOKPACK_WINDOW_TOKENS`?"), "{typo}");
}

#[test]
fn bad_values_of_hookpack_variables_name_the_variable() {
    let dir = folder("env-bad-value");
    let loaded = load_guarded(
        &dir,
        &[
            ("HOOKPACK_WINDOW_TOKENS", "abc"),
            ("HOOKPACK_BRACKETS__FRESH", "300"),
            ("HOOKPACK_BRACKETS", "5"),
        ],
    );
    let rendered = loaded.diagnostics.render();
    assert!(!rendered.contains(".toml"), "{rendered}");
    let tokens = diagnostic(&loaded, "HOOKPACK_WINDOW_TOKENS=abc");
    assert!(tokens.starts_with("error: ") && tokens.contains("an integer from 1000"), "{tokens}");
    let fresh = diagnostic(&loaded, "HOOKPACK_BRACKETS__FRESH=300");
    assert!(fresh.starts_with("error: ") && fresh.contains("from 0 to 100"), "{fresh}");
    let brackets = diagnostic(&loaded, "HOOKPACK_BRACKETS=5");
    assert!(brackets.contains("HOOKPACK_BRACKETS__FRESH"), "{brackets}");
}

/// A regex whose DFA is large (about 400 KiB, under the cap of one regex) yet quick to build:
/// the 13th letter from the end is an `a` (2¹³ states), varied by `salt` so that no two rules
/// share one automaton.
fn heavy_regex(salt: usize) -> String {
    format!("x{salt}y[ab]*a[ab]{{12}}z")
}

#[test]
fn the_automata_of_one_artifact_fit_a_budget() {
    let dir = folder("dfa-budget");
    let mut text = "[pack]\nname = \"heavy\"\n".to_owned();
    for i in 0..12 {
        write!(
            text,
            "\n[[rule]]\nid = \"r{i}\"\non = \"UserPromptSubmit\"\nregex = ['{}']\ncontext = \"c\"\n",
            heavy_regex(i)
        )
        .unwrap();
    }
    write(&packs(&dir).join("heavy.toml"), &text);
    let loaded = load_guarded(&dir, &[]);
    let budget = diagnostic(&loaded, "automata");
    assert!(budget.contains("packs/heavy.toml:"), "{budget}");
    assert!(budget.contains(": error: "), "{budget}");
    assert!(budget.contains("over the budget of"), "{budget}");
    assert!(budget.contains("`heavy/r0` ") && budget.contains(" KiB ("), "{budget}");
    assert!(budget.contains("and 7 more rules"), "{budget}");
    assert_eq!(budget.matches("packs/heavy.toml:").count(), 6, "its place and the 5 largest");
    // Compiling them anyway (as `cargo xtask compile-rules` does, without `load`) fails too.
    let rules: Vec<_> = loaded.packs.iter().flat_map(|(_, p)| &p.rules).collect();
    let err =
        rules_compiler::compile(&rules, &ConfigSettings::default(), &loaded.sources).unwrap_err();
    assert!(
        matches!(&err, rules_compiler::Error::AutomataOverBudget { contributions, .. }
            if contributions.len() == 12 && contributions[0].1.starts_with("heavy/r")),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(err.contains("over the budget of 4 MiB") && err.contains("`heavy/r"), "{err}");

    // A few of them fit.
    let few: String = text.split("\n[[rule]]").take(4).collect::<Vec<_>>().join("\n[[rule]]");
    write(&packs(&dir).join("heavy.toml"), &few);
    let loaded = load_guarded(&dir, &[]);
    assert!(loaded.diagnostics.is_empty(), "{}", loaded.diagnostics.render());
    let rules = loaded.rules();
    rules_compiler::compile(&rules, &ConfigSettings::default(), &loaded.sources).unwrap();
}
