//! The sections of the settings that the core and the HTTP server read:
//! `[database]`, `[schedule]`, `[record]`, `[log]`, `[digest]`, `[queue]`,
//! `[http]`, `[signup]`, `[ops]`, each with its defaults and the checks
//! that need no other section.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[queue]`: the delivery queue's own state on this host.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Where each delivering process keeps its sent journal
    /// (`deliver::queue::journal`); empty: [`Config::journal_dir`]'s
    /// default for the database.
    pub journal_dir: String,
}

/// The sent journals' directory with a PostgreSQL database, when
/// `[queue] journal_dir` is empty: under the working directory's `data/`,
/// where the default SQLite database lives too (`/var/lib/digestd/data/`
/// under the shipped systemd unit and container), on the disk of the host
/// that sends.
pub const PG_JOURNAL_DIR: &str = "data/journal";

/// The public sign-up page (`/subscribe`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SignupConfig {
    /// Sign-ups one client block (IPv4 /24, IPv6 /64) may make per hour.
    pub per_client_per_hour: u32,
    /// Verification messages one mailbox (case-folded, `+tag` dropped)
    /// may receive per day.
    pub per_address_per_day: u32,
    /// Verification messages the whole installation sends per hour.
    pub mail_per_hour: u32,
    /// How long a verification link works.
    pub expiry_hours: u32,
}

impl Default for SignupConfig {
    fn default() -> Self {
        SignupConfig {
            per_client_per_hour: 5,
            per_address_per_day: 3,
            mail_per_hour: 100,
            expiry_hours: 48,
        }
    }
}

/// `[ops]`: the operator's daily report (`report`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct OpsConfig {
    /// The email address the report goes to; empty: no report.
    pub report_to: String,
    /// The report is posted by the first tick at or after this local hour.
    pub report_hour: u32,
    /// The IANA zone whose days (one report each) and hours count.
    pub report_tz: String,
}

impl Default for OpsConfig {
    fn default() -> Self {
        OpsConfig {
            report_to: String::new(),
            report_hour: 7,
            report_tz: "UTC".into(),
        }
    }
}

impl OpsConfig {
    /// The zone, parsed (and so validated).
    pub fn tz(&self) -> Result<chrono_tz::Tz> {
        crate::validate::timezone(&self.report_tz)
            .map_err(|e| Error::invalid(format!("config: ops.report_tz: {e}")))
    }

    pub(super) fn check(&self) -> Result<()> {
        if !self.report_to.is_empty() {
            crate::validate::email(&self.report_to)
                .map_err(|e| Error::invalid(format!("config: ops.report_to: {e}")))?;
        }
        if self.report_hour > 23 {
            return Err(Error::invalid("config: ops.report_hour must be 0-23"));
        }
        self.tz()?;
        Ok(())
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// `serve` answers HTTP too when true; `digestd web` always does.
    pub enabled: bool,
    /// The address to listen on, `host:port`.
    pub listen: String,
    /// The largest request body of a route that takes bulk data
    /// (modifications, items, users in bulk, requests), in bytes; 413 beyond.
    pub max_body_bytes: usize,
    /// The largest body of every other API route, in bytes.
    pub max_api_body_bytes: usize,
    /// The largest form a page takes (`/s/…`, `/subscribe…`, `/admin…`).
    pub max_form_bytes: usize,
    /// Request bodies held in memory at once, all requests together, in
    /// bytes; a request past it waits briefly, then is answered 503.
    pub max_body_bytes_in_flight: usize,
    /// Open connections at most; more wait in the kernel's backlog.
    pub max_connections: usize,
    /// How long a client has to send a request's head: from the first
    /// byte (or from connecting, for a connection's first request).
    pub header_timeout_seconds: u64,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout_seconds: u64,
    /// A request that takes longer is answered 503.
    pub timeout_seconds: u64,
    /// How long an `Idempotency-Key` answer is kept.
    pub idempotency_hours: u32,
    /// Keys one token may have stored within `idempotency_hours`; past it
    /// a request with a new key is answered 429.
    pub idempotency_max_keys: u32,
    /// `Strict-Transport-Security: max-age` sent on every answer when
    /// `[digest] base_url` is https; 0 sends none.
    pub hsts_max_age_seconds: u32,
    /// The longest range an Atom feed covers.
    pub max_feed_days: u32,
    /// Entries in one Atom feed document at most; the rest are on the
    /// pages its `next` link leads to.
    pub max_feed_entries: usize,
    /// Bytes of rendered feeds kept in memory; past it the cache starts
    /// again empty.
    pub feed_cache_bytes: usize,
    /// Bytes of collection heads, tokens and tickets kept in memory for
    /// conditional feed GETs, all three together.
    pub cache_bytes: usize,
    /// How long an operator's `/admin` session lasts after login, 1–720.
    pub admin_session_hours: u32,
    /// Reverse proxies whose `X-Forwarded-For` names the client (for the
    /// sign-up and login limits): addresses or networks, comma-separated.
    pub trusted_proxies: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            enabled: true,
            listen: "127.0.0.1:8080".into(),
            max_body_bytes: 16 * 1024 * 1024,
            max_api_body_bytes: 64 * 1024,
            max_form_bytes: 16 * 1024,
            max_body_bytes_in_flight: 64 * 1024 * 1024,
            max_connections: 512,
            header_timeout_seconds: 10,
            idle_timeout_seconds: 60,
            timeout_seconds: 30,
            idempotency_hours: 24,
            idempotency_max_keys: 10_000,
            hsts_max_age_seconds: 31_536_000,
            max_feed_days: 366,
            max_feed_entries: 500,
            feed_cache_bytes: 16 * 1024 * 1024,
            cache_bytes: 1024 * 1024,
            admin_session_hours: 12,
            trusted_proxies: String::new(),
        }
    }
}

impl HttpConfig {
    /// The body limits, the connection cap and the connection timeouts.
    pub(super) fn check_limits(&self) -> Result<()> {
        let body = self.max_body_bytes;
        // A semaphore counts the bytes in flight in u32 permits.
        let in_flight_max = u32::MAX as usize;
        let ranges: [(&str, u64, u64, u64); 11] = [
            ("feed_cache_bytes", self.feed_cache_bytes as u64, 0, 1 << 32),
            ("cache_bytes", self.cache_bytes as u64, 0, 1 << 32),
            ("max_body_bytes", body as u64, 1024, in_flight_max as u64),
            (
                "max_api_body_bytes",
                self.max_api_body_bytes as u64,
                1024,
                body as u64,
            ),
            (
                "max_form_bytes",
                self.max_form_bytes as u64,
                1024,
                body as u64,
            ),
            // One body of the largest size must fit, or it could never be read.
            (
                "max_body_bytes_in_flight",
                self.max_body_bytes_in_flight as u64,
                body as u64,
                in_flight_max as u64,
            ),
            ("max_connections", self.max_connections as u64, 1, 100_000),
            (
                "header_timeout_seconds",
                self.header_timeout_seconds,
                1,
                300,
            ),
            ("idle_timeout_seconds", self.idle_timeout_seconds, 1, 3600),
            (
                "idempotency_max_keys",
                self.idempotency_max_keys.into(),
                1,
                10_000_000,
            ),
            // Two years at most, as the HSTS preload list asks.
            (
                "hsts_max_age_seconds",
                self.hsts_max_age_seconds.into(),
                0,
                63_072_000,
            ),
        ];
        for (key, v, lo, hi) in ranges {
            if !(lo..=hi).contains(&v) {
                return Err(Error::invalid(format!(
                    "config: [http] {key} must be {lo}-{hi} (got {v})"
                )));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DigestConfig {
    /// Items shown in one digest; the rest become "and N more".
    pub max_items: usize,
    /// SMS segments one digest may take.
    pub sms_segments: usize,
    /// Where digestd's pages are served: manage, unsubscribe, full digest.
    pub base_url: String,
}

impl Default for DigestConfig {
    fn default() -> Self {
        DigestConfig {
            max_items: 50,
            sms_segments: 3,
            base_url: "http://localhost:8080".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    pub url: String,
    pub pool_size: u32,
}

/// The values `[schedule] compose_workers` and `tick_chunk` may take
/// (and `bench burst`'s `--workers` and `--chunk`, which stand for them).
pub const COMPOSE_WORKERS: std::ops::RangeInclusive<usize> = 1..=256;
pub const TICK_CHUNKS: std::ops::RangeInclusive<u32> = 1..=1_000_000;

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    pub tick: String,
    pub lease_seconds: u32,
    /// `serve` runs the queue this often between ticks (retries, notices).
    pub queue_seconds: u32,
    /// Threads a tick composes and renders a chunk's digests on (1: the
    /// tick's own thread alone); the chunk's writes stay on the tick's one
    /// connection and transaction.
    pub compose_workers: usize,
    /// Subscriptions a tick claims per transaction; on PostgreSQL, the
    /// share of a tick another `serve` process can take at a time.
    pub tick_chunk: u32,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        ScheduleConfig {
            tick: "0 */15 * * * *".into(),
            lease_seconds: 600,
            queue_seconds: 60,
            compose_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            tick_chunk: 20_000,
        }
    }
}

impl ScheduleConfig {
    /// How long a tick or queue lease is held before another process may
    /// take it.
    pub fn lease_for(&self) -> chrono::Duration {
        chrono::Duration::seconds(i64::from(self.lease_seconds))
    }

    /// The tick schedule, parsed (and so validated).
    pub fn cron(&self) -> Result<cron::Schedule> {
        parse_cron(&self.tick)
    }
}

/// A cron expression with seconds (6 or 7 fields), as the `cron` crate reads it.
pub(crate) fn parse_cron(expr: &str) -> Result<cron::Schedule> {
    use std::str::FromStr;
    if expr.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(format!(
            "schedule.tick {expr:?}: control character"
        )));
    }
    let hint = "use 6 fields: sec min hour day month weekday, e.g. \"0 0 * * * *\"";
    let fields = expr.split_whitespace().count();
    if !(6..=7).contains(&fields) {
        return Err(Error::invalid(format!(
            "schedule.tick {expr:?} has {fields} fields ({hint})"
        )));
    }
    cron::Schedule::from_str(expr).map_err(|e| {
        // The crate's message repeats the expression and draws a caret
        // under it on lines of its own: keep only the words.
        let e = e.to_string();
        let words: Vec<&str> = e
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && *l != expr.trim() && !l.chars().all(|c| c == '^'))
            .collect();
        let why = match words.is_empty() {
            true => "not a valid cron expression".to_string(),
            false => words.join("; "),
        };
        Error::invalid(format!("schedule.tick {expr:?}: {why} ({hint})"))
    })
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RecordConfig {
    pub batch_size: usize,
    /// How far ahead of the clock a modification's `at` may be (clock
    /// skew between the source and digestd); further is refused.
    pub max_ahead_seconds: u64,
    /// How far back a modification's `at` may be; older is refused.
    pub max_age_days: u32,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    pub level: String,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            url: super::DEFAULT_DATABASE_URL.into(),
            pool_size: 4,
        }
    }
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig {
            batch_size: 10_000,
            max_ahead_seconds: 300,
            max_age_days: 30,
        }
    }
}

impl RecordConfig {
    /// The bounds of an `at` recorded at `now`.
    pub fn at_bounds(&self, now: chrono::DateTime<chrono::Utc>) -> crate::validate::AtBounds {
        crate::validate::AtBounds {
            earliest: now - chrono::Duration::days(i64::from(self.max_age_days)),
            latest: now + chrono::Duration::seconds(self.max_ahead_seconds as i64),
        }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "warn,digestd::serve=info,digestd::http=info".into(),
        }
    }
}
