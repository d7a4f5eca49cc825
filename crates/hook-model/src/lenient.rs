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
}
