//! The JSON Schemas editors use, checked with a JSON Schema validator: they are valid schemas,
//! every example in the repository passes them, they reject the broken packs that are wrong in
//! shape (and only packs the checker rejects too), and they give completion what it needs.
//!
//! These read the committed files, as editors do; that they are what `rule_pack_schema()`,
//! `config_schema()` and `hook_model::schema::input_schema` generate is xtask's
//! `generated_files_are_up_to_date` (`cargo xtask codegen --check`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hook_model::EventKind;
use jsonschema::Validator;
use rules_compiler::{SourceFile, parse_pack};
use serde_json::Value;

/// The broken packs whose mistake is one of shape: an unknown key, a wrong type, a missing
/// required key, a value outside an `enum`, a bound or a `pattern`. The schema must reject each;
/// the others are mistakes only the checker can see (a regex that does not compile, a rule
/// that does not apply to its event, a missing `context_file`, …).
const STRUCTURAL: &[&str] = &[
    "bad-pack-name.toml",     // `pattern` of the pack's name
    "bad-rule-id.toml",       // `pattern` of a rule's id
    "decision-typo.toml",     // `decision = "denied"`
    "every-negative.toml",    // `every = -1`, below `minimum`
    "five-mistakes.toml",     // `keyword`, an unknown key (the other four are the checker's)
    "invalid-layer.toml",     // `layer = "L3"`
    "missing-on.toml",        // a rule without `on`
    "missing-pack-name.toml", // [pack] without `name`
    "missing-pack-table.toml",
    "missing-rule-id.toml",
    "on-wrong-type.toml",       // `on = 3`
    "priority-wrong-type.toml", // `priority = "high"`
    "recall-misplaced.toml",    // `from = "paht"`, `markers = "yes"`
    "test-missing-expect.toml",
    "test-unknown-event.toml", // `hook_event_name = "Stopp"` in a test's event
    "unknown-event.toml",      // `on = ["PreToolUs"]`
    "unknown-key-in-pack-table.toml",
    "unknown-key-in-rule.toml",
    "unknown-top-level-key.toml",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `path` relative to the repository's root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("{}: cannot read: {err}", shown(path)));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: not JSON: {err}", shown(path)))
}

/// A TOML file's text as the JSON an editor's TOML support checks against the schema.
fn toml_json(text: &str, what: &str) -> Value {
    toml::from_str(text).unwrap_or_else(|err| panic!("{what}: invalid TOML: {err}"))
}

/// The committed schema `schemas/<name>`, checked against the meta-schema its `$schema` names
/// and compiled.
fn schema(name: &str) -> (Value, Validator) {
    let path = root().join("schemas").join(name);
    let schema = read_json(&path);
    let draft = schema.get("$schema").and_then(Value::as_str);
    assert!(draft.is_some(), "{}: no `$schema`", shown(&path));
    if let Err(err) = jsonschema::meta::validate(&schema) {
        panic!(
            "{}: not a valid {} schema: {}: {err}",
            shown(&path),
            draft.unwrap(),
            err.instance_path()
        );
    }
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|err| panic!("{}: does not compile: {err}", shown(&path)));
    (schema, validator)
}

/// Every way `instance` fails `validator`, one per line; empty when it passes.
fn errors(validator: &Validator, instance: &Value) -> String {
    let mut out = String::new();
    for err in validator.iter_errors(instance) {
        let _ = write!(out, "\n  at `{}`: {err}", err.instance_path());
    }
    out
}

fn assert_valid(validator: &Validator, schema: &str, instance: &Value, what: &str) {
    let errors = errors(validator, instance);
    assert!(errors.is_empty(), "{what} fails {schema}:{errors}");
}

/// The files directly in `dir` whose name ends with `suffix`, sorted.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", shown(dir)))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && path.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// Every regular file under `dir`, sorted; links are not followed, and build output (where
/// other tests lay out hostile projects) and Git's folder are left out.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let build = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let (path, kind) = (entry.path(), entry.file_type().unwrap());
            let name = entry.file_name();
            if kind.is_dir() && name != "target" && name != ".git" && path != build {
                folders.push(path);
            } else if kind.is_file() {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn is_pack_path(path: &str) -> bool {
    let path = Path::new(path);
    path.parent().is_some_and(|dir| dir.ends_with(".claude/hookpack/packs"))
        && path.extension().is_some_and(|ext| ext == "toml")
}

fn is_config_path(path: &str) -> bool {
    Path::new(path)
        .file_name()
        .is_some_and(|name| name == "hookpack.toml" || name == "hookpack.local.toml")
}

/// The files an end-to-end scenario lays out (`[files]`), as `(scenario: path, text)`.
fn scenario_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for scenario in files(&root().join("e2e/scenarios"), ".toml") {
        let text = std::fs::read_to_string(&scenario).unwrap();
        let value: toml::Table = toml::from_str(&text).unwrap();
        if let Some(toml::Value::Table(laid)) = value.get("files") {
            for (path, text) in laid {
                let text = text.as_str().unwrap().to_owned();
                out.push((format!("{}: {path}", shown(&scenario)), text));
            }
        }
    }
    out
}

/// The checker's diagnostics of a pack in `tests/it`, as `diagnostics.rs` reads them.
fn check(path: &Path) -> rules_compiler::Diagnostics {
    let text = std::fs::read_to_string(path).unwrap();
    let source =
        Arc::new(SourceFile::new(Path::new("packs").join(path.file_name().unwrap()), text));
    let dir = path.parent().unwrap();
    parse_pack(&source, dir.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(dir)).1
}

#[test]
fn the_schemas_are_valid_schemas() {
    for name in ["rule-pack.schema.json", "config.schema.json"] {
        schema(name);
    }
    let inputs = files(&root().join("schemas/hook-input"), ".schema.json");
    assert_eq!(inputs.len(), EventKind::ALL.len(), "one payload schema per event");
    for path in inputs {
        let name = path.file_name().unwrap().to_string_lossy();
        schema(&format!("hook-input/{name}"));
    }
}

/// The event `valid-<event>-<what>.json` is the payload of: the longest event name that fits,
/// so that `post-tool-use-failure-…` is not taken for `post-tool-use`.
fn seed_event(name: &str) -> Option<EventKind> {
    let rest = name.strip_prefix("valid-")?;
    EventKind::ALL
        .iter()
        .copied()
        .filter(|kind| rest.strip_prefix(kind.kebab()).is_some_and(|r| r.starts_with('-')))
        .max_by_key(|kind| kind.kebab().len())
}

#[test]
fn every_example_payload_passes_its_event_schema() {
    let mut payloads: Vec<(EventKind, PathBuf)> = Vec::new();
    for &kind in EventKind::ALL {
        let dir = root().join("examples").join(kind.kebab());
        if dir.is_dir() {
            payloads.extend(files(&dir, ".json").into_iter().map(|path| (kind, path)));
        }
    }
    for path in files(&root().join("fuzz/seeds/payload"), ".json") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("valid-") {
            let kind = seed_event(&name).unwrap_or_else(|| panic!("{name}: names no event"));
            payloads.push((kind, path));
        }
    }
    assert!(payloads.len() >= 100, "only {} example payloads", payloads.len());

    let mut seen = BTreeSet::new();
    for (kind, path) in payloads {
        let name = format!("hook-input/{}.schema.json", kind.kebab());
        let (_, validator) = schema(&name);
        assert_valid(&validator, &name, &read_json(&path), &shown(&path));
        seen.insert(kind);
    }
    let missing: Vec<&str> = EventKind::ALL
        .iter()
        .filter(|kind| !seen.contains(kind))
        .map(|kind| kind.as_str())
        .collect();
    assert!(missing.is_empty(), "no example payload of {}", missing.join(", "));
}

/// The folders under `examples/` that are not an event's payloads hold projects.
#[test]
fn every_example_folder_is_an_event_or_a_project() {
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let event = EventKind::ALL.iter().any(|kind| kind.kebab() == name);
        let project = walk(&path).iter().any(|file| file.to_string_lossy().contains("/.claude/"));
        assert!(event || project, "examples/{name}: neither an event's payloads nor a project");
    }
}

#[test]
fn every_pack_in_the_repository_passes_the_pack_schema() {
    let (_, validator) = schema("rule-pack.schema.json");
    let mut packs = files(&root().join("rules"), ".toml");
    packs.extend(
        walk(&root().join("examples")).into_iter().filter(|p| is_pack_path(&p.to_string_lossy())),
    );
    packs.extend(files(&root().join("crates/rules-compiler/tests/it/valid"), ".toml"));
    // The starter pack `hookpack init` writes (its config is a `hookpack.toml`, found below).
    packs.push(root().join("crates/hookpack/src/init/project.toml"));
    packs.extend(
        files(&root().join("fuzz/seeds/pack"), ".toml")
            .into_iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("valid-")),
    );
    assert!(packs.len() >= 15, "only {} packs", packs.len());
    for path in &packs {
        let what = shown(path);
        let text = std::fs::read_to_string(path).unwrap();
        assert_valid(&validator, "rule-pack.schema.json", &toml_json(&text, &what), &what);
    }
    for (what, text) in scenario_files().iter().filter(|(what, _)| is_pack_path(what)) {
        assert_valid(&validator, "rule-pack.schema.json", &toml_json(text, what), what);
    }
}

#[test]
fn every_config_in_the_repository_passes_the_config_schema() {
    let (_, validator) = schema("config.schema.json");
    let mut configs: Vec<(String, String)> = walk(&root())
        .into_iter()
        .filter(|path| is_config_path(&path.to_string_lossy()))
        .map(|path| (shown(&path), std::fs::read_to_string(&path).unwrap()))
        .collect();
    configs.extend(scenario_files().into_iter().filter(|(what, _)| is_config_path(what)));
    assert!(configs.len() >= 3, "only {} configs", configs.len());
    for (what, text) in &configs {
        assert_valid(&validator, "config.schema.json", &toml_json(text, what), what);
    }
}

/// The schema and the checker on the diagnostics corpus: the schema rejects every mistake of
/// shape, and rejects nothing the checker lets through (an editor never flags a pack that
/// `hookpack lint` accepts).
#[test]
fn the_schema_and_the_checker_agree_on_the_corpus() {
    let (_, validator) = schema("rule-pack.schema.json");
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let broken = files(&here.join("broken"), ".toml");
    for name in STRUCTURAL {
        assert!(
            here.join("broken").join(name).is_file(),
            "STRUCTURAL names {name}, not in broken/"
        );
    }
    for path in &broken {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        // Not TOML: an editor's TOML support reports it before any schema is read.
        let Ok(json) = toml::from_str::<Value>(&text) else {
            assert!(check(path).has_errors(), "{name}: invalid TOML without an error");
            continue;
        };
        let errors = errors(&validator, &json);
        if STRUCTURAL.contains(&name.as_str()) {
            assert!(!errors.is_empty(), "broken/{name}: a mistake of shape the schema accepts");
        }
        let diagnostics = check(path);
        assert!(
            errors.is_empty() || diagnostics.has_errors(),
            "broken/{name}: the schema rejects what the checker accepts:{errors}\nthe checker says:\n{}",
            diagnostics.render()
        );
    }
    for path in files(&here.join("valid"), ".toml") {
        let text = std::fs::read_to_string(&path).unwrap();
        assert_valid(
            &validator,
            "rule-pack.schema.json",
            &toml_json(&text, &shown(&path)),
            &shown(&path),
        );
        let diagnostics = check(&path);
        assert!(!diagnostics.has_errors(), "{}: {}", shown(&path), diagnostics.render());
    }
}

/// Every place in `schema` that describes a key (a member of `properties`), as a path of
/// member names such as `rule.on`, with its schema.
fn keys<'s>(schema: &'s Value, at: &str, out: &mut Vec<(String, &'s Value)>) {
    match schema {
        Value::Object(map) => {
            for (member, value) in map {
                if member == "properties" {
                    for (key, key_schema) in value.as_object().unwrap() {
                        let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                        out.push((path.clone(), key_schema));
                        keys(key_schema, &path, out);
                    }
                } else {
                    keys(value, at, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys(item, at, out)),
        _ => {}
    }
}

/// Every `enum` and `examples` list in `schema`, anywhere.
fn lists<'s>(schema: &'s Value, out: &mut Vec<&'s Vec<Value>>) {
    match schema {
        Value::Object(map) => {
            for (member, value) in map {
                match (member.as_str(), value) {
                    ("enum" | "examples", Value::Array(values)) => out.push(values),
                    _ => lists(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| lists(item, out)),
        _ => {}
    }
}

/// The values a key's schema offers, from its `enum`s (in `anyOf` branches and `items` too).
fn offered(schema: &Value) -> BTreeSet<String> {
    let mut found = Vec::new();
    lists(schema, &mut found);
    found.into_iter().flatten().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_schemas_give_editors_descriptions_and_distinct_choices() {
    for name in ["rule-pack.schema.json", "config.schema.json"] {
        let (schema, _) = schema(name);
        let mut found = Vec::new();
        keys(&schema, "", &mut found);
        assert!(found.len() > 10, "{name}: only {} keys", found.len());
        for (key, key_schema) in &found {
            let description = key_schema.get("description").and_then(Value::as_str);
            assert!(
                description.is_some_and(|d| !d.trim().is_empty()),
                "{name}: `{key}` has no description"
            );
        }
        let mut choices = Vec::new();
        lists(&schema, &mut choices);
        for values in choices {
            let distinct: BTreeSet<String> = values.iter().map(Value::to_string).collect();
            assert_eq!(distinct.len(), values.len(), "{name}: repeated choices in {values:?}");
        }
    }
}

/// Keys whose values are a closed set offer exactly that set.
#[test]
fn closed_sets_are_enums() {
    let events: BTreeSet<String> =
        EventKind::ALL.iter().map(|kind| kind.as_str().to_owned()).collect();
    let set = |values: &[&str]| values.iter().map(|&v| v.to_owned()).collect::<BTreeSet<_>>();
    let brackets = set(&["fresh", "moderate", "depleted", "critical"]);
    let builtin: BTreeSet<String> = files(&root().join("rules"), ".toml")
        .iter()
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let expected = [
        ("rule-pack.schema.json", "rule.on", events.clone()),
        ("rule-pack.schema.json", "rule.decision", set(&["allow", "ask", "deny", "block"])),
        (
            "rule-pack.schema.json",
            "rule.layer",
            set(&[
                "constitution",
                "global",
                "agent",
                "workflow",
                "task",
                "squad",
                "keyword",
                "command",
            ]),
        ),
        ("rule-pack.schema.json", "rule.bracket", brackets.clone()),
        ("rule-pack.schema.json", "rule.once", set(&["session", "compaction"])),
        ("rule-pack.schema.json", "rule.fail", set(&["open", "closed"])),
        (
            "rule-pack.schema.json",
            "rule.recall.from",
            set(&["path", "prompt", "handoff", "sessions"]),
        ),
        ("rule-pack.schema.json", "test.event.hook_event_name", events),
        ("rule-pack.schema.json", "test.given.bracket", brackets.clone()),
        ("rule-pack.schema.json", "test.expect.bracket", brackets),
        (
            "rule-pack.schema.json",
            "test.expect.decision",
            set(&["none", "allow", "ask", "deny", "block"]),
        ),
        ("config.schema.json", "builtin", builtin),
    ];
    for (name, key, values) in expected {
        let (schema, _) = schema(name);
        let mut found = Vec::new();
        keys(&schema, "", &mut found);
        let (_, key_schema) = found
            .iter()
            .find(|(path, _)| path == key)
            .unwrap_or_else(|| panic!("{name}: no key `{key}`"));
        assert_eq!(offered(key_schema), values, "{name}: `{key}` offers other values");
    }
}
