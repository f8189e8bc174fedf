//! Parties, groups and items in storage, their validation and their
//! all-or-nothing writes, on SQLite and (when DIGESTD_TEST_DATABASE_URL is
//! set) PostgreSQL. The shared helpers are in `common/storage.rs`.

use crate::common;

use common::storage::{assert_bad_input, counts, item, user, world};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::users;
use digestd::db::DbConn;
use digestd::error::Error;
use digestd::items::{self, ItemInput};
use digestd::modlog::{self, Change};
use digestd::parties::{self, NewUser};

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
            matrix: Some("@asha:chat.example.com".into()),
            week_start: Some("sun".into()),
            daily_hour: Some(7),
            locale: Some("en_IN".into()),
            quiet_hours: None,
        },
    )
    .unwrap();
    let matrix: Vec<String> = parties::contact_points(&mut c, id)
        .unwrap()
        .into_iter()
        .filter(|p| p.channel == "matrix")
        .map(|p| p.address)
        .collect();
    assert_eq!(matrix, ["@asha:chat.example.com"]);
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
            "matrix id without server",
            NewUser {
                matrix: Some("@asha".into()),
                ..base.clone()
            },
        ),
        (
            "matrix id with a line break",
            NewUser {
                matrix: Some("@asha:example.org\r\nX: y".into()),
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

/// A storage error is one line on both back ends: PostgreSQL's messages
/// come in several (`DETAIL:`, `HINT:`), which used to reach the terminal
/// as literal `\n`s.
fn storage_errors_are_one_line(db: &TestDb) {
    use diesel::connection::SimpleConnection;
    let mut c = db.conn();
    // A foreign key the database checks: PostgreSQL adds a DETAIL line.
    let e: digestd::Error = c
        .batch_execute("INSERT INTO subscription_runs (subscription_id, period, scheduled_at, window_start, window_end, ran_at) VALUES (999999, 'p', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')")
        .map_err(digestd::Error::from)
        .and_then(|()| {
            c.batch_execute("SELECT no_such_function()")
                .map_err(digestd::Error::from)
        })
        .unwrap_err();
    let msg = e.to_string();
    assert!(!msg.contains('\n') && !msg.contains('\t'), "{msg:?}");
    if matches!(c, digestd::db::DbConn::Postgres(_)) {
        assert!(
            msg.contains("; detail: Key (subscription_id)=(999999)") || msg.contains("; hint: "),
            "{msg}"
        );
    }
}

backend_tests!(
    storage_errors_are_one_line,
    users_roundtrip,
    hostile_users_write_nothing,
    nested_groups_expand_each_user_once,
    group_cycles_are_refused,
    item_put_records_diffs,
    hostile_items_write_nothing,
);
