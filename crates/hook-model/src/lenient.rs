//! Reading payloads leniently (reference §3): a documented-optional field that is missing, of an
//! unexpected type, or a number of another numeric type never makes a payload unreadable, so
//! the rules (guards included) still see it. The protocol evolves: fields come and go between
//! Claude Code versions, and an odd optional field is worth less than the event.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An optional field: `None` when it is null or of an unexpected shape.
pub(crate) fn optional<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// A string that identifies rather than informs (`tool_use_id`): empty when missing or odd.
pub(crate) fn string<'de, D>(deserializer: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match Value::deserialize(deserializer)? {
        Value::String(s) => s,
        _ => String::new(),
    })
}

/// An optional count: an integer, or a float or numeric string that holds one (cut toward
/// zero); `None` when negative or not a number.
pub(crate) fn optional_u64<'de, D>(deserializer: D) -> Result<Option<u64>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(count(&Value::deserialize(deserializer)?))
}

/// A count that is documented as always present: as [`optional_u64`], 0 when unreadable.
pub(crate) fn u64<'de, D>(deserializer: D) -> Result<u64, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(count(&Value::deserialize(deserializer)?).unwrap_or(0))
}

fn count(value: &Value) -> Option<u64> {
    let float = |f: f64| {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a finite, non-negative float below 2^64, cut toward zero on purpose"
        )]
        (f.is_finite() && (0.0..18_446_744_073_709_551_616.0).contains(&f)).then_some(f as u64)
    };
    match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().and_then(float)),
        Value::String(s) => s.trim().parse().ok().or_else(|| s.trim().parse().ok().and_then(float)),
        _ => None,
    }
}

/// `bytes` parsed as JSON as JavaScript's `JSON.parse` would read them: strictly, and when that
/// fails, once more after [`repair_json`]. The error is the strict parse's when nothing needed
/// repair, the repaired text's otherwise.
///
/// # Errors
///
/// When the bytes are not JSON even so.
pub fn json_from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes).or_else(|err| match repair_json(bytes) {
        Some(repaired) => serde_json::from_slice(&repaired),
        None => Err(err),
    })
}

/// The JSON text `bytes` with what JavaScript's `JSON.parse` reads but a UTF-8 reader cannot
/// made readable: a `\uD800`–`\uDFFF` escape that is not half of a surrogate pair becomes
/// `\uFFFD`, and every byte sequence that is not UTF-8 (a stray byte, an overlong or
/// surrogate encoding) becomes U+FFFD, as `String::from_utf8_lossy` replaces it. `None` when
/// there is nothing of the kind: the text is unreadable for another reason.
///
/// Claude Code is a JavaScript program: a tool input holding a lone surrogate is sent to the
/// hooks as such an escape, and `serde_json` refuses it. The guard must still judge the call
/// (reference §3), so the hook reads the payload again through this when it does not parse.
/// A backslash can only stand inside a string in valid JSON, so escapes are found without
/// tracking where strings begin and end.
pub fn repair_json(bytes: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(bytes);
    let mut changed = matches!(text, std::borrow::Cow::Owned(_));
    let text = text.as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = text[at..].iter().position(|&b| b == b'\\') {
        let slash = at + found;
        out.extend_from_slice(&text[at..slash]);
        match unit_at(text, slash) {
            Some(0xD800..=0xDBFF)
                if unit_at(text, slash + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
            {
                // A pair: kept as it is.
                out.extend_from_slice(&text[slash..slash + 12]);
                at = slash + 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.extend_from_slice(b"\\uFFFD");
                changed = true;
                at = slash + 6;
            }
            _ => {
                // Any other escape is two bytes (`\u` and its digits are copied as text).
                let end = (slash + 2).min(text.len());
                out.extend_from_slice(&text[slash..end]);
                at = end;
            }
        }
    }
    out.extend_from_slice(&text[at..]);
    changed.then_some(out)
}

/// The UTF-16 code unit of the `\uXXXX` escape at `at` in `text`, if there is one.
fn unit_at(text: &[u8], at: usize) -> Option<u16> {
    let escape = text.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let digits = std::str::from_utf8(&escape[2..]).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn counts_are_read_from_any_number() {
        for (value, expected) in [
            (json!(12), Some(12)),
            (json!(12.0), Some(12)),
            (json!(12.9), Some(12)),
            (json!("12"), Some(12)),
            (json!(" 7.5 "), Some(7)),
            (json!(-1), None),
            (json!(-0.5), None),
            (json!(1e300), None),
            (json!("twelve"), None),
            (json!(true), None),
            (json!(null), None),
            (json!([1]), None),
        ] {
            assert_eq!(count(&value), expected, "{value}");
        }
    }

    #[test]
    fn what_javascript_reads_is_made_readable() {
        let repaired = |text: &[u8]| repair_json(text).map(|b| String::from_utf8(b).unwrap());
        // Lone halves of a pair, at the end, before another escape, twice.
        assert_eq!(repaired(br#"{"a":"x\ud800"}"#).as_deref(), Some(r#"{"a":"x\uFFFD"}"#));
        assert_eq!(repaired(br#"{"a":"\udc00\n"}"#).as_deref(), Some(r#"{"a":"\uFFFD\n"}"#));
        assert_eq!(
            repaired(br#"{"a":"\uD83D\uD83D\uDE00"}"#).as_deref(),
            Some(r#"{"a":"\uFFFD\uD83D\uDE00"}"#)
        );
        // An escaped backslash before `ud800` is text, not an escape.
        assert_eq!(repaired(br#"{"a":"\\ud800"}"#), None);
        // A pair, and JSON without anything to repair, are left alone.
        assert_eq!(repaired(br#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(repaired(br#"{"a":"#), None);
        // Bytes that are not UTF-8: a stray byte, an overlong `/`, an encoded surrogate.
        for bad in [&b"\xff"[..], b"\xc0\xaf", b"\xed\xa0\x80"] {
            let mut text = br#"{"a":"x"#.to_vec();
            text.extend_from_slice(bad);
            text.extend_from_slice(br#""}"#);
            let value: Value = serde_json::from_slice(&repair_json(&text).unwrap()).unwrap();
            assert!(value["a"].as_str().unwrap().starts_with("x\u{fffd}"), "{bad:?}");
        }
        let value: Value =
            serde_json::from_slice(&repair_json(br#"{"a":"\ud800","b":"\udfff"}"#).unwrap())
                .unwrap();
        assert_eq!(value, json!({"a": "\u{fffd}", "b": "\u{fffd}"}));
    }
}
