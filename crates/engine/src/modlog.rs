//! The modification log (Cosmo proposal): one row per modification and one
//! row per changed attribute with its old and new value. Writes go through
//! [`record`], which is also the bulk path (`digestd record`, item diffs);
//! reads through [`find_in_span`] (a digest's window: what was recorded
//! since the last one) and [`find_in_window`] (what happened between two
//! instants: the Atom feeds); old rows leave through [`purge`].
//!
//! Every row carries the log position of the transaction that recorded it
//! (`log_pos`): on SQLite a counter in `log_clock` that each recording
//! transaction moves on (one writer at a time, so positions commit in
//! order); on PostgreSQL the recording transaction's id, and a reader's
//! [`cut`] is the oldest transaction still running, below which every
//! recording transaction has ended. Rows below a cut are all visible to
//! whoever took it and no row below it can appear later, so windows cut
//! there neither skip nor repeat a change, however late its `at` or its
//! commit (`docs/digests.md`).
//!
//! Owns `modifications` and `modification_values`, and the log's mark on
//! `collections`: `feed_version` and `feed_changed_at`, which every write of
//! a collection's log moves in the same transaction ([`touch_feeds`]), so
//! the Atom feeds answer a conditional GET without reading the log.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::{modification_values, modifications};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, ModificationId, PartyId};

/// The columns of a `Row`, as a select clause.
macro_rules! row_columns {
    () => {
        (
            modifications::id,
            modifications::tx_id,
            modifications::occurred_at,
            modifications::collection_id,
            modifications::item_uuid,
            modifications::actor_id,
            modifications::action,
            modifications::item_kind,
            modifications::item_title,
            modifications::item_url,
        )
    };
}

mod page;
pub use page::{changed_items, find_items_in_window};

/// What happened to an item, as the Cosmo proposal lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Added,
    Removed,
    Deleted,
    Edited,
    Now,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Added => "added",
            Action::Removed => "removed",
            Action::Deleted => "deleted",
            Action::Edited => "edited",
            Action::Now => "now",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "created" => Action::Created,
            "added" => Action::Added,
            "removed" => Action::Removed,
            "deleted" => Action::Deleted,
            "edited" => Action::Edited,
            "now" => Action::Now,
            other => {
                return Err(Error::invalid(format!(
                    "unknown action {other:?}: use created, added, removed, deleted, edited or now"
                )))
            }
        })
    }
}

/// One changed attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub attribute: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// A modification to write; validated by the caller (see `ingest`, `items`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewModification {
    pub tx_id: String,
    pub occurred_at: DateTime<Utc>,
    pub collection: CollectionId,
    pub item_uuid: String,
    pub actor: Option<PartyId>,
    pub action: Action,
    pub item_kind: String,
    pub item_title: String,
    /// Where the item lives in its source system (validated), if known.
    pub item_url: Option<String>,
    pub changes: Vec<Change>,
}

/// A stored modification with its values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Modification {
    pub id: ModificationId,
    pub tx_id: String,
    pub occurred_at: DateTime<Utc>,
    pub collection: CollectionId,
    pub item_uuid: String,
    pub actor: Option<PartyId>,
    pub action: String,
    pub item_kind: String,
    pub item_title: String,
    pub item_url: Option<String>,
    pub changes: Vec<Change>,
}

#[derive(Insertable)]
#[diesel(table_name = modifications, treat_none_as_default_value = false)]
struct ModRow<'a> {
    id: i64,
    log_pos: i64,
    tx_id: &'a str,
    occurred_at: NaiveDateTime,
    collection_id: i64,
    item_uuid: &'a str,
    actor_id: Option<i64>,
    action: &'a str,
    item_kind: &'a str,
    item_title: &'a str,
    item_url: Option<&'a str>,
}

#[derive(Insertable)]
#[diesel(table_name = modification_values, treat_none_as_default_value = false)]
struct ValueRow<'a> {
    modification_id: i64,
    attribute: &'a str,
    old_value: Option<&'a str>,
    new_value: Option<&'a str>,
}

/// Writes modifications and their values in one transaction: all or none.
/// This is the bulk path: COPY on PostgreSQL, one cached prepared INSERT per
/// row on SQLite (the fastest way into SQLite from one writer).
pub fn record(conn: &mut DbConn, mods: &[NewModification]) -> Result<Vec<ModificationId>> {
    conn.write_tx(|c| record_in_tx(c, mods))
}

/// [`record`] for a caller that already holds the write transaction.
pub fn record_in_tx(conn: &mut DbConn, mods: &[NewModification]) -> Result<Vec<ModificationId>> {
    if mods.is_empty() {
        return Ok(Vec::new());
    }
    touch_feeds(conn, mods.iter().map(|m| m.collection))?;
    let log_pos = write_position(conn)?;
    let ids = crate::db::reserve_ids(conn, "modifications", "id", mods.len())?;
    let rows: Vec<ModRow> = mods
        .iter()
        .zip(&ids)
        .map(|(m, id)| ModRow {
            id: *id,
            log_pos,
            tx_id: &m.tx_id,
            occurred_at: m.occurred_at.naive_utc(),
            collection_id: m.collection.0,
            item_uuid: &m.item_uuid,
            actor_id: m.actor.map(|a| a.0),
            action: m.action.as_str(),
            item_kind: &m.item_kind,
            item_title: &m.item_title,
            item_url: m.item_url.as_deref(),
        })
        .collect();
    let values: Vec<ValueRow> = mods
        .iter()
        .zip(&ids)
        .flat_map(|(m, id)| {
            m.changes.iter().map(move |ch| ValueRow {
                modification_id: *id,
                attribute: &ch.attribute,
                old_value: ch.old.as_deref(),
                new_value: ch.new.as_deref(),
            })
        })
        .collect();
    match conn {
        DbConn::Sqlite(c) => {
            for r in &rows {
                diesel::insert_into(modifications::table)
                    .values(r)
                    .execute(c)?;
            }
            for v in &values {
                diesel::insert_into(modification_values::table)
                    .values(v)
                    .execute(c)?;
            }
        }
        DbConn::Postgres(c) => {
            diesel::copy_from(modifications::table)
                .from_insertable(&rows)
                .execute(c)?;
            if !values.is_empty() {
                diesel::copy_from(modification_values::table)
                    .from_insertable(&values)
                    .execute(c)?;
            }
        }
    }
    Ok(ids.into_iter().map(ModificationId).collect())
}

/// A position in the log: the `log_pos` of the rows one transaction
/// recorded (see the module's documentation).
pub type LogPos = i64;

/// The position of the rows the caller's write transaction records: on
/// SQLite `log_clock` moved on by one (the write lock orders recording
/// transactions, so positions commit in order); on PostgreSQL the
/// transaction's id (assigned now if it has none yet).
fn write_position(conn: &mut DbConn) -> Result<LogPos> {
    let sql = match conn {
        DbConn::Sqlite(_) => "UPDATE log_clock SET next = next + 1 RETURNING next - 1 AS pos",
        DbConn::Postgres(_) => "SELECT pg_current_xact_id()::text::bigint AS pos",
    };
    Ok(diesel::sql_query(sql).get_result::<PosRow>(conn)?.pos)
}

#[derive(diesel::QueryableByName)]
struct PosRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pos: i64,
}

#[derive(diesel::QueryableByName)]
struct CutRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    cut: String,
}

/// A cut of the log: which recording transactions a reader saw as
/// committed. On SQLite the next position `log_clock` hands out (every row
/// below it committed, none at or above it yet); on PostgreSQL the
/// reader's snapshot (`pg_current_snapshot()` as text, `xmin:xmax:xip…`):
/// a row is seen when its transaction is below `xmin`, or below `xmax` and
/// not in the list still running. A transaction in flight at a cut is on
/// neither side of it, it is seen at the first cut after it commits. Empty:
/// the log's beginning, before every row.
/// Held as a shared string: a run's window is a key of the composer's
/// caches, cloned several times per run, and a clone is a count, not a
/// copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cut(Arc<str>);

impl Default for Cut {
    fn default() -> Cut {
        Cut::beginning()
    }
}

impl Cut {
    /// The log's beginning: every row is after it.
    pub fn beginning() -> Cut {
        Cut(Arc::from(""))
    }

    /// A cut as stored (`subscriptions.last_log_cut`, `subscription_runs`).
    pub fn from_stored(s: String) -> Cut {
        Cut(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The lowest position not seen at this cut (SQLite: the counter; on
    /// PostgreSQL `xmin`): every row below it is seen. 0 for the beginning.
    fn floor(&self) -> LogPos {
        self.0
            .split(':')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    /// The lowest position no row seen at this cut reaches (SQLite: the
    /// counter; PostgreSQL: `xmax`).
    fn ceiling(&self) -> LogPos {
        let mut it = self.0.split(':');
        let first = it.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        it.next().and_then(|n| n.parse().ok()).unwrap_or(first)
    }

    /// Whether a row at `pos` was seen at this cut (committed before it).
    fn sees(&self, pos: LogPos) -> bool {
        if !self.is_snapshot() {
            return pos < self.floor();
        }
        let mut it = self.0.split(':');
        let (xmin, xmax) = (self.floor(), self.ceiling());
        let running = it.nth(2).unwrap_or("");
        pos < xmin || (pos < xmax && !running.split(',').any(|x| x.parse() == Ok(pos)))
    }

    fn is_snapshot(&self) -> bool {
        self.0.contains(':')
    }

    /// The later of two cuts of one back end (a SQLite counter never goes
    /// back; a later PostgreSQL snapshot sees all an earlier one saw).
    pub fn later(self, other: &Cut) -> Cut {
        if self.is_snapshot() || other.0.is_empty() || self.ceiling() >= other.ceiling() {
            self
        } else {
            other.clone()
        }
    }
}

/// Where a reader may cut the log now (see [`Cut`]). On PostgreSQL a
/// `record` transaction held open across a tick is never skipped: it is
/// running in the tick's snapshot, so it falls in the next window.
pub fn cut(conn: &mut DbConn) -> Result<Cut> {
    let sql = match conn {
        DbConn::Sqlite(_) => "SELECT CAST(next AS TEXT) AS cut FROM log_clock",
        DbConn::Postgres(_) => "SELECT pg_current_snapshot()::text AS cut",
    };
    Ok(Cut::from_stored(
        diesel::sql_query(sql).get_result::<CutRow>(conn)?.cut,
    ))
}

/// Where a new subscription's windows start: a cut of the log now, or,
/// on PostgreSQL, the cut the latest subscription stored when nothing of
/// `collection` was recorded since it: the same rows are seen at both, and
/// subscriptions made one after another then share their first window
/// (read once, its digest's body built once) as they would on SQLite,
/// where the counter does not move without a recording. A subscription of
/// every collection takes a cut of its own.
pub fn start_cut(conn: &mut DbConn, collection: Option<CollectionId>) -> Result<Cut> {
    use crate::db::schema::subscriptions;
    let now = cut(conn)?;
    let (DbConn::Postgres(_), Some(coll)) = (&*conn, collection) else {
        return Ok(now);
    };
    let latest: Option<String> = subscriptions::table
        .order(subscriptions::id.desc())
        .select(subscriptions::last_log_cut)
        .first(conn)
        .optional()?;
    let Some(latest) = latest.map(Cut::from_stored).filter(Cut::is_snapshot) else {
        return Ok(now);
    };
    let recorded_since = modifications::table
        .filter(modifications::collection_id.eq(coll.0))
        .filter(modifications::log_pos.ge(latest.floor()))
        .filter(diesel::dsl::not(seen_at(&latest)))
        .select(modifications::id)
        .first::<i64>(conn)
        .optional()?
        .is_some();
    Ok(if recorded_since { now } else { latest })
}

/// A modification digest's window of the log: what was recorded between
/// the cuts `from` and `to` (seen at `to`, not at `from`) and happened
/// before `end`, and what was seen at `from` (recorded with an `at` ahead
/// of its recording) and happened in `[start, end)`. Windows that chain
/// (one's `to` and `end` the next one's `from` and `start`) hold each
/// modification exactly once: one recorded late is in the first window cut
/// after it committed, one dated ahead in the window its time falls in.
/// Without cuts (`log: None`), a window by time alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub log: Option<(Cut, Cut)>,
}

impl Span {
    /// A window by time alone, `start <= occurred_at < end` (a run
    /// recorded before the log had positions).
    pub fn by_time(start: DateTime<Utc>, end: DateTime<Utc>) -> Span {
        Span {
            start,
            end,
            log: None,
        }
    }
}

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

type Row = (
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
fn seen_at(
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
fn with_values(conn: &mut DbConn, rows: Vec<Row>) -> Result<Vec<Modification>> {
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

/// Moves the feed version of each collection on (once, whatever the
/// number of rows) and sets its change time, inside the caller's write
/// transaction: any write to a collection's log must call this, so that a
/// feed's validators change with it. Rows are updated one at a time in
/// id order: two PostgreSQL writers lock shared collections in the same
/// order and cannot deadlock; on SQLite the write lock orders them anyway.
///
/// The change time is the database's clock (this layer has no injected
/// clock, and a backdated `at` must still move `Last-Modified` forward); it
/// never moves back.
pub fn touch_feeds(
    conn: &mut DbConn,
    collections: impl IntoIterator<Item = CollectionId>,
) -> Result<()> {
    let ids: BTreeSet<i64> = collections.into_iter().map(|c| c.0).collect();
    let now = match conn {
        DbConn::Sqlite(_) => "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        DbConn::Postgres(_) => "(clock_timestamp() AT TIME ZONE 'UTC')",
    };
    for id in ids {
        let sql = format!(
            "UPDATE collections SET feed_version = feed_version + 1, \
             feed_changed_at = CASE WHEN feed_changed_at IS NULL OR feed_changed_at < {now} \
             THEN {now} ELSE feed_changed_at END WHERE id = {id}"
        );
        diesel::sql_query(sql).execute(conn)?;
    }
    Ok(())
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

/// Number of stored modifications (for `demo`, tests and benchmarks).
pub fn count(conn: &mut DbConn) -> Result<i64> {
    Ok(modifications::table.count().get_result(conn)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_sees_what_committed_before_it() {
        // SQLite: the counter; the beginning sees nothing.
        let n = Cut::from_stored("7".into());
        assert!(n.sees(6) && !n.sees(7) && !n.sees(8));
        assert!(!Cut::beginning().sees(0));
        // PostgreSQL: below xmin, or below xmax and not running.
        let s = Cut::from_stored("100:105:101,103".into());
        let seen: Vec<i64> = (98..107).filter(|p| s.sees(*p)).collect();
        assert_eq!(seen, vec![98, 99, 100, 102, 104]);
        assert_eq!((s.floor(), s.ceiling()), (100, 105));
        // A later cut of one back end wins; a snapshot is taken as later.
        assert_eq!(Cut::from_stored("9".into()).later(&n).as_str(), "9");
        assert_eq!(Cut::from_stored("5".into()).later(&n).as_str(), "7");
        assert_eq!(Cut::beginning().later(&Cut::beginning()).as_str(), "");
    }
}
