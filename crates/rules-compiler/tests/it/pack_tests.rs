//! `[[test]]` cases run through the real evaluation path.

use std::path::Path;
use std::sync::Arc;

use rules_compiler::{SourceFile, parse_pack, run_tests};

fn pack(text: &str) -> rules_compiler::Pack {
    let source = Arc::new(SourceFile::new("packs/t.toml", text));
    let (pack, diagnostics) = parse_pack(&source, Path::new("."));
    assert!(!diagnostics.has_errors(), "{}", diagnostics.render());
    pack.unwrap()
}

#[test]
fn the_valid_pack_passes_its_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/valid");
    let text = std::fs::read_to_string(dir.join("everything.toml")).unwrap();
    let source = Arc::new(SourceFile::new("everything.toml", text));
    let pack = parse_pack(&source, &dir).0.unwrap();
    let outcomes = run_tests(&pack).unwrap();
    assert_eq!(outcomes.len(), 3);
    for outcome in outcomes {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
    let text = std::fs::read_to_string(dir.join("live.toml")).unwrap();
    let source = Arc::new(SourceFile::new("live.toml", text));
    let pack = parse_pack(&source, &dir).0.unwrap();
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

#[test]
fn failures_show_the_actual_result() {
    let pack = pack(
        r#"
[pack]
name = "g"

[[rule]]
id = "force-push"
on = "PreToolUse"
tool = "Bash"
keywords = ["--force"]
decision = "ask"
reason = "Force-pushing rewrites shared history."

[[test]]
name = "force push is denied"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "git push --force origin main" } }
expect = { decision = "deny", rules = ["g/force-push", "g/other"] }

[[test]]
name = "lease is fine"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "git push --force-with-lease" } }
expect = { decision = "none" }

[[test]]
name = "lease is not a force push"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "git push --force-with-lease" } }
expect = { not_rules = ["g/force-push", "g/other"] }

[[test]]
name = "status is not a force push"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "git status" } }
expect = { not_rules = ["g/force-push"] }
"#,
    );
    let outcomes = run_tests(&pack).unwrap();
    assert_eq!(
        outcomes[0].failures,
        [
            "expected decision deny, got ask",
            "expected rules [g/force-push, g/other], got [g/force-push]",
            "fired: [g/force-push]",
        ]
    );
    assert_eq!(outcomes[0].place, "packs/t.toml:14");
    // `--force` ends with a word character: `--force-with-lease` has no boundary after it? It
    // does (`-`), so the rule fires; the test says none and fails with the reason.
    assert_eq!(outcomes[1].failures[0], "expected decision none, got ask");
    // `not_rules` names the rules that fired of those it lists.
    assert_eq!(outcomes[2].failures[0], "expected `g/force-push` not to fire, and it did");
    assert!(outcomes[3].passed(), "{:?}", outcomes[3].failures);
}

/// `stop` and `session_title` reach the answer as Claude Code reads them, and a test can say so.
#[test]
fn stop_and_session_title_are_answered_and_testable() {
    let pack = pack(
        r#"
[pack]
name = "g"

[[rule]]
id = "freeze"
on = "UserPromptSubmit"
keywords = ["release freeze"]
stop = "The release freeze is on: no changes today."
session_title = "Release freeze"

[[rule]]
id = "title"
on = "SessionStart"
session_title = "Payments service"

[[test]]
name = "the freeze stops Claude and titles the session"
event = { hook_event_name = "UserPromptSubmit", prompt = "is the release freeze on?" }
expect = { rules = ["g/freeze"], answer_contains = ['"continue":false', '"stopReason":"[g/freeze] The release freeze is on: no changes today."', '"sessionTitle":"Release freeze"'] }

[[test]]
name = "other prompts go on"
event = { hook_event_name = "UserPromptSubmit", prompt = "fix the build" }
expect = { rules = [], answer_excludes = ['"continue"'] }

[[test]]
name = "a new session is titled"
event = { hook_event_name = "SessionStart", source = "startup" }
expect = { answer_contains = ['"hookSpecificOutput":{"hookEventName":"SessionStart","sessionTitle":"Payments service"}'] }

[[test]]
name = "a failing answer expectation says what was answered"
event = { hook_event_name = "SessionStart", source = "startup" }
expect = { answer_contains = ['"sessionTitle":"Other"'] }
"#,
    );
    let outcomes = run_tests(&pack).unwrap();
    let failed: Vec<&str> =
        outcomes.iter().filter(|o| !o.passed()).map(|o| o.name.as_str()).collect();
    assert_eq!(failed, ["a failing answer expectation says what was answered"]);
    let last = outcomes.last().unwrap();
    assert_eq!(
        last.failures,
        [
            r#"expected the answer to contain "\"sessionTitle\":\"Other\"", got {"hookSpecificOutput":{"hookEventName":"SessionStart","sessionTitle":"Payments service"}}"#,
            "fired: [g/title]"
        ]
    );
}

/// `watch_paths` are resolved against the project and gathered once each; `PreCompact` context
/// is the compaction instructions.
#[test]
fn watch_paths_and_compaction_instructions() {
    let pack = pack(
        r#"
[pack]
name = "w"

[[rule]]
id = "config"
on = ["SessionStart", "FileChanged"]
watch_paths = ["config/app.toml", "./.env.example"]

[[rule]]
id = "config-again"
on = "SessionStart"
watch_paths = ["config/app.toml"]

[[rule]]
id = "keep-decisions"
on = "PreCompact"
context = "Keep every decision the user stated, word for word."

[[test]]
name = "a session watches the config once"
event = { hook_event_name = "SessionStart", source = "startup", cwd = "/work/app" }
expect = { answer_contains = ['"watchPaths":["/work/app/config/app.toml","/work/app/.env.example"]'] }

[[test]]
name = "compaction keeps decisions"
event = { hook_event_name = "PreCompact", trigger = "manual", custom_instructions = "" }
expect = { rules = ["w/keep-decisions"], context_contains = ["word for word"] }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// Rewrites apply in rule order, each seeing the one before; one that cannot be made (its
/// prefix is not there) does not apply; a deny drops them.
#[test]
fn rewrites_compose_in_rule_order() {
    let pack = pack(
        r#"
[pack]
name = "r"

[[rule]]
id = "trash"
on = "PreToolUse"
tool = "Bash"
rewrite = { command = "trash {command#rm }" }

[[rule]]
id = "verbose"
on = "PreToolUse"
tool = "Bash"
rewrite = { command = "{command} -v", description = "{description} (rewritten)" }

[[rule]]
id = "no-root"
on = "PreToolUse"
tool = "Bash"
keywords = ["/"]
decision = "deny"
reason = "Not the root."

[[test]]
name = "both rewrites, in order"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "rm old.log", description = "clean" } }
expect = { answer_contains = ['"updatedInput":{"command":"trash old.log -v","description":"clean (rewritten)"}'] }

[[test]]
name = "a rewrite that cannot be made does not apply"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "ls" } }
expect = { answer_contains = ['"updatedInput":{"command":"ls -v"}'] }

[[test]]
name = "a denied call is not rewritten"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "rm /", description = "x" } }
expect = { decision = "deny", answer_excludes = ["updatedInput"] }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// A rewritten call is judged again as rewritten: a guard that would stop the new call stops it,
/// a rewrite cannot be allowed past Claude Code's own permission rules, and a guard that only
/// the original call trips still stops it.
#[test]
fn a_rewritten_call_is_judged_as_rewritten() {
    let pack = pack(
        r#"
[pack]
name = "r"

[[rule]]
id = "sweep"
on = "PreToolUse"
tool = "Bash"
keywords = ["tidy"]
rewrite = { command = "rm -rf /" }

[[rule]]
id = "tidy-is-fine"
on = "PreToolUse"
tool = "Bash"
keywords = ["tidy"]
decision = "allow"
reason = "Tidying is safe."

[[rule]]
id = "dry"
on = "PreToolUse"
tool = "Bash"
keywords = ["deploy"]
rewrite = { command = "{command} --dry-run" }

[[rule]]
id = "no-root"
on = "PreToolUse"
tool = "Bash"
regex = ['rm -rf /$']
decision = "deny"
reason = "Not the root."

[[rule]]
id = "dry-runs-ask"
on = "PreToolUse"
tool = "Bash"
keywords = ["--dry-run"]
decision = "ask"
reason = "A dry run still talks to production."

[[test]]
name = "a rewrite into a denied call is denied and not rewritten"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "tidy" } }
expect = { decision = "deny", rules = ["r/sweep", "r/tidy-is-fine"], answer_contains = ["[r/no-root] Not the root."], answer_excludes = ["updatedInput", "Tidying is safe"] }

[[test]]
name = "a rule the rewritten call trips asks, with the rewrite"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "deploy" } }
expect = { decision = "ask", answer_contains = ['"updatedInput":{"command":"deploy --dry-run"}', "[r/dry-runs-ask]"] }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// `command` matches what a shell runs, not the text: wrappers, quotes and inline shells are
/// seen through, and data (echo, commit messages, heredocs to `cat`) is not a command.
#[test]
fn command_patterns_match_what_runs() {
    let pack = pack(
        r#"
[pack]
name = "g"

[[rule]]
id = "reset-hard"
on = "PreToolUse"
tool = "Bash"
command = { program = "git", subcommand = "reset", flags = ["--hard"] }
decision = "deny"
reason = "git reset --hard throws away uncommitted work; commit or stash it first."

[[rule]]
id = "rm-system"
on = "PreToolUse"
tool = "Bash|PowerShell"
command = [
  { program = "rm", flags = ["-r|-R|--recursive"], args = ["/", "/etc*", "~", "~/"] },
  { program = "Remove-Item", flags = ["-Recurse"], args = ["C:\\", "C:\\Windows*"] },
]
decision = "deny"
reason = "Deletes a system folder; delete what you mean inside the project instead."

[[test]]
name = "behind sudo, env and quotes"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "sudo env X=1 \"git\" reset --hard HEAD~1" } }
expect = { decision = "deny", rules = ["g/reset-hard"] }

[[test]]
name = "inside bash -c"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "cd /tmp && bash -c 'rm -rf /etc'" } }
expect = { decision = "deny", rules = ["g/rm-system"] }

[[test]]
name = "PowerShell"
event = { hook_event_name = "PreToolUse", tool_name = "PowerShell", tool_input = { command = "Remove-Item -Recurse -Force C:\\Windows\\System32" } }
expect = { decision = "deny", rules = ["g/rm-system"] }

[[test]]
name = "a commit message is data"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "git commit -m \"never git reset --hard; rm -rf / is bad\"" } }
expect = { decision = "none" }

[[test]]
name = "a heredoc to cat is data"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "cat <<EOF > NOTES.md\ngit reset --hard\nrm -rf /\nEOF" } }
expect = { decision = "none" }

[[test]]
name = "a project folder is fine"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "rm -rf ./build /tmp/cache" } }
expect = { decision = "none" }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// A `command` pattern that cannot match is an error at its place.
#[test]
fn command_patterns_are_checked() {
    let text = r#"
[pack]
name = "g"

[[rule]]
id = "bad"
on = "PreToolUse"
command = { program = "/bin/rm", flags = ["rf"] }
decision = "deny"
reason = "x"

[[rule]]
id = "no-text"
on = "SessionStart"
command = { program = "rm" }
context = "x"
"#;
    let (_, diagnostics) =
        parse_pack(&Arc::new(SourceFile::new("packs/t.toml", text)), Path::new("."));
    let rendered = diagnostics.render();
    assert!(
        rendered.contains("packs/t.toml:8:11: error: `program` is a program's name"),
        "{rendered}"
    );
    assert!(rendered.contains("`command` does not apply to SessionStart"), "{rendered}");
}

/// A command line nested too deeply to be read in full is asked about, whatever it holds: it
/// could hide what the guards look for.
#[test]
fn a_command_line_too_nested_to_read_is_asked_about() {
    let pack = pack(
        r#"
[pack]
name = "g"

[[rule]]
id = "rm-root"
on = "PreToolUse"
tool = "Bash"
command = { program = "rm", flags = ["-r"], args = ["/"] }
decision = "deny"
reason = "Not the root."

[[test]]
name = "eval in eval in eval …"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = 'eval "$(eval "$(eval "$(eval "$(eval "$(eval "$(eval x)")")")")")"' } }
expect = { decision = "ask", rules = ["hookpack/unreadable-command"], answer_contains = ["too deeply"] }

[[test]]
name = "two levels are read"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = 'eval "$(eval "rm -r /")"' } }
expect = { decision = "deny", rules = ["g/rm-root"] }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// A test walks the hook's own steps: a memory the session was already given since the last
/// compaction (`given.injected` names it, as the hook's ledger does) is not recalled again,
/// and the next one that shares the terms takes its place.
#[test]
fn memories_already_given_are_not_recalled_again() {
    let pack = pack(
        r##"
[pack]
name = "m"

[[rule]]
id = "recall"
on = "UserPromptSubmit"
recall = { from = "prompt", max = 1 }

[[test]]
name = "the first memory, when none was given"
event = { hook_event_name = "UserPromptSubmit", prompt = "how are tokens signed" }
given = { memories = [{ namespace = "decisions", text = "tokens are signed with RS256" }, { namespace = "learnings", text = "tokens are signed in the gateway" }] }
expect = { context_contains = ["#2"], context_excludes = ["#1"] }

[[test]]
name = "the next memory, when the first was given"
event = { hook_event_name = "UserPromptSubmit", prompt = "how are tokens signed" }
given = { injected = ["memory#2"], memories = [{ namespace = "decisions", text = "tokens are signed with RS256" }, { namespace = "learnings", text = "tokens are signed in the gateway" }] }
expect = { context_contains = ["#1"], context_excludes = ["#2"] }
"##,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}

/// A test's event is typed as a hook types it: one that Claude Code would not send (here, a
/// tool call without its tool) fails the test, instead of testing what no hook would see.
#[test]
fn an_event_claude_code_would_not_send_fails_the_test() {
    let pack = pack(
        r#"
[pack]
name = "t"

[[rule]]
id = "r"
on = "PreToolUse"
tool = "Bash"
decision = "ask"
reason = "asked"

[[test]]
name = "no tool"
event = { hook_event_name = "PreToolUse", tool_input = { command = "ls" } }
expect = { decision = "none" }
"#,
    );
    let outcomes = run_tests(&pack).unwrap();
    assert_eq!(outcomes.len(), 1);
    let failures = &outcomes[0].failures;
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].starts_with("the event is not one Claude Code sends"), "{failures:?}");
    assert!(failures[0].contains("tool_name"), "{failures:?}");
}

/// `branch`: globs over the current git branch (`!` excludes); no branch checked out matches
/// none; a test gives the branch in `given`.
#[test]
fn branch_conditions_follow_the_checked_out_branch() {
    let pack = pack(
        r#"
[pack]
name = "b"

[[rule]]
id = "features"
on = "UserPromptSubmit"
branch = ["feature/*", "ABC-*", "!feature/wip-*"]
context = "On a feature branch: keep the change small."

[[rule]]
id = "main"
on = "UserPromptSubmit"
branch = "main"
context = "On main: no direct commits."

[[test]]
name = "a feature branch"
given = { branch = "feature/42-login" }
event = { hook_event_name = "UserPromptSubmit", prompt = "go" }
expect = { rules = ["b/features"] }

[[test]]
name = "a nested one, and a key"
given = { branch = "ABC-7/fix" }
event = { hook_event_name = "UserPromptSubmit", prompt = "go" }
expect = { rules = ["b/features"] }

[[test]]
name = "an excluded one"
given = { branch = "feature/wip-x" }
event = { hook_event_name = "UserPromptSubmit", prompt = "go" }
expect = { rules = [] }

[[test]]
name = "main"
given = { branch = "main" }
event = { hook_event_name = "UserPromptSubmit", prompt = "go" }
expect = { rules = ["b/main"] }

[[test]]
name = "no branch"
event = { hook_event_name = "UserPromptSubmit", prompt = "go" }
expect = { rules = [] }

[[rule]]
id = "status"
on = "UserPromptSubmit"
keywords = ["status"]
context = "Branch {branch}, issue {issue}, prompt {prompt_count}, {bracket} bracket ({used_percent}% used); {unknown} stays."

[[test]]
name = "the variables"
given = { branch = "feature/ABC-12-pay", prompts = 4, bracket = "depleted", used_percent = 78 }
event = { hook_event_name = "UserPromptSubmit", prompt = "status" }
expect = { rules = ["b/features", "b/status"], context_contains = ["Branch feature/ABC-12-pay, issue ABC-12, prompt 5, depleted bracket (78% used); {unknown} stays."] }

[[test]]
name = "the variables without a branch"
event = { hook_event_name = "UserPromptSubmit", prompt = "status" }
expect = { rules = ["b/status"], context_contains = ["Branch none, issue none, prompt 1, fresh bracket (none% used)"] }
"#,
    );
    for outcome in run_tests(&pack).unwrap() {
        assert!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
    }
}
