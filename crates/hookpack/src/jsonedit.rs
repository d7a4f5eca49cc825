//! Edits a JSON document as text, so that every byte an edit does not touch stays as it was:
//! key order, indentation, spacing, number spellings and escapes of the user's `settings.json`.
//!
//! [`parse`] maps the document (checked first by `serde_json`) to the byte spans of its values;
//! the edits insert, remove or replace one value and its separator. An insertion and the removal
//! of what it inserted give back the very bytes there were, except in a container that was empty
//! (which is written back as `{}` or `[]`).

use std::fmt::Write as _;

/// A value of the document and where it lies.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Its first byte.
    pub(crate) start: usize,
    /// One past its last byte.
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, a number, `true`, `false` or `null`.
    Scalar,
}

/// A member of an object.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) key: String,
    /// Where its key's opening quote is.
    pub(crate) key_start: usize,
    pub(crate) value: Node,
}

impl Node {
    /// The members, when an object.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The items, when an array.
    pub(crate) fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The value of member `key` (the last one, as JavaScript's `JSON.parse` keeps it), and its
    /// index among the members.
    pub(crate) fn member(&self, key: &str) -> Option<(usize, &Node)> {
        self.members()?
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| m.key == key)
            .map(|(i, m)| (i, &m.value))
    }
}

/// Maps `text`, a JSON document.
///
/// # Errors
///
/// When it is not valid JSON (`serde_json`'s message, with its line and column).
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())?;
    let mut parser = Parser { text: text.as_bytes(), at: 0 };
    parser.skip_space();
    let node = parser.value().ok_or_else(|| "not a JSON document".to_owned())?;
    Ok(node)
}

/// A parser of text `serde_json` has accepted (so it is valid, and nested at most 128 deep).
struct Parser<'t> {
    text: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn value(&mut self) -> Option<Node> {
        let start = self.at;
        let kind = match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_space();
                    match self.peek()? {
                        b'}' => break,
                        b',' => self.at += 1,
                        b'"' => {
                            let key_start = self.at;
                            self.string()?;
                            let key =
                                serde_json::from_slice(&self.text[key_start..self.at]).ok()?;
                            self.skip_space();
                            (self.peek()? == b':').then_some(())?;
                            self.at += 1;
                            self.skip_space();
                            let value = self.value()?;
                            members.push(Member { key, key_start, value });
                        }
                        _ => return None,
                    }
                }
                self.at += 1;
                Kind::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    match self.peek()? {
                        b']' => break,
                        b',' => self.at += 1,
                        _ => items.push(self.value()?),
                    }
                }
                self.at += 1;
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                Kind::Scalar
            }
        };
        Some(Node { start, end: self.at, kind })
    }

    /// Past a string, its quotes included.
    fn string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        Some(())
    }
}

/// How the document is laid out, for what an edit writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    /// One level of indentation; `None`: the document is on one line.
    pub(crate) indent: Option<String>,
    /// The line ending: `\r\n` when the document uses it, else `\n`.
    pub(crate) newline: &'static str,
}

impl Style {
    /// The layout of `text`: on one line, or indented by its smallest indentation (two spaces
    /// when nothing is indented yet, as Claude Code writes its settings).
    pub(crate) fn of(text: &str) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let trimmed = text.trim();
        let empty_object = trimmed.strip_prefix('{').and_then(|t| t.strip_suffix('}'));
        if !trimmed.contains('\n') && empty_object.is_none_or(|inside| !inside.trim().is_empty()) {
            return Style { indent: None, newline };
        }
        let unit = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| &line[..line.len() - line.trim_start().len()])
            .filter(|lead| !lead.is_empty() && lead.len() <= MAX_UNIT)
            .min_by_key(|lead| lead.len())
            .map_or_else(
                || "  ".to_owned(),
                |lead| if lead.starts_with('\t') { "\t".to_owned() } else { lead.to_owned() },
            );
        Style { indent: Some(unit), newline }
    }
}

/// Indentation longer than this is not taken for a unit.
const MAX_UNIT: usize = 16;

/// A JSON value to write, its keys in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Object(Vec<(String, Value)>),
    Array(Vec<Value>),
    String(String),
}

impl Value {
    /// Written in `style`, its lines after the first indented by `base`.
    pub(crate) fn render(&self, style: &Style, base: &str) -> String {
        let mut out = String::new();
        self.write(&mut out, style, base);
        out
    }

    fn write(&self, out: &mut String, style: &Style, base: &str) {
        let (open, close, count) = match self {
            Value::String(text) => {
                out.push_str(&serde_json::to_string(text).unwrap_or_default());
                return;
            }
            Value::Object(members) => ('{', '}', members.len()),
            Value::Array(items) => ('[', ']', items.len()),
        };
        out.push(open);
        let inner = style.indent.as_ref().map(|unit| format!("{base}{unit}"));
        for i in 0..count {
            if i > 0 {
                out.push(',');
            }
            match &inner {
                Some(inner) => {
                    out.push_str(style.newline);
                    out.push_str(inner);
                }
                None if i > 0 => out.push(' '),
                None => {}
            }
            let inner = inner.as_deref().unwrap_or(base);
            match self {
                Value::Object(members) => {
                    let (key, value) = &members[i];
                    let _ = write!(out, "{}: ", serde_json::to_string(key).unwrap_or_default());
                    value.write(out, style, inner);
                }
                Value::Array(items) => items[i].write(out, style, inner),
                Value::String(_) => {}
            }
        }
        if count > 0 && style.indent.is_some() {
            out.push_str(style.newline);
            out.push_str(base);
        }
        out.push(close);
    }
}

/// The whitespace that starts the line holding byte `at`, when only whitespace precedes `at`
/// on its line.
fn lead_of(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let lead = &text[line_start..at];
    lead.chars().all(|c| c == ' ' || c == '\t').then_some(lead)
}

/// The indentation of the line holding byte `at`.
fn indentation_of_line(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Where the next entry of `container` goes and how it is indented: after its last entry, at
/// that entry's indentation; in an empty container, one level in from the container's line.
fn entry_indent(
    text: &str,
    container: &Node,
    first_entry_start: Option<usize>,
    style: &Style,
) -> String {
    if let Some(start) = first_entry_start
        && let Some(lead) = lead_of(text, start)
    {
        return lead.to_owned();
    }
    let unit = style.indent.as_deref().unwrap_or("");
    format!("{}{unit}", indentation_of_line(text, container.start))
}

/// `text` with `value` added as member `key` at the end of `object`.
pub(crate) fn insert_member(
    text: &str,
    object: &Node,
    key: &str,
    value: &Value,
    style: &Style,
) -> String {
    let members = object.members().unwrap_or_default();
    let last = members.last();
    let indent = entry_indent(text, object, last.map(|m| m.key_start), style);
    let entry = format!(
        "{}: {}",
        serde_json::to_string(key).unwrap_or_default(),
        value.render(style, &indent)
    );
    insert_entry(text, object, last.map(|m| m.value.end), &indent, &entry, style)
}

/// `text` with `value` added as the last item of `array`.
pub(crate) fn append_item(text: &str, array: &Node, value: &Value, style: &Style) -> String {
    let items = array.items().unwrap_or_default();
    let last = items.last();
    let indent = entry_indent(text, array, last.map(|n| n.start), style);
    let entry = value.render(style, &indent);
    insert_entry(text, array, last.map(|n| n.end), &indent, &entry, style)
}

fn insert_entry(
    text: &str,
    container: &Node,
    after: Option<usize>,
    indent: &str,
    entry: &str,
    style: &Style,
) -> String {
    let mut out = String::with_capacity(text.len() + entry.len() + 8);
    match after {
        Some(end) => {
            out.push_str(&text[..end]);
            out.push(',');
            match style.indent {
                Some(_) => {
                    out.push_str(style.newline);
                    out.push_str(indent);
                }
                None => out.push(' '),
            }
            out.push_str(entry);
            out.push_str(&text[end..]);
        }
        None => {
            // An empty container: its inside is written anew.
            out.push_str(&text[..=container.start]);
            match style.indent {
                Some(_) => {
                    out.push_str(style.newline);
                    out.push_str(indent);
                    out.push_str(entry);
                    out.push_str(style.newline);
                    out.push_str(indentation_of_line(text, container.start));
                }
                None => out.push_str(entry),
            }
            out.push_str(&text[container.end - 1..]);
        }
    }
    out
}

/// `text` without entry `index` of `container` (a member of an object, an item of an array)
/// and its separator.
pub(crate) fn remove_entry(text: &str, container: &Node, index: usize) -> String {
    let spans: Vec<(usize, usize)> = match &container.kind {
        Kind::Object(members) => members.iter().map(|m| (m.key_start, m.value.end)).collect(),
        Kind::Array(items) => items.iter().map(|n| (n.start, n.end)).collect(),
        Kind::Scalar => return text.to_owned(),
    };
    let Some(&(start, end)) = spans.get(index) else { return text.to_owned() };
    let range = if index > 0 {
        // From the end of the entry before: its comma and the space before this one.
        spans[index - 1].1..end
    } else if let Some(&(next, _)) = spans.get(1) {
        start..next
    } else {
        container.start + 1..container.end - 1
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..range.start]);
    out.push_str(&text[range.end..]);
    out
}

/// `text` with `node` replaced by `value`, written at the indentation of `node`'s line.
pub(crate) fn replace(text: &str, node: &Node, value: &Value, style: &Style) -> String {
    let indent = indentation_of_line(text, node.start);
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..node.start]);
    out.push_str(&value.render(style, indent));
    out.push_str(&text[node.end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks() -> Value {
        Value::Object(vec![(
            "Stop".into(),
            Value::Array(vec![Value::Object(vec![(
                "hooks".into(),
                Value::Array(vec![Value::Object(vec![
                    ("type".into(), Value::String("command".into())),
                    ("command".into(), Value::String("hookpack-stop".into())),
                ])]),
            )])]),
        )])
    }

    /// Inserting `hooks` into the root and removing it again.
    fn round_trip(text: &str) -> String {
        let style = Style::of(text);
        let root = parse(text).unwrap();
        let inserted = insert_member(text, &root, "hooks", &hooks(), &style);
        let parsed: serde_json::Value = serde_json::from_str(&inserted).unwrap();
        assert_eq!(
            parsed["hooks"]["Stop"][0]["hooks"][0]["command"], "hookpack-stop",
            "{inserted}"
        );
        let root = parse(&inserted).unwrap();
        let (index, _) = root.member("hooks").unwrap();
        let removed = remove_entry(&inserted, &root, index);
        assert_eq!(removed, text, "inserted:\n{inserted}");
        inserted
    }

    #[test]
    fn an_insertion_is_undone_byte_for_byte() {
        for text in [
            "{\n  \"model\": \"opus\"\n}\n",
            "{\n    \"a\": 1,\n    \"b\": [1, 2]\n}",
            "{\n\t\"a\": {\n\t\t\"x\": 1e3\n\t}\n}\n",
            "{\"a\":1}",
            "  {  \"a\" : \"\\u00e9\"  }  ",
            "{\r\n  \"a\": [\r\n    1\r\n  ]\r\n}\r\n",
        ] {
            round_trip(text);
        }
        let inserted = round_trip("{\n  \"model\": \"opus\"\n}\n");
        assert_eq!(
            inserted,
            "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"hookpack-stop\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
        );
        let crlf = round_trip("{\r\n  \"a\": [\r\n    1\r\n  ]\r\n}\r\n");
        assert!(!crlf.replace("\r\n", "").contains('\n'), "{crlf:?}");
        let tabs = round_trip("{\n\t\"a\": {\n\t\t\"x\": 1e3\n\t}\n}\n");
        assert!(tabs.contains("\n\t\"hooks\": {\n\t\t\"Stop\": [\n"), "{tabs}");
        let compact = round_trip("{\"a\":1}");
        assert_eq!(
            compact,
            r#"{"a":1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "hookpack-stop"}]}]}}"#
        );
    }

    #[test]
    fn an_empty_object_is_filled_at_its_indentation_and_emptied() {
        let text = "{\n  \"hooks\": {}\n}\n";
        let style = Style::of(text);
        let root = parse(text).unwrap();
        let (_, hooks) = root.member("hooks").unwrap();
        let array = Value::Array(vec![Value::String("x".into())]);
        let filled = insert_member(text, hooks, "Stop", &array, &style);
        assert_eq!(filled, "{\n  \"hooks\": {\n    \"Stop\": [\n      \"x\"\n    ]\n  }\n}\n");
        let root = parse(&filled).unwrap();
        let (_, hooks) = root.member("hooks").unwrap();
        assert_eq!(remove_entry(&filled, hooks, 0), text);
    }

    #[test]
    fn entries_are_removed_with_their_own_separator() {
        let text = "[1, 2, 3]";
        let array = parse(text).unwrap();
        assert_eq!(remove_entry(text, &array, 0), "[2, 3]");
        assert_eq!(remove_entry(text, &array, 1), "[1, 3]");
        assert_eq!(remove_entry(text, &array, 2), "[1, 2]");
        let one = "{ \"a\": [ ] }";
        let root = parse(one).unwrap();
        assert_eq!(remove_entry(one, &root, 0), "{}");
        let style = Style::of(text);
        let appended = append_item(text, &array, &Value::String("4".into()), &style);
        assert_eq!(appended, "[1, 2, 3, \"4\"]");
    }

    #[test]
    fn a_replaced_value_keeps_its_place_and_indentation() {
        let text = "{\n  \"a\": [\n    1\n  ],\n  \"b\": 2\n}";
        let style = Style::of(text);
        let root = parse(text).unwrap();
        let (_, a) = root.member("a").unwrap();
        let replaced = replace(text, a, &Value::Array(vec![Value::String("x".into())]), &style);
        assert_eq!(replaced, "{\n  \"a\": [\n    \"x\"\n  ],\n  \"b\": 2\n}");
    }

    #[test]
    fn the_last_of_duplicate_keys_is_the_one_read_and_invalid_text_is_refused() {
        let text = r#"{"a": 1, "a": [2]}"#;
        let root = parse(text).unwrap();
        let (index, value) = root.member("a").unwrap();
        assert_eq!(index, 1);
        assert!(value.items().is_some());
        assert!(parse("{\"a\": 1,}").is_err());
        assert!(parse("// comment\n{}").is_err());
        assert!(parse("").is_err());
    }
}
