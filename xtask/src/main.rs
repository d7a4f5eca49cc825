//! Developer automation for hookpack: `cargo xtask <command>`.
//!
//! - `codegen [--check]`: the per-event binaries, their smoke tests and the input schemas;
//! - `compile-rules [--check]`: the builtin packs, linted, tested and compiled;
//! - `bench [--runs N]`: start-up cost of every hook against the floor binary, in one run;
//! - `demo`: replays `examples/` through the real binaries and prints each answer;
//! - `tidy`: house rules no compiler checks (also run by `cargo test`);
//! - `link-order`: the list of functions the hooks run, laid side by side at link time;
//! - `dist`: release binaries, statically linked where the host allows, in `target/dist/bin`;
//! - `install [--root DIR]`: the `hookpack` command and the hooks (one binary, linked under every
//!   event's name) and the schemas, installed for a user (default `~/.local`);
//! - `fuzz [TARGET] [--seconds N] [--jobs N]`: libFuzzer on stable, each target (or one) for N seconds;
//! - `e2e [SCENARIO…]`: the scenarios of `e2e/scenarios/` under the real Claude Code;
//! - `guard-corpus [--builtin PACKS] [--corpus DIR] [--misses]`: the guards' recall and precision on
//!   `corpus/guard/`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "xtask reports to the developer")]

mod bench;
mod bench_builtin;
mod bench_guard;
mod bench_rules;
mod codegen;
mod compile_rules;
mod demo;
mod e2e;
mod fuzz;
mod guard_corpus;
mod link_order;
mod release;
mod tidy;
mod timing;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  codegen [--check]   generate the per-event binaries, smoke tests and input schemas
  compile-rules [--check]
                      lint, test and compile the builtin packs (rules/*.toml)
  bench [--runs N]    spawn every hook binary against the floor binary and print ratios
  demo                replay examples/ through the hook binaries and print each answer
  tidy                check the house rules no compiler checks
  link-order          list the functions the hook binaries run (valgrind), which their link lays
                      side by side: crates/hook-bins/link-order.txt
  dist                build the hook binaries for release (static where possible) into target/dist/bin
  install [--root DIR]
                      build and install hookpack for this user (default ~/.local): bin/hookpack,
                      bin/hookpack-hook linked as every bin/hookpack-<event>, share/hookpack/schemas
  fuzz [TARGET] [--seconds N] [--jobs N]
                      build the libFuzzer targets (fuzz/) and run each (payload, pack, artifact,
                      memory, shell), or TARGET, for N seconds (default 60), in N processes at
                      once (--jobs, libFuzzer's -jobs); fails if one finds an input
  e2e [SCENARIO...]   install the pinned Claude Code and run e2e/scenarios/ (or those named)
                      against a scripted model
  guard-corpus [--builtin PACK,PACK...] [--corpus DIR] [--misses]
                      the guards' recall and precision on corpus/guard/ (or DIR), by family,
                      and the safe commands denied
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen::run(workspace::Mode::Write),
        ["codegen", "--check"] => codegen::run(workspace::Mode::Check),
        ["bench", rest @ ..] => bench::run(rest),
        ["compile-rules"] => compile_rules::run(workspace::Mode::Write),
        ["compile-rules", "--check"] => compile_rules::run(workspace::Mode::Check),
        ["demo"] => demo::run(),
        ["dist"] => release::dist(),
        ["install", rest @ ..] => release::install(rest),
        ["link-order"] => link_order::run(),
        ["fuzz", rest @ ..] => fuzz::run(rest),
        ["e2e", rest @ ..] => e2e::run(rest),
        ["guard-corpus", rest @ ..] => guard_corpus::run(rest),
        // Started by Claude Code in a scenario with `mcp_stub = true`, not by people.
        ["e2e-mcp-stub"] => e2e::serve_mcp_stub(),
        ["tidy"] => tidy::run(),
        ["help" | "--help" | "-h"] => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
