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

/// [`collapse`] of `mods` without `me`'s modifications, given `all`, their
/// collapse with everyone's: only the items `me` changed are collapsed
/// again; every other item's net change is `all`'s, as its modifications
/// are the same either way. The same list as `collapse(mods, Some(me))`,
/// for a fraction of its work when `me` touched a few of many items: the
/// other items' changes are shared with `all`, not copied.
pub fn collapse_without(
    mods: &[Modification],
    all: &[Arc<ItemChange>],
    me: PartyId,
) -> Result<Changes> {
    // Sorted, to be searched: a recipient touches a few items of a window.
    let mut touched: Vec<&str> = mods
        .iter()
        .filter(|m| m.actor == Some(me))
        .map(|m| m.item_uuid.as_str())
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let is_touched = |uuid: &str| touched.binary_search(&uuid).is_ok();
    let mut out: Vec<Arc<ItemChange>> = all
        .iter()
        .filter(|c| !is_touched(&c.item_uuid))
        .cloned()
        .collect();
    for item in by_item(mods).filter(|m| is_touched(&m[0].item_uuid)) {
        let own: Vec<&Modification> = item.iter().filter(|m| m.actor != Some(me)).collect();
        if let Some(c) = collapse_item(&own)? {
            out.push(Arc::new(c));
        }
    }
    sort_changes(&mut out);
    Ok(out)
}

fn collapse_item(mods: &[&Modification]) -> Result<Option<ItemChange>> {
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
mod tests {
    use super::*;
    use crate::ids::ModificationId;
    use crate::modlog::Change;
    use chrono::TimeZone;

    fn m(
        item: &str,
        min: u32,
        actor: i64,
        action: &str,
        ch: &[(&str, Option<&str>, Option<&str>)],
    ) -> Modification {
        Modification {
            id: ModificationId(i64::from(min)),
            tx_id: format!("t{min}"),
            occurred_at: Utc.with_ymd_and_hms(2026, 11, 16, 9, min, 0).unwrap(),
            collection: CollectionId(1),
            item_uuid: item.into(),
            actor: Some(PartyId(actor)),
            action: action.into(),
            item_kind: "event".into(),
            item_title: format!("{item} title"),
            item_url: None,
            changes: ch
                .iter()
                .map(|(a, o, n)| Change {
                    attribute: a.to_string(),
                    old: o.map(String::from),
                    new: n.map(String::from),
                })
                .collect(),
        }
    }

    /// `collapse_without` gives what the plain collapse gives, for every
    /// recipient of a window that has untouched items, items touched by
    /// one or several people, an item made and removed, one left with no
    /// change, and modifications by nobody.
    #[test]
    fn collapse_without_is_the_collapse_without_me() {
        let mut mods = vec![
            m("a", 1, 7, "edited", &[("title", Some("x"), Some("y"))]),
            m("a", 2, 8, "edited", &[("body", None, Some("b"))]),
            m("a", 3, 7, "edited", &[("title", Some("y"), Some("x"))]),
            m(
                "b",
                4,
                8,
                "created",
                &[("start", None, Some("2026-11-17T09:00:00Z"))],
            ),
            m("b", 5, 9, "deleted", &[]),
            m("c", 6, 9, "edited", &[("status", Some("1"), Some("2"))]),
            m("d", 7, 7, "now", &[]),
            m("e", 8, 10, "edited", &[("status", Some("3"), Some("4"))]),
            m("e", 9, 7, "edited", &[("status", Some("4"), Some("3"))]),
        ];
        let mut nobody = m("f", 0, 0, "edited", &[("status", Some("5"), Some("6"))]);
        nobody.actor = None;
        mods.push(nobody);
        let all = collapse(&mods, None).unwrap();
        for me in [7, 8, 9, 10, 11, 0] {
            let me = PartyId(me);
            assert_eq!(
                collapse_without(&mods, &all, me).unwrap(),
                collapse(&mods, Some(me)).unwrap(),
                "recipient {me:?}"
            );
        }
        assert_ne!(
            collapse(&mods, Some(PartyId(7))).unwrap(),
            all,
            "the window has changes of its own to leave out"
        );
    }

    /// Changes at the same instant are listed in the order recorded, not
    /// by their items' UUIDs.
    #[test]
    fn items_changed_at_the_same_instant_keep_the_order_recorded() {
        let mut mods = vec![
            m("zz", 5, 7, "created", &[("title", None, Some("first"))]),
            m("aa", 5, 7, "created", &[("title", None, Some("second"))]),
            m("mm", 5, 7, "created", &[("title", None, Some("third"))]),
        ];
        for (i, m) in mods.iter_mut().enumerate() {
            m.id = ModificationId(10 + i as i64);
        }
        // The log's order: by item, then time.
        mods.sort_by(|a, b| a.item_uuid.cmp(&b.item_uuid));
        let items: Vec<String> = collapse(&mods, None)
            .unwrap()
            .iter()
            .map(|c| c.item_uuid.clone())
            .collect();
        assert_eq!(items, ["zz", "aa", "mm"]);
    }

    #[test]
    fn an_edit_undone_in_the_window_disappears() {
        let mods = [
            m(
                "a",
                1,
                7,
                "edited",
                &[("start", Some("15:00"), Some("16:00"))],
            ),
            m(
                "a",
                2,
                8,
                "edited",
                &[("start", Some("16:00"), Some("15:00"))],
            ),
        ];
        assert_eq!(collapse(&mods, None).unwrap(), vec![]);
    }

    #[test]
    fn attributes_collapse_from_first_old_to_last_new() {
        let mods = [
            m(
                "a",
                1,
                7,
                "edited",
                &[("start", Some("15:00"), Some("16:00"))],
            ),
            m(
                "a",
                2,
                8,
                "edited",
                &[
                    ("start", Some("16:00"), Some("17:00")),
                    ("title", Some("x"), Some("y")),
                ],
            ),
            m("a", 3, 7, "edited", &[("title", Some("y"), Some("x"))]),
        ];
        let got = collapse(&mods, None).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].action, Action::Edited);
        assert_eq!(got[0].actors, vec![PartyId(7), PartyId(8)]);
        assert_eq!(
            got[0].changes,
            vec![AttrChange {
                attribute: "start".into(),
                old: Some("15:00".into()),
                new: Some("17:00".into())
            }]
        );
    }

    #[test]
    fn created_then_deleted_is_nothing_and_deleted_wins() {
        let mods = [
            m("a", 1, 7, "created", &[("title", None, Some("t"))]),
            m("a", 2, 7, "deleted", &[]),
            m("b", 1, 7, "edited", &[("title", Some("t"), Some("u"))]),
            m("b", 3, 8, "deleted", &[]),
            m(
                "c",
                4,
                7,
                "created",
                &[("title", None, Some("t")), ("start", None, Some("s"))],
            ),
            m("c", 5, 8, "edited", &[("start", Some("s"), Some("s2"))]),
        ];
        let got = collapse(&mods, None).unwrap();
        let summary: Vec<(&str, Action, usize)> = got
            .iter()
            .map(|c| (c.item_uuid.as_str(), c.action, c.changes.len()))
            .collect();
        assert_eq!(
            summary,
            vec![("b", Action::Deleted, 0), ("c", Action::Created, 2)]
        );
        let start = got[1]
            .changes
            .iter()
            .find(|c| c.attribute == "start")
            .unwrap();
        assert_eq!(
            (start.old.as_deref(), start.new.as_deref()),
            (None, Some("s2"))
        );
    }

    #[test]
    fn own_changes_are_left_out_before_collapsing() {
        let mods = [
            m("a", 1, 7, "edited", &[("start", Some("1"), Some("2"))]),
            m("a", 2, 8, "edited", &[("start", Some("2"), Some("3"))]),
            m("b", 3, 7, "edited", &[("title", Some("x"), Some("y"))]),
        ];
        let got = collapse(&mods, Some(PartyId(7))).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].actors, vec![PartyId(8)]);
        assert_eq!(got[0].changes[0].old.as_deref(), Some("2"));
        assert_eq!(collapse(&mods, None).unwrap().len(), 2);
    }

    #[test]
    fn added_then_removed_is_nothing_now_alone_is_kept() {
        let mods = [
            m("a", 1, 7, "added", &[]),
            m("a", 2, 7, "removed", &[]),
            m("b", 3, 7, "now", &[]),
        ];
        let got = collapse(&mods, None).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].item_uuid.as_str(), got[0].action),
            ("b", Action::Now)
        );
    }
}
