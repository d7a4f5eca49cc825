//! Every event's output, with every field set, pinned by a snapshot: the exact JSON Claude Code
//! reads. An empty output prints nothing; long strings are capped.

use hook_model::{
    Block, ElicitationReply, EventKind, HookOutput, MAX_OUTPUT_CHARS, ModelSwitchDecision,
    PermissionBehavior, PermissionDecision, PermissionDestination, PermissionRequestDecision,
    PermissionRule, PermissionUpdate, TRUNCATION_MARKER, utf16_len,
};
use serde_json::{Map, Value, json};

#[allow(clippy::unnecessary_wraps, reason = "every output field is an Option")]
fn text(what: &str) -> Option<String> {
    Some(what.to_owned())
}

#[allow(clippy::unnecessary_wraps, reason = "every output field is an Option")]
fn object(value: Value) -> Option<Map<String, Value>> {
    let Value::Object(map) = value else { panic!("not an object") };
    Some(map)
}

/// Sets every field `$out` has, by name; the compiler checks the names against the types.
macro_rules! universal {
    ($out:expr, [$($field:ident),*]) => {{
        $( universal!(@set $out, $field); )*
    }};
    (@set $out:expr, r#continue) => { $out.r#continue = Some(false) };
    (@set $out:expr, stop_reason) => { $out.stop_reason = text("Stopped by hookpack: deploy freeze") };
    (@set $out:expr, system_message) => { $out.system_message = text("hookpack: guard/force-push fired") };
    (@set $out:expr, terminal_sequence) => { $out.terminal_sequence = text("\u{1b}]0;claude: blocked\u{7}") };
    (@set $out:expr, block) => { $out.block = Some(Block { reason: "Run the tests before stopping: `npm test`".into() }) };
}

/// An output of `kind` with every field set. The match is exhaustive: a new event needs a case.
#[allow(clippy::too_many_lines, reason = "one arm per event, on purpose")]
fn full(kind: EventKind) -> HookOutput {
    let mut output = HookOutput::empty(kind);
    let context = text("[hookpack context/api-conventions] API handlers return { error, code }.");
    match &mut output {
        HookOutput::SessionStart(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            let s = &mut o.hook_specific_output;
            s.additional_context = context;
            s.initial_user_message = text("Summarize yesterday's work");
            s.session_title = text("Webhook retries");
            s.watch_paths = Some(vec!["/home/dev/acme-api/.env".into()]);
            s.reload_skills = Some(true);
        }
        HookOutput::Setup(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::UserPromptSubmit(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            let s = &mut o.hook_specific_output;
            s.additional_context = context;
            s.session_title = text("Webhook retries");
            s.suppress_original_prompt = Some(false);
        }
        HookOutput::UserPromptExpansion(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            o.hook_specific_output.additional_context = context;
            o.hook_specific_output.suppress_original_prompt = Some(true);
        }
        HookOutput::MessageDisplay(o) => {
            universal!(o, [terminal_sequence]);
            o.hook_specific_output.display_content = text("I'll start by reading the worker.");
        }
        HookOutput::PreToolUse(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            let s = &mut o.hook_specific_output;
            s.permission_decision = Some(PermissionDecision::Deny);
            s.permission_decision_reason = text("[guard/rm-root] rm -rf / deletes the system");
            s.updated_input = object(json!({"command": "rm -rf ./build"}));
            s.additional_context = context;
        }
        HookOutput::PermissionRequest(o) => {
            universal!(o, [terminal_sequence]);
            o.hook_specific_output.decision = Some(PermissionRequestDecision::Allow {
                updated_input: object(json!({"command": "npm test"})),
                updated_permissions: Some(vec![PermissionUpdate::AddRules {
                    rules: vec![PermissionRule {
                        tool_name: "Bash".into(),
                        rule_content: Some("npm test:*".into()),
                    }],
                    behavior: PermissionBehavior::Allow,
                    destination: PermissionDestination::LocalSettings,
                }]),
            });
        }
        HookOutput::PermissionDenied(o) => {
            universal!(o, [terminal_sequence]);
            o.hook_specific_output.retry = Some(true);
        }
        HookOutput::PostToolUse(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            let s = &mut o.hook_specific_output;
            s.additional_context = context;
            s.updated_tool_output = Some(json!({"stdout": "ok", "stderr": ""}));
            s.updated_mcp_tool_output = Some(json!([{"type": "text", "text": "ok"}]));
            s.classifier_context = text("The user asked for a dry run.");
        }
        HookOutput::PostToolUseFailure(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::PostToolBatch(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::Notification(o) => universal!(o, [terminal_sequence]),
        HookOutput::SubagentStart(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::SubagentStop(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::TaskCreated(o) => universal!(o, [terminal_sequence, block]),
        HookOutput::TaskCompleted(o) => {
            universal!(o, [r#continue, stop_reason, terminal_sequence, block]);
        }
        HookOutput::Stop(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
            o.hook_specific_output.additional_context = context;
        }
        HookOutput::StopFailure(o) => universal!(o, [terminal_sequence]),
        HookOutput::TeammateIdle(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence, block]);
        }
        HookOutput::InstructionsLoaded(o) => universal!(o, [terminal_sequence]),
        HookOutput::ConfigChange(o) => universal!(o, [terminal_sequence, block]),
        HookOutput::CwdChanged(o) => {
            universal!(o, [system_message, terminal_sequence]);
            o.hook_specific_output.watch_paths = Some(vec!["/home/dev/acme-api/.envrc".into()]);
        }
        HookOutput::DirectoryAdded(o) => universal!(o, [terminal_sequence]),
        HookOutput::FileChanged(o) => {
            universal!(o, [system_message, terminal_sequence]);
            o.hook_specific_output.watch_paths = Some(vec!["/home/dev/acme-api/.env".into()]);
        }
        HookOutput::WorktreeCreate(_) | HookOutput::SessionEnd(_) => {}
        HookOutput::WorktreeRemove(o) => universal!(o, [terminal_sequence]),
        HookOutput::PreCompact(o) => universal!(o, [terminal_sequence, block]),
        HookOutput::PostCompact(o) => universal!(o, [terminal_sequence]),
        HookOutput::Elicitation(o) => {
            universal!(o, [terminal_sequence]);
            o.hook_specific_output.action = Some(ElicitationReply::Accept);
            o.hook_specific_output.content = object(json!({"environment": "staging"}));
        }
        HookOutput::ElicitationResult(o) => {
            universal!(o, [terminal_sequence]);
            o.hook_specific_output.action = Some(ElicitationReply::Decline);
        }
        HookOutput::PreModelSwitch(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            o.hook_specific_output.permission_decision = Some(ModelSwitchDecision::Ask);
            o.hook_specific_output.permission_decision_reason =
                text("Switching models rewrites a 84k-token cache");
        }
        HookOutput::PostModelSwitch(o) => {
            universal!(o, [r#continue, stop_reason, system_message, terminal_sequence]);
            o.hook_specific_output.additional_context = context;
        }
    }
    output
}

#[test]
fn every_output_field_of_every_event() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for &kind in EventKind::ALL {
            let mut output = full(kind);
            assert_eq!(output.kind(), kind);
            let Some(json) = output.render() else {
                // Events whose JSON Claude Code discards entirely have no fields at all.
                assert!(matches!(kind, EventKind::WorktreeCreate | EventKind::SessionEnd));
                continue;
            };
            let value: Value = serde_json::from_str(&json).unwrap();
            if let Some(specific) = value.get("hookSpecificOutput") {
                assert_eq!(specific["hookEventName"], kind.as_str(), "{kind}");
            }
            assert_eq!(
                value.get("additionalContext"),
                None,
                "{kind}: context belongs in hookSpecificOutput"
            );
            if value.get("decision").is_some() {
                assert!(kind.accepts_block_decision(), "{kind}");
                assert_eq!(value["decision"], "block");
                assert!(value["reason"].is_string());
            }
            let has_context = value
                .get("hookSpecificOutput")
                .is_some_and(|s| s.get("additionalContext").is_some());
            assert_eq!(has_context, kind.accepts_additional_context(), "{kind}");
            if !kind.shows_system_message() {
                assert_eq!(value.get("systemMessage"), None, "{kind}");
            }
            // The fields in the order they are written.
            insta::assert_snapshot!(
                format!("outputs@{}", kind.kebab()),
                serde_json::to_string_pretty(&output).unwrap()
            );
        }
    });
}

#[test]
fn empty_outputs_print_nothing() {
    for &kind in EventKind::ALL {
        let mut output = HookOutput::empty(kind);
        assert!(output.is_empty());
        assert_eq!(output.render(), None, "{kind}");
    }
}

/// `hookSpecificOutput` appears only when one of its fields is set, and then with
/// `hookEventName` first.
#[test]
fn hook_event_name_is_written_by_construction() {
    let mut output = HookOutput::empty(EventKind::PostToolUse);
    let HookOutput::PostToolUse(o) = &mut output else { unreachable!() };
    o.system_message = text("note");
    assert_eq!(output.render().unwrap(), r#"{"systemMessage":"note"}"#);

    let HookOutput::PostToolUse(o) = &mut output else { unreachable!() };
    o.hook_specific_output.additional_context = text("ctx");
    assert_eq!(
        output.render().unwrap(),
        r#"{"systemMessage":"note","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx"}}"#
    );
}

/// Every free-text string is capped at 9,500 characters; JSON that rewrites a tool call is not.
#[test]
fn strings_are_capped() {
    let long = "word ".repeat(5_000);
    let mut output = HookOutput::empty(EventKind::PreToolUse);
    let HookOutput::PreToolUse(o) = &mut output else { unreachable!() };
    o.system_message = Some(long.clone());
    o.hook_specific_output.permission_decision = Some(PermissionDecision::Allow);
    o.hook_specific_output.permission_decision_reason = Some(long.clone());
    o.hook_specific_output.additional_context = Some("é".repeat(20_000));
    o.hook_specific_output.updated_input = object(json!({"content": long}));

    let value: Value = serde_json::from_str(&output.render().unwrap()).unwrap();
    for text in [
        &value["systemMessage"],
        &value["hookSpecificOutput"]["permissionDecisionReason"],
        &value["hookSpecificOutput"]["additionalContext"],
    ] {
        let text = text.as_str().unwrap();
        assert!(utf16_len(text) <= MAX_OUTPUT_CHARS, "{}", utf16_len(text));
        assert!(utf16_len(text) > MAX_OUTPUT_CHARS - 10);
        assert!(text.ends_with(TRUNCATION_MARKER));
    }
    assert_eq!(value["hookSpecificOutput"]["updatedInput"]["content"], long.as_str());

    let mut output = HookOutput::empty(EventKind::Stop);
    let HookOutput::Stop(o) = &mut output else { unreachable!() };
    o.block = Some(Block { reason: long.clone() });
    let value: Value = serde_json::from_str(&output.render().unwrap()).unwrap();
    assert!(utf16_len(value["reason"].as_str().unwrap()) <= MAX_OUTPUT_CHARS);
}

/// Every snapshot belongs to an event that still has output fields.
#[test]
fn no_orphan_snapshots() {
    let snapshots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots");
    for entry in std::fs::read_dir(snapshots).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let kebab = name
            .strip_prefix("outputs@")
            .and_then(|rest| rest.strip_suffix(".snap"))
            .unwrap_or_else(|| panic!("unexpected file {name}"));
        let kind = EventKind::from_kebab(kebab).unwrap_or_else(|| panic!("{name}: no such event"));
        assert!(!matches!(kind, EventKind::WorktreeCreate | EventKind::SessionEnd), "{name}");
    }
}

/// The shared setters agree with what `EventKind` says each event reads, and write where the
/// snapshots above show.
#[test]
fn setters_agree_with_event_capabilities() {
    for &kind in EventKind::ALL {
        let mut output = HookOutput::empty(kind);
        let context = output.set_additional_context("ctx".into());
        assert_eq!(context.is_ok(), kind.accepts_additional_context(), "{kind}");
        let message = output.set_system_message("note".into());
        assert_eq!(message.is_ok(), kind.shows_system_message(), "{kind}");
        let block = output.set_block("why".into());
        assert_eq!(block.is_ok(), kind.accepts_block_decision(), "{kind}");
        let stop = output.set_stop("enough".into());
        assert_eq!(stop.is_ok(), kind.honours_continue(), "{kind}");
        let title = output.set_session_title("title".into());
        assert_eq!(title.is_ok(), kind.sets_session_title(), "{kind}");
        let watch = output.set_watch_paths(vec!["/p/a".into()]);
        assert_eq!(watch.is_ok(), kind.sets_watch_paths(), "{kind}");

        let rendered = output.render();
        let value: Value =
            rendered.as_deref().map_or(Value::Null, |json| serde_json::from_str(json).unwrap());
        if kind.accepts_additional_context() {
            assert_eq!(value["hookSpecificOutput"]["additionalContext"], "ctx", "{kind}");
            assert_eq!(value["hookSpecificOutput"]["hookEventName"], kind.as_str());
        }
        if kind.shows_system_message() {
            assert_eq!(value["systemMessage"], "note", "{kind}");
        }
        if kind.accepts_block_decision() {
            assert_eq!((&value["decision"], &value["reason"]), (&"block".into(), &"why".into()));
        }
        if kind.honours_continue() {
            assert_eq!(
                (&value["continue"], &value["stopReason"]),
                (&false.into(), &"enough".into())
            );
        }
        if kind.sets_session_title() {
            assert_eq!(value["hookSpecificOutput"]["sessionTitle"], "title", "{kind}");
        }
        if kind.sets_watch_paths() {
            assert_eq!(value["hookSpecificOutput"]["watchPaths"][0], "/p/a", "{kind}");
        }
        if let Err(err) = context {
            assert_eq!(err.to_string(), format!("`{kind}` does not read `additionalContext`"));
        }
    }
}
