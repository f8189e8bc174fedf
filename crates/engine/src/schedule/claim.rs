//! Writing a chunk of claims: the new runs and every claimed
//! subscription's new `next_due_at` (and, for those that ran, the last
//! period, its instant and the window's end and log position, which are
//! the run's own).
//!
//! Set-based on both back ends, in the same transaction as the rest of
//! the tick: the runs in bulk ([`crate::db::insert_rows!`]: a binary `COPY`
//! on PostgreSQL, no statement of 35,000 parameters to parse; multi-row
//! `INSERT`s kept prepared on SQLite), the subscriptions moved on in a few
//! statements for the whole chunk ([`crate::db::move_subscriptions_on`]).

use std::collections::HashMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::db::schema::subscription_runs;
use crate::db::{DbConn, MovedOn, Stamp};
use crate::error::Result;

/// Runs per kept multi-row statement where the back end takes them
/// (SQLite): 1,152 parameters for a run's nine columns, well under its
/// limit, so a chunk of 20,000 is about 160 executions of one prepared
/// statement. The rest of a chunk goes in one row at a time, through a
/// one-row statement kept prepared as well.
const RUN_ROWS: usize = 128;

/// A run to insert.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = subscription_runs, treat_none_as_default_value = false)]
pub struct RunRow {
    pub subscription_id: i64,
    pub period: String,
    pub scheduled_at: Stamp,
    pub window_start: Stamp,
    pub window_end: Stamp,
    pub ran_at: Stamp,
    pub request_id: Option<i64>,
    pub log_from: Option<String>,
    pub log_to: Option<String>,
}

/// Inserts `runs` and moves each `(subscription, next_due_at)` on.
pub fn write(c: &mut DbConn, runs: &[RunRow], nexts: &[(i64, NaiveDateTime)]) -> Result<()> {
    let t0 = std::time::Instant::now();
    crate::db::insert_rows!(c, subscription_runs::table, runs, kept = RUN_ROWS);
    let t1 = t0.elapsed();
    let moved: Vec<MovedOn> = with_runs(runs, nexts)
        .map(|(id, next, r)| MovedOn {
            id,
            next_due_at: Stamp(next),
            last_scheduled_at: r.map(|r| r.scheduled_at),
            last_period: r.map(|r| r.period.clone()),
            last_window_end: r.map(|r| r.window_end),
            last_log_cut: r.and_then(|r| r.log_to.clone()),
        })
        .collect();
    crate::db::move_subscriptions_on(c, &moved)?;
    tracing::debug!(inserted = ?t1, updated = ?t0.elapsed(), "claim write");
    Ok(())
}

/// Each `(subscription, new next_due_at)` with the run it just got, if
/// any (whose period, instant and window end become the subscription's
/// last ones).
fn with_runs<'a>(
    runs: &'a [RunRow],
    nexts: &'a [(i64, NaiveDateTime)],
) -> impl Iterator<Item = (i64, NaiveDateTime, Option<&'a RunRow>)> + 'a {
    let mut last: HashMap<i64, &RunRow> = runs.iter().map(|r| (r.subscription_id, r)).collect();
    nexts.iter().map(move |(id, n)| (*id, *n, last.remove(id)))
}

/// A recorded run, as reports read it.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct RunRecord {
    pub subscription_id: i64,
    pub period: String,
    pub scheduled_at: NaiveDateTime,
    pub window_start: NaiveDateTime,
    pub window_end: NaiveDateTime,
    pub request_id: Option<i64>,
}

/// Every recorded run, by subscription and period.
pub fn list(c: &mut DbConn) -> Result<Vec<RunRecord>> {
    Ok(subscription_runs::table
        .select((
            subscription_runs::subscription_id,
            subscription_runs::period,
            subscription_runs::scheduled_at,
            subscription_runs::window_start,
            subscription_runs::window_end,
            subscription_runs::request_id,
        ))
        .order((
            subscription_runs::subscription_id.asc(),
            subscription_runs::scheduled_at.asc(),
        ))
        .load(c)?)
}
