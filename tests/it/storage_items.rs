//! Items in storage, on SQLite and (when DIGESTD_TEST_DATABASE_URL is set)
//! PostgreSQL: a put records what changed (created, edited, moved between
//! collections, deleted, revived) in the modification log, and hostile
//! items are refused with nothing written. Parties are
//! `storage_parties.rs`; the shared helpers are in `common/storage.rs`.

use crate::common;

use common::storage::{assert_bad_input, counts, item, world};
use common::{at, TestDb};
use digestd::items::{self, ItemInput};
use digestd::modlog::{self, Change};

fn item_put_records_diffs(db: &TestDb) {
    let mut c = db.conn();
    let (cal, other) = world(&mut c);
    let now = at("2026-11-22T00:00:00Z");
    let id = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a001";
    let created = items::put_item(&mut c, now, &item(id, &cal.uuid)).unwrap();
    assert_eq!(created.actions, ["created"]);
    assert!(created.changes.iter().all(|ch| ch.old.is_none()));
    assert!(created
        .changes
        .iter()
        .any(|ch| ch.attribute == "title" && ch.new.as_deref() == Some("Janitor's Pipe Dream")));

    // Same state again: nothing recorded.
    let before = counts(&mut c);
    assert!(items::put_item(&mut c, now, &item(id, &cal.uuid))
        .unwrap()
        .actions
        .is_empty());
    assert_eq!(counts(&mut c), before);

    // Start moves an hour, title unchanged: one edit with one value.
    let mut moved = item(id, &cal.uuid);
    moved.start = Some("2026-11-25T00:00:00Z".into());
    moved.at = Some("2026-11-20T11:00:00Z".into());
    let edited = items::put_item(&mut c, now, &moved).unwrap();
    assert_eq!(edited.actions, ["edited"]);
    assert_eq!(
        edited.changes,
        [Change {
            attribute: "start".into(),
            old: Some("2026-11-24T23:00:00Z".into()),
            new: Some("2026-11-25T00:00:00Z".into()),
        }]
    );

    // Moved to another collection: removed from one, added to the other.
    let mut relocated = moved.clone();
    relocated.collection = Some(other.uuid.clone());
    relocated.at = Some("2026-11-20T12:00:00Z".into());
    let out = items::put_item(&mut c, now, &relocated).unwrap();
    let mut actions = out.actions.clone();
    actions.sort();
    assert_eq!(actions, ["added", "removed"]);

    // Deleted.
    let mut gone = relocated.clone();
    gone.deleted = true;
    gone.at = Some("2026-11-20T13:00:00Z".into());
    assert_eq!(
        items::put_item(&mut c, now, &gone).unwrap().actions,
        ["deleted"]
    );

    // Put again after the delete: it comes back, recorded as created.
    let mut back = relocated.clone();
    back.at = Some("2026-11-21T09:00:00Z".into());
    let revived = items::put_item(&mut c, now, &back).unwrap();
    assert_eq!(revived.actions, ["created"]);
    assert!(revived
        .changes
        .iter()
        .all(|ch| ch.old.is_none() && ch.new.is_some()));

    // The log tells the whole story per collection, with values.
    let w0 = at("2026-11-20T00:00:00Z");
    let w1 = at("2026-11-21T00:00:00Z");
    let in_cal = modlog::find_in_window(&mut c, Some(&[cal.id]), w0, w1).unwrap();
    let acts: Vec<&str> = in_cal.iter().map(|m| m.action.as_str()).collect();
    assert_eq!(acts, ["created", "edited", "removed"]);
    assert_eq!(in_cal[1].changes.len(), 1);
    let in_other = modlog::find_in_window(&mut c, Some(&[other.id]), w0, w1).unwrap();
    let acts: Vec<&str> = in_other.iter().map(|m| m.action.as_str()).collect();
    assert_eq!(acts, ["added", "deleted"]);
    assert_eq!(
        modlog::find_in_window(&mut c, None, w0, w1).unwrap().len(),
        5
    );
    // Modifications of one put share a transaction id.
    let rel: Vec<&str> = in_cal[2..]
        .iter()
        .chain(&in_other[..1])
        .map(|m| m.tx_id.as_str())
        .collect();
    assert_eq!(rel[0], rel[1]);
}

/// `good` with a field that is malformed, hostile or missing.
fn hostile_item_fields(good: &ItemInput) -> Vec<(&'static str, ItemInput)> {
    vec![
        (
            "bad uuid",
            ItemInput {
                uuid: "nope".into(),
                ..good.clone()
            },
        ),
        (
            "CRLF title",
            ItemInput {
                title: "x\r\nBcc: y".into(),
                ..good.clone()
            },
        ),
        (
            "empty title",
            ItemInput {
                title: "  ".into(),
                ..good.clone()
            },
        ),
        (
            "huge title",
            ItemInput {
                title: "é".repeat(600),
                ..good.clone()
            },
        ),
        (
            "bad zone",
            ItemInput {
                tz: Some("Nowhere/Land".into()),
                ..good.clone()
            },
        ),
        (
            "bad start",
            ItemInput {
                start: Some("tomorrow".into()),
                ..good.clone()
            },
        ),
        (
            "bad rrule",
            ItemInput {
                rrule: Some("BYDAY=MO".into()),
                ..good.clone()
            },
        ),
        (
            "unknown collection",
            ItemInput {
                collection: Some("6f1b0a52-9d3e-4c1a-9f44-0c7de1c0afff".into()),
                ..good.clone()
            },
        ),
        (
            "no collection",
            ItemInput {
                collection: None,
                ..good.clone()
            },
        ),
        (
            "NUL in actor",
            ItemInput {
                actor: "gr24\u{0}".into(),
                ..good.clone()
            },
        ),
        (
            "NUL in title",
            ItemInput {
                title: "Stand\u{0}up".into(),
                ..good.clone()
            },
        ),
    ]
}

/// `good` well formed but refused: a rule too costly to expand, an actor
/// or an item that does not exist.
fn items_refused_past_their_syntax(good: &ItemInput) -> Vec<(&'static str, ItemInput)> {
    vec![
        (
            "secondly rule from 1900",
            ItemInput {
                start: Some("1900-01-01T00:00:00Z".into()),
                rrule: Some("FREQ=SECONDLY".into()),
                ..good.clone()
            },
        ),
        (
            "minutely rule",
            ItemInput {
                rrule: Some("FREQ=MINUTELY".into()),
                ..good.clone()
            },
        ),
        (
            "leap days stepped through daily",
            ItemInput {
                rrule: Some("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29".into()),
                ..good.clone()
            },
        ),
        (
            "unknown actor",
            ItemInput {
                actor: "ghost".into(),
                ..good.clone()
            },
        ),
        (
            "delete unknown",
            ItemInput {
                deleted: true,
                ..good.clone()
            },
        ),
    ]
}

fn hostile_items_write_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let now = at("2026-11-22T00:00:00Z");
    let id = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a002";
    let before = counts(&mut c);
    let good = item(id, &cal.uuid);
    let mut cases = hostile_item_fields(&good);
    cases.extend(items_refused_past_their_syntax(&good));
    for (what, input) in cases {
        assert_bad_input(items::put_item(&mut c, now, &input), what);
        assert_eq!(counts(&mut c), before, "{what} wrote something");
    }
}

backend_tests!(item_put_records_diffs, hostile_items_write_nothing);
