//! `digestd bench …`: performance measured beside a floor taken in the same
//! run on the same database, because these machines are shared and noisy.

mod compose;
mod ingest;
mod smtp;
mod sql;
mod tick;

pub use compose::{compose, ComposeArgs};
pub use ingest::{ingest, IngestArgs};
pub use smtp::{smtp, SmtpArgs};
pub use tick::{tick, TickArgs};

use std::time::Duration;

use crate::db::{Db, DbUrl};
use crate::error::{Error, Result};

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

/// Peak resident memory of this process (VmHWM), in MiB, where Linux tells.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
