//! The modification log (Cosmo proposal): one row per modification and one
//! row per changed attribute with its old and new value. Writes go through
//! [`record`], which is also the bulk path (`digestd record`, item diffs);
//! reads through [`find_in_window`]; old rows leave through [`purge`].
//!
//! Owns `modifications` and `modification_values`, and the log's mark on
//! `collections`: `feed_version` and `feed_changed_at`, which every write of
//! a collection's log moves in the same transaction ([`touch_feeds`]), so
//! the Atom feeds answer a conditional GET without reading the log.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::{modification_values, modifications};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, ModificationId, PartyId};

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
    pub changes: Vec<Change>,
}

#[derive(Insertable)]
#[diesel(table_name = modifications, treat_none_as_default_value = false)]
struct ModRow<'a> {
    id: i64,
    tx_id: &'a str,
    occurred_at: NaiveDateTime,
    collection_id: i64,
    item_uuid: &'a str,
    actor_id: Option<i64>,
    action: &'a str,
    item_kind: &'a str,
    item_title: &'a str,
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
    touch_feeds(conn, mods.iter().map(|m| m.collection))?;
    let ids = crate::db::reserve_ids(conn, "modifications", "id", mods.len())?;
    let rows: Vec<ModRow> = mods
        .iter()
        .zip(&ids)
        .map(|(m, id)| ModRow {
            id: *id,
            tx_id: &m.tx_id,
            occurred_at: m.occurred_at.naive_utc(),
            collection_id: m.collection.0,
            item_uuid: &m.item_uuid,
            actor_id: m.actor.map(|a| a.0),
            action: m.action.as_str(),
            item_kind: &m.item_kind,
            item_title: &m.item_title,
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

/// Modifications of the given collections (all collections when `None`)
/// with `start <= occurred_at < end`, ordered by item then time, each with
/// its values.
pub fn find_in_window(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Vec<Modification>> {
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
    );
    let mut q = modifications::table
        .filter(modifications::occurred_at.ge(start.naive_utc()))
        .filter(modifications::occurred_at.lt(end.naive_utc()))
        .select((
            modifications::id,
            modifications::tx_id,
            modifications::occurred_at,
            modifications::collection_id,
            modifications::item_uuid,
            modifications::actor_id,
            modifications::action,
            modifications::item_kind,
            modifications::item_title,
        ))
        .order((
            modifications::item_uuid.asc(),
            modifications::occurred_at.asc(),
            modifications::id.asc(),
        ))
        .into_boxed();
    // One collection as `collection_id = $1`: a statement diesel keeps
    // prepared may get PostgreSQL's generic plan, which for `= ANY($1)`
    // took the time index and filtered every collection's rows in the
    // window (34 ms against 0.07 ms per read among 50,000 changes in
    // `bench burst`); with `=` it keeps to the (collection_id,
    // occurred_at) index. Several (the composer reads a batch's windows
    // at once) as an array constant, which is planned for its values
    // each time.
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
    let rows: Vec<Row> = q.load(conn)?;
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
            |(id, tx_id, at, coll, item_uuid, actor, action, item_kind, item_title)| Modification {
                id: ModificationId(id),
                tx_id,
                occurred_at: at.and_utc(),
                collection: CollectionId(coll),
                item_uuid,
                actor: actor.map(PartyId),
                action,
                item_kind,
                item_title,
                changes: changes.remove(&id).unwrap_or_default(),
            },
        )
        .collect())
}

/// How many rows a purge removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Purged {
    pub modifications: usize,
    pub values: usize,
}

/// Deletes modifications (and their values) that occurred before `cutoff`.
pub fn purge(conn: &mut DbConn, cutoff: DateTime<Utc>) -> Result<Purged> {
    let cutoff = cutoff.naive_utc();
    conn.write_tx(|c| {
        let touched: Vec<i64> = modifications::table
            .filter(modifications::occurred_at.lt(cutoff))
            .select(modifications::collection_id)
            .distinct()
            .load(c)?;
        touch_feeds(c, touched.into_iter().map(CollectionId))?;
        let old = modifications::table
            .filter(modifications::occurred_at.lt(cutoff))
            .select(modifications::id);
        let values = diesel::delete(
            modification_values::table.filter(modification_values::modification_id.eq_any(old)),
        )
        .execute(c)?;
        let modifications =
            diesel::delete(modifications::table.filter(modifications::occurred_at.lt(cutoff)))
                .execute(c)?;
        Ok(Purged {
            modifications,
            values,
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
    })
}

/// Number of stored modifications (for `demo`, tests and benchmarks).
pub fn count(conn: &mut DbConn) -> Result<i64> {
    Ok(modifications::table.count().get_result(conn)?)
}
