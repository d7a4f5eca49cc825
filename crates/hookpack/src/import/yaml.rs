//! The YAML front matter of a markdown file, as far as rule files use it: scalars (plain,
//! quoted), inline lists (`[a, "b"]`), block lists of scalars and of small maps. Anything else
//! is kept as its text, for the importer to report. [`Flavor::Hookify`] reads values as hookify's
//! own parser does: quotes stripped, no escapes read, no `#` comments.

/// The most front matter read, and the deepest nesting.
const MAX_FRONT_MATTER_BYTES: usize = 64 << 10;
const MAX_DEPTH: usize = 16;

/// How values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// As YAML reads them: `"…"` with escapes, `'…'` with `''`, ` #` comments.
    Yaml,
    /// As hookify's parser reads them: the quotes stripped, nothing else.
    Hookify,
}

/// A value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Yaml {
    Str(String),
    List(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The strings of a list, or the one string (a comma-separated list is split by the caller).
    pub(crate) fn strings(&self) -> Vec<String> {
        match self {
            Yaml::Str(s) => vec![s.clone()],
            Yaml::List(items) => {
                items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect()
            }
            Yaml::Map(_) => Vec::new(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// The front matter of `text` (between a first line `---` and the next `---`) as a map, and the
/// body after it; no front matter: an empty map and the whole text.
///
/// # Errors
///
/// When the front matter is over 64 KiB.
pub(crate) fn front_matter(text: &str, flavor: Flavor) -> Result<(Yaml, String), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Ok((Yaml::Map(Vec::new()), text.to_owned()));
    }
    let mut head = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        head.push(line);
    }
    if !closed {
        return Ok((Yaml::Map(Vec::new()), text.to_owned()));
    }
    if head.iter().map(|l| l.len() + 1).sum::<usize>() > MAX_FRONT_MATTER_BYTES {
        return Err(format!("front matter over {} KiB", MAX_FRONT_MATTER_BYTES >> 10));
    }
    let body: Vec<&str> = lines.collect();
    Ok((map(&head, 0, Reading { flavor, depth: 0 }).0, body.join("\n")))
}

/// How a block is read: the flavor, and how deep it is.
#[derive(Clone, Copy)]
struct Reading {
    flavor: Flavor,
    depth: usize,
}

impl Reading {
    fn deeper(self) -> Reading {
        Reading { depth: self.depth + 1, ..self }
    }
}

/// Whether a line holds nothing: spaces, or a comment.
fn is_blank(line: &str) -> bool {
    line.trim().is_empty() || line.trim_start().starts_with('#')
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The map whose keys are at indentation `at`, from the start of `lines`; and how many lines it
/// took.
fn map(lines: &[&str], at: usize, how: Reading) -> (Yaml, usize) {
    let mut members = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            i += 1;
            continue;
        }
        if indent(line) < at {
            break;
        }
        let Some((key, rest)) = line.trim().split_once(':') else {
            i += 1;
            continue;
        };
        let key = unquote(key.trim(), how.flavor);
        let rest = rest.trim();
        i += 1;
        if !rest.is_empty() || how.depth >= MAX_DEPTH {
            members.push((key, scalar_or_inline(rest, how.flavor)));
            continue;
        }
        // A block below: a list (`- …`) or a map, more indented (a list may sit at the key's own
        // indentation).
        let below = lines[i..].iter().position(|l| !is_blank(l));
        let Some(next) = below.map(|n| i + n) else {
            members.push((key, Yaml::Str(String::new())));
            break;
        };
        let depth = indent(lines[next]);
        if lines[next].trim_start().starts_with("- ") || lines[next].trim() == "-" {
            if depth < at {
                members.push((key, Yaml::Str(String::new())));
                continue;
            }
            let (value, used) = list(&lines[next..], depth, how.deeper());
            members.push((key, value));
            i = next + used;
        } else if depth > at {
            let (value, used) = map(&lines[next..], depth, how.deeper());
            members.push((key, value));
            i = next + used;
        } else {
            members.push((key, Yaml::Str(String::new())));
        }
    }
    (Yaml::Map(members), i)
}

/// The list whose `- ` marks are at indentation `at`.
fn list(lines: &[&str], at: usize, how: Reading) -> (Yaml, usize) {
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            i += 1;
            continue;
        }
        if indent(line) != at || !(line.trim_start().starts_with("- ") || line.trim() == "-") {
            break;
        }
        let item = line.trim_start()[1..].trim_start();
        let item_at = at + (line.trim_start().len() - item.len());
        i += 1;
        if item.contains(": ") || item.ends_with(':') {
            // A map: its first key on the dash's line, the others below at the same column.
            let mut block = vec![format!("{}{item}", " ".repeat(item_at))];
            while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) >= item_at) {
                block.push(lines[i].to_owned());
                i += 1;
            }
            let block: Vec<&str> = block.iter().map(String::as_str).collect();
            items.push(map(&block, item_at, how.deeper()).0);
        } else {
            items.push(scalar_or_inline(item, how.flavor));
        }
    }
    (Yaml::List(items), i)
}

fn scalar_or_inline(text: &str, flavor: Flavor) -> Yaml {
    let text = if flavor == Flavor::Yaml { strip_comment(text) } else { text };
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let items = split_inline(inner).into_iter();
        return Yaml::List(items.map(|item| Yaml::Str(unquote(&item, flavor))).collect());
    }
    Yaml::Str(unquote(text, flavor))
}

/// `text` without a ` #` comment outside quotes.
fn strip_comment(text: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous == ' ' => return text[..at].trim_end(),
            _ => {}
        }
        previous = c;
    }
    text
}

/// The items of an inline list's inside, split at commas outside quotes.
fn split_inline(inner: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (None, ',') => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    items.push(current);
    items.into_iter().map(|i| i.trim().to_owned()).filter(|i| !i.is_empty()).collect()
}

/// A scalar without its quotes (`"…"` with its escapes read, `'…'` with `''`; in hookify's
/// flavor, the quotes only).
fn unquote(text: &str, flavor: Flavor) -> String {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        if flavor == Flavor::Hookify {
            return inner.to_owned();
        }
        return serde_json::from_str(text).unwrap_or_else(|_| inner.to_owned());
    }
    if flavor == Flavor::Hookify
        && let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\''))
    {
        return inner.to_owned();
    }
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_as_rule_files_write_it() {
        let text = "---\nname: block-rm   # a comment\nenabled: true\npaths:\n  - \"src/**/*.ts\"\n  - 'lib/*'\nglobs: [a, \"b,c\"]\nconditions:\n  - field: command\n    operator: regex_match\n    pattern: rm\\s+-rf\n  - field: file_path\n    operator: contains\n    pattern: \".env\"\n---\n\nBody line.\n";
        let (head, body) = front_matter(text, Flavor::Yaml).unwrap();
        assert_eq!(body.trim(), "Body line.");
        assert_eq!(head.get("name").and_then(Yaml::as_str), Some("block-rm"));
        assert_eq!(head.get("paths").unwrap().strings(), ["src/**/*.ts", "lib/*"]);
        assert_eq!(head.get("globs").unwrap().strings(), ["a", "b,c"]);
        let Some(Yaml::List(conditions)) = head.get("conditions") else { panic!("{head:?}") };
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[0].get("pattern").and_then(Yaml::as_str), Some("rm\\s+-rf"));
        assert_eq!(conditions[1].get("pattern").and_then(Yaml::as_str), Some(".env"));
        let (head, body) = front_matter("no front matter\n", Flavor::Yaml).unwrap();
        assert_eq!((head, body.as_str()), (Yaml::Map(Vec::new()), "no front matter\n"));
        // hookify's own reading: `#` is the pattern's, and `\b` stays a backslash and a b.
        let text = "---\npattern: \"\\bsudo\\b\"\nother: # noqa\n---\n";
        let (head, _) = front_matter(text, Flavor::Hookify).unwrap();
        assert_eq!(head.get("pattern").and_then(Yaml::as_str), Some("\\bsudo\\b"));
        assert_eq!(head.get("other").and_then(Yaml::as_str), Some("# noqa"));
        let deep: String = (0..40).map(|n| "  ".repeat(n) + "- a:\n").collect();
        assert!(front_matter(&format!("---\nk:\n{deep}---\n"), Flavor::Yaml).is_ok());
        let big = format!("---\nk: {}\n---\n", "x".repeat(70_000));
        assert!(front_matter(&big, Flavor::Yaml).is_err());
    }
}
