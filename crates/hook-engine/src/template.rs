//! `rewrite` templates: the new value of a tool input field, made from the call's own fields.
//!
//! A template is text with placeholders: `{field}` is the call's `tool_input.field` (a string),
//! `{field#prefix}` the same without `prefix`, which it must start with; `{{` and `}}` are
//! literal braces. The compiler checks the syntax ([`parse`]); the hook expands
//! ([`expand`]). A placeholder whose field is missing or not a string, or whose prefix is not
//! there, makes the rewrite not apply: a call is never rewritten into something half-made.

use serde_json::{Map, Value};

/// The longest value a rewrite makes, in bytes: longer, and it does not apply.
pub const MAX_REWRITTEN_BYTES: usize = 1 << 20;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'t> {
    /// Literal text.
    Text(&'t str),
    /// `{field}` or `{field#prefix}`.
    Field {
        /// The input field.
        name: &'t str,
        /// What the value must start with, removed.
        strip: Option<&'t str>,
    },
}

/// The pieces of `template`.
///
/// # Errors
///
/// What is wrong with it, for the pack's author.
pub fn parse(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let Some(at) = rest.find(['{', '}']) else {
            pieces.push(Piece::Text(rest));
            break;
        };
        if at > 0 {
            pieces.push(Piece::Text(&rest[..at]));
        }
        let brace = &rest[at..];
        if let Some(after) = brace.strip_prefix("{{") {
            pieces.push(Piece::Text("{"));
            rest = after;
        } else if let Some(after) = brace.strip_prefix("}}") {
            pieces.push(Piece::Text("}"));
            rest = after;
        } else if brace.starts_with('}') {
            return Err("a lone `}` (write `}}` for a brace)".to_owned());
        } else {
            let Some(end) = brace.find('}') else {
                return Err("a `{` that is never closed (write `{{` for a brace)".to_owned());
            };
            let inside = &brace[1..end];
            let (name, strip) = match inside.split_once('#') {
                Some((name, prefix)) => (name, Some(prefix)),
                None => (inside, None),
            };
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "`{{{inside}}}` does not name an input field (`{{command}}`, `{{command#rm }}`)"
                ));
            }
            if strip == Some("") {
                return Err(format!("`{{{inside}}}` removes an empty prefix"));
            }
            pieces.push(Piece::Field { name, strip });
            rest = &brace[end + 1..];
        }
    }
    Ok(pieces)
}

/// `template` expanded with the fields of `input`; `Ok(None)` when it does not apply (a field
/// missing or not a string, a prefix not there, a result over [`MAX_REWRITTEN_BYTES`], or a
/// template that does not parse). Every byte looked at or copied is first passed to `charge`,
/// whose error ends the expansion.
///
/// # Errors
///
/// What `charge` returns.
pub fn expand<E>(
    template: &str,
    input: &Map<String, Value>,
    mut charge: impl FnMut(usize) -> Result<(), E>,
) -> Result<Option<String>, E> {
    charge(template.len())?;
    let Ok(pieces) = parse(template) else { return Ok(None) };
    let mut out = String::new();
    for piece in pieces {
        let text = match piece {
            Piece::Text(text) => text,
            Piece::Field { name, strip } => {
                let Some(value) = input.get(name).and_then(Value::as_str) else { return Ok(None) };
                match strip {
                    Some(prefix) => match value.strip_prefix(prefix) {
                        Some(rest) => rest,
                        None => return Ok(None),
                    },
                    None => value,
                }
            }
        };
        if out.len() + text.len() > MAX_REWRITTEN_BYTES {
            return Ok(None);
        }
        charge(text.len())?;
        out.push_str(text);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn expand(template: &str, input: &Map<String, Value>) -> Option<String> {
        super::expand(template, input, |_| Ok::<(), ()>(())).unwrap_or_default()
    }

    fn input() -> Map<String, Value> {
        json!({"command": "rm -r build", "timeout": 5}).as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn placeholders_take_the_call_s_fields() {
        assert_eq!(
            expand("{command} --dry-run", &input()).as_deref(),
            Some("rm -r build --dry-run")
        );
        assert_eq!(expand("trash {command#rm -r }", &input()).as_deref(), Some("trash build"));
        assert_eq!(
            expand("{{literal}} {command}", &input()).as_deref(),
            Some("{literal} rm -r build")
        );
    }

    #[test]
    fn a_rewrite_that_cannot_be_made_does_not_apply() {
        assert_eq!(expand("trash {command#mv }", &input()), None, "prefix not there");
        assert_eq!(expand("{missing}", &input()), None, "no such field");
        assert_eq!(expand("{timeout}", &input()), None, "not a string");
        let huge = "{command}".repeat(MAX_REWRITTEN_BYTES / 8);
        assert_eq!(expand(&huge, &input()), None, "too long");
    }

    #[test]
    fn every_byte_is_charged_before_it_is_copied() {
        let mut charged = 0;
        let made = super::expand("{command}{command}", &input(), |n| {
            charged += n;
            if charged > 30 { Err("spent") } else { Ok(()) }
        });
        assert_eq!(made, Err("spent"), "18 + 11 + 11 bytes: the second copy is refused");
    }

    #[test]
    fn bad_templates_say_why() {
        for (template, why) in [
            ("{command", "never closed"),
            ("a } b", "lone `}`"),
            ("{}", "does not name an input field"),
            ("{a b}", "does not name an input field"),
            ("{command#}", "empty prefix"),
        ] {
            let err = parse(template).unwrap_err();
            assert!(err.contains(why), "{template}: {err}");
        }
        assert_eq!(
            parse("x{a#p}y").unwrap(),
            [Piece::Text("x"), Piece::Field { name: "a", strip: Some("p") }, Piece::Text("y")]
        );
    }
}
