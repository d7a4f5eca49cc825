//! The config the `HOOKPACK_*` environment variables give, checked against the config's shape.

use hook_engine::layout::EnvVars;

use crate::{Diagnostics, shape};

/// `HOOKPACK_*` variables that are not config: the runtime reads them.
const NOT_CONFIG: &[&str] = &[EnvVars::HOOKPACK_ARTIFACT];

/// The config the `HOOKPACK_*` variables give: `HOOKPACK_WINDOW_TOKENS=1000000` is
/// `window_tokens = 1000000`, `HOOKPACK_BRACKETS__FRESH=70` is `brackets.fresh = 70`,
/// `HOOKPACK_DISABLE=a/x,b/*` is `disable = ["a/x", "b/*"]`.
///
/// The environment is not the project's: a variable that names no setting is ignored with a
/// warning (naming the setting it may have meant), and a setting's bad value is an error naming
/// the variable.
pub(super) fn env_config(env: &[(String, String)], diags: &mut Diagnostics) -> toml::Table {
    let mut config = toml::Table::new();
    let mut env: Vec<&(String, String)> = env.iter().collect();
    env.sort();
    for (name, value) in env {
        let Some(key) = name.strip_prefix(EnvVars::CONFIG_PREFIX) else { continue };
        if key.is_empty() || NOT_CONFIG.contains(&name.as_str()) {
            continue;
        }
        let path: Vec<String> = key.to_ascii_lowercase().split("__").map(str::to_owned).collect();
        let Some(shape) = setting(&shape::CONFIG_FILE, &path) else {
            let names = env_names(&shape::CONFIG_FILE, EnvVars::CONFIG_PREFIX);
            let hint = shape::did_you_mean(name, names.iter().map(String::as_str));
            diags.warning_without_place(format!(
                "environment: `{name}` is not a hookpack setting and is ignored{hint}"
            ));
            continue;
        };
        match env_value(shape, value, name) {
            Ok(value) => insert(&mut config, &path, value),
            Err(problem) => diags.error_without_place(format!(
                "environment: `{name}={value}`: `{}` {problem}",
                path.join(".")
            )),
        }
    }
    config
}

/// The shape of the setting at `path` (lowercase keys), if there is one.
fn setting(table: &'static shape::Table, path: &[String]) -> Option<&'static shape::Shape> {
    let (first, rest) = path.split_first()?;
    let key = table.keys.iter().find(|k| k.name == first)?;
    within(&key.shape, rest)
}

fn within(shape: &'static shape::Shape, rest: &[String]) -> Option<&'static shape::Shape> {
    match (shape, rest.split_first()) {
        (_, None) => Some(shape),
        (shape::Shape::Table(table), Some(_)) => setting(table, rest),
        (shape::Shape::Map(inner), Some((entry, rest))) if !entry.is_empty() => within(inner, rest),
        _ => None,
    }
}

/// The variables that set each key of `table`, `prefix` first.
fn env_names(table: &shape::Table, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for key in table.keys {
        let name = format!("{prefix}{}", key.name.to_ascii_uppercase());
        match &key.shape {
            shape::Shape::Table(inner) => names.extend(env_names(inner, &format!("{name}__"))),
            shape::Shape::Map(_) => names.push(format!("{name}__<NAME>")),
            _ => names.push(name),
        }
    }
    names
}

/// `raw` as a value of `shape`, or what is wrong with it. Lists are comma-separated.
fn env_value(shape: &shape::Shape, raw: &str, name: &str) -> Result<toml::Value, String> {
    use shape::Shape;
    let raw = raw.trim();
    match shape {
        Shape::String | Shape::Matching(_) | Shape::Enum(_) => Ok(toml::Value::from(raw)),
        Shape::StringList
        | Shape::NameList(_)
        | Shape::Strings
        | Shape::Enums(_)
        | Shape::Scalars => Ok(toml::Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(toml::Value::from)
                .collect(),
        )),
        Shape::Integer { min, max } => raw
            .parse::<i64>()
            .ok()
            .filter(|n| (min..=max).contains(&n))
            .map(toml::Value::from)
            .ok_or_else(|| format!("must be an integer from {min} to {max}")),
        Shape::Number { min, max } => raw
            .parse::<f64>()
            .ok()
            .filter(|x| x >= min && x <= max)
            .map(toml::Value::from)
            .ok_or_else(|| format!("must be a number from {min} to {max}")),
        Shape::Bool => match raw {
            "true" => Ok(toml::Value::from(true)),
            "false" => Ok(toml::Value::from(false)),
            _ => Err("must be `true` or `false`".to_owned()),
        },
        Shape::Table(table) => Err(format!(
            "is a table: set its keys instead ({})",
            env_names(table, &format!("{name}__"))
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Shape::Map(_) => Err(format!("is a table: set its entries instead (`{name}__<NAME>`)")),
        Shape::Tables(_) | Shape::TableOrTables(_) | Shape::Payload => {
            Err("cannot be set from the environment".to_owned())
        }
    }
}

/// Sets `path` of `table` to `value`, making the tables on the way.
fn insert(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut table = table;
    for key in parents {
        let entry =
            table.entry(key.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(inner) = entry else { return };
        table = inner;
    }
    table.insert(last.clone(), value);
}
