//! What a setting must be, and an example of a good value, for the errors
//! of [`super::source`]: the types and examples come from
//! `Config::default()`, so they cannot drift from the settings themselves.

use std::sync::OnceLock;

use super::Config;

/// Examples for the settings whose default is empty (and so no example).
const EXAMPLES: &[(&str, &str, &str)] = &[
    ("matrix", "homeserver", "\"https://matrix.example.org\""),
    ("matrix", "user", "\"@digestd:example.org\""),
    ("events", "url", "\"https://ops.example.org/hooks/digestd\""),
    (
        "events",
        "secret",
        "\"whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3\"",
    ),
    ("events", "types", "[\"delivery.failed\", \"unsubscribe\"]"),
    (
        "email",
        "smtp_url",
        "\"smtp://mail.example.org:587?tls=required\"",
    ),
    ("email", "tls", "\"required\""),
    ("email", "tls_ca_file", "\"/etc/digestd/ca.pem\""),
    ("email", "dkim_domain", "\"example.org\""),
    ("email", "dkim_selector", "\"digestd\""),
    ("email", "dkim_key", "\"/etc/digestd/dkim.pem\""),
    ("queue", "journal_dir", "\"/var/lib/digestd/journal\""),
    ("sms", "endpoint", "\"https://sms.example.org/send\""),
    ("sms", "username", "\"digestd\""),
    ("sms", "auth_header", "\"Bearer abc123\""),
    ("xmpp", "jid", "\"digestd@example.org\""),
    ("xmpp", "server", "\"127.0.0.1:5222\""),
    ("http", "trusted_proxies", "\"127.0.0.1, ::1\""),
    ("ops", "report_to", "\"ops@example.org\""),
    ("i18n", "dir", "\"/etc/digestd/locales\""),
    ("branding", "logo_url", "\"https://example.org/logo.png\""),
    ("branding", "accent", "\"#2b5797\""),
    ("branding", "footer", "\"Example Org, 1 Main St\""),
];

/// Every setting with its default, as TOML values: `[section] key = value`.
pub fn defaults() -> &'static toml::Table {
    static DEFAULTS: OnceLock<toml::Table> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        toml::Table::try_from(Config::default()).expect("the defaults serialize as TOML")
    })
}

/// The default of `[section] key`, when there is such a setting.
pub(crate) fn default_of(section: &str, key: &str) -> Option<&'static toml::Value> {
    defaults().get(section)?.as_table()?.get(key)
}

/// The environment variable that sets `[section] key`.
pub fn variable(section: &str, key: &str) -> String {
    format!(
        "DIGESTD_{}__{}",
        section.to_ascii_uppercase(),
        key.to_ascii_uppercase()
    )
}

/// An example of a good `[section] key`, as written in the file
/// (`max_retries = 3`) or, when `var` set it, in the environment
/// (`DIGESTD_EMAIL__MAX_RETRIES=3`). Passwords and access tokens get no
/// example value.
pub fn example(section: &str, key: &str, var: Option<&str>) -> Option<String> {
    if key == "password" || key == "access_token" {
        return Some(format!("{} in the environment", variable(section, key)));
    }
    let given = EXAMPLES
        .iter()
        .find(|(s, k, _)| *s == section && *k == key)
        .and_then(|(_, _, v)| v.parse::<toml::Value>().ok());
    let value = match given {
        Some(v) => v,
        None => {
            let d = default_of(section, key)?;
            if d.as_str() == Some("") {
                return None;
            }
            d.clone()
        }
    };
    Some(match (var, &value) {
        (Some(var), toml::Value::String(s)) => format!("{var}={s}"),
        (Some(var), v) => format!("{var}={v}"),
        (None, v) => format!("{key} = {v}"),
    })
}

/// Splits `section.key tail` or `[section] key tail`, as the checks write
/// a setting's name, into the section, the key and the rest; `None` when
/// it does not start with a setting's name. A section alone (`[http]`)
/// gives an empty key.
pub(crate) fn split_setting(s: &str) -> Option<(String, String, &str)> {
    let is_name = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    let (section, rest) = match s.strip_prefix('[') {
        Some(r) => {
            let (section, rest) = r.split_once(']')?;
            (section, rest.strip_prefix(' ').unwrap_or(rest))
        }
        None => s.split_once('.')?,
    };
    let sec = defaults().get(section)?.as_table()?;
    let end = rest.find(|c: char| !is_name(c)).unwrap_or(rest.len());
    let key = &rest[..end];
    if sec.contains_key(key) {
        return Some((section.to_string(), key.to_string(), &rest[end..]));
    }
    None
}

/// What a value of `[section] key` must be, from the type of its default:
/// ` must be …` (the key's own name comes before it). `given` is the value
/// refused, `why` the deserializer's words; `from_env`: the value came
/// from a variable, where there are no quotes to speak of.
pub(crate) fn must_be(
    section: &str,
    key: &str,
    given: &toml::Value,
    why: &str,
    from_env: bool,
) -> String {
    let quoted = given.is_str() && !from_env;
    let unquote = if quoted { ", without quotes" } else { "" };
    match default_of(section, key) {
        Some(toml::Value::Integer(_)) => {
            let max = why.rsplit_once("expected ").and_then(|w| match w.1.trim() {
                "u8" => Some(u64::from(u8::MAX)),
                "u16" => Some(u64::from(u16::MAX)),
                "u32" => Some(u64::from(u32::MAX)),
                _ => None,
            });
            match given {
                toml::Value::Integer(i) if *i < 0 => " must be a whole number, 0 or more".into(),
                toml::Value::Integer(_) => match max {
                    Some(m) => format!(" must be a whole number no larger than {m}"),
                    None => " must be a whole number".into(),
                },
                _ => format!(" must be a whole number{unquote}"),
            }
        }
        Some(toml::Value::Boolean(_)) => format!(" must be true or false{unquote}"),
        Some(toml::Value::String(_)) if from_env => " must be text".into(),
        Some(toml::Value::String(_)) => " must be text in double quotes".into(),
        _ => " is not a valid value".into(),
    }
}

/// The name among `names` closest to `wrong` (fewest edits), if any.
pub fn closest<'a>(wrong: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .min_by_key(|n| strsim::levenshtein(wrong, n))
}

/// The sections, in the order `Config` lists them.
pub fn sections() -> Vec<&'static str> {
    defaults().keys().map(String::as_str).collect()
}

/// The sections that have a setting called `key`.
pub(crate) fn sections_with(key: &str) -> Vec<&'static str> {
    defaults()
        .iter()
        .filter(|(_, t)| t.as_table().is_some_and(|t| t.contains_key(key)))
        .map(|(s, _)| s.as_str())
        .collect()
}

/// The keys of `section`.
pub fn keys(section: &str) -> Vec<&'static str> {
    defaults()
        .get(section)
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// What is wrong with one entry of the file or the environment that does
/// not fit [`Config`], in words that follow the place it was written
/// (key empty for a whole section or an entry outside any section).
/// `value` is the entry as written; `var` the variable that set it, if
/// one did.
pub fn refused(
    section: &str,
    key: &str,
    value: &toml::Value,
    e: &toml::de::Error,
    var: Option<&str>,
) -> String {
    let lists = " (config/digestd.toml lists every setting)";
    let with_example = |text: String, s: &str, k: &str| match example(s, k, var) {
        Some(e) => format!("{text}, e.g. {e}"),
        None => text,
    };
    if defaults().get(section).is_none() {
        if key.is_empty() && !value.is_table() {
            // A setting written above every section's line.
            let text = match sections_with(section).first() {
                Some(s) => format!(
                    "{section} is outside any section: a setting goes below its section's line, e.g. [{s}] then {}",
                    example(s, section, None).unwrap_or_else(|| section.to_string())
                ),
                None => format!("{section} is not a setting{lists}"),
            };
            return text;
        }
        let near = closest(section, sections()).unwrap_or("database");
        if strsim::levenshtein(section, near) > 3 {
            let all: Vec<String> = sections().iter().map(|s| format!("[{s}]")).collect();
            return format!(
                "[{section}] is not a section: the sections are {}",
                all.join(", ")
            );
        }
        return format!("[{section}] is not a section: did you mean [{near}]?{lists}");
    }
    if key.is_empty() {
        let text =
            format!("[{section}] must be a table: a [{section}] line with its settings below it");
        return text;
    }
    if e.message().starts_with("unknown field") {
        let elsewhere: Vec<String> = sections_with(key)
            .into_iter()
            .map(|s| format!("[{s}]"))
            .collect();
        if let Some(first) = elsewhere.first() {
            let there = match var {
                Some(_) => variable(first.trim_matches(['[', ']']), key),
                None => format!("below its {first} line"),
            };
            return format!(
                "[{section}] {key} is not a setting of [{section}]: it is one of {}, {there}",
                elsewhere.join(" and ")
            );
        }
        let near = closest(key, keys(section)).unwrap_or_default();
        let suggestion = match var {
            Some(_) => variable(section, near),
            None => example(section, near, None).unwrap_or_else(|| near.to_string()),
        };
        return format!("[{section}] {key} is not a setting: did you mean {suggestion}?{lists}");
    }
    // A word outside a setting's list (`transport = "pigeon"`): serde says
    // "unknown variant `pigeon`, expected one of `dir`, `smtp`, …" (or
    // "expected `dir` or `http`").
    if let (Some(given), Some((_, allowed))) = (
        value.as_str(),
        e.message()
            .strip_prefix("unknown variant")
            .and_then(|m| m.split_once("expected ")),
    ) {
        let allowed = allowed
            .trim_start_matches("one of ")
            .replace('`', "")
            .replace(" or ", ", ");
        return format!(
            "[{section}] {key} {} is not one of {allowed}",
            crate::validate::quoted(given)
        );
    }
    let must = must_be(section, key, value, e.message(), var.is_some());
    let text = with_example(format!("[{section}] {key}{must}"), section, key);
    text
}
