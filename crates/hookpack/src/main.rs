//! `hookpack`: compile, lint, test and explain rule packs (reference §4).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool reports on its streams"
)]

mod commands;
mod doctor;
mod explain;
mod import;
mod init;
mod install;
mod jsonedit;
mod wiring;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: hookpack <command> [--project DIR | --user]
       hookpack --version

commands:
  init                set up hookpack here: hookpack.toml (builtin packs guard and memory),
                      packs/project.toml (a starter pack with tests), the schemas editors
                      use, .gitignore; never overwrites a config or pack
  compile [--check]   lint, run the pack tests, and write the compiled rules
                      (--check: write nothing, fail when the compiled rules are stale)
  lint                report every problem in every pack
  test                run the [[test]] cases of every pack
  explain <payload.json | ->
                      which rules fire for a payload, which nearly did and why not,
                      the bracket, and the exact stdout and exit code of the hook
  install [--local] [--dry-run] [--hooks DIR]
                      wire the hooks the compiled rules need into .claude/settings.json
                      (--local: .claude/settings.local.json; --user: ~/.claude/settings.json),
                      matchers narrowed to the tools the rules name, nothing else touched
                      (--dry-run: print the diff, write nothing)
  uninstall [--local] [--dry-run]
                      take them out again (the file restored byte for byte when nothing
                      else changed since)
  doctor [--format json] [--fix]
                      what is wrong with the packs, the compiled rules, the hooks wired in
                      Claude Code's settings and the binaries they run, PATH, .gitignore, the
                      session state and the fail-closed guards, the failures recorded, and
                      the fix (exit 1: problems; --fix: compile, rewire the hooks and add the
                      .gitignore lines where that is what it takes)
  import synapse|claude-rules|hookify <dir> [--dry-run]
                      turn a SYNAPSE folder (.synapse), Claude Code's rule files (.claude/rules)
                      or hookify's rules (hookify.*.local.md) into packs with tests, written
                      to packs/; says what it could not translate; then runs the packs' tests
  memory list [--namespace NS] [--limit N]
                      the stored memories, newest first
  memory search <words…> [--limit N]
                      the memories sharing the most (and rarest) of these words, best first
  memory forget <id…>
                      remove memories by id

--project DIR defaults to $CLAUDE_PROJECT_DIR, else the nearest ancestor of the current
directory holding .claude/hookpack/, else the current directory. --user works on the user's
own packs and compiled rules ($XDG_CONFIG_HOME/hookpack), which hooks answer from where no
project uses hookpack.
";

/// What the command line asked for.
#[derive(Debug)]
#[allow(clippy::struct_excessive_bools, reason = "one flag per command-line switch")]
struct Args {
    command: String,
    check: bool,
    project: Option<PathBuf>,
    payload: Option<String>,
    /// `memory`: the subcommand and its words.
    words: Vec<String>,
    namespace: Option<String>,
    limit: Option<u32>,
    /// `doctor --format json`.
    json: bool,
    /// `doctor --fix`.
    fix: bool,
    /// `--user`: the user's own packs and compiled rules, without a project.
    user: bool,
    /// `install`/`uninstall --local`.
    local: bool,
    /// `install`/`uninstall --dry-run`.
    dry_run: bool,
    /// `install --hooks DIR`.
    hooks: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        command: String::new(),
        check: false,
        project: None,
        payload: None,
        words: Vec::new(),
        namespace: None,
        limit: None,
        json: false,
        fix: false,
        user: false,
        local: false,
        dry_run: false,
        hooks: None,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--check" => parsed.check = true,
            "--user" => parsed.user = true,
            "--project" => {
                parsed.project = Some(rest.next().ok_or("--project needs a folder")?.into());
            }
            _ if arg.starts_with("--project=") => {
                parsed.project = Some(arg.trim_start_matches("--project=").into());
            }
            "-h" | "--help" | "help" if parsed.command.is_empty() => parsed.command = "help".into(),
            "-V" | "--version" if parsed.command.is_empty() => parsed.command = "version".into(),
            "--namespace" if parsed.command == "memory" => {
                parsed.namespace = Some(rest.next().ok_or("--namespace needs a name")?.clone());
            }
            "--limit" if parsed.command == "memory" => {
                let n = rest.next().ok_or("--limit needs a number")?;
                parsed.limit = Some(n.parse().map_err(|_| format!("--limit: `{n}` is no number"))?);
            }
            "--local" if is_install(&parsed.command) => parsed.local = true,
            "--dry-run" if is_install(&parsed.command) || parsed.command == "import" => {
                parsed.dry_run = true;
            }
            "--hooks" if parsed.command == "install" => {
                parsed.hooks = Some(rest.next().ok_or("--hooks needs a folder")?.into());
            }
            "--fix" if parsed.command == "doctor" => parsed.fix = true,
            "--format" if parsed.command == "doctor" => match rest.next().map(String::as_str) {
                Some("json") => parsed.json = true,
                Some("text") => parsed.json = false,
                other => {
                    return Err(format!(
                        "--format takes `text` or `json`, not `{}`",
                        other.unwrap_or("")
                    ));
                }
            },
            "-" if parsed.command == "explain" && parsed.payload.is_none() => {
                parsed.payload = Some(arg.clone());
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option `{arg}`")),
            _ if parsed.command.is_empty() => parsed.command.clone_from(arg),
            _ if parsed.command == "explain" && parsed.payload.is_none() => {
                parsed.payload = Some(arg.clone());
            }
            _ if parsed.command == "memory" || parsed.command == "import" => {
                parsed.words.push(arg.clone());
            }
            _ => return Err(format!("unexpected argument `{arg}`")),
        }
    }
    if parsed.user && parsed.project.is_some() {
        return Err("--user and --project exclude each other".into());
    }
    if parsed.local && parsed.user {
        return Err("--local and --user exclude each other".into());
    }
    if parsed.check && parsed.command != "compile" {
        return Err("--check goes with `compile`".into());
    }
    if parsed.command == "explain" && parsed.payload.is_none() {
        return Err("`explain` needs a payload file, or `-` for stdin".into());
    }
    Ok(parsed)
}

fn is_install(command: &str) -> bool {
    command == "install" || command == "uninstall"
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&args) {
        Ok(args) => args,
        Err(message) => {
            eprint!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match args.command.as_str() {
        "compile" => {
            commands::compile(&commands::layout(args.project.as_deref(), args.user), args.check)
        }
        "lint" => Ok(commands::lint(&commands::layout(args.project.as_deref(), args.user))),
        "init" => {
            let project =
                args.project.clone().or_else(|| (!args.user).then(init::default_project).flatten());
            let scope = match (&args.project, args.user) {
                (_, true) => " --user".to_owned(),
                (Some(dir), false) => format!(" --project {}", dir.display()),
                (None, false) => String::new(),
            };
            init::init(&commands::layout(project.as_deref(), args.user), args.user, &scope)
        }
        "install" | "uninstall" => {
            let layout = commands::layout(args.project.as_deref(), args.user);
            let scope = match (args.user, args.local) {
                (true, _) => install::Scope::User,
                (false, true) => install::Scope::Local,
                (false, false) => install::Scope::Project,
            };
            if args.command == "install" {
                install::install(&layout, scope, args.dry_run, args.hooks.as_deref())
            } else {
                install::uninstall(&layout, scope, args.dry_run)
            }
        }
        "import" => match args.words.as_slice() {
            [kind, dir] => import::import(
                &commands::layout(args.project.as_deref(), args.user),
                kind,
                std::path::Path::new(dir),
                args.dry_run,
            ),
            _ => {
                eprint!("error: `import` takes what to import and its folder\n\n{USAGE}");
                return ExitCode::from(2);
            }
        },
        "doctor" => doctor::doctor(
            &commands::layout(args.project.as_deref(), args.user),
            args.json,
            args.fix,
        ),
        "test" => commands::test(&commands::layout(args.project.as_deref(), args.user)),
        "explain" => explain::explain(
            &commands::layout(args.project.as_deref(), args.user),
            args.payload.as_deref().unwrap_or("-"),
        ),
        "memory" => commands::memory(
            &commands::layout(args.project.as_deref(), args.user),
            &args.words,
            args.namespace.as_deref(),
            args.limit,
        ),
        "help" => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        "version" => {
            println!("{}", hook_runtime::version());
            return ExitCode::SUCCESS;
        }
        "" => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
        other => {
            eprint!("error: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
