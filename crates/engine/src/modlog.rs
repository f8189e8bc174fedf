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

use std::collections::BTreeSet;

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

mod cut;
mod page;
mod purge;
mod read;
mod stream;
use cut::write_position;
pub use cut::{cut, start_cut, Cut, LogPos, Span};
pub use page::{changed_items, find_items_in_window};
pub use purge::{forget_collection_in_tx, purge, Purged};
pub use read::{find_in_span, find_in_span_upto, find_in_window};
use read::{with_values, Row};
pub use stream::stream_span;

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
/// This is the bulk path ([`crate::db::insert_rows!`]: a `COPY` on
/// PostgreSQL, one INSERT a row kept prepared on SQLite, the fastest way
/// into SQLite from one writer).
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
    crate::db::insert_rows!(conn, modifications::table, &rows);
    crate::db::insert_rows!(conn, modification_values::table, &values);
    Ok(ids.into_iter().map(ModificationId).collect())
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
    let now = crate::db::now_sql(conn);
    let sql = format!(
        "UPDATE collections SET feed_version = feed_version + 1, \
         feed_changed_at = CASE WHEN feed_changed_at IS NULL OR feed_changed_at < {now} \
         THEN {now} ELSE feed_changed_at END WHERE id = $1"
    );
    for id in ids {
        diesel::sql_query(&sql)
            .bind::<diesel::sql_types::BigInt, _>(id)
            .execute(conn)?;
    }
    Ok(())
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
        // A later cut of one back end wins, either way round.
        assert_eq!(Cut::from_stored("9".into()).later(&n).as_str(), "9");
        assert_eq!(Cut::from_stored("5".into()).later(&n).as_str(), "7");
        assert_eq!(Cut::beginning().later(&Cut::beginning()).as_str(), "");
        let snap = |t: &str| Cut::from_stored(t.into());
        for (a, b) in [
            ("100:105:101,103", "100:107:101,103,106"),
            ("100:105:101,103", "101:105:103"),
            ("100:105:101,103", "100:105:103"),
        ] {
            assert_eq!(snap(a).later(&snap(b)).as_str(), b);
            assert_eq!(snap(b).later(&snap(a)).as_str(), b);
        }
        assert_eq!(Cut::beginning().later(&s).as_str(), s.as_str());
        assert_eq!(s.clone().later(&Cut::beginning()).as_str(), s.as_str());
    }
}
