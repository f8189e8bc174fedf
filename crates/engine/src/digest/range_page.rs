//! `findItemsInRange` one page at a time, for the `range` feed: the first
//! entries after a cursor in (instant, start before reminder, UUID) order.
//!
//! Three reads, each bounded: single starts and single reminders, each
//! ordered and `LIMIT`ed in the query from the cursor's instant on, and the
//! collection's recurring series, each expanded from the cursor's instant
//! to at most a page of instances. The first entries of the three merged
//! are the page: each of them is among the first of its own read.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::compose::{expand, item_row, ItemRow, Upcoming, When};
use crate::db::schema::{collection_items, items};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// The first `limit` entries of collection `coll` in `[from, to)` after
/// `after` (instant, what, item UUID), in order.
pub fn page(
    conn: &mut DbConn,
    coll: CollectionId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    after: Option<(DateTime<Utc>, When, String)>,
    limit: usize,
) -> Result<Vec<Upcoming>> {
    let lo = after.as_ref().map_or(from, |a| a.0.max(from));
    let (l, t) = (lo.naive_utc(), to.naive_utc());
    let n = i64::try_from(limit).unwrap_or(i64::MAX);
    let base = || {
        items::table
            .inner_join(collection_items::table)
            .filter(collection_items::collection_id.eq(coll.0))
            .filter(items::deleted.eq(false))
            .select(item_row!())
            .into_boxed()
    };
    // Entries at the cursor's instant that sort after it: starts only
    // after a start's item, reminders after a start, or a reminder's item.
    let (start_after, reminder_after) = match &after {
        None => (None, None),
        Some((_, When::Starts, item)) => (Some(item.clone()), Some(String::new())),
        Some((_, When::Reminder, item)) => (None, Some(item.clone())),
    };
    let mut starts = base()
        .filter(items::rrule.is_null())
        .filter(items::start_at.lt(t))
        .order((items::start_at.asc(), items::uuid.asc()))
        .limit(n);
    starts = match (&after, start_after) {
        (None, _) => starts.filter(items::start_at.ge(l)),
        (Some(_), None) => starts.filter(items::start_at.gt(l)),
        (Some(_), Some(item)) => starts.filter(
            items::start_at
                .gt(l)
                .or(items::start_at.eq(l).and(items::uuid.gt(item))),
        ),
    };
    let mut reminders = base()
        .filter(items::rrule.is_null())
        .filter(items::reminder_at.lt(t))
        .order((items::reminder_at.asc(), items::uuid.asc()))
        .limit(n);
    reminders = match (&after, reminder_after) {
        (None, _) => reminders.filter(items::reminder_at.ge(l)),
        (Some(_), None) => reminders.filter(items::reminder_at.gt(l)),
        (Some(_), Some(item)) => reminders.filter(
            items::reminder_at
                .gt(l)
                .or(items::reminder_at.eq(l).and(items::uuid.gt(item))),
        ),
    };
    let series = base()
        .filter(items::rrule.is_not_null())
        .filter(items::start_at.lt(t))
        .order(items::id.asc());
    let mut rows: Vec<ItemRow> = starts.load(conn)?;
    rows.extend(reminders.load::<ItemRow>(conn)?);
    rows.extend(series.load::<ItemRow>(conn)?);
    // Entries at the cursor's instant and before it are dropped below: a
    // series gives at most two there (its start and its reminder).
    let mut out = expand(rows, lo, to, limit.saturating_add(2))?;
    if let Some((at, what, item)) = &after {
        let key = (*at, *what, item.as_str());
        out.retain(|u| (u.at, u.what, u.item_uuid.as_str()) > key);
    }
    out.truncate(limit);
    Ok(out)
}
