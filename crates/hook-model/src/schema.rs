//! JSON Schemas of the hook inputs, generated from the types (feature `schema`).
//!
//! `cargo xtask codegen` writes them to `schemas/hook-input/<event-kebab>.schema.json`; a test
//! fails when the committed files drift from the types.

use serde_json::{Map, Value, json};

#[allow(clippy::wildcard_imports, reason = "the event list names every input type")]
use crate::input::*;
use crate::{Common, EventKind};

macro_rules! define_event_schema {
    ($( $name:ident, $kebab:literal, $input:ident, $output:ident; )+) => {
        fn event_schema(kind: EventKind) -> Value {
            match kind {
                $( EventKind::$name => schemars::schema_for!($input).to_value(), )+
            }
        }
    };
}

for_each_event!(define_event_schema);

/// The JSON Schema of `kind`'s payload: the common fields, the event's own fields and
/// `hook_event_name`, in JSON Schema draft 2020-12. Unknown fields are allowed, as Claude Code
/// adds fields without notice.
pub fn input_schema(kind: EventKind) -> Value {
    let common = schemars::schema_for!(Common).to_value();
    let event = event_schema(kind);

    let mut properties = Map::new();
    properties.insert(
        "hook_event_name".into(),
        json!({ "description": "The event's name.", "const": kind.as_str() }),
    );
    let mut required = vec![Value::from("hook_event_name")];
    let mut defs = Map::new();
    for part in [&common, &event] {
        if let Some(Value::Object(props)) = part.get("properties") {
            properties.extend(props.clone());
        }
        if let Some(Value::Array(names)) = part.get("required") {
            required.extend(names.iter().cloned());
        }
        if let Some(Value::Object(part_defs)) = part.get("$defs") {
            defs.extend(part_defs.clone());
        }
    }

    let mut schema = Map::new();
    schema.insert("$schema".into(), "https://json-schema.org/draft/2020-12/schema".into());
    schema.insert("title".into(), format!("{kind} hook input").into());
    if let Some(description) = event.get("description") {
        schema.insert("description".into(), description.clone());
    }
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields lint knows a payload by ([`crate::input_fields`]) are the schema's.
    #[test]
    fn the_schema_names_the_input_fields() {
        for &kind in EventKind::ALL {
            let schema = input_schema(kind);
            let mut in_schema: Vec<&str> =
                schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
            let mut fields: Vec<&str> = crate::input_fields(kind).collect();
            in_schema.sort_unstable();
            fields.sort_unstable();
            assert_eq!(in_schema, fields, "{kind}");
        }
    }
}
