//! Settings from the environment: `DIGESTD_<SECTION>__<KEY>` (two
//! underscores between section and key), and `DIGESTD_DATABASE_URL`. The
//! loader takes the variables as a list, so tests pass their own; the
//! binary reads the process's once, at start ([`from_os`]).

use std::ffi::OsString;

use crate::error::{Error, Result};

use super::explain;
use super::source::Origins;

/// The synonym of `DIGESTD_DATABASE__URL`.
pub const DATABASE_URL_VAR: &str = "DIGESTD_DATABASE_URL";

/// Variables of digestd's own that are not settings: the test suites'
/// (`DIGESTD_TEST_DATABASE_URL`, `DIGESTD_TEST_XMPP`, …).
pub const NOT_SETTINGS_PREFIX: &str = "DIGESTD_TEST_";

/// The `DIGESTD_*` variables of `vars` (the process's environment), as
/// text. Others are not read; one whose name or value is not UTF-8 is
/// refused, naming it (never its value, which may be a secret).
pub fn from_os(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, value) in vars {
        let shown = name.to_string_lossy().into_owned();
        if !shown.starts_with("DIGESTD_") {
            continue;
        }
        let name = name.into_string().map_err(|_| {
            Error::invalid(format!(
                "{}: a variable's name is not UTF-8",
                crate::validate::escape_for_line(&shown)
            ))
        })?;
        if name.starts_with(NOT_SETTINGS_PREFIX) {
            continue;
        }
        let value = value
            .into_string()
            .map_err(|_| Error::invalid(format!("{name}: the value is not UTF-8 text")))?;
        out.push((name, value));
    }
    Ok(out)
}

/// The setting a variable names: `(section, key)`, lower case; `None` for
/// a variable that is not of the `DIGESTD_<SECTION>__<KEY>` shape.
fn setting_of(var: &str) -> Option<(String, String)> {
    let rest = var.strip_prefix("DIGESTD_")?;
    if var.starts_with(NOT_SETTINGS_PREFIX) {
        return None;
    }
    if var == DATABASE_URL_VAR {
        return Some(("database".into(), "url".into()));
    }
    let (s, k) = rest.split_once("__")?;
    Some((s.to_ascii_lowercase(), k.to_ascii_lowercase()))
}

/// One warning line for each `DIGESTD_*` variable in `env` that is neither
/// a setting's (`DIGESTD_<SECTION>__<KEY>`) nor one of digestd's own: it is
/// ignored, and the line names the closest variable that is a setting's.
pub fn unknown_variables(env: &[(String, String)]) -> Vec<String> {
    let known: Vec<String> = explain::sections()
        .into_iter()
        .flat_map(|s| {
            explain::keys(s)
                .into_iter()
                .map(move |k| explain::variable(s, k))
        })
        .chain([DATABASE_URL_VAR.to_string()])
        .collect();
    env.iter()
        .map(|(var, _)| var)
        .filter(|var| var.starts_with("DIGESTD_") && !var.starts_with(NOT_SETTINGS_PREFIX))
        .filter(|var| setting_of(var).is_none())
        .map(|var| {
            let near = explain::closest(var, known.iter().map(String::as_str)).unwrap_or("");
            format!(
                "warning: {} is not a setting and is ignored; did you mean {near}? (DIGESTD_<SECTION>__<KEY>, two underscores)",
                crate::validate::escape_for_line(var)
            )
        })
        .collect()
}

/// Applies the settings `env` names to `table` (the file's settings),
/// recording each in `origins`. A variable whose value does not fit its
/// setting is refused, naming the variable and never its value.
pub(super) fn apply(
    table: &mut toml::Table,
    env: impl IntoIterator<Item = (String, String)>,
    origins: &mut Origins,
) -> Result<()> {
    for (var, val) in env {
        let Some((section, key)) = setting_of(&var) else {
            continue;
        };
        let value = typed(&section, &key, &val);
        origins.set_env(&section, &key, &var);
        super::fits(&section, &key, &value, origins)?;
        let sec = table
            .entry(section.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(sec) = sec else {
            // The file's own entry was checked first: a section is a table.
            return Err(origins.line(&section, "", &format!("[{section}] must be a table")));
        };
        sec.insert(key, value);
    }
    Ok(())
}

/// An environment value for `[section] key`: a string setting takes the
/// value as it is (a phone number `+15005550006`, an all-digit password, a
/// directory called `2026`); any other is typed as TOML would type it:
/// integers, floats and booleans as such, anything else as a string.
fn typed(section: &str, key: &str, v: &str) -> toml::Value {
    let is_string = explain::default_of(section, key).is_some_and(toml::Value::is_str);
    if is_string {
        toml::Value::String(v.to_string())
    } else if let Ok(i) = v.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(b) = v.parse::<bool>() {
        toml::Value::Boolean(b)
    } else if let Ok(f) = v.parse::<f64>() {
        toml::Value::Float(f)
    } else {
        toml::Value::String(v.to_string())
    }
}
