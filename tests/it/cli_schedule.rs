//! Black-box tests of the `digestd` binary: `subscribe`
//! (`src/cli/schedule.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use common::cli::*;
use serde_json::Value;

// ------------------------------------------------------------ happy paths

#[test]
fn subscribe_prints_integer_ids() {
    let (env, c) = world();
    env.add_user(
        "bob",
        &["--xmpp", "bob@localhost", "--phone", "+33612345678"],
    );
    env.add_group("team");
    let mut ids = Vec::new();
    for args in [
        vec![
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "modification",
            "--collection",
            c.as_str(),
        ],
        vec![
            "alice",
            "--frequency",
            "weekly",
            "--kind",
            "forward",
            "--all",
            "--hour",
            "6",
            "--day",
            "fri",
        ],
        vec![
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--all",
        ],
        vec![
            "bob",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            c.as_str(),
            "--channel",
            "xmpp,sms",
            "--hour",
            "0",
        ],
        vec![
            "team",
            "--frequency",
            "weekly",
            "--kind",
            "modification",
            "--all",
        ],
    ] {
        let mut full = vec!["subscribe"];
        full.extend(args);
        ids.push(assert_integer_last_line(&env.ok(&full)));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 5, "distinct ids: {ids:?}");
    assert_eq!(env.count("subscriptions"), 5);
}

// ------------------------------------------------------ hostile: subscribe

/// The "first hour" report: the same subscription twice was stored twice,
/// and every digest came twice.
#[test]
fn subscribe_refuses_a_twin_and_merges_new_channels() {
    let (env, c) = world();
    env.ok(&[
        "contact",
        "alice",
        "--channel",
        "sms",
        "--set",
        "+33612345678",
    ]);
    let sub = |extra: &[&str]| {
        let mut args = vec![
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "modification",
            "--collection",
            c.as_str(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let id = assert_integer_last_line(&env.ok(&sub(&[])));
    let named = format!("subscription {id}");
    // The same digest: refused, naming the subscription, nothing written.
    for extra in [
        &[][..],
        &["--hour", "8"],
        &["--channel", "email"],
        &["--send-empty"],
        &["--include-own", "--channel", "sms"],
    ] {
        let out = env.refused(&sub(extra), b"", &named);
        assert!(out.stderr.contains("already has this digest"), "{out:?}");
    }
    // Only the channels differ: merged.
    let out = env.ok(&sub(&["--channel", "sms"]));
    assert_eq!(
        out,
        format!("merged into subscription {id}: channels email,sms\n{id}\n")
    );
    assert_eq!(env.count("subscriptions"), 1);
    let list = env.ok(&["subscription", "list"]);
    assert!(list.contains("via email,sms"), "{list}");
    // Paused: refused, saying how to resume it.
    env.ok(&["subscription", "pause", &id.to_string()]);
    let out = env.refused(&sub(&["--channel", "sms"]), b"", &named);
    assert!(
        out.stderr
            .contains(&format!("digestd subscription resume {id}")),
        "{out:?}"
    );
    // Another hour is another digest.
    assert_integer_last_line(&env.ok(&sub(&["--hour", "9"])));
    assert_eq!(env.count("subscriptions"), 2);
}

#[test]
fn subscribe_refuses_bad_frequency_and_kind() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "minutely",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "invalid frequency",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "Daily",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "invalid frequency",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "digest",
            "--collection",
            &c,
        ],
        b"",
        "invalid kind",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_day_on_daily_and_hour_or_day_on_hourly() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--all",
            "--day",
            "mon",
        ],
        b"",
        "daily subscription takes --hour, not --day",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--collection",
            &c,
            "--hour",
            "3",
        ],
        b"",
        "hourly subscription",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--all",
            "--day",
            "tue",
        ],
        b"",
        "hourly subscription",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_bad_hour_and_day() {
    let (env, _c) = world();
    for hour in ["24", "-1"] {
        env.refused(
            &[
                "subscribe",
                "alice",
                "--frequency",
                "daily",
                "--kind",
                "forward",
                "--all",
                "--hour",
                hour,
            ],
            b"",
            "invalid hour",
        );
    }
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "weekly",
            "--kind",
            "forward",
            "--all",
            "--day",
            "funday",
        ],
        b"",
        "invalid day",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_needs_exactly_one_of_collection_and_all() {
    let (env, c) = world();
    env.usage_error(&[
        "subscribe",
        "alice",
        "--frequency",
        "daily",
        "--kind",
        "forward",
        "--collection",
        &c,
        "--all",
    ]);
    env.usage_error(&[
        "subscribe",
        "alice",
        "--frequency",
        "daily",
        "--kind",
        "forward",
    ]);
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_unknown_or_malformed_collection_and_unknown_party() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            NO_SUCH_COLLECTION,
        ],
        b"",
        "no collection",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            "not-a-uuid",
        ],
        b"",
        "invalid collection UUID",
    );
    env.refused(
        &[
            "subscribe",
            "nobody",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            &c,
        ],
        b"",
        "no user or group named",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_a_channel_the_user_has_no_address_for() {
    let (env, _c) = world(); // alice has only an email address
    env.add_user("bob", &[]); // bob has no address at all
    for (party, channel, needle) in [
        ("alice", "sms", "alice has no sms address"),
        ("alice", "xmpp", "alice has no xmpp address"),
        ("alice", "email,sms", "alice has no sms address"),
        ("bob", "email", "bob has no email address"),
        ("alice", "fax", "unknown channel"),
    ] {
        env.refused(
            &[
                "subscribe",
                party,
                "--frequency",
                "daily",
                "--kind",
                "forward",
                "--all",
                "--channel",
                channel,
            ],
            b"",
            needle,
        );
    }
    // bob's default channel is email, which he lacks.
    env.refused(
        &[
            "subscribe",
            "bob",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "bob has no email address",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscription_list_names_the_party_and_the_collection() {
    let (env, c) = world();
    env.add_group("team");
    env.ok(&[
        "subscribe",
        "alice",
        "--frequency",
        "weekly",
        "--kind",
        "forward",
        "--collection",
        &c,
        "--day",
        "tue",
        "--hour",
        "9",
    ]);
    env.ok(&[
        "subscribe",
        "team",
        "--frequency",
        "hourly",
        "--kind",
        "modification",
        "--all",
    ]);
    env.ok(&["subscription", "pause", "2"]);
    let before = env.snapshot();
    assert_eq!(
        env.ok(&["subscription", "list"]),
        "#1 alice weekly forward of Calendar, tue 09:00 local, via email\n\
         #2 team hourly modification of all collections, via email (paused)\n"
    );
    let v: Value = serde_json::from_str(&env.ok(&["subscription", "list", "--json"])).unwrap();
    let (a, t) = (&v[0], &v[1]);
    // The ids stay, the names are added.
    assert!(a["party"].is_i64() && a["collection"].is_i64(), "{a}");
    assert_eq!(a["party_name"], "alice");
    assert_eq!(a["collection_name"], "Calendar");
    assert_eq!(a["collection_uuid"], c.as_str());
    assert_eq!(t["party_name"], "team");
    assert_eq!(t["collection"], Value::Null);
    assert_eq!(t["collection_name"], Value::Null);
    assert_eq!(t["paused"], true);
    assert_eq!(env.snapshot(), before);
    env.usage_error(&["subscription", "list", "--json", "x"]);
}
