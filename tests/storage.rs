//! Storage operations, their validation and their all-or-nothing writes,
//! on SQLite and (when DIGESTD_TEST_DATABASE_URL is set) PostgreSQL.

mod common;

use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema as t;
use digestd::db::schema::{modification_values, users};
use digestd::db::DbConn;
use digestd::error::Error;
use digestd::items::{self, ItemInput};
use digestd::manage;
use digestd::modlog::{self, Action, Change, NewModification};
use digestd::parties::{self, NewUser};
use digestd::subscriptions::{self, SubscribeRequest};
use digestd::{ingest, Result};

/// Row counts of every table an operation could write.
fn counts(c: &mut DbConn) -> Vec<i64> {
    vec![
        t::parties::table.count().get_result(c).unwrap(),
        t::users::table.count().get_result(c).unwrap(),
        t::contact_points::table.count().get_result(c).unwrap(),
        t::memberships::table.count().get_result(c).unwrap(),
        t::collections::table.count().get_result(c).unwrap(),
        t::items::table.count().get_result(c).unwrap(),
        t::collection_items::table.count().get_result(c).unwrap(),
        t::modifications::table.count().get_result(c).unwrap(),
        t::modification_values::table.count().get_result(c).unwrap(),
        t::subscriptions::table.count().get_result(c).unwrap(),
    ]
}

fn user(name: &str, tz: &str) -> NewUser {
    NewUser {
        name: name.into(),
        timezone: tz.into(),
        email: Some(format!("{name}@example.com")),
        ..Default::default()
    }
}

fn assert_bad_input<T: std::fmt::Debug>(r: Result<T>, what: &str) {
    match r {
        Err(e) if e.is_bad_input() => {
            assert!(
                !e.to_string().contains('\n'),
                "{what}: multi-line error {e}"
            )
        }
        other => panic!("{what}: expected bad input, got {other:?}"),
    }
}

fn users_roundtrip(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T10:00:00Z");
    let id = parties::create_user(
        &mut c,
        now,
        &NewUser {
            name: "asha".into(),
            timezone: "Asia/Kolkata".into(),
            email: Some("Asha@Example.COM".into()),
            xmpp: Some("asha@chat.example.com".into()),
            phone: Some("+919876543210".into()),
            week_start: Some("sun".into()),
            daily_hour: Some(7),
            locale: Some("en_IN".into()),
        },
    )
    .unwrap();
    let u = parties::get_user(&mut c, id).unwrap();
    assert_eq!(u.username, "asha");
    assert_eq!(u.timezone, "Asia/Kolkata");
    assert_eq!(u.email.as_deref(), Some("Asha@example.com"));
    assert_eq!(u.xmpp.as_deref(), Some("asha@chat.example.com"));
    assert_eq!(u.phone.as_deref(), Some("+919876543210"));
    assert_eq!(
        (u.week_start.as_str(), u.daily_hour, u.locale.as_str()),
        ("sun", 7, "en-IN")
    );
    // Defaults: Monday, 08:00, en-US.
    let id2 = parties::create_user(&mut c, now, &user("ben", "UTC")).unwrap();
    let u2 = parties::get_user(&mut c, id2).unwrap();
    assert_eq!(
        (u2.week_start.as_str(), u2.daily_hour, u2.locale.as_str()),
        ("mon", 8, "en-US")
    );
    // Subscriber codes: 64 hex characters, distinct.
    let codes: Vec<String> = users::table
        .select(users::subscriber_code)
        .load(&mut c)
        .unwrap();
    assert_eq!(codes.len(), 2);
    assert!(codes
        .iter()
        .all(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())));
    assert_ne!(codes[0], codes[1]);
    let names: Vec<String> = parties::list_users(&mut c)
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    assert_eq!(names, ["asha", "ben"]);
}

fn hostile_users_write_nothing(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T10:00:00Z");
    parties::create_user(&mut c, now, &user("taken", "UTC")).unwrap();
    let before = counts(&mut c);
    let base = user("newbie", "Europe/Paris");
    let cases: Vec<(&str, NewUser)> = vec![
        (
            "unknown zone",
            NewUser {
                timezone: "Mars/Phobos".into(),
                ..base.clone()
            },
        ),
        (
            "zone with CRLF",
            NewUser {
                timezone: "Europe/Paris\r\nX: y".into(),
                ..base.clone()
            },
        ),
        (
            "email header injection",
            NewUser {
                email: Some("a@b.com\r\nBcc: all@b.com".into()),
                ..base.clone()
            },
        ),
        (
            "email without domain dot",
            NewUser {
                email: Some("a@b".into()),
                ..base.clone()
            },
        ),
        (
            "jid with resource",
            NewUser {
                xmpp: Some("a@b.org/phone".into()),
                ..base.clone()
            },
        ),
        (
            "jid without node",
            NewUser {
                xmpp: Some("b.org".into()),
                ..base.clone()
            },
        ),
        (
            "phone without plus",
            NewUser {
                phone: Some("14155550123".into()),
                ..base.clone()
            },
        ),
        (
            "phone too long",
            NewUser {
                phone: Some("+1234567890123456".into()),
                ..base.clone()
            },
        ),
        (
            "week start",
            NewUser {
                week_start: Some("someday".into()),
                ..base.clone()
            },
        ),
        (
            "hour 24",
            NewUser {
                daily_hour: Some(24),
                ..base.clone()
            },
        ),
        (
            "hour -1",
            NewUser {
                daily_hour: Some(-1),
                ..base.clone()
            },
        ),
        (
            "locale",
            NewUser {
                locale: Some("not a locale".into()),
                ..base.clone()
            },
        ),
        (
            "name",
            NewUser {
                name: "rm -rf".into(),
                ..base.clone()
            },
        ),
        (
            "duplicate name",
            NewUser {
                name: "taken".into(),
                ..base.clone()
            },
        ),
    ];
    for (what, u) in cases {
        assert_bad_input(parties::create_user(&mut c, now, &u), what);
        assert_eq!(counts(&mut c), before, "{what} wrote something");
    }
    assert_bad_input(
        parties::create_group(&mut c, now, "taken", None),
        "group named like a user",
    );
    assert_bad_input(
        parties::create_group(&mut c, now, "g", Some("x\n@y.com")),
        "group email",
    );
    assert_eq!(counts(&mut c), before);
}

fn nested_groups_expand_each_user_once(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T10:00:00Z");
    for n in ["u1", "u2", "u3", "u4"] {
        parties::create_user(&mut c, now, &user(n, "UTC")).unwrap();
    }
    for g in ["company", "eng", "backend", "empty"] {
        parties::create_group(&mut c, now, g, None).unwrap();
    }
    // company ⊃ eng ⊃ backend ⊃ {u1, u2}; eng ⊃ u2 again; company ⊃ u3; empty stays empty.
    for (g, m) in [
        ("backend", "u1"),
        ("backend", "u2"),
        ("eng", "backend"),
        ("eng", "u2"),
        ("company", "eng"),
        ("company", "u3"),
        ("company", "backend"),
    ] {
        parties::add_member(&mut c, g, m).unwrap();
    }
    // Adding an existing membership again is not an error and changes nothing.
    let before = counts(&mut c);
    parties::add_member(&mut c, "eng", "backend").unwrap();
    assert_eq!(counts(&mut c), before);

    let names = |c: &mut DbConn, g: &str| -> Vec<String> {
        let (id, _) = parties::find(c, g).unwrap();
        parties::expand(c, id)
            .unwrap()
            .into_iter()
            .map(|u| u.username)
            .collect()
    };
    assert_eq!(names(&mut c, "company"), ["u1", "u2", "u3"]);
    assert_eq!(names(&mut c, "eng"), ["u1", "u2"]);
    assert_eq!(names(&mut c, "u4"), ["u4"]);
    assert!(names(&mut c, "empty").is_empty());
}

fn group_cycles_are_refused(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T10:00:00Z");
    for g in ["a", "b", "c"] {
        parties::create_group(&mut c, now, g, None).unwrap();
    }
    parties::create_user(&mut c, now, &user("solo", "UTC")).unwrap();
    parties::add_member(&mut c, "a", "b").unwrap();
    parties::add_member(&mut c, "b", "c").unwrap();
    let before = counts(&mut c);
    for (g, m) in [("a", "a"), ("b", "a"), ("c", "a"), ("c", "b")] {
        match parties::add_member(&mut c, g, m) {
            Err(Error::Conflict(msg)) => assert!(msg.contains(g), "{msg}"),
            other => panic!("{m} into {g}: expected a conflict, got {other:?}"),
        }
    }
    assert_bad_input(parties::add_member(&mut c, "solo", "a"), "user as group");
    assert_bad_input(parties::add_member(&mut c, "a", "nobody"), "unknown member");
    assert_bad_input(parties::add_member(&mut c, "nogroup", "a"), "unknown group");
    assert_eq!(counts(&mut c), before);
}

fn world(c: &mut DbConn) -> (items::Collection, items::Collection) {
    let now = at("2026-11-01T00:00:00Z");
    parties::create_user(c, now, &user("gr24", "America/Los_Angeles")).unwrap();
    let cal = items::create_collection(c, now, "Calendar", None).unwrap();
    let other = items::create_collection(c, now, "Other", None).unwrap();
    (cal, other)
}

fn item(uuid: &str, coll: &str) -> ItemInput {
    ItemInput {
        uuid: uuid.into(),
        collection: Some(coll.into()),
        kind: "event".into(),
        title: "Janitor's Pipe Dream".into(),
        start: Some("2026-11-24T23:00:00Z".into()),
        tz: Some("America/Los_Angeles".into()),
        actor: "gr24".into(),
        at: Some("2026-11-20T10:00:00Z".into()),
        ..Default::default()
    }
}

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

fn hostile_items_write_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let now = at("2026-11-22T00:00:00Z");
    let id = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a002";
    let before = counts(&mut c);
    let good = item(id, &cal.uuid);
    let cases: Vec<(&str, ItemInput)> = vec![
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
    ];
    for (what, input) in cases {
        assert_bad_input(items::put_item(&mut c, now, &input), what);
        assert_eq!(counts(&mut c), before, "{what} wrote something");
    }
}

fn record_is_all_or_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let line = |action: &str, at: &str| {
        format!(
            r#"{{"collection":"{}","item":"6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003","actor":"gr24","action":"{action}","at":"{at}","title":"Standup","kind":"event","changes":[{{"attribute":"location","old":"Room 1","new":null}}]}}"#,
            cal.uuid
        )
    };
    let good = line("edited", "2026-11-20T09:00:00Z");
    let input = [
        good.clone(),
        line("exploded", "2026-11-20T09:00:00Z"),
        good.clone(),
        line("edited", "yesterday"),
        good.clone(),
    ]
    .join("\n");
    let before = counts(&mut c);
    match ingest::parse_all(&mut c, input.as_bytes()) {
        Err(Error::Invalid(msg)) => {
            assert!(msg.contains("line 2") && msg.contains("line 4"), "{msg}");
            assert!(
                !msg.contains("line 1:") && !msg.contains("line 3") && !msg.contains("line 5"),
                "{msg}"
            );
        }
        other => panic!("expected invalid input, got {other:?}"),
    }
    assert_eq!(counts(&mut c), before);

    // Names that do not resolve are bad lines too.
    let ghost = good.replace("gr24", "ghost");
    let nowhere = good.replace(&cal.uuid, "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0afff");
    let err = ingest::parse_all(&mut c, format!("{good}\n{ghost}\n\n{nowhere}\n").as_bytes())
        .unwrap_err();
    assert!(
        err.to_string().contains("line 2") && err.to_string().contains("line 4"),
        "{err}"
    );
    let mut non_utf8 = good.clone().into_bytes();
    non_utf8.extend_from_slice(b"\n{\"collection\":\"\xff\xfe\"}\n");
    assert!(ingest::parse_all(&mut c, &non_utf8[..])
        .unwrap_err()
        .to_string()
        .contains("line 2"));
    assert_eq!(counts(&mut c), before);

    // Good input: batched into transactions of 2, every row and value stored.
    let input = [good.clone(), good.clone(), good.clone()].join("\n");
    let mods = ingest::parse_all(&mut c, input.as_bytes()).unwrap();
    let mut seen = vec![];
    assert_eq!(
        ingest::write_batched(&mut c, &mods, 2, &mut |n| seen.push(n)).unwrap(),
        3
    );
    assert_eq!(seen, [2, 3]);
    let stored = modlog::find_in_window(
        &mut c,
        Some(&[cal.id]),
        at("2026-11-20T00:00:00Z"),
        at("2026-11-21T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(stored.len(), 3);
    assert!(stored.iter().all(|m| m.changes
        == [Change {
            attribute: "location".into(),
            old: Some("Room 1".into()),
            new: None
        }]));
}

/// The audit's case: a PostgreSQL storage error in the last statement of a
/// long `record` used to leave the earlier batches behind. A NUL in a value
/// is now refused before anything is written, and a storage error inside
/// the write (here a value row that breaks its primary key, below the
/// validator) rolls back every batch.
fn record_leaves_nothing_after_a_late_error(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let line = |i: usize, new: &str| {
        format!(
            r#"{{"collection":"{}","item":"6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003","actor":"gr24","action":"edited","at":"2026-11-20T09:00:00Z","title":"Standup {i}","kind":"event","changes":[{{"attribute":"location","old":"Room 1","new":"{new}"}}]}}"#,
            cal.uuid
        )
    };
    let before = counts(&mut c);
    let mut lines: Vec<String> = (0..10_000).map(|i| line(i, "Room 2")).collect();
    lines.push(line(10_000, "Room\\u0000 3"));
    let input = lines.join("\n");
    let err = ingest::parse_all(&mut c, input.as_bytes()).unwrap_err();
    assert!(err.is_bad_input(), "{err:?}");
    assert!(
        err.to_string()
            .contains("line 10001: new value contains a control character"),
        "{err}"
    );
    // The same for the other hostile characters of a value, and for an actor.
    for bad in ["a\\r\\nb", "\\u001b[31m", "\\u202e", "\\u0007"] {
        let err = ingest::parse_all(&mut c, line(0, bad).as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("line 1: new value contains"),
            "{bad}: {err}"
        );
    }
    let nul_actor = line(0, "x").replace("gr24", "gr24\\u0000");
    let err = ingest::parse_all(&mut c, nul_actor.as_bytes()).unwrap_err();
    assert!(
        err.is_bad_input() && err.to_string().contains("no user or group"),
        "{err:?}"
    );
    assert_eq!(counts(&mut c), before);

    // A storage error in the last of five batches of 2,000.
    let mut mods = ingest::parse_all(&mut c, lines[..10_000].join("\n").as_bytes()).unwrap();
    let last = mods.last_mut().unwrap();
    last.changes.push(last.changes[0].clone());
    let mut seen = vec![];
    ingest::write_batched(&mut c, &mods, 2_000, &mut |n| seen.push(n)).unwrap_err();
    assert_eq!(
        seen,
        [2_000, 4_000, 6_000, 8_000],
        "the batches before the bad one ran"
    );
    assert_eq!(counts(&mut c), before, "a failed record left rows behind");
}

fn windows_and_purge(db: &TestDb) {
    let mut c = db.conn();
    let (cal, other) = world(&mut c);
    let (actor, _) = parties::find(&mut c, "gr24").unwrap();
    let m = |coll, t: &str| NewModification {
        tx_id: format!("t{t}"),
        occurred_at: at(t),
        collection: coll,
        item_uuid: "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a004".into(),
        actor: Some(actor),
        action: Action::Edited,
        item_kind: "task".into(),
        item_title: "Fix the pipe".into(),
        changes: vec![Change {
            attribute: "status".into(),
            old: Some("open".into()),
            new: Some("done".into()),
        }],
    };
    modlog::record(
        &mut c,
        &[
            m(cal.id, "2026-08-01T00:00:00Z"),
            m(cal.id, "2026-11-20T08:59:59.999999Z"),
            m(cal.id, "2026-11-20T09:00:00Z"),
            m(other.id, "2026-11-20T09:30:00Z"),
            m(cal.id, "2026-11-20T10:00:00Z"),
        ],
    )
    .unwrap();
    // [start, end): the start is in, the end is out.
    let w = modlog::find_in_window(
        &mut c,
        Some(&[cal.id]),
        at("2026-11-20T09:00:00Z"),
        at("2026-11-20T10:00:00Z"),
    )
    .unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].occurred_at, at("2026-11-20T09:00:00Z"));
    let both = modlog::find_in_window(
        &mut c,
        Some(&[cal.id, other.id]),
        at("2026-11-20T08:00:00Z"),
        at("2026-11-20T11:00:00Z"),
    )
    .unwrap();
    assert_eq!(both.len(), 4);
    assert_eq!(
        both[0].occurred_at,
        at("2026-11-20T08:59:59.999999Z"),
        "microseconds survive the round trip"
    );

    let purged = modlog::purge(&mut c, at("2026-11-20T09:00:00Z")).unwrap();
    assert_eq!((purged.modifications, purged.values), (2, 2));
    assert_eq!(modlog::count(&mut c).unwrap(), 3);
    let values: i64 = modification_values::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(values, 3);
}

fn subscriptions_validate_and_default(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T00:00:00Z");
    let (cal, _) = world(&mut c);
    parties::create_user(
        &mut c,
        now,
        &NewUser {
            week_start: Some("sun".into()),
            daily_hour: Some(6),
            ..user("mo", "Pacific/Chatham")
        },
    )
    .unwrap();
    parties::create_group(&mut c, now, "team", None).unwrap();
    let req = |party: &str, freq: &str| SubscribeRequest {
        party: party.into(),
        frequency: freq.into(),
        kind: "modification".into(),
        collection: Some(cal.uuid.clone()),
        ..Default::default()
    };
    let daily = manage::subscribe(&mut c, now, &req("mo", "daily"))
        .unwrap()
        .id();
    let weekly = manage::subscribe(&mut c, now, &req("mo", "weekly"))
        .unwrap()
        .id();
    let hourly = manage::subscribe(
        &mut c,
        now,
        &SubscribeRequest {
            collection: None,
            ..req("mo", "hourly")
        },
    )
    .unwrap()
    .id();
    let explicit = manage::subscribe(
        &mut c,
        now,
        &SubscribeRequest {
            hour: Some(17),
            day: Some("fri".into()),
            ..req("mo", "weekly")
        },
    )
    .unwrap()
    .id();
    let group = manage::subscribe(&mut c, now, &req("team", "weekly"))
        .unwrap()
        .id();
    let all = subscriptions::list(&mut c).unwrap();
    let get = |id| all.iter().find(|s| s.id == id).unwrap();
    assert_eq!(
        (get(daily).hour_of_day, get(daily).day_of_week),
        (Some(6), None)
    );
    assert_eq!(
        (get(weekly).hour_of_day, get(weekly).day_of_week),
        (Some(6), Some(6))
    );
    assert_eq!(
        (get(hourly).hour_of_day, get(hourly).collection),
        (None, None)
    );
    assert_eq!(
        (get(explicit).hour_of_day, get(explicit).day_of_week),
        (Some(17), Some(4))
    );
    assert_eq!(
        (get(group).hour_of_day, get(group).day_of_week),
        (Some(8), Some(0))
    );
    assert_eq!(get(daily).channels, ["email"]);

    let before = counts(&mut c);
    let cases: Vec<(&str, SubscribeRequest)> = vec![
        ("frequency", req("mo", "monthly")),
        (
            "kind",
            SubscribeRequest {
                kind: "gossip".into(),
                ..req("mo", "daily")
            },
        ),
        (
            "day on daily",
            SubscribeRequest {
                day: Some("mon".into()),
                ..req("mo", "daily")
            },
        ),
        (
            "hour on hourly",
            SubscribeRequest {
                hour: Some(3),
                ..req("mo", "hourly")
            },
        ),
        (
            "hour 24",
            SubscribeRequest {
                hour: Some(24),
                ..req("mo", "daily")
            },
        ),
        (
            "bad day",
            SubscribeRequest {
                day: Some("caturday".into()),
                ..req("mo", "weekly")
            },
        ),
        (
            "unknown channel",
            SubscribeRequest {
                channels: vec!["pigeon".into()],
                ..req("mo", "daily")
            },
        ),
        (
            "no phone",
            SubscribeRequest {
                channels: vec!["sms".into()],
                ..req("mo", "daily")
            },
        ),
        (
            "no jid",
            SubscribeRequest {
                channels: vec!["email".into(), "xmpp".into()],
                ..req("mo", "daily")
            },
        ),
        ("unknown party", req("nobody", "daily")),
        (
            "unknown collection",
            SubscribeRequest {
                collection: Some("6f1b0a52-9d3e-4c1a-9f44-0c7de1c0afff".into()),
                ..req("mo", "daily")
            },
        ),
        (
            "bad collection",
            SubscribeRequest {
                collection: Some("x".into()),
                ..req("mo", "daily")
            },
        ),
    ];
    for (what, r) in cases {
        assert_bad_input(manage::subscribe(&mut c, now, &r), what);
        assert_eq!(counts(&mut c), before, "{what} wrote something");
    }
}

fn concurrent_writers_all_land(db: &TestDb) {
    let pool = db.open();
    let (cal, actor) = {
        let mut c = pool.conn().unwrap();
        let (cal, _) = world(&mut c);
        (cal, parties::find(&mut c, "gr24").unwrap().0)
    };
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let mut c = pool.conn().unwrap();
                for i in 0..25 {
                    let m = NewModification {
                        tx_id: format!("{t}:{i}"),
                        occurred_at: at("2026-11-20T09:00:00Z"),
                        collection: cal.id,
                        item_uuid: format!("00000000-0000-4000-8000-{:012}", t * 100 + i),
                        actor: Some(actor),
                        action: Action::Now,
                        item_kind: "task".into(),
                        item_title: "t".into(),
                        changes: vec![Change {
                            attribute: "a".into(),
                            old: None,
                            new: Some(i.to_string()),
                        }],
                    };
                    modlog::record(&mut c, &[m.clone(), m]).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = pool.conn().unwrap();
    assert_eq!(modlog::count(&mut c).unwrap(), 200);
    let values: i64 = modification_values::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(values, 200);
}

backend_tests!(
    users_roundtrip,
    hostile_users_write_nothing,
    nested_groups_expand_each_user_once,
    group_cycles_are_refused,
    item_put_records_diffs,
    hostile_items_write_nothing,
    record_is_all_or_nothing,
    record_leaves_nothing_after_a_late_error,
    windows_and_purge,
    subscriptions_validate_and_default,
    concurrent_writers_all_land,
);
