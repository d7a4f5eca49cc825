//! What SQL text does to the data, for guards: its statements read (strings, quoted names and
//! comments skipped, so that `SELECT 'DROP TABLE x'` drops nothing), each given the
//! [`Effect`] that loses data, and the effects of a transaction that ends in `ROLLBACK`
//! dropped. What a `command` pattern's `sql` judges (reference §2.1).
//!
//! It is a reader for guards, not a parser: a statement's verb is its first word (after a
//! `WITH …` or `EXPLAIN ANALYZE`), and the words that matter are looked for outside brackets.
//! Linear in the text.

/// What a statement does that loses data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// `DROP TABLE`, `DROP DATABASE`, `DROP SCHEMA`, `DROP KEYSPACE`; `DROP OWNED` (everything a
    /// role owns), `DROP USER`, `DROP ROLE`, `DROP TABLESPACE`.
    Drop,
    /// `TRUNCATE`.
    Truncate,
    /// `DELETE` without a `WHERE`, or with one that holds for every row (`WHERE 1=1`).
    DeleteAll,
    /// `UPDATE … SET` without a `WHERE`, or with one that holds for every row.
    UpdateAll,
    /// `ALTER TABLE … DROP [COLUMN]`.
    DropColumn,
}

impl Effect {
    /// Every effect.
    pub const ALL: [Effect; 5] =
        [Effect::Drop, Effect::Truncate, Effect::DeleteAll, Effect::UpdateAll, Effect::DropColumn];

    /// Its name in a pack (`sql = ["delete-all"]`).
    pub fn name(self) -> &'static str {
        match self {
            Effect::Drop => "drop",
            Effect::Truncate => "truncate",
            Effect::DeleteAll => "delete-all",
            Effect::UpdateAll => "update-all",
            Effect::DropColumn => "drop-column",
        }
    }

    /// The effect named `name`.
    pub fn from_name(name: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// A word of a statement (ASCII lowercase), or a sign, with its bracket depth.
#[derive(Debug, PartialEq, Eq)]
struct Token {
    text: String,
    depth: u32,
}

/// The effects of the statements of `text` that are not rolled back, in order.
pub fn effects(text: &str) -> Vec<Effect> {
    let mut found = Vec::new();
    // The effects of the transaction open now, kept until it ends.
    let mut pending: Option<Vec<Effect>> = None;
    for statement in statements(text) {
        let words: Vec<&str> = statement.iter().map(|t| t.text.as_str()).collect();
        match words.as_slice() {
            ["begin" | "start", ..] => {
                pending.get_or_insert_with(Vec::new);
                continue;
            }
            ["rollback", "to", ..] => continue,
            ["rollback" | "abort", ..] => {
                pending = None;
                continue;
            }
            ["commit" | "end", ..] => {
                found.extend(pending.take().unwrap_or_default());
                continue;
            }
            _ => {}
        }
        if let Some(effect) = effect(&statement) {
            match &mut pending {
                Some(open) => open.push(effect),
                None => found.push(effect),
            }
        }
    }
    // A transaction left open: what it does is counted.
    found.extend(pending.unwrap_or_default());
    found
}

/// What one statement does that loses data.
fn effect(statement: &[Token]) -> Option<Effect> {
    let top: Vec<&str> =
        statement.iter().filter(|t| t.depth == 0).map(|t| t.text.as_str()).collect();
    // The verb: the first word, or after `WITH …` the first verb at the top, or after
    // `EXPLAIN ANALYZE` (a plain `EXPLAIN` runs nothing).
    let start = match top.first() {
        Some(&"with") => top.iter().position(|w| matches!(*w, "delete" | "update" | "select"))?,
        Some(&"explain") if top.get(1) == Some(&"analyze") => 2,
        Some(&"explain") => return None,
        _ => 0,
    };
    let words = &top[start..];
    let whole = |where_at: usize| holds_always(&words[where_at + 1..]);
    match words {
        ["drop", kind, ..]
            if matches!(
                *kind,
                "table"
                    | "database"
                    | "schema"
                    | "keyspace"
                    | "owned"
                    | "user"
                    | "role"
                    | "tablespace"
            ) =>
        {
            Some(Effect::Drop)
        }
        ["truncate", ..] => Some(Effect::Truncate),
        ["delete", rest @ ..] if rest.contains(&"from") || rest.len() == 1 => {
            match words.iter().position(|w| *w == "where") {
                None => Some(Effect::DeleteAll),
                Some(at) if whole(at) => Some(Effect::DeleteAll),
                Some(_) => None,
            }
        }
        ["update", rest @ ..] if rest.contains(&"set") => {
            match words.iter().position(|w| *w == "where") {
                None => Some(Effect::UpdateAll),
                Some(at) if whole(at) => Some(Effect::UpdateAll),
                Some(_) => None,
            }
        }
        ["alter", "table", rest @ ..] => {
            let at = rest.iter().position(|w| *w == "drop")?;
            let what = rest.get(at + 1).copied().unwrap_or("");
            let kept =
                ["constraint", "index", "key", "primary", "foreign", "default", "check", "not"];
            (!kept.contains(&what)).then_some(Effect::DropColumn)
        }
        _ => None,
    }
}

/// Whether a `WHERE` condition (its words, to the statement's end) holds for every row:
/// `1=1`, `true`, `1`, `'a'='a'` once strings are gone.
fn holds_always(condition: &[&str]) -> bool {
    let condition: Vec<&str> = condition
        .iter()
        .copied()
        .take_while(|w| !matches!(*w, "returning" | "limit" | "order" | "group"))
        .collect();
    matches!(
        condition.as_slice(),
        ["true" | "1"] | ["1", "=", "1"] | ["0", "=", "0"] | ["1", "<>" | "!=", "0"]
    )
}

/// The statements of `text`, split at `;`, each its tokens: words (ASCII lowercase; a quoted
/// name is a word) and signs, with their depth in brackets. Strings and comments are left out.
fn statements(text: &str) -> Vec<Vec<Token>> {
    let mut statements = Vec::new();
    let mut current: Vec<Token> = Vec::new();
    let mut depth = 0u32;
    let bytes = text.as_bytes();
    let mut i = 0;
    let push = |current: &mut Vec<Token>, text: String, depth: u32| {
        current.push(Token { text, depth });
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' => i = skip_quoted(bytes, i, b'\''),
            // A quoted name (`"users"`, `` `users` ``) is a word.
            b'"' | b'`' => {
                let end = skip_quoted(bytes, i, b);
                // Without its closing quote when it has one (an ASCII byte: a boundary).
                let closed = end > i + 1 && bytes.get(end - 1) == Some(&b);
                let inner = &text[i + 1..if closed { end - 1 } else { end }];
                push(&mut current, inner.to_ascii_lowercase(), depth);
                i = end;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = bytes[i..].iter().position(|&c| c == b'\n').map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            // `$$…$$` and `$tag$…$tag$`: a function's body, a string.
            b'$' if dollar_tag(&text[i..]).is_some() => {
                let tag = dollar_tag(&text[i..]).unwrap_or("$$");
                let after = i + tag.len();
                i = text[after..].find(tag).map_or(bytes.len(), |n| after + n + tag.len());
            }
            b';' => {
                statements.push(std::mem::take(&mut current));
                depth = 0;
                i += 1;
            }
            b'(' | b'[' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric()
                        || matches!(bytes[i], b'_' | b'.')
                        || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                push(&mut current, text[start..i].to_ascii_lowercase(), depth);
            }
            _ if b.is_ascii_whitespace() => i += 1,
            _ => {
                // Signs: `=`, `<>`, `!=` and the like are words of their own.
                let start = i;
                i += 1;
                while i < bytes.len() && matches!(bytes[i], b'=' | b'<' | b'>' | b'!') {
                    i += 1;
                }
                push(&mut current, text[start..i].to_owned(), depth);
            }
        }
    }
    if !current.is_empty() {
        statements.push(current);
    }
    statements
}

/// Past the string or quoted name that opens at `start` with `quote` (a doubled quote or a `\`
/// escapes one); the text's end when it does not close.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == quote && bytes.get(i + 1) == Some(&quote) => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The dollar-quote tag at the start of `text` (`$$`, `$body$`).
fn dollar_tag(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('$')?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    rest[end..].starts_with('$').then(|| &text[..end + 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_lose_data() {
        for (sql, effect) in [
            ("DROP TABLE users", Effect::Drop),
            ("drop table if exists users cascade;", Effect::Drop),
            ("DROP DATABASE app", Effect::Drop),
            ("DROP SCHEMA public CASCADE", Effect::Drop),
            ("DROP OWNED BY app_user CASCADE", Effect::Drop),
            ("drop user 'app'@'%'", Effect::Drop),
            ("DROP ROLE analytics", Effect::Drop),
            ("TRUNCATE orders", Effect::Truncate),
            ("truncate table orders restart identity", Effect::Truncate),
            ("DELETE FROM users", Effect::DeleteAll),
            ("DELETE FROM users WHERE 1=1", Effect::DeleteAll),
            ("delete from users where true returning id", Effect::DeleteAll),
            ("UPDATE users SET active = false", Effect::UpdateAll),
            ("ALTER TABLE users DROP COLUMN email", Effect::DropColumn),
            ("alter table users drop email", Effect::DropColumn),
            ("WITH old AS (SELECT 1) DELETE FROM sessions", Effect::DeleteAll),
            ("EXPLAIN ANALYZE DELETE FROM users", Effect::DeleteAll),
            ("SELECT 1; DROP TABLE \"Users\"", Effect::Drop),
            ("BEGIN; DELETE FROM users; COMMIT;", Effect::DeleteAll),
            ("BEGIN; DELETE FROM users;", Effect::DeleteAll),
            ("-- a comment\nTRUNCATE t", Effect::Truncate),
        ] {
            assert_eq!(effects(sql), [effect], "{sql}");
        }
    }

    #[test]
    fn statements_that_keep_data() {
        for sql in [
            "SELECT 'DROP TABLE ' || tablename || ';' FROM pg_tables WHERE schemaname='public';",
            "COMMENT ON TABLE users IS 'never TRUNCATE this table';",
            "SELECT * FROM audit_log WHERE action = 'DROP TABLE'",
            "DELETE FROM users WHERE id = 42",
            "UPDATE users SET name = 'x' WHERE id = 1",
            "delete from t where (a = 1 or b = 2)",
            "DROP INDEX users_email_idx",
            "ALTER TABLE users DROP CONSTRAINT users_pkey",
            "EXPLAIN DELETE FROM users",
            "BEGIN; DELETE FROM users; ROLLBACK;",
            "BEGIN; DROP TABLE t; ROLLBACK",
            "/* DROP TABLE x */ SELECT 1",
            "CREATE FUNCTION f() RETURNS void AS $$ DELETE FROM t $$ LANGUAGE sql",
            "INSERT INTO log VALUES ('TRUNCATE')",
            "",
            "drop",
        ] {
            assert_eq!(effects(sql), [], "{sql}");
        }
    }

    #[test]
    fn odd_text_reads_as_far_as_it_goes() {
        for sql in ["'", "\"", "$$", "$a$ x", "/*", "((((", "))))", "é DROP TABLE é", "\\"] {
            let _ = effects(sql);
        }
        assert_eq!(effects("é; DROP TABLE t"), [Effect::Drop]);
    }
}
