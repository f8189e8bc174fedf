//! Seen marks (`seen`): when a person last viewed an item in the system
//! that feeds digestd. A modification digest to them leaves out an item
//! whose changes in its window all happened at or before their mark
//! (`digest::seen`).
//!
//! A batch of marks ([`check`]) is validated and resolved whole before
//! anything is written: the first bad entry is named by its 0-based index
//! and nothing is written. [`record`] writes a batch in one transaction: a
//! later mark replaces an earlier one, an earlier one never moves it back,
//! so repeating a batch changes nothing. [`read_for`] reads the marks of a
//! set of people on a set of items in one query; [`purge_before`] drops
//! marks older than the log's cutoff (`digestd purge`).

mod store;

pub use store::{purge_before, read_for, record, record_in_tx, Marks};

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Deserialize;

use crate::db::schema::{collections, items, modifications};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::parties;
use crate::validate::{self, AtBounds};

/// Marks one request or one `digestd seen --file` batch may carry.
pub const MAX_BATCH: usize = 1_000;

/// One mark as it comes in: `{"party", "item", "at"}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkInput {
    /// The user's name.
    pub party: String,
    /// The item's UUID.
    pub item: String,
    /// When they saw it (RFC 3339).
    pub at: String,
}

/// A mark checked and resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub party: PartyId,
    pub item_uuid: String,
    pub at: DateTime<Utc>,
}

/// The first bad entry of a batch (0-based) and why.
#[derive(Debug)]
pub struct Refused {
    pub index: usize,
    pub error: Error,
}

impl Refused {
    /// One line: `entry N: why`.
    pub fn line(&self) -> String {
        let why = match &self.error {
            Error::Invalid(m) => m.to_string(),
            Error::NotFound(m) => m.clone(),
            other => other.to_string(),
        };
        format!("entry {}: {why}; nothing was written", self.index)
    }

    /// As a library error of the same class (bad input), one line.
    pub fn into_error(self) -> Error {
        Error::invalid(self.line())
    }
}

/// An entry valid on its own, names not yet resolved.
struct Parsed {
    party: String,
    item: String,
    at: DateTime<Utc>,
}

fn parse(m: &MarkInput, bounds: &AtBounds) -> Result<Parsed> {
    let party = validate::name("user", &m.party)?;
    let item = validate::uuid("item", &m.item)?;
    let at = bounds.check(validate::instant("at", &m.at)?)?;
    Ok(Parsed { party, item, at })
}

/// Checks and resolves every entry of `batch` (at most [`MAX_BATCH`]):
/// each `party` a user, each `item` an item digestd knows (stored, or in
/// the log), each `at` RFC 3339 within `bounds`. `Ok(Err)`: the first bad
/// entry.
pub fn check(
    c: &mut DbConn,
    batch: &[MarkInput],
    bounds: &AtBounds,
) -> Result<std::result::Result<Vec<Mark>, Refused>> {
    if batch.is_empty() {
        return Ok(Err(Refused {
            index: 0,
            error: Error::invalid("no marks: send one object or an array of them"),
        }));
    }
    if batch.len() > MAX_BATCH {
        return Ok(Err(Refused {
            index: MAX_BATCH,
            error: Error::invalid(format!(
                "{} marks in one batch; at most {MAX_BATCH} are accepted",
                batch.len()
            )),
        }));
    }
    let mut parsed = Vec::with_capacity(batch.len());
    for (index, m) in batch.iter().enumerate() {
        match parse(m, bounds) {
            Ok(p) => parsed.push(p),
            Err(error) => return Ok(Err(Refused { index, error })),
        }
    }
    let names: BTreeSet<&str> = parsed.iter().map(|p| p.party.as_str()).collect();
    let kinds = parties::kinds_by_name(c, &names.into_iter().collect::<Vec<_>>())?;
    let uuids: BTreeSet<&str> = parsed.iter().map(|p| p.item.as_str()).collect();
    let known = known_items(c, &uuids.into_iter().collect::<Vec<_>>())?;
    let mut out = Vec::with_capacity(parsed.len());
    for (index, p) in parsed.into_iter().enumerate() {
        let party = match kinds.get(&p.party) {
            Some((id, k)) if k == "user" => *id,
            Some(_) => {
                let error = Error::invalid(format!(
                    "{:?} is a group: seen marks are a person's",
                    p.party
                ));
                return Ok(Err(Refused { index, error }));
            }
            None => {
                let error = Error::not_found(format!("no user named {:?}", p.party));
                return Ok(Err(Refused { index, error }));
            }
        };
        if !known.contains(&p.item) {
            let error = Error::not_found(format!("no item {} in digestd", p.item));
            return Ok(Err(Refused { index, error }));
        }
        out.push(Mark {
            party,
            item_uuid: p.item,
            at: p.at,
        });
    }
    Ok(Ok(out))
}

/// The UUIDs among `uuids` digestd knows: stored items, and items the log
/// names (an item need not be stored). One query each: the log is read
/// through its `(collection_id, item_uuid, …)` index, collection by
/// collection.
fn known_items(c: &mut DbConn, uuids: &[&str]) -> Result<BTreeSet<String>> {
    let mut known: BTreeSet<String> = items::table
        .filter(items::uuid.eq_any(uuids))
        .select(items::uuid)
        .load::<String>(c)?
        .into_iter()
        .collect();
    let rest: Vec<&str> = uuids
        .iter()
        .copied()
        .filter(|u| !known.contains(*u))
        .collect();
    if !rest.is_empty() {
        let colls: Vec<i64> = collections::table.select(collections::id).load(c)?;
        let logged: Vec<String> = modifications::table
            .filter(modifications::collection_id.eq_any(&colls))
            .filter(modifications::item_uuid.eq_any(&rest))
            .select(modifications::item_uuid)
            .distinct()
            .load(c)?;
        known.extend(logged);
    }
    Ok(known)
}

/// `marks` with one mark per (party, item): the latest.
pub(crate) fn latest(marks: &[Mark]) -> BTreeMap<(PartyId, &str), DateTime<Utc>> {
    let mut out: BTreeMap<(PartyId, &str), DateTime<Utc>> = BTreeMap::new();
    for m in marks {
        let e = out.entry((m.party, m.item_uuid.as_str())).or_insert(m.at);
        *e = (*e).max(m.at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(p: i64, item: &str, secs: i64) -> Mark {
        Mark {
            party: PartyId(p),
            item_uuid: item.into(),
            at: DateTime::from_timestamp(secs, 0).unwrap(),
        }
    }

    #[test]
    fn the_latest_mark_of_a_pair_wins_whatever_the_order() {
        let marks = [mark(1, "a", 20), mark(1, "a", 10), mark(2, "a", 5)];
        let l = latest(&marks);
        assert_eq!(l.len(), 2);
        assert_eq!(l[&(PartyId(1), "a")].timestamp(), 20);
        assert_eq!(l[&(PartyId(2), "a")].timestamp(), 5);
    }

    #[test]
    fn an_entry_with_a_line_break_or_a_bad_time_is_refused() {
        let b = AtBounds::ANY;
        let m = |p: &str, i: &str, at: &str| MarkInput {
            party: p.into(),
            item: i.into(),
            at: at.into(),
        };
        let item = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003";
        assert!(parse(&m("asha", item, "2026-11-24T09:00:00Z"), &b).is_ok());
        assert!(parse(&m("asha\r\nX", item, "2026-11-24T09:00:00Z"), &b).is_err());
        assert!(parse(&m("asha", "x\ny", "2026-11-24T09:00:00Z"), &b).is_err());
        assert!(parse(&m("asha", item, "yesterday"), &b).is_err());
    }
}
