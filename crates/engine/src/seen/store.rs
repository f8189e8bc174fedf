//! The `seen` table's writes and reads.

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::{latest, Mark};
use crate::db::schema::seen;
use crate::db::{column_in, DbConn};
use crate::error::Result;
use crate::ids::PartyId;

/// Marks read for a digest: person → (item UUID, when they last saw it),
/// one entry an item. A list, not a map: a person keeps a few marks on a
/// window's items, and the digest looks each up by its position in the
/// window's list (`digest::seen`), never the list's items in the marks.
pub type Marks = HashMap<PartyId, Vec<(String, DateTime<Utc>)>>;

/// Writes `marks` (checked by [`super::check`]) in one transaction; how
/// many marks were recorded.
pub fn record(conn: &mut DbConn, marks: &[Mark]) -> Result<usize> {
    conn.write_tx(|c| record_in_tx(c, marks))
}

/// [`record`] in the caller's transaction: each (person, item) keeps its
/// latest mark; an earlier one changes nothing.
pub fn record_in_tx(c: &mut DbConn, marks: &[Mark]) -> Result<usize> {
    // Two PostgreSQL writers of the same pair would both insert it.
    c.lock_in_tx("seen")?;
    let wanted = latest(marks);
    let mut stored: HashMap<(PartyId, String), DateTime<Utc>> = HashMap::new();
    let parties: BTreeSet<i64> = wanted.keys().map(|(p, _)| p.0).collect();
    let items: BTreeSet<&str> = wanted.keys().map(|(_, i)| *i).collect();
    let parties: Vec<i64> = parties.into_iter().collect();
    let items: Vec<&str> = items.into_iter().collect();
    for ps in parties.chunks(5_000) {
        for is in items.chunks(5_000) {
            let rows: Vec<(i64, String, chrono::NaiveDateTime)> = seen::table
                .filter(seen::party_id.eq_any(ps))
                .filter(seen::item_uuid.eq_any(is))
                .select((seen::party_id, seen::item_uuid, seen::seen_at))
                .load(c)?;
            for (p, i, at) in rows {
                stored.insert((PartyId(p), i), at.and_utc());
            }
        }
    }
    let mut new = Vec::new();
    for ((p, item), at) in &wanted {
        match stored.get(&(*p, item.to_string())) {
            None => new.push((
                seen::party_id.eq(p.0),
                seen::item_uuid.eq(*item),
                seen::seen_at.eq(at.naive_utc()),
            )),
            Some(old) if old < at => {
                diesel::update(seen::table.find((p.0, *item)))
                    .set(seen::seen_at.eq(at.naive_utc()))
                    .execute(c)?;
            }
            Some(_) => {}
        }
    }
    // A row a statement: a batch is at most `MAX_BATCH` marks, and the
    // connection type takes no multi-row INSERT.
    for row in new {
        diesel::insert_into(seen::table).values(row).execute(c)?;
    }
    Ok(marks.len())
}

/// The marks of `parties` on `items` at or after `not_before` (a mark
/// before every change in question leaves nothing out), in one query: the
/// parties' marks are read by key and the items picked here, so the cost
/// is the marks those people keep, not parties times items.
pub fn read_for(
    c: &mut DbConn,
    parties: &[PartyId],
    items: &HashSet<&str>,
    not_before: DateTime<Utc>,
) -> Result<Marks> {
    let mut out = Marks::new();
    if parties.is_empty() || items.is_empty() {
        return Ok(out);
    }
    let mut ids: Vec<i64> = parties.iter().map(|p| p.0).collect();
    ids.sort_unstable();
    ids.dedup();
    let these = column_in(c, "seen.party_id", ids);
    let rows: Vec<(i64, String, chrono::NaiveDateTime)> = seen::table
        .filter(these)
        .filter(seen::seen_at.ge(not_before.naive_utc()))
        .select((seen::party_id, seen::item_uuid, seen::seen_at))
        .load(c)?;
    for (p, i, at) in rows {
        if items.contains(i.as_str()) {
            out.entry(PartyId(p)).or_default().push((i, at.and_utc()));
        }
    }
    Ok(out)
}

/// Deletes the marks made before `cutoff`; how many.
pub fn purge_before(conn: &mut DbConn, cutoff: DateTime<Utc>) -> Result<usize> {
    conn.write_tx(|c| {
        Ok(diesel::delete(seen::table.filter(seen::seen_at.lt(cutoff.naive_utc()))).execute(c)?)
    })
}
