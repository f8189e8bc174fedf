//! The log of one collection read a page of items at a time, for the
//! `changed` feed: which items changed in a window, in order of their
//! first change there, `LIMIT`ed in the query, then the modifications of
//! those items alone. A page costs its own rows, not the window's.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::dsl::min;
use diesel::prelude::*;

use super::{with_values, Modification, Row};
use crate::db::schema::modifications;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// The first `limit` items of `coll` changed in `[start, end)`, each with
/// its first change there, ordered by (that instant, UUID), after `after`.
pub fn changed_items(
    conn: &mut DbConn,
    coll: CollectionId,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    after: Option<(DateTime<Utc>, &str)>,
    limit: usize,
) -> Result<Vec<(String, DateTime<Utc>)>> {
    let first = min(modifications::occurred_at);
    let mut q = modifications::table
        .filter(modifications::collection_id.eq(coll.0))
        .filter(modifications::occurred_at.ge(start.naive_utc()))
        .filter(modifications::occurred_at.lt(end.naive_utc()))
        .group_by(modifications::item_uuid)
        .select((modifications::item_uuid, first))
        .order((first.asc(), modifications::item_uuid.asc()))
        .limit(i64::try_from(limit).unwrap_or(i64::MAX))
        .into_boxed();
    if let Some((at, item)) = after {
        let at = at.naive_utc();
        q = q.having(
            first.gt(at).or(first
                .eq(at)
                .and(modifications::item_uuid.gt(item.to_string()))),
        );
    }
    let rows: Vec<(String, Option<NaiveDateTime>)> = q.load(conn)?;
    Ok(rows
        .into_iter()
        .filter_map(|(u, at)| Some((u, at?.and_utc())))
        .collect())
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
