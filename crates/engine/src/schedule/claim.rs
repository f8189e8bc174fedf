//! Writing a chunk of claims: the new runs and every claimed
//! subscription's new `next_due_at` (and, for those that ran, the last
//! period, its instant and the window's end and log position, which are
//! the run's own).
//!
//! Set-based on both back ends: on PostgreSQL a binary `COPY` of the runs
//! and an `UPDATE … FROM unnest(…)`; on SQLite multi-row `INSERT`s kept
//! prepared, of the runs and of the subscriptions' new values into a keyed
//! temporary table that one row-value `UPDATE` reads ([`sqlite`]). Same
//! transaction as the rest of the tick either way.

use std::collections::HashMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};

use crate::db::schema::subscription_runs;
use crate::db::DbConn;
use crate::error::Result;

mod sqlite;

/// A run to insert.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = subscription_runs, treat_none_as_default_value = false)]
pub struct RunRow {
    pub subscription_id: i64,
    pub period: String,
    pub scheduled_at: NaiveDateTime,
    pub window_start: NaiveDateTime,
    pub window_end: NaiveDateTime,
    pub ran_at: NaiveDateTime,
    pub request_id: Option<i64>,
    pub log_from: Option<String>,
    pub log_to: Option<String>,
}

/// Inserts `runs` and moves each `(subscription, next_due_at)` on.
pub fn write(c: &mut DbConn, runs: &[RunRow], nexts: &[(i64, NaiveDateTime)]) -> Result<()> {
    match c {
        DbConn::Sqlite(c) => {
            let t0 = std::time::Instant::now();
            let stamp = crate::db::sqlite_stamp;
            let rows: Vec<_> = runs
                .iter()
                .map(|r| sqlite::Run {
                    subscription_id: r.subscription_id,
                    period: r.period.clone(),
                    scheduled_at: stamp(r.scheduled_at),
                    window_start: stamp(r.window_start),
                    window_end: stamp(r.window_end),
                    ran_at: stamp(r.ran_at),
                    request_id: r.request_id,
                    log_from: r.log_from.clone(),
                    log_to: r.log_to.clone(),
                })
                .collect();
            sqlite::insert_runs(c, &rows)?;
            let t1 = t0.elapsed();
            let rows: Vec<_> = with_runs(runs, nexts)
                .map(|(id, n, r)| sqlite::Next {
                    id,
                    next: stamp(n),
                    sched: r.map(|r| stamp(r.scheduled_at)),
                    key: r.map(|r| r.period.clone()),
                    wend: r.map(|r| stamp(r.window_end)),
                    lcut: r.and_then(|r| r.log_to.clone()),
                })
                .collect();
            sqlite::move_on(c, &rows)?;
            tracing::debug!(inserted = ?t1, updated = ?t0.elapsed(), "claim write");
        }
        DbConn::Postgres(c) => {
            let t0 = std::time::Instant::now();
            // COPY in binary: no statement of 35,000 parameters to parse.
            if !runs.is_empty() {
                diesel::copy_from(subscription_runs::table)
                    .from_insertable(runs)
                    .execute(c)?;
            }
            let t1 = t0.elapsed();
            let (mut ids, mut next, mut sched, mut key, mut wend, mut lcut) =
                (vec![], vec![], vec![], vec![], vec![], vec![]);
            for (id, n, r) in with_runs(runs, nexts) {
                ids.push(id);
                next.push(n);
                sched.push(r.map(|r| r.scheduled_at));
                key.push(r.map(|r| r.period.clone()));
                wend.push(r.map(|r| r.window_end));
                lcut.push(r.and_then(|r| r.log_to.clone()));
            }
            crate::db::prefer_index_lookups(c)?;
            diesel::sql_query(
                "UPDATE subscriptions AS s SET next_due_at = v.next, \
                     last_scheduled_at = COALESCE(v.sched, s.last_scheduled_at), \
                     last_period = COALESCE(v.key, s.last_period), \
                     last_window_end = COALESCE(v.wend, s.last_window_end), \
                     last_log_cut = COALESCE(v.lcut, s.last_log_cut) \
                 FROM unnest($1, $2, $3, $4, $5, $6) AS v(id, next, sched, key, wend, lcut) \
                 WHERE s.id = v.id",
            )
            .bind::<Array<BigInt>, _>(ids)
            .bind::<Array<Timestamp>, _>(next)
            .bind::<Array<Nullable<Timestamp>>, _>(sched)
            .bind::<Array<Nullable<Text>>, _>(key)
            .bind::<Array<Nullable<Timestamp>>, _>(wend)
            .bind::<Array<Nullable<Text>>, _>(lcut)
            .execute(c)?;
            tracing::debug!(copied = ?t1, updated = ?t0.elapsed(), "claim write");
        }
    }
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
