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

/// A window that has untouched items, items touched by one or several
/// people, an item made and removed, one left with no change, and
/// modifications by nobody.
fn mixed_window() -> Vec<Modification> {
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
    // Forty more items, each touched by one to three of 7, 8 and 9, some
    // of them undone by another, in the log's order (by item).
    for i in 0..40u32 {
        let item = format!("g{i:02}");
        let at = 10 + (i * 7) % 40;
        let who = [7, 8, 9][i as usize % 3];
        let v = |k: u32| format!("v{k}");
        mods.push(m(
            &item,
            at,
            who,
            "edited",
            &[("status", Some(&v(0)), Some(&v(1)))],
        ));
        if i % 4 == 0 {
            let other = [8, 9, 7][i as usize % 3];
            mods.push(m(
                &item,
                at + 1,
                other,
                "edited",
                &[("status", Some(&v(1)), Some(&v(0)))],
            ));
        }
        if i % 5 == 0 {
            mods.push(m(
                &item,
                at + 2,
                10,
                "edited",
                &[("place", None, Some("here"))],
            ));
        }
    }
    for (i, m) in mods.iter_mut().enumerate() {
        m.id = ModificationId(100 + i as i64);
    }
    mods.sort_by(|a, b| {
        (&a.item_uuid, a.occurred_at, a.id).cmp(&(&b.item_uuid, b.occurred_at, b.id))
    });
    mods
}

/// A window read into a [`Builder`] gives, for everyone and for each
/// recipient who leaves their own changes out, what the plain collapse
/// gives: every change counted, and its first ones in order, however few
/// the window keeps.
#[test]
fn a_window_kept_short_is_the_collapse_counted_and_begun() {
    use super::super::window::Builder;
    use std::collections::HashSet;
    let mods = mixed_window();
    let everyone = collapse(&mods, None).unwrap();
    assert!(everyone.len() > 30, "{}", everyone.len());
    let excluders: HashSet<PartyId> = [7, 8, 9, 10, 11, 0].map(PartyId).into();
    for cap in [1, 3, 7, 20, 1_000] {
        let mut b = Builder::new(cap, Some(&excluders));
        for item in mods.chunk_by(|a, b| a.item_uuid == b.item_uuid) {
            b.item(item).unwrap();
        }
        let w = b.finish(false);
        assert_eq!(w.all.len(), everyone.len(), "cap {cap}");
        assert_eq!(
            w.all.items[..],
            everyone[..cap.min(everyone.len())],
            "cap {cap}"
        );
        for me in &excluders {
            let want = collapse(&mods, Some(*me)).unwrap();
            let got = w.content_for(*me);
            assert_eq!(got.len(), want.len(), "cap {cap}, recipient {me:?}");
            assert!(got.items.len() <= cap, "cap {cap}, recipient {me:?}");
            assert_eq!(
                got.items[..],
                want[..got.items.len()],
                "cap {cap}, recipient {me:?}"
            );
            if cap >= want.len() {
                assert_eq!(got.items, want, "cap {cap}, recipient {me:?}");
            }
        }
    }
    assert_ne!(
        collapse(&mods, Some(PartyId(7))).unwrap(),
        everyone,
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
