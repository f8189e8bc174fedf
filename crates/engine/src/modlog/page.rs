//! The log of one collection read a page of items at a time, for the
//! `changed` feed: which items changed in a window, in order of their
//! first change there, `LIMIT`ed in the query, then the modifications of
//! those items alone. A page costs its own rows, not the window's.

use std::collections::HashSet;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Timestamp};

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
/// pairs are walked in that order, the order of the index
/// `modifications_collection_time`, from `after`, `SCAN_ROWS` at a time, and
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
            .filter(modifications::occurred_at.lt(end))
            .select((modifications::item_uuid, modifications::occurred_at))
            .distinct()
            .order((
                modifications::occurred_at.asc(),
                modifications::item_uuid.asc(),
            ))
            .limit(SCAN_ROWS as i64)
            .into_boxed();
        q = match &from {
            // After the bound, as one row value and the only lower bound,
            // so that both back ends start the index range there. With
            // `occurred_at > at OR item_uuid > item` (or beside
            // `occurred_at >= start`, on SQLite) the range started at the
            // instant and every row of it was read and dropped: all of a
            // bulk import's, for each page. A bound before the window is
            // raised to its start ("" sorts before every UUID).
            Some((at, item)) => {
                let (at, item) = if *at < start {
                    (start, String::new())
                } else {
                    (*at, item.clone())
                };
                q.filter(
                    diesel::dsl::sql::<Bool>(
                        "(modifications.occurred_at, modifications.item_uuid) > (",
                    )
                    .bind::<Timestamp, _>(at)
                    .sql(", ")
                    .bind::<Text, _>(item)
                    .sql(")"),
                )
            }
            None => q.filter(modifications::occurred_at.ge(start)),
        };
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
