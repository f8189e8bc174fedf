//! The soak's world, through the product's own paths: collections, people
//! in several zones (`import::users`), an hourly modification digest each
//! (`import::subs`); and the check at the end that every due digest went
//! out exactly once.

use std::io::Write;

use chrono::{DateTime, Utc};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use crate::access::{self, Scope};
use crate::db::schema::{nt_queue, nt_requests, subscription_runs};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::{import, items};

/// Whole-hour offsets, so every hourly digest falls due at a UTC top of
/// the hour, when the tick runs.
const ZONES: [&str; 5] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Tokyo",
    "America/Sao_Paulo",
];

pub struct World {
    pub collections: Vec<String>,
    pub token: String,
    pub users: usize,
}

pub fn build(c: &mut DbConn, at: DateTime<Utc>, users: usize, colls: usize) -> Result<World> {
    let mut collections = Vec::with_capacity(colls);
    for k in 0..colls {
        let coll = items::create_collection(c, at, &format!("Soak {k}"), None)?;
        collections.push(coll.uuid);
    }
    let mut lines = Vec::new();
    for i in 0..users {
        writeln!(
            lines,
            r#"{{"name":"soak{i}","tz":"{}","email":"soak{i}@example.org"}}"#,
            ZONES[i % ZONES.len()]
        )?;
    }
    let checked = import::users::check(c, &lines[..])?;
    let done = import::users::write(c, at, &checked, &mut |_| {})?;
    if done.created != users {
        return Err(Error::Storage(format!(
            "imported {} of {users} users",
            done.created
        )));
    }
    lines.clear();
    for i in 0..users {
        writeln!(
            lines,
            r#"{{"party":"soak{i}","frequency":"hourly","kind":"modification","collection":"{}"}}"#,
            collections[i % colls]
        )?;
    }
    let subs = import::subs::import(c, at, &lines[..], false, &mut |_| {})?;
    if subs.len() != users {
        return Err(Error::Storage(format!(
            "imported {} of {users} subscriptions",
            subs.len()
        )));
    }
    let (_, token) = access::add_token(c, at, "soak", Scope::Admin)?;
    Ok(World {
        collections,
        token,
        users,
    })
}

/// On a server without autovacuum (the test machines' PostgreSQL), what
/// autovacuum would do within a minute of the log growing by a tenth:
/// `ANALYZE` the tables the soak grows, so the planner sees the rows that
/// are there. Unanalyzed, a log of a million changes looks a few dozen
/// rows long, and each feed read scanned its whole window (0.9–1.4 s a
/// read instead of a millisecond). Whether it ran.
pub(crate) fn stand_in_for_autovacuum(c: &mut DbConn) -> Result<bool> {
    if !c.autovacuum_off()? {
        return Ok(false);
    }
    c.batch_execute("ANALYZE modifications; ANALYZE modification_values")?;
    Ok(true)
}

/// What the end check found.
pub struct Once {
    pub runs: usize,
    pub periods: usize,
    /// The latest a run was taken after its scheduled instant (clock time).
    pub latest: chrono::Duration,
    pub digests: i64,
    pub sent: i64,
}

/// Every run is its own (subscription, period) — the unique key makes
/// that so; checked here anyway — and every digest request is sent, once.
pub(crate) fn exactly_once(c: &mut DbConn) -> Result<Once> {
    let rows: Vec<(i64, String, chrono::NaiveDateTime, chrono::NaiveDateTime)> =
        subscription_runs::table
            .select((
                subscription_runs::subscription_id,
                subscription_runs::period,
                subscription_runs::scheduled_at,
                subscription_runs::ran_at,
            ))
            .load(c)?;
    let latest = rows
        .iter()
        .map(|(_, _, due, ran)| *ran - *due)
        .max()
        .unwrap_or_default();
    let periods: std::collections::HashSet<(i64, String)> =
        rows.iter().map(|(s, p, _, _)| (*s, p.clone())).collect();
    let digests: i64 = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .count()
        .get_result(c)?;
    let sent: i64 = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .filter(nt_requests::status.eq("sent"))
        .count()
        .get_result(c)?;
    Ok(Once {
        runs: rows.len(),
        periods: periods.len(),
        latest,
        digests,
        sent,
    })
}

/// Runs taken and messages sent so far.
#[derive(Clone, Copy)]
pub struct Counts {
    pub runs: i64,
    pub sent: i64,
}

pub fn counts(c: &mut DbConn) -> Result<Counts> {
    let runs = subscription_runs::table.count().get_result(c)?;
    let sent = nt_queue::table
        .filter(nt_queue::is_successful.eq(true))
        .count()
        .get_result(c)?;
    Ok(Counts { runs, sent })
}
