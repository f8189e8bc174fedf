//! The log of one collection read a page of items at a time, for the
//! `changed` feed: which items changed in a window, in order of their
//! first change there, `LIMIT`ed in the query, then the modifications of
//! those items alone. A page costs its own rows, not the window's.

use std::collections::HashSet;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::{with_values, Modification, Row};
use crate::db::schema::modifications;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// Rows of the window read at a time while looking for a page's items.
const SCAN_ROWS: usize = 256;

/// The first `limit` items of `coll` changed in `[start, end)`, each with
/// its first change there, ordered by (that instant, UUID), after `after`.
///
/// Bounded by the page, not the window: the window's (instant, item)
/// pairs are walked in that order from `after`, `SCAN_ROWS` at a time, and
/// the first time an item is met it is on this page when it has no earlier
/// change in the window (one seek of `modifications_collection_item_time`
/// per item; an earlier one put it on an earlier page). The walk stops
/// once the page is full.
pub fn changed_items(
    conn: &mut DbConn,
    coll: CollectionId,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    after: Option<(DateTime<Utc>, &str)>,
    limit: usize,
) -> Result<Vec<(String, DateTime<Utc>)>> {
    let (start, end) = (start.naive_utc(), end.naive_utc());
    let mut from: Option<(NaiveDateTime, String)> =
        after.map(|(at, item)| (at.naive_utc(), item.to_string()));
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while out.len() < limit {
        let mut q = modifications::table
            .filter(modifications::collection_id.eq(coll.0))
            .filter(modifications::occurred_at.ge(start))
            .filter(modifications::occurred_at.lt(end))
            .select((modifications::item_uuid, modifications::occurred_at))
            .distinct()
            .order((
                modifications::occurred_at.asc(),
                modifications::item_uuid.asc(),
            ))
            .limit(SCAN_ROWS as i64)
            .into_boxed();
        if let Some((at, item)) = &from {
            // The bound first, alone, so the index range starts there.
            q = q.filter(modifications::occurred_at.ge(*at)).filter(
                modifications::occurred_at
                    .gt(*at)
                    .or(modifications::item_uuid.gt(item.clone())),
            );
        }
        let rows: Vec<(String, NaiveDateTime)> = q.load(conn)?;
        let last = rows.len() < SCAN_ROWS;
        from = rows.last().cloned().map(|(u, at)| (at, u));
        let met: Vec<(String, NaiveDateTime)> = rows
            .into_iter()
            .filter(|(u, _)| seen.insert(u.clone()))
            .collect();
        let earlier = changed_before(conn, coll, &met, start)?;
        for (u, at) in met {
            if out.len() < limit && !earlier.contains(&u) {
                out.push((u, at.and_utc()));
            }
        }
        if last {
            break;
        }
    }
    Ok(out)
}

/// Which of `met` (item, instant) have a change at or after `start` and
/// before their instant: those are not first met there.
fn changed_before(
    conn: &mut DbConn,
    coll: CollectionId,
    met: &[(String, NaiveDateTime)],
    start: NaiveDateTime,
) -> Result<HashSet<String>> {
    let mut earlier = HashSet::new();
    for (u, at) in met {
        let found: Option<String> = modifications::table
            .filter(modifications::collection_id.eq(coll.0))
            .filter(modifications::item_uuid.eq(u))
            .filter(modifications::occurred_at.ge(start))
            .filter(modifications::occurred_at.lt(*at))
            .select(modifications::item_uuid)
            .first(conn)
            .optional()?;
        if found.is_some() {
            earlier.insert(u.clone());
        }
    }
    Ok(earlier)
}

/// The modifications of `items` in `coll` with `start <= occurred_at <
/// end`, ordered by item then time, each with its values.
pub fn find_items_in_window(
    conn: &mut DbConn,
    coll: CollectionId,
    items: &[String],
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Vec<Modification>> {
    let mut rows: Vec<Row> = Vec::new();
    for chunk in items.chunks(1000) {
        rows.extend(
            modifications::table
                .filter(modifications::collection_id.eq(coll.0))
                .filter(modifications::item_uuid.eq_any(chunk))
                .filter(modifications::occurred_at.ge(start.naive_utc()))
                .filter(modifications::occurred_at.lt(end.naive_utc()))
                .select(row_columns!())
                .order((
                    modifications::item_uuid.asc(),
                    modifications::occurred_at.asc(),
                    modifications::id.asc(),
                ))
                .load::<Row>(conn)?,
        );
    }
    with_values(conn, rows)
}
