//! `digestd bench …`: performance measured beside a floor taken in the same
//! run on the same database, because these machines are shared and noisy.

mod burst;
mod compose;
mod cpu;
mod face;
mod http;
mod import;
mod ingest;
mod matrix;
mod ndjson;
mod recur;
mod simulate;
mod smtp;
mod soak;
mod sql;
pub mod synapse;
mod tick;
mod webhook;
mod xmpp;

pub use burst::{burst, BurstArgs};
pub use compose::{compose, ComposeArgs};
pub use face::{ServeHttp, Served, Serving};
pub use http::{http, HttpArgs};
pub use import::{import, ImportArgs};
pub use ingest::{ingest, IngestArgs};
pub use matrix::{matrix, MatrixArgs};
pub use ndjson::{ndjson, NdjsonArgs};
pub use recur::{recur, RecurArgs};
pub use simulate::{simulate, SimulateArgs};
pub use smtp::{smtp, SmtpArgs};
pub use soak::{soak, soak_server, SoakArgs, SoakServerArgs};
pub use tick::{tick, TickArgs};
pub use webhook::{webhook, WebhookArgs};
pub use xmpp::{xmpp, XmppArgs};

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use diesel::connection::SimpleConnection;

use crate::db::{Db, DbConn, DbUrl};
use crate::error::{Error, Result};

/// The middle of `v` (the upper one of an even count).
fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// First party id of the generated users: the migrations create the system
/// party, so generated ids start clear of it.
const PARTY0: i64 = 1_000;

fn rate(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

/// The bench database: the given URL, which must hold no users or
/// modifications (the bench deletes what it loads), or a fresh SQLite file
/// at `default`.
fn open_empty(url: Option<&str>, default: &str) -> Result<Db> {
    let url = match url {
        Some(u) => u.to_string(),
        None => {
            DbUrl::parse(default)?.remove_sqlite_files();
            default.to_string()
        }
    };
    let db = Db::open(&url, 2)?;
    let mut c = db.conn()?;
    if !crate::parties::list_users(&mut c)?.is_empty() || crate::modlog::count(&mut c)? > 0 {
        return Err(Error::invalid(
            "bench needs an empty database (it deletes what it loads)",
        ));
    }
    Ok(db)
}

/// One line of a delivery bench: what ran, how long, how many messages/s.
fn messages_line(out: &mut dyn std::io::Write, what: &str, n: usize, d: Duration) -> Result<()> {
    writeln!(
        out,
        "{what:<62} {:>8.2} s {:>9.0} messages/s",
        d.as_secs_f64(),
        rate(n, d)
    )?;
    Ok(())
}

/// A message text of `size` characters.
fn text_of(size: usize) -> String {
    "The quick brown fox jumps over the lazy dog. "
        .chars()
        .cycle()
        .take(size)
        .collect()
}

/// One timed queue pass over the pending requests through `d`, checking
/// that it finished all `n` and gave none up.
fn timed_pass(
    c: &mut DbConn,
    mut d: crate::deliver::queue::Delivery,
    n: usize,
) -> Result<Duration> {
    let t = std::time::Instant::now();
    let report = crate::deliver::queue::run_pass(c, &mut d, requested_at())?;
    let took = t.elapsed();
    d.shutdown();
    if report.finished != n || report.gave_up != 0 {
        return Err(Error::Storage(format!(
            "the queue finished {} of {n} requests ({report})",
            report.finished
        )));
    }
    Ok(took)
}

/// A loopback port nothing listens on, for a server the bench starts.
fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(l.local_addr()?.port())
}

/// Waits until the server the bench started (`what`) takes connections on
/// `port`, at most `within`.
fn wait_listening(port: u16, what: &str, within: Duration) -> Result<()> {
    let until = std::time::Instant::now() + within;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if std::time::Instant::now() > until {
            return Err(Error::Storage(format!("{what} did not listen on {port}")));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Ok(())
}

/// A size field (`VmHWM:`, `VmRSS:`, … in kB) of `/proc/PID/status`, this
/// process's when `pid` is `None`, in MiB, where Linux tells.
fn status_mib(pid: Option<u32>, field: &str) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Peak resident memory of this process (VmHWM), in MiB, where Linux tells.
fn peak_rss_mib() -> Option<f64> {
    status_mib(None, "VmHWM:")
}

/// This process's anonymous resident memory now (RssAnon), in MiB: what it
/// allocated itself, without the file pages it maps (the program and its
/// libraries; SQLite no longer maps its database, `db::SQLITE_MMAP_BYTES`).
fn anon_rss_mib() -> Option<f64> {
    status_mib(None, "RssAnon:")
}

/// The peak of [`anon_rss_mib`], sampled every 5 ms on a thread until
/// [`AnonPeak::stop`].
struct AnonPeak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<f64>,
}

impl AnonPeak {
    fn start() -> AnonPeak {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak: f64 = 0.0;
            loop {
                peak = peak.max(anon_rss_mib().unwrap_or(0.0));
                if flag.load(Ordering::Relaxed) {
                    return peak;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        AnonPeak { stop, thread }
    }

    fn stop(self) -> f64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or(0.0)
    }
}

/// `n` users (ids after [`PARTY0`]), each with a `channel` contact point at
/// `address` (an SQL expression of the row number `i`), and a pending
/// request from the first to each of the others, with `body` as its text
/// and chat text: the queue benches' world, loaded in a few statements.
fn request_world(c: &mut DbConn, n: usize, channel: &str, address: &str, body: &str) -> Result<()> {
    recipients(c, n, channel, address)?;
    requests(c, n, 0, channel, body)
}

/// When the queue benches' users and requests were made, and so the
/// instant their timed pass runs at: every request is due then.
fn requested_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap()
}

/// `n` users (and the sender, party [`PARTY0`]), each with an address on
/// `channel` (`address` is SQL over `i`, the user's number from 1).
fn recipients(c: &mut DbConn, n: usize, channel: &str, address: &str) -> Result<()> {
    let d = sql::Dialect(c.backend());
    let t0 = d.ts_lit(requested_at());
    let all = d.series(n + 1);
    c.batch_execute(&format!(
        "INSERT INTO parties (id, kind, name, created_at) SELECT {PARTY0} + i, 'user', 'u' || i, {t0} FROM {all}; \
         INSERT INTO users (party_id, timezone, week_start, daily_hour, locale, subscriber_code) \
             SELECT {PARTY0} + i, 'Etc/UTC', 0, 8, 'en-GB', 'code' || i FROM {all}; \
         INSERT INTO contact_points (party_id, channel, address, verified, disabled, bounce_count, created_at) \
             SELECT {PARTY0} + i, '{channel}', {address}, true, false, 0, {t0} FROM {all}"
    ))?;
    Ok(())
}

/// One pending request from the sender to each of the `n` users, with ids
/// from `first + 1`.
fn requests(c: &mut DbConn, n: usize, first: usize, channel: &str, body: &str) -> Result<()> {
    let d = sql::Dialect(c.backend());
    let t0 = d.ts_lit(requested_at());
    let all = d.series(n + 1);
    c.batch_execute(&format!(
        "INSERT INTO nt_requests (request_id, party_to, expand_group, party_from, subject, channels, \
             request_date, status, max_retries) \
             SELECT {first} + i, {PARTY0} + i, false, {PARTY0}, 'Bench message ' || ({first} + i), \
             '{channel}', {t0}, 'pending', 3 FROM {all} WHERE i > 0; \
         INSERT INTO nt_messages (request_id, message, message_chat) \
             SELECT {first} + i, '{body}', '{body}' FROM {all} WHERE i > 0"
    ))?;
    // The database as autovacuum leaves it between two hourly passes:
    // earlier runs' dead row versions cleared, statistics fresh. (VACUUM
    // cannot share a statement batch, which runs as one transaction.)
    c.batch_execute(match c.backend() {
        crate::db::Backend::Postgres => "VACUUM ANALYZE",
        crate::db::Backend::Sqlite => "ANALYZE",
    })?;
    Ok(())
}
