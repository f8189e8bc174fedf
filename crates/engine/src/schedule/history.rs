//! The last ticks as `subscription_runs` recorded them, for the operator's
//! page: each tick that recorded runs is the set of runs with one `ran_at`
//! (the tick's instant). How long a tick took is not stored (it is in the
//! process's `/metrics`, `digestd_tick_duration_seconds`); a tick that found
//! nothing due leaves no run, only `nt_job`'s last run and count. A
//! flush's run (`super::flush`) is no tick's and is left out.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::subscription_runs;
use crate::db::DbConn;
use crate::error::Result;

/// How many of the newest runs are read: enough for the last ticks of a
/// busy site, bounded so the page costs the same on any history.
const RUNS_READ: i64 = 5_000;

/// One tick, from its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TickSummary {
    /// The tick's instant.
    pub at: DateTime<Utc>,
    /// Runs it recorded.
    pub runs: usize,
    /// Of those, runs that posted a digest (the others had nothing to say).
    pub digests: usize,
    /// The latest run's delay: the tick's instant minus the run's
    /// scheduled instant, at most (zero when every run was on time).
    pub late: Duration,
}

/// The newest `n` ticks that recorded runs, newest first, from the newest
/// runs (by id, the primary key, so no scan of the history).
pub fn recent_ticks(conn: &mut DbConn, n: usize) -> Result<Vec<TickSummary>> {
    let rows: Vec<(NaiveDateTime, NaiveDateTime, Option<i64>)> = subscription_runs::table
        .select((
            subscription_runs::ran_at,
            subscription_runs::scheduled_at,
            subscription_runs::request_id,
        ))
        .filter(subscription_runs::period.not_like("flush-%"))
        .order(subscription_runs::id.desc())
        .limit(RUNS_READ)
        .load(conn)?;
    let mut by: BTreeMap<NaiveDateTime, TickSummary> = BTreeMap::new();
    for (ran, scheduled, request) in rows {
        let t = by.entry(ran).or_insert_with(|| TickSummary {
            at: ran.and_utc(),
            runs: 0,
            digests: 0,
            late: Duration::zero(),
        });
        t.runs += 1;
        t.digests += usize::from(request.is_some());
        t.late = t.late.max(ran - scheduled);
    }
    Ok(by.into_values().rev().take(n).collect())
}
