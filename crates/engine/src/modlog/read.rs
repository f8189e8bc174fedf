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
    let Some((from, to)) = &span.log else {
        return find_in_window(conn, collections, span.start, span.end);
    };
    let recorded = Read::Recorded {
        from: from.clone(),
        to: to.clone(),
        end: span.end,
    };
    let mut rows = load_rows(conn, collections, recorded)?;
    if span.start < span.end && !from.as_str().is_empty() {
        let ahead = Read::Time {
            start: span.start,
            end: span.end,
            seen_at: Some(from.clone()),
        };
        let ahead = load_rows(conn, collections, ahead)?;
        if !ahead.is_empty() {
            rows.extend(ahead);
            rows.sort_by(|a, b| (&a.4, a.2, a.0).cmp(&(&b.4, b.2, b.0)));
        }
    }
    with_values(conn, rows)
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
    let rows = load_rows(
        conn,
        collections,
        Read::Time {
            start,
            end,
            seen_at: None,
        },
    )?;
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
enum Read {
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

/// `log_pos` seen at `cut`, as SQL (PostgreSQL; the cut is bound, not
/// spliced into the statement).
pub(super) fn seen_at(
    cut: &Cut,
) -> Box<
    dyn diesel::BoxableExpression<
        modifications::table,
        crate::db::MultiBackend,
        SqlType = diesel::sql_types::Bool,
    >,
> {
    Box::new(
        diesel::dsl::sql::<diesel::sql_types::Bool>(
            "pg_visible_in_snapshot(modifications.log_pos::text::xid8, ",
        )
        .bind::<diesel::sql_types::Text, _>(cut.as_str().to_string())
        .sql("::pg_snapshot)"),
    )
}

/// The rows `read` selects among `collections`, by item, then time, then
/// the order recorded.
fn load_rows(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    read: Read,
) -> Result<Vec<Row>> {
    let mut q = modifications::table
        .select(row_columns!())
        .order((
            modifications::item_uuid.asc(),
            modifications::occurred_at.asc(),
            modifications::id.asc(),
        ))
        .into_boxed();
    let pg = matches!(conn, DbConn::Postgres(_));
    match read {
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
                if pg {
                    q = q.filter(seen_at(&cut));
                }
            }
        }
        Read::Recorded { from, to, end } => {
            q = q
                .filter(modifications::log_pos.ge(from.floor()))
                .filter(modifications::log_pos.lt(to.ceiling()))
                .filter(modifications::occurred_at.lt(end.naive_utc()));
            if pg {
                q = q.filter(seen_at(&to));
                if !from.as_str().is_empty() {
                    q = q.filter(diesel::dsl::not(seen_at(&from)));
                }
            }
        }
    }
    // One collection as `collection_id = $1`: a statement diesel keeps
    // prepared may get PostgreSQL's generic plan, which for `= ANY($1)`
    // took the time index and filtered every collection's rows in the
    // window (34 ms against 0.07 ms per read among 50,000 changes in
    // `bench burst`); with `=` it keeps to the (collection_id, …) index.
    // Several (the composer reads a batch's windows at once) as an array
    // constant, which is planned for its values each time.
    match collections {
        Some([one]) => q = q.filter(modifications::collection_id.eq(one.0)),
        Some(cs) => {
            let ids: Vec<i64> = cs.iter().map(|c| c.0).collect();
            let cond = format!(
                "modifications.collection_id {}",
                crate::db::in_ids(conn, &ids)
            );
            q = q.filter(diesel::dsl::sql::<diesel::sql_types::Bool>(&cond));
        }
        None => {}
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
        .map(
            |(id, tx_id, at, coll, item_uuid, actor, action, item_kind, item_title, item_url)| {
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
                    changes: changes.remove(&id).unwrap_or_default(),
                }
            },
        )
        .collect())
}
