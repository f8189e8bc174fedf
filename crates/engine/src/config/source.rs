//! Where each setting came from: a line and column of the settings file,
//! or an environment variable. An error about a setting names that place,
//! the setting as `[section] key`, what it must be and an example, on one
//! line: `digestd.toml:12:15: [email] max_retries must be a whole number,
//! without quotes, e.g. max_retries = 3`.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

use super::explain;

/// A settings file larger than this is refused unread: the shipped one,
/// every setting with a comment, is under 12 KiB.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Where one value was written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// 1-based line and column (in characters) of the settings file.
    File { line: usize, column: usize },
    /// The environment variable that set it.
    Env(String),
}

/// Where each setting of one load came from, to name it in an error found
/// after loading (`deliver::check_settings`): see [`Origins::place`].
#[derive(Debug, Clone, Default)]
pub struct Origins {
    /// The settings file as shown in errors, when one was read.
    file: Option<String>,
    /// `(section, key)`; the key is empty for a section's own line.
    at: HashMap<(String, String), Place>,
}

impl Origins {
    /// The environment variable that set `[section] key`, if one did.
    pub(super) fn env_var(&self, section: &str, key: &str) -> Option<&str> {
        match self.at.get(&(section.to_string(), key.to_string())) {
            Some(Place::Env(var)) => Some(var),
            _ => None,
        }
    }

    pub(super) fn set_env(&mut self, section: &str, key: &str, var: &str) {
        self.at.insert(
            (section.to_string(), key.to_string()),
            Place::Env(var.to_string()),
        );
    }

    /// The file's entries, `(section, key)` (key empty for a top-level
    /// entry), in the order they are written.
    pub(super) fn file_order(&self) -> Vec<(String, String)> {
        let mut v: Vec<(&(String, String), usize, usize)> = self
            .at
            .iter()
            .filter_map(|(k, p)| match p {
                Place::File { line, column } => Some((k, *line, *column)),
                Place::Env(_) => None,
            })
            .collect();
        v.sort_by_key(|(_, l, c)| (*l, *c));
        v.into_iter().map(|(k, _, _)| k.clone()).collect()
    }

    /// How a line about `[section] key` begins: `FILE:LINE:COL: `, the
    /// variable's name, `FILE: ` for a setting the file leaves at its
    /// default, or `config: ` with no file.
    fn prefix(&self, section: &str, key: &str) -> String {
        let file = self.file.as_deref();
        let at = self
            .at
            .get(&(section.to_string(), key.to_string()))
            .or_else(|| self.at.get(&(section.to_string(), String::new())));
        match (at, file) {
            (Some(Place::Env(var)), _) => format!("{var}: "),
            (Some(Place::File { line, column }), Some(f)) => format!("{f}:{line}:{column}: "),
            (_, Some(f)) => format!("{f}: "),
            (_, None) => "config: ".to_string(),
        }
    }

    /// The one-line error about `[section] key`: where, the setting, `tail`
    /// (what it must be), and unless `tail` has one, an example.
    pub(super) fn error(&self, section: &str, key: &str, tail: &str) -> Error {
        let setting = match key {
            "" => format!("[{section}]"),
            _ => format!("[{section}] {key}"),
        };
        let example = match tail.contains("e.g.") {
            true => None,
            false => explain::example(section, key, self.env_var(section, key)),
        };
        let example = example.map(|e| format!(", e.g. {e}")).unwrap_or_default();
        self.line(section, key, &format!("{setting}{tail}{example}"))
    }

    /// `text` after the place where `[section] key` was written.
    pub(super) fn line(&self, section: &str, key: &str, text: &str) -> Error {
        Error::invalid(format!("{}{text}", self.prefix(section, key)))
    }

    /// An error about the file as a whole (`FILE: why`).
    pub(super) fn file_error(&self, why: &str) -> Error {
        match &self.file {
            Some(f) => Error::invalid(format!("{f}: {why}")),
            None => Error::invalid(format!("config: {why}")),
        }
    }

    /// `e` placed: a settings error (`config: section.key …` or `config:
    /// [section] key …`, as the checks write them) becomes one line that
    /// names where the setting was written and gives an example; any other
    /// error is returned as it is.
    pub fn place(&self, e: Error) -> Error {
        let Error::Invalid(msg) = &e else {
            return e;
        };
        let Some(rest) = msg.strip_prefix("config: ") else {
            return e;
        };
        match explain::split_setting(rest) {
            Some((section, key, tail)) => self.error(&section, &key, tail),
            None => self.file_error(rest),
        }
    }
}

/// Reads and parses the settings file at `path`: at most
/// [`MAX_FILE_BYTES`], UTF-8, TOML; each refusal one line naming the file
/// (and the line and column where there is one).
pub(super) fn read(path: &Path) -> Result<(toml::Table, Origins)> {
    let shown = crate::validate::escape_for_line(&path.display().to_string());
    let mut origins = Origins {
        file: Some(shown.clone()),
        at: HashMap::new(),
    };
    let bad = |why: String| Error::invalid(format!("{shown}: {why}"));
    let io = |e: std::io::Error| {
        let e = crate::validate::escape_for_line(&e.to_string());
        bad(format!(
            "cannot read the settings file: {e} (config/digestd.toml is an example to start from)"
        ))
    };
    if path.is_dir() {
        return Err(bad(
            "is a directory; --config names a settings file such as config/digestd.toml".into(),
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(bad(format!(
            "larger than {MAX_FILE_BYTES} bytes: not a settings file (the shipped one is a few KiB)"
        )));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&e.as_bytes()[..good]);
            let (line, column) = line_column(&before, before.len());
            return Err(Error::invalid(format!(
                "{shown}:{line}:{column}: not UTF-8 text: save the settings file as UTF-8"
            )));
        }
    };
    let doc = toml::de::DeTable::parse(&text).map_err(|e| {
        let at = e.span().map_or(String::new(), |s| {
            let (line, column) = line_column(&text, s.start);
            format!(":{line}:{column}")
        });
        Error::invalid(format!(
            "{shown}{at}: not valid TOML: {}; a setting is `key = value` under its `[section]` line, e.g. `max_retries = 3` under `[email]`",
            one_line(e.message())
        ))
    })?;
    for (name, value) in doc.get_ref() {
        let section = name.get_ref().to_string();
        let (line, column) = line_column(&text, name.span().start);
        origins.at.insert(
            (section.clone(), String::new()),
            Place::File { line, column },
        );
        if let Some(table) = value.get_ref().as_table() {
            for (key, v) in table {
                let (line, column) = line_column(&text, v.span().start);
                origins.at.insert(
                    (section.clone(), key.get_ref().to_string()),
                    Place::File { line, column },
                );
            }
        }
    }
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| bad(format!("not valid TOML: {}", one_line(e.message()))))?;
    Ok((table, origins))
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
pub(super) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A parser's message on one line: its lines joined, control characters
/// escaped.
fn one_line(s: &str) -> String {
    let joined: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    crate::validate::escape_for_line(&joined.join("; "))
}
