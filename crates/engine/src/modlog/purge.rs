//! Old rows leave the log: [`purge`] by age (keeping what a live window
//! still owes), [`forget_collection_in_tx`] with their collection.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use super::{touch_feeds, Cut, LogPos};
use crate::db::schema::{modification_values, modifications};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// How many rows a purge removed, and how many old enough it kept because
/// a modification digest still owes them to someone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Purged {
    pub modifications: usize,
    pub values: usize,
    pub waiting: usize,
}

/// Deletes modifications (and their values) that occurred before `cutoff`
/// and that every live modification subscription's windows have passed:
/// a change recorded late, with an old `at`, stays until the digests that
/// owe it have gone out (a paused subscription holds nothing back).
pub fn purge(conn: &mut DbConn, cutoff: DateTime<Utc>) -> Result<Purged> {
    use crate::db::schema::subscriptions;
    let cutoff = cutoff.naive_utc();
    conn.write_tx(|c| {
        let cuts: Vec<Cut> = subscriptions::table
            .filter(subscriptions::paused.eq(false))
            .filter(subscriptions::kind.eq("modification"))
            .select(subscriptions::last_log_cut)
            .distinct()
            .load::<String>(c)?
            .into_iter()
            .map(Cut::from_stored)
            .collect();
        // Every row below the lowest floor of the live windows' cuts has
        // been seen by all of them; above it (what was recorded since the
        // oldest of them, a few rows) each is asked.
        let floor = cuts.iter().map(Cut::floor).min().unwrap_or(LogPos::MAX);
        let above: Vec<(i64, i64)> = modifications::table
            .filter(modifications::occurred_at.lt(cutoff))
            .filter(modifications::log_pos.ge(floor))
            .select((modifications::id, modifications::log_pos))
            .load(c)?;
        let (seen, owed): (Vec<_>, Vec<_>) = above
            .into_iter()
            .partition(|(_, pos)| cuts.iter().all(|cut| cut.sees(*pos)));
        let seen: Vec<i64> = seen.into_iter().map(|(id, _)| id).collect();
        let below = || {
            modifications::table
                .filter(modifications::occurred_at.lt(cutoff))
                .filter(modifications::log_pos.lt(floor))
        };
        let mut touched: BTreeSet<i64> = below()
            .select(modifications::collection_id)
            .distinct()
            .load::<i64>(c)?
            .into_iter()
            .collect();
        for chunk in seen.chunks(10_000) {
            touched.extend(
                modifications::table
                    .filter(modifications::id.eq_any(chunk))
                    .select(modifications::collection_id)
                    .distinct()
                    .load::<i64>(c)?,
            );
        }
        touch_feeds(c, touched.into_iter().map(CollectionId))?;
        let mut values = diesel::delete(modification_values::table.filter(
            modification_values::modification_id.eq_any(below().select(modifications::id)),
        ))
        .execute(c)?;
        let mut modifications = diesel::delete(below()).execute(c)?;
        for chunk in seen.chunks(10_000) {
            values += diesel::delete(
                modification_values::table
                    .filter(modification_values::modification_id.eq_any(chunk)),
            )
            .execute(c)?;
            modifications +=
                diesel::delete(modifications::table.filter(modifications::id.eq_any(chunk)))
                    .execute(c)?;
        }
        Ok(Purged {
            modifications,
            values,
            waiting: owed.len(),
        })
    })
}

/// Deletes one collection's modifications (and their values) in the
/// caller's transaction: the log is per collection, and goes with it.
pub fn forget_collection_in_tx(c: &mut DbConn, coll: CollectionId) -> Result<Purged> {
    let mine = modifications::table
        .filter(modifications::collection_id.eq(coll.0))
        .select(modifications::id);
    let values = diesel::delete(
        modification_values::table.filter(modification_values::modification_id.eq_any(mine)),
    )
    .execute(c)?;
    let modifications =
        diesel::delete(modifications::table.filter(modifications::collection_id.eq(coll.0)))
            .execute(c)?;
    Ok(Purged {
        modifications,
        values,
        waiting: 0,
    })
}
