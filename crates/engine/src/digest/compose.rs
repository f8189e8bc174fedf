//! What a digest holds, read from the database: the Cosmo proposal's
//! `findModifiedItems` (what changed in a window, collapsed per item) and
//! `findItemsInRange` (what starts or reminds in a window, recurring events
//! expanded in their own timezone).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::{collection_items, items};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId};
use crate::modlog::{Action, Modification};
use crate::recur;

/// One attribute's net change over a window: its first old value and its
/// last new value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttrChange {
    pub attribute: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// One item's net change over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemChange {
    pub item_uuid: String,
    pub collection: CollectionId,
    pub kind: String,
    /// The title it has at the end of the window.
    pub title: String,
    /// created / added: new in the collection; deleted / removed: gone;
    /// edited: changed attributes; now: marked "now" with nothing else changed.
    pub action: Action,
    /// Who did it, each once, in order of first appearance; empty when the
    /// source named nobody.
    pub actors: Vec<PartyId>,
    pub first_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
    /// The first change's id: the order recorded, which orders items whose
    /// first changes happened at the same instant.
    pub first_id: i64,
    pub changes: Vec<AttrChange>,
    /// Where the item lives in its source system: the last address its
    /// modifications in the window carried. `None`: the item gets no link.
    pub url: Option<String>,
}

/// A window's net changes, item by item: each shared, as a recipient's
/// list without their own changes holds everyone's for every other item.
pub type Changes = Vec<Arc<ItemChange>>;

/// `findModifiedItems`, the collapse: `mods` in the order
/// [`crate::modlog::find_in_window`] gives (by item, then time); the
/// modifications of `exclude` (the recipient, unless the subscription
/// includes their own changes) are dropped first.
///
/// Per item: new in the window and gone by its end → nothing; new → created
/// or added, with the values it ends with; gone → deleted or removed; else
/// each attribute from its first old value to its last new value, and an
/// attribute that ends where it began (an edit undone) disappears, as does an
/// item left with no change.
pub fn collapse(mods: &[Modification], exclude: Option<PartyId>) -> Result<Changes> {
    let mut out = Vec::new();
    for item in by_item(mods) {
        let own: Vec<&Modification> = item
            .iter()
            .filter(|m| exclude.is_none() || m.actor != exclude)
            .collect();
        if let Some(c) = collapse_item(&own)? {
            out.push(Arc::new(c));
        }
    }
    sort_changes(&mut out);
    Ok(out)
}

/// `mods` (in the log's order) one item at a time.
fn by_item(mods: &[Modification]) -> impl Iterator<Item = &[Modification]> {
    mods.chunk_by(|a, b| a.item_uuid == b.item_uuid)
}

/// In order of each item's first change, changes at the same instant in
/// the order they were recorded.
fn sort_changes(v: &mut [Arc<ItemChange>]) {
    v.sort_by_key(|c| (c.first_at, c.first_id));
}

/// One item's net change over a window: its modifications in order.
pub(super) fn collapse_item(mods: &[&Modification]) -> Result<Option<ItemChange>> {
    let (Some(first), Some(last)) = (mods.first(), mods.last()) else {
        return Ok(None);
    };
    let actions: Vec<Action> = mods
        .iter()
        .map(|m| Action::parse(&m.action))
        .collect::<Result<_>>()?;
    let (a0, an) = (actions[0], *actions.last().expect("non-empty"));
    let new_in_window = matches!(a0, Action::Created | Action::Added);
    let gone_at_end = matches!(an, Action::Deleted | Action::Removed);
    let mut actors = Vec::new();
    for a in mods.iter().filter_map(|m| m.actor) {
        if !actors.contains(&a) {
            actors.push(a);
        }
    }
    let mut attrs: BTreeMap<&str, AttrChange> = BTreeMap::new();
    for m in mods {
        for ch in &m.changes {
            attrs
                .entry(ch.attribute.as_str())
                .and_modify(|a| a.new = ch.new.clone())
                .or_insert_with(|| AttrChange {
                    attribute: ch.attribute.clone(),
                    old: ch.old.clone(),
                    new: ch.new.clone(),
                });
        }
    }
    let (action, changes) = match (new_in_window, gone_at_end) {
        (true, true) => return Ok(None),
        (true, false) => (
            a0,
            attrs
                .into_values()
                .filter(|a| a.new.is_some())
                .map(|a| AttrChange { old: None, ..a })
                .collect(),
        ),
        (false, true) => (an, Vec::new()),
        (false, false) => {
            let changed: Vec<AttrChange> = attrs.into_values().filter(|a| a.old != a.new).collect();
            if !changed.is_empty() {
                (Action::Edited, changed)
            } else if actions.contains(&Action::Now) {
                (Action::Now, changed)
            } else {
                return Ok(None);
            }
        }
    };
    Ok(Some(ItemChange {
        item_uuid: first.item_uuid.clone(),
        collection: last.collection,
        kind: last.item_kind.clone(),
        title: last.item_title.clone(),
        action,
        actors,
        first_at: first.occurred_at,
        last_at: last.occurred_at,
        first_id: first.id.0,
        changes,
        url: mods.iter().rev().find_map(|m| m.item_url.clone()),
    }))
}

/// Why an item is in a forward digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum When {
    Starts,
    Reminder,
}

/// An item that starts (or reminds) inside a forward window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Upcoming {
    pub at: DateTime<Utc>,
    pub what: When,
    pub item_uuid: String,
    pub collection: CollectionId,
    pub kind: String,
    pub title: String,
    pub recurring: bool,
    /// Where the item lives in its source system, if it said.
    pub url: Option<String>,
    /// How the item is timed, as stored: what its calendar entry says
    /// (`digest::calendar`).
    #[serde(skip)]
    pub timing: Arc<Timing>,
}

/// An item's times as stored, shared by the occurrences listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    /// The start (a series' first).
    pub start: Option<DateTime<Utc>>,
    pub reminder: Option<DateTime<Utc>>,
    pub rrule: Option<String>,
    /// The zone its rule repeats in; `None`: none named (UTC).
    pub tz: Option<Tz>,
}

/// Occurrences per recurring item at most; a rule that fires more often
/// than this in one window (FREQ=MINUTELY in a weekly digest) is cut.
pub const MAX_OCCURRENCES: usize = 500;

pub(crate) type ItemRow = (
    i64,
    String,
    String,
    String,
    Option<NaiveDateTime>,
    Option<NaiveDateTime>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The columns of an [`ItemRow`], as a select clause.
macro_rules! item_row {
    () => {
        (
            collection_items::collection_id,
            items::uuid,
            items::kind,
            items::title,
            items::start_at,
            items::reminder_at,
            items::rrule,
            items::timezone,
            items::url,
        )
    };
}
pub(crate) use item_row;

/// `findItemsInRange`: the items of `collections` (all when `None`) whose
/// start or reminder falls in `[from, to)`, recurring ones expanded from
/// their rule in their own timezone (UTC when they name none), in order of
/// time. A reminder of a recurring event keeps its offset from the start.
pub fn items_in_range(
    conn: &mut DbConn,
    collections: Option<&[CollectionId]>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<Upcoming>> {
    let (f, t) = (from.naive_utc(), to.naive_utc());
    let mut q = items::table
        .inner_join(collection_items::table)
        .filter(items::deleted.eq(false))
        .filter(
            items::start_at
                .ge(f)
                .and(items::start_at.lt(t))
                .or(items::reminder_at.ge(f).and(items::reminder_at.lt(t)))
                .or(items::rrule.is_not_null().and(items::start_at.lt(t))),
        )
        .select(item_row!())
        .order((items::start_at.asc(), items::id.asc()))
        .into_boxed();
    if let Some(cs) = collections {
        let ids: Vec<i64> = cs.iter().map(|c| c.0).collect();
        q = q.filter(collection_items::collection_id.eq_any(ids));
    }
    let rows: Vec<ItemRow> = q.load(conn)?;
    expand(rows, from, to, MAX_OCCURRENCES)
}

/// The starts and reminders in `[from, to)` of the items in `rows`, each
/// recurring one expanded to at most `cap` instances, in order of time.
pub(crate) fn expand(
    rows: Vec<ItemRow>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    cap: usize,
) -> Result<Vec<Upcoming>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (coll, uuid, kind, title, start, reminder, rule, tz, url) in rows {
        let (start, reminder) = (start.map(|s| s.and_utc()), reminder.map(|r| r.and_utc()));
        let timing = Arc::new(Timing {
            start,
            reminder,
            rrule: rule.clone(),
            tz: tz.as_deref().and_then(|z| z.parse().ok()),
        });
        let mut push = |at: DateTime<Utc>, what: When, recurring: bool| {
            if seen.insert((at, what, uuid.clone())) {
                out.push(Upcoming {
                    at,
                    what,
                    item_uuid: uuid.clone(),
                    collection: CollectionId(coll),
                    kind: kind.clone(),
                    title: title.clone(),
                    recurring,
                    url: url.clone(),
                    timing: timing.clone(),
                });
            }
        };
        match (&rule, start) {
            (Some(rule), Some(start)) => {
                let tz: Tz = match &tz {
                    Some(z) => z
                        .parse()
                        .map_err(|_| Error::Storage(format!("stored timezone {z:?} is unknown")))?,
                    None => Tz::UTC,
                };
                // A rule stored before validation got stricter must not stop
                // every digest: the item shows at its first start alone.
                let occ = |a, b| {
                    Ok::<_, Error>(
                        recur::occurrences(start, tz, Some(rule), a, b, cap).unwrap_or_else(|e| {
                            tracing::warn!(item = %uuid, error = %e, "rrule not expanded");
                            recur::occurrences(start, tz, None, a, b, 1).unwrap_or_default()
                        }),
                    )
                };
                for at in occ(from, to)? {
                    push(at, When::Starts, true);
                }
                if let Some(off) = reminder.map(|r| r - start) {
                    for at in occ(from - off, to - off)? {
                        push(at + off, When::Reminder, true);
                    }
                }
            }
            _ => {
                for (at, what) in [(start, When::Starts), (reminder, When::Reminder)] {
                    if let Some(at) = at.filter(|a| *a >= from && *a < to) {
                        push(at, what, false);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| (a.at, a.what, &a.item_uuid).cmp(&(b.at, b.what, &b.item_uuid)));
    Ok(out)
}

#[cfg(test)]
mod tests;
