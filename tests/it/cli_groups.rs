//! Black-box tests of the `digestd` binary: a group's preferences
//! (`group add` / `group set` / `group list` / `group show` with `--tz`,
//! `--week-start`, `--daily-hour`, `--locale`; issue 21 item 14).
//!
//! The harness is in `common/cli.rs` (SQLite; the scheduling of a group's
//! subscriptions on both back ends is `tests/it/schedule_groups.rs`). Bad
//! input must give exit code 2, write no row and change no preference.

use crate::common;

use common::cli::*;
use diesel::prelude::*;
use digestd::db::schema::subscriptions;
use serde_json::{json, Value};

fn show(env: &Env, name: &str) -> Value {
    serde_json::from_str(&env.ok(&["group", "show", name, "--json"])).expect("JSON")
}

fn next_due(env: &Env) -> Vec<Option<chrono::NaiveDateTime>> {
    let c = &mut SqliteConnection::establish(env.db_path.to_str().unwrap()).unwrap();
    subscriptions::table
        .order(subscriptions::id)
        .select(subscriptions::next_due_at)
        .load(c)
        .unwrap()
}

// ------------------------------------------------------------ happy paths

#[test]
fn group_add_takes_preferences_and_list_and_show_print_them() {
    let env = Env::init();
    let out = env.ok(&[
        "group",
        "add",
        "tokyo",
        "--tz",
        "Asia/Tokyo",
        "--week-start",
        "sunday",
        "--daily-hour",
        "9",
        "--locale",
        "ja_JP",
        "--email",
        "tokyo@Example.org",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "added group tokyo: Asia/Tokyo, week starts sun, daily 09:00, ja-JP, email tokyo@example.org"
    );
    let id = assert_integer_last_line(&out);
    let out = env.ok(&["group", "add", "team"]);
    let team = assert_integer_last_line(&out);
    assert_eq!(
        out.lines().next(),
        Some("added group team: UTC, week starts mon, daily 08:00, en-GB"),
        "a group's defaults are what groups had before they had preferences"
    );
    env.add_user("ann", &[]);
    env.add_member("tokyo", "ann");
    let list: Value = serde_json::from_str(&env.ok(&["group", "list", "--json"])).unwrap();
    assert_eq!(
        list,
        json!([
            {"id": team, "name": "team", "tz": "UTC", "week_start": "mon", "daily_hour": 8,
             "locale": "en-GB", "quiet_hours": "", "email": null, "members": 0},
            {"id": id, "name": "tokyo", "tz": "Asia/Tokyo", "week_start": "sun",
             "daily_hour": 9, "locale": "ja-JP", "quiet_hours": "", "email": "tokyo@example.org",
             "members": 1},
        ])
    );
    assert_eq!(show(&env, "tokyo"), list[1]);
    let text = env.ok(&["group", "list"]);
    assert_eq!(text.lines().count(), 2);
    assert!(
        text.lines().nth(1).unwrap().starts_with("tokyo")
            && text.contains("Asia/Tokyo")
            && text.contains("week starts sun daily 09:00  ja-JP  1 member  tokyo@example.org"),
        "{text}"
    );
    assert_eq!(
        env.ok(&["group", "show", "team"]).trim_end(),
        text.lines().next().unwrap()
    );
    assert_eq!(env.count("group_prefs"), 2);
    assert_eq!(env.count("users"), 1, "a group is not a user");
}

#[test]
fn group_set_changes_preferences_and_reschedules_the_groups_subscriptions() {
    let env = Env::init();
    env.add_group("team");
    let now = "2026-11-23T00:00:00Z";
    // Daily at the group's hour (08:00 UTC), then weekly on its first day.
    for freq in ["daily", "weekly"] {
        let args = [
            "--now",
            now,
            "subscribe",
            "team",
            "--frequency",
            freq,
            "--kind",
            "modification",
            "--all",
        ];
        assert_integer_last_line(&env.ok(&args));
    }
    let due = |s: &str| Some(chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap());
    assert_eq!(
        next_due(&env),
        [due("2026-11-23T08:00"), due("2026-11-23T08:00")],
        "UTC, and the week starts on Monday the 23rd"
    );
    let out = env.ok(&["group", "set", "team", "--tz", "Asia/Tokyo"]);
    assert_eq!(
        out,
        "updated group team: Asia/Tokyo, week starts mon, daily 08:00, en-GB\n"
    );
    // 08:00 in Tokyo is 23:00Z; Tokyo's 23rd 08:00 came before the
    // subscriptions did, so the 24th is next; the weekly one is due on Monday
    // the 30th, Tokyo's first Monday 08:00 after the subscription.
    assert_eq!(
        next_due(&env),
        [due("2026-11-23T23:00"), due("2026-11-29T23:00")]
    );
    // The tick runs it at 08:00 Tokyo time and says so.
    let out = env.ok(&["--now", "2026-11-23T23:00:00Z", "tick"]);
    let runs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "{out}");
    assert_eq!(runs[0]["party"], "team");
    assert_eq!(runs[0]["tz"], "Asia/Tokyo");
    assert_eq!(runs[0]["period"], "2026-11-24");
    assert_eq!(runs[0]["scheduled_local"], "2026-11-24T08:00:00+09:00");
    // A new first day of week moves the weekly period's start (and so its key).
    env.ok(&[
        "group",
        "set",
        "team",
        "--week-start",
        "sun",
        "--locale",
        "en-US",
    ]);
    assert_eq!(show(&env, "team")["week_start"], "sun");
    assert_eq!(show(&env, "team")["locale"], "en-US");
    assert_eq!(show(&env, "team")["tz"], "Asia/Tokyo", "kept");
    // A new daily hour is what new subscriptions default to.
    env.ok(&["group", "set", "team", "--daily-hour", "9"]);
    let args = [
        "--now",
        "2026-11-24T01:00:00Z",
        "subscribe",
        "team",
        "--frequency",
        "daily",
        "--kind",
        "forward",
        "--all",
    ];
    env.ok(&args);
    assert_eq!(next_due(&env)[2], due("2026-11-25T00:00"), "09:00 Tokyo");
}

// ---------------------------------------------------------- hostile input

/// Every refused flag value, with what the one-line error says.
fn bad_preferences() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("--tz", "Mars/Olympus", "unknown IANA timezone"),
        ("--tz", "", "invalid timezone"),
        ("--tz", "Asia/Tokyo\r\n", "invalid timezone"),
        ("--tz", "UTC\nX-Injected: 1", "invalid timezone"),
        ("--tz", "../../etc/passwd", "unknown IANA timezone"),
        ("--week-start", "funday", "invalid day"),
        ("--week-start", "sun\n", "invalid day"),
        ("--week-start", "", "invalid day"),
        ("--daily-hour", "24", "invalid hour"),
        ("--daily-hour", "-1", "invalid hour"),
        ("--daily-hour", "100", "invalid hour"),
        ("--locale", "en-US\r\n", "invalid locale"),
        ("--locale", "english", "invalid locale"),
    ]
}

#[test]
fn group_add_refuses_bad_preferences_and_writes_nothing() {
    let env = Env::init();
    for (flag, value, needle) in bad_preferences() {
        env.refused(&["group", "add", "team", flag, value], b"", needle);
        env.refused(
            &[
                "group",
                "add",
                "team",
                "--email",
                "team@example.com",
                flag,
                value,
            ],
            b"",
            needle,
        );
    }
    env.usage_error(&["group", "add", "team", "--daily-hour", "7am"]);
    env.usage_error(&["group", "add", "team", "--timezone", "UTC"]);
    assert_eq!(env.ok(&["group", "list", "--json"]).trim(), "[]");
    assert_eq!(env.count("parties"), 0);
    assert_eq!(env.count("group_prefs"), 0);
}

#[test]
fn group_set_refuses_bad_input_and_changes_nothing() {
    let env = Env::init();
    env.ok(&[
        "group",
        "add",
        "team",
        "--tz",
        "Europe/Oslo",
        "--daily-hour",
        "7",
    ]);
    env.add_user("ann", &[]);
    env.ok(&[
        "--now",
        "2026-11-23T00:00:00Z",
        "subscribe",
        "team",
        "--frequency",
        "daily",
        "--kind",
        "modification",
        "--all",
    ]);
    let (prefs, due) = (show(&env, "team"), next_due(&env));
    for (flag, value, needle) in bad_preferences() {
        env.refused(&["group", "set", "team", flag, value], b"", needle);
        // A good change beside a bad one is not made either.
        let good = match flag {
            "--tz" => ["--daily-hour", "10"],
            _ => ["--tz", "Asia/Tokyo"],
        };
        env.refused(
            &["group", "set", "team", good[0], good[1], flag, value],
            b"",
            needle,
        );
    }
    env.refused(
        &["group", "set", "ann", "--tz", "Asia/Tokyo"],
        b"",
        "is a user, not a group",
    );
    env.refused(
        &["group", "set", "nobody", "--tz", "Asia/Tokyo"],
        b"",
        "no user or group named \"nobody\"",
    );
    env.refused(
        &["group", "set", "team\r\nX", "--tz", "Asia/Tokyo"],
        b"",
        "no user or group named",
    );
    env.refused(
        &["group", "set", "digestd", "--tz", "Asia/Tokyo"],
        b"",
        "is reserved for digestd itself",
    );
    env.refused(&["group", "show", "DigestD"], b"", "is reserved");
    env.usage_error(&["group", "set", "team"]);
    env.usage_error(&["group", "set", "team", "--daily-hour", "nine"]);
    assert_eq!(show(&env, "team"), prefs, "no preference changed");
    assert_eq!(next_due(&env), due, "nothing rescheduled");
    env.refused(
        &["group", "show", "nobody"],
        b"",
        "no group named \"nobody\"",
    );
    env.refused(&["group", "show", "ann"], b"", "is a user, not a group");
    // `user set` does not reach a group, nor `group set` a user.
    env.refused(
        &["user", "set", "team", "--tz", "Asia/Tokyo"],
        b"",
        "is a group, not a user",
    );
}
