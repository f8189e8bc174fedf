//! Subscriptions in storage, on SQLite and (when DIGESTD_TEST_DATABASE_URL
//! is set) PostgreSQL: hour and day default to the party's (a user's daily
//! hour and first day of week, a group's 08:00 and Monday), email is the
//! default channel, and bad requests are refused with nothing written.
//! Twins are `subscriptions.rs`; the shared helpers are in
//! `common/storage.rs`.

use crate::common;

use common::storage::{assert_bad_input, counts, user, world};
use common::{at, TestDb};
use digestd::manage;
use digestd::parties::{self, NewUser};
use digestd::subscriptions::{self, SubscribeRequest};

/// A modification digest of collection `cal` for `party`, every other
/// field left to its default.
fn req(cal: &str, party: &str, freq: &str) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: freq.into(),
        kind: "modification".into(),
        collection: Some(cal.into()),
        ..Default::default()
    }
}

/// Subscriptions to `cal` refused as bad input, each with what is wrong.
fn bad_requests(cal: &str) -> Vec<(&'static str, SubscribeRequest)> {
    vec![
        ("frequency", req(cal, "mo", "monthly")),
        (
            "kind",
            SubscribeRequest {
                kind: "gossip".into(),
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "day on daily",
            SubscribeRequest {
                day: Some("mon".into()),
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "hour on hourly",
            SubscribeRequest {
                hour: Some(3),
                ..req(cal, "mo", "hourly")
            },
        ),
        (
            "hour 24",
            SubscribeRequest {
                hour: Some(24),
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "bad day",
            SubscribeRequest {
                day: Some("caturday".into()),
                ..req(cal, "mo", "weekly")
            },
        ),
        (
            "unknown channel",
            SubscribeRequest {
                channels: vec!["pigeon".into()],
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "no phone",
            SubscribeRequest {
                channels: vec!["sms".into()],
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "no jid",
            SubscribeRequest {
                channels: vec!["email".into(), "xmpp".into()],
                ..req(cal, "mo", "daily")
            },
        ),
        ("unknown party", req(cal, "nobody", "daily")),
        (
            "unknown collection",
            SubscribeRequest {
                collection: Some("6f1b0a52-9d3e-4c1a-9f44-0c7de1c0afff".into()),
                ..req(cal, "mo", "daily")
            },
        ),
        (
            "bad collection",
            SubscribeRequest {
                collection: Some("x".into()),
                ..req(cal, "mo", "daily")
            },
        ),
    ]
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
    let cal = cal.uuid.as_str();
    let daily = manage::subscribe(&mut c, now, &req(cal, "mo", "daily"))
        .unwrap()
        .id();
    let weekly = manage::subscribe(&mut c, now, &req(cal, "mo", "weekly"))
        .unwrap()
        .id();
    let hourly = manage::subscribe(
        &mut c,
        now,
        &SubscribeRequest {
            collection: None,
            ..req(cal, "mo", "hourly")
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
            ..req(cal, "mo", "weekly")
        },
    )
    .unwrap()
    .id();
    let group = manage::subscribe(&mut c, now, &req(cal, "team", "weekly"))
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
    for (what, r) in bad_requests(cal) {
        assert_bad_input(manage::subscribe(&mut c, now, &r), what);
        assert_eq!(counts(&mut c), before, "{what} wrote something");
    }
}

backend_tests!(subscriptions_validate_and_default);
