//! Parties and groups in storage, their validation and their
//! all-or-nothing writes, and storage errors as one line, on SQLite and
//! (when DIGESTD_TEST_DATABASE_URL is set) PostgreSQL. Items are
//! `storage_items.rs`; the shared helpers are in `common/storage.rs`.

use crate::common;

use common::storage::{assert_bad_input, counts, user};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::users;
use digestd::db::DbConn;
use digestd::error::Error;
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

/// `base` with a zone or an address no one can have.
fn hostile_zones_and_addresses(base: &NewUser) -> Vec<(&'static str, NewUser)> {
    vec![
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
    ]
}

/// `base` with a setting out of range, a bad name or one that is taken.
fn hostile_settings_and_names(base: &NewUser) -> Vec<(&'static str, NewUser)> {
    vec![
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
    ]
}

fn hostile_users_write_nothing(db: &TestDb) {
    let mut c = db.conn();
    let now = at("2026-11-22T10:00:00Z");
    parties::create_user(&mut c, now, &user("taken", "UTC")).unwrap();
    let before = counts(&mut c);
    let base = user("newbie", "Europe/Paris");
    let mut cases = hostile_zones_and_addresses(&base);
    cases.extend(hostile_settings_and_names(&base));
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
);
