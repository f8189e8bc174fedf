//! Typed settings: built-in defaults, then the TOML file, then
//! `DIGESTD_<SECTION>__<KEY>` environment variables, then CLI flags.
//! `config/digestd.toml` lists every setting with its default.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The default database: an SQLite file under `./data/`.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/digestd.db";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
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
    pub http: HttpConfig,
    pub signup: SignupConfig,
    pub ops: OpsConfig,
}

/// `[queue]`: the delivery queue's own state on this host.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SignupConfig {
    /// Verification messages one client address may cause per hour.
    pub per_client_per_hour: u32,
    /// Verification messages one email address may receive per day.
    pub per_address_per_day: u32,
    /// How long a verification link works.
    pub expiry_hours: u32,
}

impl Default for SignupConfig {
    fn default() -> Self {
        SignupConfig {
            per_client_per_hour: 5,
            per_address_per_day: 3,
            expiry_hours: 48,
        }
    }
}

/// `[ops]`: the operator's daily report (src/report.rs).
#[derive(Debug, Clone, Deserialize, PartialEq)]
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

    fn check(&self) -> Result<()> {
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

#[derive(Debug, Clone, Deserialize, PartialEq)]
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
            admin_session_hours: 12,
            trusted_proxies: String::new(),
        }
    }
}

impl HttpConfig {
    /// The body limits, the connection cap and the connection timeouts.
    fn check_limits(&self) -> Result<()> {
        let body = self.max_body_bytes;
        // A semaphore counts the bytes in flight in u32 permits.
        let in_flight_max = u32::MAX as usize;
        let ranges: [(&str, u64, u64, u64); 9] = [
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

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct XmppConfig {
    /// `dir` writes XMPP bodies under `[email] dir`/xmpp; `xmpp` sends them
    /// from the service's own account.
    pub transport: String,
    /// The service's account, e.g. `digestd@example.org`.
    pub jid: String,
    pub password: String,
    /// `host:port` to connect to instead of the JID's domain (SRV lookup).
    pub server: String,
    /// STARTTLS, on by default; `false` only for a loopback test server.
    pub tls: bool,
    /// Login and per-batch answer timeout.
    pub timeout_seconds: u64,
    /// Longest body sent, in characters (cut with "…").
    pub max_chars: usize,
    /// The longest wait between reconnection attempts.
    pub reconnect_cap_seconds: u64,
    /// At most this many chat stanzas sent and not yet acknowledged by the
    /// server (XEP-0198); each is journaled as its acknowledgement comes,
    /// so a crash repeats at most this many. 0: no waits, the batch is
    /// vouched for by its ping alone (a crash may repeat the whole batch).
    pub ack_window: usize,
}

impl Default for XmppConfig {
    fn default() -> Self {
        XmppConfig {
            transport: "dir".into(),
            jid: String::new(),
            password: String::new(),
            server: String::new(),
            tls: true,
            timeout_seconds: 15,
            max_chars: 8000,
            reconnect_cap_seconds: 300,
            ack_window: 4,
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SmsConfig {
    /// `dir` writes SMS bodies under `[email] dir`/sms; `http` posts them
    /// to a gateway.
    pub transport: String,
    /// The gateway's URL (http:// or https://).
    pub endpoint: String,
    /// `twilio`: a form post of To, From, Body; `json`: `json_template`.
    pub shape: String,
    /// For `json`: a JSON body with {to}, {from} and {body} placeholders
    /// (each replaced by a JSON string).
    pub json_template: String,
    /// Basic auth (when `username` is set) …
    pub username: String,
    pub password: String,
    /// … or an Authorization header value, e.g. "Bearer abc".
    pub auth_header: String,
    /// The sender id or number.
    pub from: String,
    /// Segments one message may take (GSM-7 153 / UCS-2 67 each).
    pub max_segments: usize,
    pub timeout_seconds: u64,
}

impl Default for SmsConfig {
    fn default() -> Self {
        SmsConfig {
            transport: "dir".into(),
            endpoint: String::new(),
            shape: "twilio".into(),
            json_template: r#"{"to": {to}, "from": {from}, "text": {body}}"#.into(),
            username: String::new(),
            password: String::new(),
            auth_header: String::new(),
            from: "digestd".into(),
            max_segments: 3,
            timeout_seconds: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
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

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EmailConfig {
    /// How email leaves: `dir` writes one .eml file per message, `smtp`
    /// sends through `smtp_url`, `db` inserts into the SQLite file
    /// `db_path`, `pipe` runs `pipe_command` per message, `stdout` prints
    /// each message.
    pub transport: String,
    /// The `dir` transport's directory (other channels go to its xmpp/ and
    /// sms/ subdirectories until their listeners exist).
    pub dir: String,
    /// The sender of every message, "Name <address>"; also the envelope
    /// sender, so bounces come back to digestd.
    pub from: String,
    /// `smtp://host:port` (plain), `smtp://host:port?tls=required`
    /// (STARTTLS), `smtps://host:port` (TLS); `user:password@` for AUTH.
    pub smtp_url: String,
    /// TLS for `smtp`: `none`, `opportunistic` (STARTTLS when offered, not
    /// verified), `required` (STARTTLS, verified) or `wrapper` (smtps,
    /// verified); empty: as `smtp_url` says (`?tls=`, `smtps://`).
    pub tls: String,
    /// A PEM file of CA certificates trusted besides the system's, for a
    /// server with a private CA; empty: the system's alone.
    pub tls_ca_file: String,
    /// For `db`: the SQLite file an external relay drains.
    pub db_path: String,
    /// For `pipe`: a sendmail-style command (program and arguments, no
    /// shell) that reads one message on stdin.
    pub pipe_command: String,
    /// SMTP sessions used in parallel by one queue pass.
    pub pool_size: u32,
    /// Seconds before an SMTP command times out.
    pub timeout_seconds: u64,
    /// First retry after a transient failure; doubles per attempt.
    pub retry_base_seconds: u64,
    /// The longest wait between attempts.
    pub retry_cap_seconds: u64,
    /// Attempts before a message is given up (requests may set their own).
    pub max_retries: u32,
    /// Hard bounces (RFC 3464, 5.x.x) before an address is disabled.
    pub bounce_limit: u32,
    /// DKIM (RFC 6376): the signing domain (`d=`); empty = no signing.
    /// The three go together (`deliver::dkim`).
    pub dkim_domain: String,
    /// The selector (`s=`): the key is published at
    /// `SELECTOR._domainkey.DOMAIN`.
    pub dkim_selector: String,
    /// A PEM file with the private key: RSA (2048 bits or more) or Ed25519.
    pub dkim_key: String,
}

impl Default for EmailConfig {
    fn default() -> Self {
        EmailConfig {
            transport: "dir".into(),
            dir: "outbox".into(),
            from: "digestd <digestd@localhost>".into(),
            smtp_url: String::new(),
            tls: String::new(),
            tls_ca_file: String::new(),
            db_path: "outbox/outbox.db".into(),
            pipe_command: "/usr/sbin/sendmail -t -i -f {from}".into(),
            pool_size: 4,
            timeout_seconds: 30,
            retry_base_seconds: 300,
            retry_cap_seconds: 21_600,
            max_retries: 3,
            bounce_limit: 3,
            dkim_domain: String::new(),
            dkim_selector: String::new(),
            dkim_key: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    pub url: String,
    pub pool_size: u32,
}

/// The values `[schedule] compose_workers` and `tick_chunk` may take
/// (and `bench burst`'s `--workers` and `--chunk`, which stand for them).
pub const COMPOSE_WORKERS: std::ops::RangeInclusive<usize> = 1..=256;
pub const TICK_CHUNKS: std::ops::RangeInclusive<u32> = 1..=1_000_000;

#[derive(Debug, Clone, Deserialize, PartialEq)]
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
            tick: "0 0 * * * *".into(),
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
pub fn parse_cron(expr: &str) -> Result<cron::Schedule> {
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

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RecordConfig {
    pub batch_size: usize,
    /// How far ahead of the clock a modification's `at` may be (clock
    /// skew between the source and digestd); further is refused.
    pub max_ahead_seconds: u64,
    /// How far back a modification's `at` may be; older is refused.
    pub max_age_days: u32,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    pub level: String,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            url: DEFAULT_DATABASE_URL.into(),
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

impl Config {
    /// Loads `file` (which must exist when given), or `config/digestd.toml`
    /// when it exists, then applies the environment `env`.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self> {
        let mut table = match file {
            Some(p) => read_table(p)?,
            None if Path::new("config/digestd.toml").exists() => {
                read_table(Path::new("config/digestd.toml"))?
            }
            None => toml::Table::new(),
        };
        let shipped: toml::Table = SHIPPED.parse().unwrap_or_default();
        let from_file = table.clone();
        let mut applied: Vec<(String, String, String, toml::Value)> = Vec::new();
        for (key, val) in env {
            let Some(rest) = key.strip_prefix("DIGESTD_") else {
                continue;
            };
            let (section, name) = if rest == "DATABASE_URL" {
                ("database".to_string(), "url".to_string())
            } else if let Some((s, n)) = rest.split_once("__") {
                (s.to_ascii_lowercase(), n.to_ascii_lowercase())
            } else {
                continue;
            };
            let sec = table
                .entry(section.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let toml::Value::Table(sec) = sec else {
                return Err(Error::invalid(format!(
                    "config: [{section}] is not a table"
                )));
            };
            let value = env_value(&shipped, &section, &name, &val);
            sec.insert(name.clone(), value.clone());
            applied.push((key, section, name, value));
        }
        let cfg: Config = match toml::Value::Table(table).try_into() {
            Ok(c) => c,
            Err(e) => return Err(name_the_variable(&from_file, &applied, &e)),
        };
        cfg.check()?;
        Ok(cfg)
    }

    fn check(&self) -> Result<()> {
        crate::db::DbUrl::parse(&self.database.url)?;
        if self.database.pool_size == 0 || self.database.pool_size > 256 {
            return Err(Error::invalid("config: database.pool_size must be 1-256"));
        }
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log.level) {
            return Err(Error::invalid(format!(
                "config: log.level {:?}: {e}",
                self.log.level
            )));
        }
        self.schedule.cron()?;
        if self.http.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(Error::invalid(format!(
                "config: http.listen {:?} is not host:port (e.g. 127.0.0.1:8080)",
                self.http.listen
            )));
        }
        if let Err(e) = crate::validate::ip_nets(&self.http.trusted_proxies) {
            return Err(Error::invalid(format!("config: http.trusted_proxies: {e}")));
        }
        if !(1..=8760).contains(&self.signup.expiry_hours) {
            return Err(Error::invalid("config: signup.expiry_hours must be 1-8760"));
        }
        if self.http.max_body_bytes < 1024
            || self.http.timeout_seconds == 0
            || self.http.max_feed_days == 0
        {
            return Err(Error::invalid(
                "config: http.max_body_bytes must be at least 1024, http.timeout_seconds and http.max_feed_days at least 1",
            ));
        }
        if !(1..=720).contains(&self.http.admin_session_hours) {
            return Err(Error::invalid(
                "config: http.admin_session_hours must be 1-720",
            ));
        }
        self.http.check_limits()?;
        if self.schedule.lease_seconds < 10 {
            return Err(Error::invalid(
                "config: schedule.lease_seconds must be at least 10",
            ));
        }
        if !(1..=86_400).contains(&self.schedule.queue_seconds) {
            return Err(Error::invalid(
                "config: schedule.queue_seconds must be 1-86400",
            ));
        }
        if !COMPOSE_WORKERS.contains(&self.schedule.compose_workers) {
            return Err(Error::invalid(format!(
                "config: schedule.compose_workers must be {}-{}",
                COMPOSE_WORKERS.start(),
                COMPOSE_WORKERS.end()
            )));
        }
        if !TICK_CHUNKS.contains(&self.schedule.tick_chunk) {
            return Err(Error::invalid(format!(
                "config: schedule.tick_chunk must be {}-{}",
                TICK_CHUNKS.start(),
                TICK_CHUNKS.end()
            )));
        }
        self.check_digest()?;
        self.ops.check()?;
        if self.queue.journal_dir.chars().any(char::is_control) {
            return Err(Error::invalid(
                "config: queue.journal_dir must be a path (or empty for the default)",
            ));
        }
        if self.record.batch_size == 0 {
            return Err(Error::invalid(
                "config: record.batch_size must be at least 1",
            ));
        }
        if self.record.max_ahead_seconds > 86_400 {
            return Err(Error::invalid(
                "config: record.max_ahead_seconds must be 0 to 86400 (a day), e.g. 300",
            ));
        }
        if !(1..=3660).contains(&self.record.max_age_days) {
            return Err(Error::invalid(
                "config: record.max_age_days must be 1 to 3660, e.g. 30",
            ));
        }
        Ok(())
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

    fn check_digest(&self) -> Result<()> {
        let d = &self.digest;
        if !(1..=10_000).contains(&d.max_items) {
            return Err(Error::invalid("config: digest.max_items must be 1-10000"));
        }
        if !(1..=10).contains(&d.sms_segments) {
            return Err(Error::invalid("config: digest.sms_segments must be 1-10"));
        }
        let u = &d.base_url;
        let scheme_ok = u.starts_with("http://") || u.starts_with("https://");
        if !scheme_ok
            || u.len() > 200
            || u.chars()
                .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '<' | '>' | '"'))
        {
            return Err(Error::invalid(format!(
                "config: digest.base_url {u:?}: use an http:// or https:// URL without spaces"
            )));
        }
        Ok(())
    }
}

/// The default journal directory for the database at `url`.
pub fn journal_dir_for(url: &str) -> std::path::PathBuf {
    match crate::db::DbUrl::parse(url) {
        Ok(u) if u.backend == crate::db::Backend::Sqlite && u.target != ":memory:" => {
            format!("{}.journal", u.target).into()
        }
        _ => PG_JOURNAL_DIR.into(),
    }
}

fn read_table(path: &Path) -> Result<toml::Table> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::invalid(format!("config {}: {e}", path.display())))?;
    text.parse::<toml::Table>()
        .map_err(|e| Error::invalid(format!("config {}: {}", path.display(), e.message())))
}

/// The shipped settings file: every setting with its default, so with its
/// type (a test checks it equals `Config::default()`).
const SHIPPED: &str = include_str!("../config/digestd.toml");

/// An environment value for `[section] name`: a string setting takes the
/// value as it is (a phone number `+15005550006`, an all-digit password, a
/// directory called `2026`); any other is typed as TOML would type it:
/// integers, floats and booleans as such, anything else as a string.
/// The error of a settings table that does not fit [`Config`]: when one
/// environment variable alone makes the file's settings fail, the error
/// names it (`DIGESTD_EMAIL__POOL_SIZE: …`) and never repeats its value,
/// which may be a secret; otherwise the file's first bad setting is named.
fn name_the_variable(
    from_file: &toml::Table,
    applied: &[(String, String, String, toml::Value)],
    whole: &toml::de::Error,
) -> Error {
    for (var, section, name, value) in applied {
        let mut one = from_file.clone();
        let sec = one
            .entry(section.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(sec) = sec {
            sec.insert(name.clone(), value.clone());
        }
        if let Err(e) = toml::Value::Table(one).try_into::<Config>() {
            let why = why_refused(section, name, &e);
            return Error::invalid(format!("config: {var}: {why}"));
        }
    }
    // The file's own values, one at a time: the first refused is named
    // (a whole-table error has lost where it came from).
    for (section, sec) in from_file {
        let toml::Value::Table(sec) = sec else {
            continue;
        };
        for (name, value) in sec {
            let one = toml::Table::from_iter([(
                section.clone(),
                toml::Value::Table(toml::Table::from_iter([(name.clone(), value.clone())])),
            )]);
            if let Err(e) = toml::Value::Table(one).try_into::<Config>() {
                let why = why_refused(section, name, &e);
                return Error::invalid(format!("config: {why}"));
            }
        }
    }
    Error::invalid(format!(
        "config: {}",
        crate::validate::escape_for_line(whole.message())
    ))
}

/// What is wrong with `[section] name`, in a line.
fn why_refused(section: &str, name: &str, e: &toml::de::Error) -> String {
    let why = e.message();
    if why.starts_with("unknown field") {
        format!("no setting [{section}] {name} (config/digestd.toml lists them all)")
    } else if why.starts_with("invalid type") || why.starts_with("invalid value") {
        let want = why.rsplit_once("expected ").map_or("another type", |w| w.1);
        let want = match want.trim() {
            "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
            "a boolean" => "true or false",
            other => other,
        };
        format!("[{section}] {name} must be {want}")
    } else {
        format!("[{section}] {name} is not a valid value")
    }
}

fn env_value(shipped: &toml::Table, section: &str, name: &str, v: &str) -> toml::Value {
    let is_string = shipped
        .get(section)
        .and_then(|s| s.get(name))
        .is_some_and(toml::Value::is_str);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// The audit's finding 10: an error from the environment names the
    /// variable and never prints its value.
    #[test]
    fn a_bad_variable_is_named_and_its_value_not_printed() {
        for (var, val, want) in [
            ("DIGESTD_EMAIL__POOL_SIZE", "s3cret", "config: DIGESTD_EMAIL__POOL_SIZE: [email] pool_size must be a whole number, 0 or more"),
            ("DIGESTD_EMAIL__POOL_SIZE", "-7", "config: DIGESTD_EMAIL__POOL_SIZE: [email] pool_size must be a whole number, 0 or more"),
            ("DIGESTD_XMPP__TLS", "s3cret", "config: DIGESTD_XMPP__TLS: [xmpp] tls must be true or false"),
            ("DIGESTD_XMPP__PASSWROD", "s3cret", "config: DIGESTD_XMPP__PASSWROD: no setting [xmpp] passwrod (config/digestd.toml lists them all)"),
        ] {
            let e = Config::load(None, env(&[("DIGESTD_SMS__FROM", "ok"), (var, val)]))
                .unwrap_err()
                .to_string();
            assert_eq!(e, want);
            assert!(!e.contains("s3cret") && !e.contains("-7"));
        }
    }

    #[test]
    fn string_settings_from_the_environment_take_any_string() {
        let cfg = Config::load(
            None,
            env(&[
                ("DIGESTD_SMS__FROM", "+15005550006"),
                ("DIGESTD_XMPP__PASSWORD", "12345678"),
                ("DIGESTD_EMAIL__DIR", "2026"),
                ("DIGESTD_XMPP__TLS", "false"),
                ("DIGESTD_EMAIL__POOL_SIZE", "8"),
            ]),
        )
        .unwrap();
        assert_eq!(cfg.sms.from, "+15005550006");
        assert_eq!(cfg.xmpp.password, "12345678");
        assert_eq!(cfg.email.dir, "2026");
        assert!(!cfg.xmpp.tls);
        assert_eq!(cfg.email.pool_size, 8);
    }

    #[test]
    fn shipped_file_is_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/digestd.toml");
        assert_eq!(
            Config::load(Some(&path), env(&[])).unwrap(),
            Config::default()
        );
        crate::deliver::check_settings(&Config::default()).unwrap();
    }

    #[test]
    fn environment_overrides_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "[database]\npool_size = 2\n[record]\nbatch_size = 5\n").unwrap();
        let cfg = Config::load(
            Some(&p),
            env(&[
                ("DIGESTD_DATABASE__POOL_SIZE", "9"),
                ("DIGESTD_DATABASE_URL", "postgres://root@127.0.0.1/test"),
                ("DIGESTD_TEST_DATABASE_URL", "ignored"),
                ("OTHER", "x"),
            ]),
        )
        .unwrap();
        assert_eq!(cfg.database.pool_size, 9);
        assert_eq!(cfg.database.url, "postgres://root@127.0.0.1/test");
        assert_eq!(cfg.record.batch_size, 5);
    }

    /// First-hour item 10: a 5-field crontab line printed the cron crate's
    /// caret drawing as a literal `\n`. One line, saying what is wrong.
    #[test]
    fn a_bad_tick_expression_is_one_line_that_says_why() {
        let e = parse_cron("0 * * * *").unwrap_err().to_string();
        assert_eq!(
            e,
            "schedule.tick \"0 * * * *\" has 5 fields (use 6 fields: sec min hour day month weekday, e.g. \"0 0 * * * *\")"
        );
        for bad in ["0 0 25 * * *", "x y z a b c", "0 0 * * * * * *"] {
            let e = parse_cron(bad).unwrap_err().to_string();
            assert!(
                !e.contains('\n') && !e.contains("\\n") && !e.contains('^'),
                "{e:?}"
            );
            assert!(e.starts_with(&format!("schedule.tick {bad:?}")), "{e}");
        }
    }

    #[test]
    fn ops_settings_load_and_bad_ones_say_why_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(
            &p,
            "[ops]\nreport_to = \"ops@example.com\"\nreport_hour = 0\nreport_tz = \"America/New_York\"\n",
        )
        .unwrap();
        let cfg = Config::load(Some(&p), env(&[])).unwrap();
        assert_eq!(cfg.ops.report_to, "ops@example.com");
        assert_eq!(cfg.ops.report_hour, 0);
        assert_eq!(cfg.ops.tz().unwrap(), chrono_tz::America::New_York);
        for (bad, want) in [
            (
                "report_to = \"x\"",
                "config: ops.report_to: invalid email address",
            ),
            ("report_hour = 24", "config: ops.report_hour must be 0-23"),
            ("report_tz = \"Mars/Olympus\"", "config: ops.report_tz: "),
            ("report_tz = \"UTC\\r\\nX\"", "config: ops.report_tz: "),
        ] {
            std::fs::write(&p, format!("[ops]\n{bad}\n")).unwrap();
            let e = Config::load(Some(&p), env(&[])).unwrap_err().to_string();
            assert!(e.starts_with(want), "{bad}: {e}");
            assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
        }
    }

    #[test]
    fn the_journal_sits_beside_the_database_not_in_the_outbox() {
        let with = |url: &str, dir: &str| {
            let mut c = Config::default();
            c.database.url = url.into();
            c.queue.journal_dir = dir.into();
            c.journal_dir()
        };
        assert_eq!(
            Config::default().journal_dir(),
            Path::new("data/digestd.db.journal")
        );
        assert_eq!(
            with("sqlite:///srv/d/x.db", ""),
            Path::new("/srv/d/x.db.journal")
        );
        assert_eq!(with("postgres://u@h/db", ""), Path::new(PG_JOURNAL_DIR));
        assert_eq!(with("sqlite://:memory:", ""), Path::new(PG_JOURNAL_DIR));
        assert_eq!(with("postgres://u@h/db", "/var/j"), Path::new("/var/j"));
        let cfg = Config::load(None, env(&[("DIGESTD_QUEUE__JOURNAL_DIR", "2026")])).unwrap();
        assert_eq!(cfg.journal_dir(), Path::new("2026"));
    }

    #[test]
    fn hostile_config_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        for bad in [
            "[database]\nurl = \"mysql://x\"\n",
            "[database]\npool_size = 0\n",
            "[nope]\nx = 1\n",
            "[database]\nunknown = 1\n",
            "not toml at all [",
            "[log]\nlevel = \"[[[bad\"\n",
            "[schedule]\ntick = \"0 * * * *\"\n",
            "[schedule]\ntick = \"61 0 * * * *\"\n",
            "[schedule]\ntick = \"0 0 25 * * *\"\n",
            "[schedule]\ntick = \"every hour\"\n",
            "[schedule]\ntick = \"0 0 * * * *\\n0 0 * * * *\"\n",
            "[schedule]\nlease_seconds = 1\n",
            "[schedule]\ncompose_workers = 0\n",
            "[schedule]\ncompose_workers = 257\n",
            "[schedule]\ntick_chunk = 0\n",
            "[schedule]\ntick_chunk = 1000001\n",
            "[schedule]\ntick_chunk = -5\n",
            "[http]\nadmin_session_hours = 0\n",
            "[http]\nadmin_session_hours = 721\n",
            "[http]\nadmin_session_hours = -1\n",
            "[http]\ntrusted_proxies = \"localhost\"\n",
            "[http]\ntrusted_proxies = \"10.0.0.0/33\"\n",
            "[http]\ntrusted_proxies = [\"127.0.0.1\"]\n",
            "[digest]\nmax_items = 0\n",
            "[signup]\nexpiry_hours = 0\n",
            "[signup]\nexpiry_hours = 9000\n",
            "[signup]\nper_client_per_hour = -1\n",
            "[signup]\nunknown = 1\n",
            "[digest]\nsms_segments = 11\n",
            "[digest]\nbase_url = \"ftp://x\"\n",
            "[digest]\nbase_url = \"http://a b\"\n",
            "[digest]\nbase_url = \"http://a\\r\\nX-Evil: 1\"\n",
            "[email]\ntransport = \"carrier-pigeon\"\n",
            "[email]\nfrom = \"not an address\"\n",
            "[email]\nfrom = \"a <b@c>\\r\\nBcc: x@y\"\n",
            "[email]\ndir = \"\"\n",
            "[email]\ntransport = \"smtp\"\n",
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"http://mail:25\"\n",
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://mail:25\\r\\nX: y\"\n",
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://\"\n",
            "[email]\npool_size = 0\n",
            "[email]\nretry_base_seconds = 0\n",
            "[email]\nretry_base_seconds = 100\nretry_cap_seconds = 10\n",
            "[email]\nmax_retries = 0\n",
            "[email]\nbounce_limit = 0\n",
            "[sms]\ntransport = \"carrier-pigeon\"\n",
            "[sms]\ntransport = \"http\"\n",
            "[sms]\ntransport = \"http\"\nendpoint = \"ftp://gw\"\n",
            "[sms]\ntransport = \"http\"\nendpoint = \"http://gw/send\"\nshape = \"xml\"\n",
            "[sms]\nmax_segments = 0\n",
            "[sms]\nauth_header = \"Bearer a\\r\\nX-Evil: 1\"\n",
            "[email]\ntransport = \"pipe\"\npipe_command = \"\"\n",
            "[email]\ntransport = \"pipe\"\npipe_command = \"sendmail\\n-t\"\n",
            "[email]\ntransport = \"db\"\ndb_path = \"\"\n",
            "[email]\ntransport = \"db\"\ndb_path = \"out\\nbox.db\"\n",
            "[xmpp]\ntransport = \"carrier-pigeon\"\n",
            "[xmpp]\ntransport = \"xmpp\"\n",
            "[xmpp]\ntransport = \"xmpp\"\njid = \"no-local-part\"\npassword = \"p\"\n",
            "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"\"\n",
            "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\\r\\nx\"\n",
            "[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\"\ntls = false\nserver = \"chat.example.com:5222\"\n",
            "[xmpp]\ntimeout_seconds = 0\n",
            "[xmpp]\nmax_chars = 5\n",
            "[ops]\nreport_to = \"not an address\"\n",
            "[ops]\nreport_to = \"ops@example.com\\r\\nBcc: x@y\"\n",
            "[ops]\nreport_to = \"a@b, c@d\"\n",
            "[ops]\nreport_hour = 24\n",
            "[ops]\nreport_hour = -1\n",
            "[ops]\nreport_tz = \"Mars/Olympus\"\n",
            "[ops]\nreport_tz = \"\"\n",
            "[ops]\nreport_tz = \"UTC\\nX\"\n",
            "[ops]\nreport_day = 1\n",
            "[queue]\njournal_dir = \"a\\nb\"\n",
            "[queue]\njournal_dir = 1\n",
            "[queue]\nunknown = 1\n",
        ] {
            std::fs::write(&p, bad).unwrap();
            let loaded = Config::load(Some(&p), env(&[]));
            let checked = loaded.and_then(|c| crate::deliver::check_settings(&c));
            assert!(checked.is_err(), "{bad:?}");
        }
        assert!(Config::load(Some(&dir.path().join("missing.toml")), env(&[])).is_err());
        assert!(Config::load(None, env(&[("DIGESTD_RECORD__BATCH_SIZE", "lots")])).is_err());
    }
}
