//! Reading the log: a digest's window ([`find_in_span`]) and a window by
//! time ([`find_in_window`]), each modification with its values.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::{Change, Cut, Modification, Span};
use crate::db::schema::{modification_values, modifications};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{CollectionId, ModificationId, PartyId};

/// The modifications of `span` (of the given collections, all when
/// `None`), ordered by item, then time, then the order recorded, each with
/// its values. Two reads, each on its own index: by position
/// (`collection_id, log_pos`) what was recorded in `[from, to)`, and by
/// time (`collection_id, occurred_at, log_pos`) what was recorded before
/// `from` but dated in `[start, end)`, which is almost always nothing.
pub fn find_in_span(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    span: &Span,
) -> Result<Vec<Modification>> {
    Ok(find_in_span_upto(conn, collections, span, None)?.unwrap_or_default())
}

/// [`find_in_span`], or `None` when what was recorded in the span holds
/// more than `limit` modifications (then nothing else is read: such a
/// window is streamed, [`super::stream_span`]).
pub fn find_in_span_upto(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    span: &Span,
    limit: Option<usize>,
) -> Result<Option<Vec<Modification>>> {
    let (main, ahead) = reads_of(span);
    let mut rows = load_rows(conn, collections, main, limit.map(|n| n + 1))?;
    if limit.is_some_and(|n| rows.len() > n) {
        return Ok(None);
    }
    if let Some(ahead) = ahead {
        let ahead = load_rows(conn, collections, ahead, None)?;
        if !ahead.is_empty() {
            rows.extend(ahead);
            rows.sort_by(|a, b| (&a.4, a.2, a.0).cmp(&(&b.4, b.2, b.0)));
        }
    }
    Ok(Some(with_values(conn, rows)?))
}

/// The reads of `span`: the main one (by position when the span has cuts,
/// else by time), and for a span with cuts, what was recorded before
/// `from` but dated in `[start, end)`, which is almost always nothing.
pub(super) fn reads_of(span: &Span) -> (Read, Option<Read>) {
    let Some((from, to)) = &span.log else {
        let main = Read::Time {
            start: span.start,
            end: span.end,
            seen_at: None,
        };
        return (main, None);
    };
    let main = Read::Recorded {
        from: from.clone(),
        to: to.clone(),
        end: span.end,
    };
    let ahead = (span.start < span.end && !from.as_str().is_empty()).then(|| Read::Time {
        start: span.start,
        end: span.end,
        seen_at: Some(from.clone()),
    });
    (main, ahead)
}

/// `ahead` (from [`reads_of`]) with its values, in the log's order.
pub(super) fn load_ahead(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    ahead: Option<Read>,
) -> Result<Vec<Modification>> {
    match ahead {
        Some(a) => {
            let rows = load_rows(conn, collections, a, None)?;
            with_values(conn, rows)
        }
        None => Ok(Vec::new()),
    }
}

/// Modifications of the given collections (all collections when `None`)
/// with `start <= occurred_at < end`, ordered by item then time, each with
/// its values.
pub fn find_in_window(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Vec<Modification>> {
    let read = Read::Time {
        start,
        end,
        seen_at: None,
    };
    let rows = load_rows(conn, collections, read, None)?;
    with_values(conn, rows)
}

pub(super) type Row = (
    i64,
    String,
    NaiveDateTime,
    i64,
    String,
    Option<i64>,
    String,
    String,
    String,
    Option<String>,
);

/// Which rows [`load_rows`] reads.
pub(super) enum Read {
    /// `start <= occurred_at < end`, and seen at the cut when one is set.
    Time {
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        seen_at: Option<Cut>,
    },
    /// Seen at `to`, not at `from`, and `occurred_at < end`.
    Recorded {
        from: Cut,
        to: Cut,
        end: DateTime<Utc>,
    },
}

/// `log_pos` seen at `cut`, a snapshot (PostgreSQL's cuts), as a
/// condition for any back end's query (the cut bound, not spliced into the
/// statement). A counter (SQLite's) needs none: `log_pos` below it is seen.
pub(super) fn seen_at(cut: &Cut) -> crate::db::VisibleIn {
    crate::db::visible_in_snapshot("modifications.log_pos", cut.as_str())
}

/// `$q` (a boxed query of `modifications`) narrowed to what `$read`
/// selects among `$colls` (an `Option<ColumnIds>`). A macro, not a
/// function, so the multi-back-end read ([`load_rows`]) and the streamed
/// one (`stream`), whose query is typed for one back end, filter alike.
macro_rules! filter_read {
    ($q:expr, $read:expr, $colls:expr) => {{
        let mut q = $q;
        match $read {
            Read::Time {
                start,
                end,
                seen_at: seen,
            } => {
                q = q
                    .filter(modifications::occurred_at.ge(start.naive_utc()))
                    .filter(modifications::occurred_at.lt(end.naive_utc()));
                if let Some(cut) = seen {
                    q = q.filter(modifications::log_pos.lt(cut.ceiling()));
                    if cut.is_snapshot() {
                        q = q.filter(seen_at(&cut));
                    }
                }
            }
            Read::Recorded { from, to, end } => {
                q = q
                    .filter(modifications::log_pos.ge(from.floor()))
                    .filter(modifications::log_pos.lt(to.ceiling()))
                    .filter(modifications::occurred_at.lt(end.naive_utc()));
                if to.is_snapshot() {
                    q = q.filter(seen_at(&to));
                    if from.is_snapshot() {
                        q = q.filter(diesel::dsl::not(seen_at(&from)));
                    }
                }
            }
        }
        // One collection as `collection_id = $1`: a statement diesel keeps
        // prepared may get PostgreSQL's generic plan, which for `= ANY($1)`
        // took the time index and filtered every collection's rows in the
        // window (34 ms against 0.07 ms per read among 50,000 changes in
        // `bench burst`); with `=` it keeps to the (collection_id, …)
        // index. Several (the composer reads a batch's windows at once) as
        // one bound array in a literal, which is never kept prepared and
        // so is planned for its values each time.
        match $colls {
            Some(ColumnIds::One(one)) => q = q.filter(modifications::collection_id.eq(one)),
            Some(ColumnIds::Many(these)) => q = q.filter(these),
            None => {}
        }
        q
    }};
}
pub(super) use filter_read;

/// The collections a read is narrowed to, as [`filter_read`] filters them.
pub(super) enum ColumnIds {
    One(i64),
    /// `collection_id` in these, bound as one parameter.
    Many(crate::db::ColumnIn),
}

impl ColumnIds {
    /// For a read on `conn`'s back end.
    pub(super) fn of(conn: &DbConn, collections: Option<&[CollectionId]>) -> Option<ColumnIds> {
        Some(match collections? {
            [one] => ColumnIds::One(one.0),
            cs => ColumnIds::Many(crate::db::column_in(
                conn,
                "modifications.collection_id",
                cs.iter().map(|c| c.0).collect(),
            )),
        })
    }
}

/// The rows `read` selects among `collections`, by item, then time, then
/// the order recorded; at most `limit` when one is given.
fn load_rows(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    read: Read,
    limit: Option<usize>,
) -> Result<Vec<Row>> {
    let q = modifications::table
        .select(row_columns!())
        .order((
            modifications::item_uuid.asc(),
            modifications::occurred_at.asc(),
            modifications::id.asc(),
        ))
        .into_boxed();
    let colls = ColumnIds::of(conn, collections);
    let mut q = filter_read!(q, read, colls);
    if let Some(n) = limit {
        q = q.limit(i64::try_from(n).unwrap_or(i64::MAX));
    }
    Ok(q.load(conn)?)
}

/// `rows` with their values, as modifications.
pub(super) fn with_values(conn: &mut DbConn, rows: Vec<Row>) -> Result<Vec<Modification>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let mut changes: BTreeMap<i64, Vec<Change>> = BTreeMap::new();
    for chunk in ids.chunks(10_000) {
        let vals: Vec<(i64, String, Option<String>, Option<String>)> = modification_values::table
            .filter(modification_values::modification_id.eq_any(chunk))
            .select((
                modification_values::modification_id,
                modification_values::attribute,
                modification_values::old_value,
                modification_values::new_value,
            ))
            .order((
                modification_values::modification_id,
                modification_values::attribute,
            ))
            .load(conn)?;
        for (id, attribute, old, new) in vals {
            changes.entry(id).or_default().push(Change {
                attribute,
                old,
                new,
            });
        }
    }
    Ok(rows
        .into_iter()
        .map(|r| {
            let id = r.0;
            let mut m = modification(r);
            m.changes = changes.remove(&id).unwrap_or_default();
            m
        })
        .collect())
}

/// A row as a modification, without its values.
pub(super) fn modification(r: Row) -> Modification {
    let (id, tx_id, at, coll, item_uuid, actor, action, item_kind, item_title, item_url) = r;
    Modification {
        id: ModificationId(id),
        tx_id,
        occurred_at: at.and_utc(),
        collection: CollectionId(coll),
        item_uuid,
        actor: actor.map(PartyId),
        action,
        item_kind,
        item_title,
        item_url,
        changes: Vec::new(),
    }
}
