//! `hookpack`: compile, lint, test and explain rule packs (reference §4).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool reports on its streams"
)]

mod commands;
mod doctor;
mod explain;
mod export;
mod import;
mod init;
mod install;
mod jsonedit;
mod new_rule;
mod receipt_key;
mod share;
mod wiring;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};

/// Compile, lint, test and explain the rule packs Claude Code's hooks answer from; wire the
/// hooks into Claude Code's settings; check the whole setup.
#[derive(Debug, Parser)]
#[command(name = "hookpack")]
#[command(
    after_help = "--project DIR defaults to $CLAUDE_PROJECT_DIR, else the nearest ancestor of the current directory holding .claude/hookpack/, else the current directory. --user works on the user's own packs and compiled rules ($XDG_CONFIG_HOME/hookpack), which hooks answer from where no project uses hookpack."
)]
struct Cli {
    #[command(flatten)]
    scope: Scope,
    /// Say less: only problems and results.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say more: every passing test too.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

/// Which packs and compiled rules a command works on.
#[derive(Debug, Args)]
struct Scope {
    /// The project (the folder holding .claude/hookpack).
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "user")]
    project: Option<PathBuf>,
    /// The user's own packs and compiled rules, without a project.
    #[arg(long, global = true)]
    user: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Set up hookpack here: hookpack.toml (builtin packs guard and memory), a starter pack with
    /// tests, the schemas editors use, .gitignore; never overwrites a config or pack.
    Init,
    /// Lint, run the pack tests, and write the compiled rules.
    Compile {
        /// Write nothing; fail when the compiled rules are stale.
        #[arg(long)]
        check: bool,
    },
    /// Report every problem in every pack.
    Lint,
    /// Run the [[test]] cases of every pack.
    Test,
    /// Which rules fire for a payload, which nearly did and why not, the bracket, and the
    /// exact stdout and exit code of the hook. The payload is a JSON file (`-`: stdin), whose
    /// missing common fields are filled in, or is made from the options:
    /// `hookpack explain --command "rm -rf ~"`, `--prompt "…"`, `--path src/api/x.ts`.
    #[command(group(clap::ArgGroup::new("what").required(true).multiple(true)
        .args(["payload", "event", "command", "prompt", "path"])))]
    Explain {
        /// The payload: a JSON file, or `-` for stdin.
        #[arg(value_name = "PAYLOAD", conflicts_with_all = ["event", "tool", "command", "prompt", "path"])]
        payload: Option<String>,
        /// The event (by default, before a tool call runs for --command or --path, a prompt's
        /// submission for --prompt).
        #[arg(long, value_name = "EVENT")]
        event: Option<String>,
        /// The tool (default: Bash with --command, Write with --path).
        #[arg(long, value_name = "TOOL")]
        tool: Option<String>,
        /// The shell command of the tool call.
        #[arg(long, value_name = "COMMAND", allow_hyphen_values = true)]
        command: Option<String>,
        /// The prompt.
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        prompt: Option<String>,
        /// The file path of the tool call.
        #[arg(long, value_name = "PATH")]
        path: Option<String>,
    },
    /// Wire the hooks the compiled rules need into Claude Code's settings (.claude/settings.json;
    /// --local: .claude/settings.local.json; --user: ~/.claude/settings.json), matchers narrowed
    /// to the tools the rules name, nothing else touched.
    Install {
        #[command(flatten)]
        target: Target,
        /// The folder of the hookpack-<event> binaries (default: beside this hookpack, else on
        /// PATH).
        #[arg(long, value_name = "DIR")]
        hooks: Option<PathBuf>,
    },
    /// Take hookpack's hooks out of Claude Code's settings (the file restored byte for byte when
    /// nothing else changed since `install`).
    Uninstall {
        #[command(flatten)]
        target: Target,
    },
    /// What is wrong with the packs, the compiled rules, the hooks wired and the binaries they
    /// run, PATH, .gitignore, the session state, the fail-closed guards, the failures recorded,
    /// and the fix (exit 1: problems).
    Doctor {
        /// How to print the report.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Compile, rewire the hooks and add the .gitignore lines where that is what it takes.
        #[arg(long)]
        fix: bool,
    },
    /// Turn a SYNAPSE folder, Claude Code's rule files or hookify's rules into packs with
    /// tests, written to packs/; says what could not be translated; then runs the packs' tests.
    Import {
        /// What the folder holds.
        #[arg(value_enum)]
        kind: ImportKind,
        /// The folder: .synapse, .claude/rules, or the folder of hookify.*.local.md.
        dir: PathBuf,
        /// Print the packs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Draft a rule and its tests (a case it fires on, a near miss it must not), check both as
    /// `lint` and `test` do, and append them to packs/PACK.toml (created if need be).
    New {
        #[command(subcommand)]
        what: Box<NewCommand>,
    },
    /// The memory store.
    Memory {
        #[command(subcommand)]
        command: MemoryCommand,
    },
    /// A completion script for SHELL, on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Where `install` and `uninstall` write.
#[derive(Debug, Args)]
struct Target {
    /// .claude/settings.local.json: this user, this project.
    #[arg(long, conflicts_with = "user")]
    local: bool,
    /// Print the diff; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ImportKind {
    Synapse,
    ClaudeRules,
    Hookify,
}

#[derive(Debug, Subcommand)]
enum NewCommand {
    /// A rule: `hookpack new rule project/no-force-push --on PreToolUse --tool Bash --program
    /// git --subcommand push --flag --force --deny "…"`.
    Rule(Box<new_rule::Draft>),
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// The stored memories, newest first.
    List {
        /// Only this namespace's.
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
        /// At most this many (default 50).
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
    },
    /// The memories sharing the most (and rarest) of these words, best first.
    Search {
        #[arg(required = true, value_name = "WORD")]
        words: Vec<String>,
        /// At most this many (default 10).
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
    },
    /// One memory in full: its text, namespace, date, the session that stored it and the rule
    /// that captured it; or, as `session:<id>`, what a session did and kept.
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Remove memories by id.
    Forget {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
    },
    /// Write the conventions kept in memory where Claude Code reads them: CLAUDE.md between
    /// `<!-- hookpack:start -->` and `<!-- hookpack:end -->` (broken markers repaired, nothing
    /// outside them touched), and those naming a folder in .claude/rules/hookpack-<folder>.md.
    Export {
        /// The namespaces exported (repeat for more; default: patterns).
        #[arg(long = "namespace", value_name = "NS")]
        namespaces: Vec<String>,
        /// Print the diff; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Share memories with the team: merge the remote's git note of shared memories
    /// (`refs/notes/hookpack`) with this store's and push it.
    Push(ShareArgs),
    /// Fetch the remote's git note of shared memories, merge it, and store the memories it
    /// has that this store lacks.
    Pull(ShareArgs),
    /// Pull, then push.
    Sync(ShareArgs),
    /// Remove the memories past `[memory] max` and `max_age_days` at once, oldest first (a hook
    /// that stores a memory removes a few of them each time).
    Prune {
        /// Keep at most this many (default: `[memory] max`; 0: no limit).
        #[arg(long, value_name = "N")]
        max: Option<u32>,
        /// Remove those older than this many days (default: `[memory] max_age_days`; 0: none).
        #[arg(long, value_name = "DAYS")]
        max_age_days: Option<u32>,
        /// Say what would go; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// What `memory push | pull | sync` share, and with whom.
#[derive(Debug, clap::Args)]
struct ShareArgs {
    /// The git remote (default: origin).
    #[arg(long, value_name = "NAME", default_value = "origin")]
    remote: String,
    /// The namespaces shared (repeat for more; default: `[memory] share`, else decisions,
    /// learnings and patterns).
    #[arg(long = "namespace", value_name = "NS")]
    namespaces: Vec<String>,
}

fn main() -> ExitCode {
    quiet_panics();
    // `--version` says the version of the hooks' format as every hook binary does.
    let version = hook_runtime::version();
    let version: &'static str =
        Box::leak(version.strip_prefix("hookpack ").unwrap_or(&version).into());
    let matches = Cli::command().version(version).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    refuse_conflicts(&cli);
    commands::set_verbosity(if cli.quiet {
        commands::Verbosity::Quiet
    } else if cli.verbose {
        commands::Verbosity::Verbose
    } else {
        commands::Verbosity::Normal
    });
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// Runs the command `cli` names: whether it found no problem.
fn run(cli: Cli) -> anyhow::Result<bool> {
    let Scope { project, user } = &cli.scope;
    let layout = || commands::layout(project.as_deref(), *user);
    match cli.command {
        Command::Compile { check } => commands::compile(&layout(), check),
        Command::Lint => Ok(commands::lint(&layout())),
        Command::Test => commands::test(&layout()),
        Command::Init => {
            let project = project.clone().or_else(|| (!user).then(init::default_project).flatten());
            let scope = match (project.as_ref().filter(|_| cli.scope.project.is_some()), user) {
                (_, true) => " --user".to_owned(),
                (Some(dir), false) => format!(" --project {}", dir.display()),
                (None, false) => String::new(),
            };
            init::init(&commands::layout(project.as_deref(), *user), *user, &scope)
        }
        Command::Install { target, hooks } => install::install(
            &layout(),
            scope_of(*user, target.local),
            target.dry_run,
            hooks.as_deref(),
        ),
        Command::Uninstall { target } => {
            install::uninstall(&layout(), scope_of(*user, target.local), target.dry_run)
        }
        Command::Import { kind, dir, dry_run } => {
            let kind = match kind {
                ImportKind::Synapse => "synapse",
                ImportKind::ClaudeRules => "claude-rules",
                ImportKind::Hookify => "hookify",
            };
            import::import(&layout(), kind, Path::new(&dir), dry_run)
        }
        Command::Doctor { format, fix } => {
            doctor::doctor(&layout(), matches!(format, Format::Json), fix)
        }
        Command::Explain { payload, event, tool, command, prompt, path } => {
            let source = match payload {
                Some(file) => explain::Source::File(file),
                None => explain::Source::Options(explain::Options {
                    event,
                    tool,
                    command,
                    prompt,
                    path,
                }),
            };
            explain::explain(&layout(), &source)
        }
        Command::New { what } => {
            let NewCommand::Rule(draft) = *what;
            new_rule::new_rule(&layout(), &draft)
        }
        Command::Memory { command } => {
            let memory = |words: Vec<String>, namespace: Option<String>, limit| {
                commands::memory(&layout(), &words, namespace.as_deref(), limit)
            };
            let with = |first: &str, rest: Vec<String>| {
                std::iter::once(first.to_owned()).chain(rest).collect::<Vec<_>>()
            };
            match command {
                MemoryCommand::List { namespace, limit } => {
                    memory(vec!["list".to_owned()], namespace, limit)
                }
                MemoryCommand::Search { words, limit } => {
                    memory(with("search", words), None, limit)
                }
                MemoryCommand::Forget { ids } => memory(with("forget", ids), None, None),
                MemoryCommand::Show { id } => memory(with("show", vec![id]), None, None),
                MemoryCommand::Export { namespaces, dry_run } => {
                    let namespaces = if namespaces.is_empty() {
                        export::DEFAULT_NAMESPACES.map(str::to_owned).to_vec()
                    } else {
                        namespaces
                    };
                    export::export(&layout(), &namespaces, dry_run)
                }
                MemoryCommand::Push(args) => {
                    share::share(&layout(), share::Direction::Push, &args.remote, &args.namespaces)
                }
                MemoryCommand::Pull(args) => {
                    share::share(&layout(), share::Direction::Pull, &args.remote, &args.namespaces)
                }
                MemoryCommand::Sync(args) => {
                    share::share(&layout(), share::Direction::Sync, &args.remote, &args.namespaces)
                }
                MemoryCommand::Prune { max, max_age_days, dry_run } => {
                    commands::memory_prune(&layout(), max, max_age_days, dry_run)
                }
            }
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "hookpack", &mut std::io::stdout());
            Ok(true)
        }
    }
}

/// clap checks conflicts among the options of one level only: `--user` before the command and
/// `--project` or `--local` after it (and `-q` with `-v`) are refused here, exit 2.
fn refuse_conflicts(cli: &Cli) {
    let local = matches!(&cli.command, Command::Install { target, .. } | Command::Uninstall { target } if target.local);
    let conflict = match (&cli.scope, cli.quiet && cli.verbose) {
        (_, true) => Some("--quiet and --verbose"),
        (Scope { user: true, project: Some(_) }, _) => Some("--user and --project"),
        (Scope { user: true, .. }, _) if local => Some("--user and --local"),
        _ => None,
    };
    if let Some(both) = conflict {
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, format!("{both} exclude each other"))
            .exit();
    }
}

/// A reader that has gone (`hookpack explain … | head`) ends the command quietly, as it ends
/// other tools; any other panic is said in one line, without a backtrace.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        let place =
            info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("hookpack: panicked{place}: {message}\n").as_bytes(),
        );
    }));
}

/// The settings file `install` and `uninstall` write: `--user`, `--local`, or the project's.
fn scope_of(user: bool, local: bool) -> install::Scope {
    match (user, local) {
        (true, _) => install::Scope::User,
        (false, true) => install::Scope::Local,
        (false, false) => install::Scope::Project,
    }
}
