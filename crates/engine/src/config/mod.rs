//! Typed settings: built-in defaults, then the TOML file, then
//! `DIGESTD_<SECTION>__<KEY>` environment variables, then CLI flags.
//! `config/digestd.toml` lists every setting with its default.
//!
//! A setting that is refused is named on one line with where it was set
//! (`FILE:LINE:COLUMN` or the variable), what it must be and an example
//! ([`source`]); checks outside this module that find a bad setting write
//! `config: section.key …`, which [`Origins::place`] names the same way.

mod channels;
mod check;
mod env;
mod events;
mod explain;
mod sections;
mod source;
#[cfg(test)]
mod tests;
mod words;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub use channels::{
    parse_from, EmailConfig, EmailTransport, MatrixConfig, MatrixTransport, SmsConfig,
    SmsTransport, WebhookConfig, WebhookTransport, XmppConfig, XmppTransport,
};
pub use env::{from_os as env_from_os, unknown_variables, DATABASE_URL_VAR};
pub use events::EventsConfig;
pub use sections::*;
pub use source::{Origins, MAX_FILE_BYTES};
pub use words::{branding, install, BrandingConfig, I18nConfig};

/// The default database: an SQLite file under `./data/`.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/digestd.db";

/// The settings file read when `--config` names none and it exists.
pub const DEFAULT_FILE: &str = "config/digestd.toml";

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub database: DatabaseConfig,
    pub schedule: ScheduleConfig,
    pub record: RecordConfig,
    pub log: LogConfig,
    pub digest: DigestConfig,
    pub email: EmailConfig,
    pub queue: QueueConfig,
    pub sms: SmsConfig,
    pub xmpp: XmppConfig,
    pub webhook: WebhookConfig,
    pub matrix: MatrixConfig,
    pub http: HttpConfig,
    pub signup: SignupConfig,
    pub ops: OpsConfig,
    pub events: EventsConfig,
    pub i18n: I18nConfig,
    pub branding: BrandingConfig,
}

impl Config {
    /// Loads `file` (which must exist when given), or [`DEFAULT_FILE`]
    /// when it exists, then applies the environment `env`.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self> {
        Self::load_traced(file, env).map(|(cfg, _)| cfg)
    }

    /// [`Config::load`], and where each setting came from, so that a check
    /// made later (`deliver::check_settings`) can name it too.
    pub fn load_traced(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Self, Origins)> {
        let (mut table, mut origins) = match file {
            Some(p) => source::read(p)?,
            None if Path::new(DEFAULT_FILE).exists() => source::read(Path::new(DEFAULT_FILE))?,
            None => (toml::Table::new(), Origins::default()),
        };
        // Each entry of the file alone, in the order written: the first
        // that does not fit is named (a whole-table error has lost where
        // it came from).
        for (section, key) in origins.file_order() {
            let value = match key.as_str() {
                "" => table.get(&section),
                k => table.get(&section).and_then(|s| s.get(k)),
            };
            if let Some(value) = value {
                fits(&section, &key, value, &origins)?;
            }
        }
        env::apply(&mut table, env, &mut origins)?;
        let cfg: Config = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                origins.place(crate::error::Error::invalid(format!(
                    "config: {}",
                    crate::validate::escape_for_line(e.message())
                )))
            })?;
        cfg.check().map_err(|e| origins.place(e))?;
        Ok((cfg, origins))
    }
}

/// Whether `[section] key = value` alone fits [`Config`] (its type; a
/// known section and key); key empty: the entry `section = value` at the
/// top of the file. The error names where it was written.
fn fits(section: &str, key: &str, value: &toml::Value, origins: &Origins) -> Result<()> {
    let one = match key {
        "" => toml::Table::from_iter([(section.to_string(), value.clone())]),
        k => toml::Table::from_iter([(
            section.to_string(),
            toml::Value::Table(toml::Table::from_iter([(k.to_string(), value.clone())])),
        )]),
    };
    // A section's own entry is its whole table: each of its keys is
    // checked on its own, so only its being a table is checked here.
    let one = match value {
        toml::Value::Table(_) if key.is_empty() => {
            toml::Table::from_iter([(section.to_string(), toml::Value::Table(toml::Table::new()))])
        }
        _ => one,
    };
    match toml::Value::Table(one).try_into::<Config>() {
        Ok(_) => Ok(()),
        Err(e) => {
            let var = origins.env_var(section, key);
            let text = explain::refused(section, key, value, &e, var);
            Err(origins.line(section, key, &text))
        }
    }
}

impl Config {
    /// Where the queue's sent journals are: `[queue] journal_dir`, or by
    /// default beside an SQLite database (`sqlite://PATH` → `PATH.journal`,
    /// so each database has its own), and [`PG_JOURNAL_DIR`] for
    /// PostgreSQL (or an in-memory SQLite database). Never under `[email]
    /// dir`: that is the `dir` transport's output, and means nothing to
    /// the other transports.
    pub fn journal_dir(&self) -> std::path::PathBuf {
        if !self.queue.journal_dir.is_empty() {
            return self.queue.journal_dir.clone().into();
        }
        journal_dir_for(&self.database.url)
    }
}

/// The default journal directory for the database at `url`.
pub fn journal_dir_for(url: &str) -> std::path::PathBuf {
    let url = crate::db::DbUrl::parse(url).ok();
    match url.as_ref().and_then(|u| u.sqlite_path()) {
        Some(file) => format!("{file}.journal").into(),
        None => PG_JOURNAL_DIR.into(),
    }
}
