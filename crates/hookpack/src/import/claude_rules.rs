//! `import claude-rules <.claude/rules>`: Claude Code's own rule files (markdown, with `paths:`
//! globs in their front matter) as path rules. Claude Code loads such a file when the model
//! reads a matching file, not when it writes or creates one; the rule imported gives the text
//! before a read, a write or an edit of a matching file, once per session.

use std::path::Path;

use globset::GlobBuilder;

use super::yaml::{Flavor, Yaml, front_matter};
use super::{Pack, Translation, rule_id, sample_path, texts, toml_list, toml_str, unique};

/// The tools whose file path the imported rules read.
const TOOLS: &str = "Read|Write|Edit|MultiEdit|NotebookEdit";

pub(super) fn translate(dir: &Path) -> anyhow::Result<Translation> {
    let mut out = Translation::default();
    let mut pack = Pack::new(
        "claude-rules",
        "Claude Code's rule files, given before a matching file is read, written or edited",
    );
    let mut ids = Vec::new();
    let is_rule = |name: &str| name.to_ascii_lowercase().ends_with(".md");
    for (place, path, text) in texts(dir, 8, &is_rule, &mut out)? {
        let (head, body) = match front_matter(&text, Flavor::Yaml) {
            Ok(read) => read,
            Err(why) => {
                out.untranslated.push(format!("{place}: {why}"));
                continue;
            }
        };
        let body = body.trim();
        let mut globs = head.get("paths").map(Yaml::strings).unwrap_or_default();
        if let Some(cursor) = head.get("globs") {
            // Cursor's key, which Claude Code does not document: a comma-separated string too.
            out.notes.push(format!("{place}: `globs:` (Cursor's key) read as `paths:`"));
            globs.extend(cursor.strings().iter().flat_map(|g| split_globs(g)));
        }
        if let Yaml::Map(members) = &head {
            for (key, _) in members {
                if !matches!(key.as_str(), "paths" | "globs" | "description") {
                    out.untranslated.push(format!(
                        "{place}: front matter `{key}:` has no meaning for hookpack; left out"
                    ));
                }
            }
        }
        if body.is_empty() {
            out.untranslated
                .push(format!("{place}: no text after the front matter; nothing to give"));
            continue;
        }
        if globs.is_empty() {
            out.untranslated.push(format!(
                "{place}: no `paths:`, so Claude Code loads it at every session's start already; left to it"
            ));
            continue;
        }
        let mut patterns = Vec::new();
        for glob in globs.iter().map(|g| g.trim()).filter(|g| !g.is_empty()) {
            let relative = glob.trim_start_matches("./");
            if relative != glob {
                out.notes.push(format!("{place}: glob `{glob}` read as `{relative}` (paths are from the project's root)"));
            }
            if GlobBuilder::new(relative).literal_separator(true).build().is_err() {
                out.untranslated
                    .push(format!("{place}: glob `{glob}` is not a glob hookpack reads; left out"));
                continue;
            }
            patterns.push(relative.to_owned());
        }
        if patterns.is_empty() {
            continue;
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("rule");
        let id = unique(&rule_id(stem), &mut ids);
        let description = head.get("description").and_then(Yaml::as_str).map_or_else(
            || format!("{place}, before a matching file is read or changed"),
            str::to_owned,
        );
        pack.rule(
            &format!("From {place}."),
            &[
                ("id", toml_str(&id)),
                ("description", toml_str(&description)),
                ("on", toml_str("PreToolUse")),
                ("tool", toml_str(TOOLS)),
                ("paths", toml_list(&patterns)),
                ("once", toml_str("session")),
                // Claude Code loads a rule file whole: no budget drops it.
                ("pinned", "true".to_owned()),
                ("context", toml_str(body)),
            ],
        );
        draw_test(&mut pack, &mut out, &id, &place, &patterns);
    }
    if pack.rule_count() > 0 {
        out.notes.push(
            "Claude Code still loads the rule files themselves when a matching file is read: remove \
             their `paths:` files (or the files) once the pack gives them"
                .to_owned(),
        );
        out.packs.push(pack);
    }
    Ok(out)
}

/// Cursor's comma-separated globs, split at the commas outside `{…}`.
fn split_globs(text: &str) -> Vec<String> {
    let mut globs = Vec::new();
    let (mut current, mut depth) = (String::new(), 0usize);
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                globs.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    globs.push(current);
    globs.into_iter().map(|g| g.trim().to_owned()).filter(|g| !g.is_empty()).collect()
}

/// A test of rule `id`: writing a file its globs match gives its text.
fn draw_test(pack: &mut Pack, out: &mut Translation, id: &str, place: &str, patterns: &[String]) {
    let Some(file) = patterns.iter().find_map(|g| sample_path(g)) else {
        out.notes.push(format!("{place}: no file path could be drawn from its globs for a test"));
        return;
    };
    pack.test(
        &format!("{id}: writing {file} gives the rule"),
        &format!(
            "{{ hook_event_name = \"PreToolUse\", tool_name = \"Write\", tool_input = {{ file_path = {}, content = \"\" }} }}",
            toml_str(&file)
        ),
        &format!("{{ rules = [{}] }}", toml_str(&format!("claude-rules/{id}"))),
        "",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_drawn_from_each_glob() {
        assert_eq!(sample_path("src/api/**/*.ts").as_deref(), Some("src/api/x.ts"));
        assert_eq!(sample_path("**/*.{ts,tsx}").as_deref(), Some("x.ts"));
        assert_eq!(sample_path("docs/[a-z]*.md").as_deref(), Some("docs/ax.md"));
        assert_eq!(sample_path("!vendor/**"), None);
        assert_eq!(split_globs("src/**/*.{ts,tsx}, lib/*.js"), ["src/**/*.{ts,tsx}", "lib/*.js"]);
    }
}
