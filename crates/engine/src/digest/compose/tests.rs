//! Unit tests of `compose`.

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
