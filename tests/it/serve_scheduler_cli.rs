//! The scheduler's command line as a user runs it, on the real binary and
//! a real SQLite file: `simulate` is a what-if and `tick` records; the
//! default tick is on time in every zone; `grid` prints both views and an
//! SVG; `tick` defaults to now and goes ahead only one interval (or with
//! `--force`); hostile input exits 2 and writes nothing. The daemon and the
//! helpers are `serve.rs`.

use diesel::prelude::*;
use digestd::db::schema::subscriptions;

use crate::serve::{digestd, ok, runs, world};

#[test]
fn simulate_is_a_what_if_and_tick_records() {
    let dir = tempfile::tempdir().unwrap();
    world(dir.path(), "2026-03-01T00:00:00Z");
    let args = [
        "simulate",
        "--from",
        "2026-04-04T00:00:00Z",
        "--to",
        "2026-04-06T00:00:00Z",
        "--every",
        "15m",
    ];
    let first = ok(&digestd(dir.path(), &args));
    // Chatham (+12:45/+13:45) leaves DST on 2026-04-05 at 03:45 local: a 25-hour day.
    assert_eq!(first.lines().count(), 24 + 25, "{first}");
    let line: serde_json::Value = serde_json::from_str(first.lines().nth(1).unwrap()).unwrap();
    for field in [
        "subscription",
        "party",
        "tz",
        "frequency",
        "period",
        "scheduled_local",
        "scheduled_utc",
        "tick_utc",
        "window_start",
        "window_end",
    ] {
        assert!(!line[field].is_null(), "missing {field}: {line}");
    }
    assert_eq!(line["tz"], "Pacific/Chatham");
    assert_eq!(runs(dir.path()), 0, "simulate writes nothing");
    assert_eq!(
        ok(&digestd(dir.path(), &args)),
        first,
        "and so repeats itself"
    );
    let t = ok(&digestd(
        dir.path(),
        &["tick", "--at", "2026-04-04T00:00:00Z"],
    ));
    assert_eq!(t.lines().count(), 1, "one catch-up run for March");
    assert_eq!(runs(dir.path()), 1);
    assert_eq!(
        ok(&digestd(
            dir.path(),
            &["tick", "--at", "2026-04-04T00:00:00Z"]
        )),
        ""
    );
}

/// A team in Kolkata with daily digests at 09:00 gets them at 09:00, not
/// 09:30: `simulate` follows `[schedule] tick`, whose default puts every
/// zone on time to the minute, through the DST changes of March and April.
/// With hourly ticks (`--every 1h`) the :30 and :45 zones are late, which
/// is what this test would see if the default were still hourly.
#[test]
fn the_default_tick_is_on_time_in_every_zone() {
    let dir = tempfile::tempdir().unwrap();
    ok(&digestd(dir.path(), &["init"]));
    let now = "2026-03-01T00:00:00Z";
    let zones = [
        ("asha", "Asia/Kolkata"),
        ("nima", "Asia/Kathmandu"),
        ("tane", "Pacific/Chatham"),
        ("mary", "America/St_Johns"),
        ("alex", "Australia/Adelaide"),
        ("sara", "Asia/Tehran"),
        ("omar", "Asia/Kabul"),
        ("eve", "Australia/Eucla"),
        ("ben", "Europe/Berlin"),
    ];
    for (name, tz) in zones {
        ok(&digestd(
            dir.path(),
            &[
                "--now",
                now,
                "user",
                "add",
                name,
                "--tz",
                tz,
                "--email",
                &format!("{name}@example.com"),
            ],
        ));
        ok(&digestd(
            dir.path(),
            &[
                "--now",
                now,
                "subscribe",
                name,
                "--frequency",
                "daily",
                "--hour",
                "9",
                "--kind",
                "modification",
                "--all",
            ],
        ));
    }
    let lateness = |every: Option<&str>| -> Vec<(String, i64)> {
        let mut args = vec![
            "simulate",
            "--from",
            "2026-03-01T00:00:00Z",
            "--to",
            "2026-04-15T00:00:00Z",
        ];
        if let Some(e) = every {
            args.extend(["--every", e]);
        }
        let out = ok(&digestd(dir.path(), &args));
        out.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let t =
                    |f: &str| chrono::DateTime::parse_from_rfc3339(v[f].as_str().unwrap()).unwrap();
                let local = v["scheduled_local"].as_str().unwrap();
                assert!(local.contains("T09:00:00"), "{v}");
                (
                    v["tz"].as_str().unwrap().to_string(),
                    (t("tick_utc") - t("scheduled_utc")).num_seconds(),
                )
            })
            .collect()
    };
    let on_time = lateness(None);
    assert_eq!(on_time.len(), zones.len() * 45, "a digest a day for each");
    let late: Vec<_> = on_time
        .iter()
        .filter(|(_, s)| !(0..60).contains(s))
        .collect();
    assert!(late.is_empty(), "late with the default tick: {late:?}");
    // The hourly tick the default replaced: Kolkata half an hour late.
    let hourly = lateness(Some("1h"));
    assert!(
        hourly
            .iter()
            .any(|(tz, s)| tz == "Asia/Kolkata" && *s == 30 * 60),
        "{hourly:?}"
    );
    assert!(hourly
        .iter()
        .any(|(tz, s)| tz == "Asia/Kathmandu" && *s == 45 * 60));
}

#[test]
fn grid_prints_both_views_and_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    world(dir.path(), "2026-03-01T00:00:00Z");
    let out = ok(&digestd(
        dir.path(),
        &[
            "grid",
            "--user",
            "kiri",
            "--week",
            "2026-06-10T00:00:00Z",
            "--svg",
            "g.svg",
        ],
    ));
    assert!(
        out.contains("by local time") && out.contains("server time (UTC)"),
        "{out}"
    );
    assert!(
        out.contains("of 168 digests"),
        "hourly: every bucket once: {out}"
    );
    let svg = std::fs::read_to_string(dir.path().join("g.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.ends_with("</svg>") && svg.matches("<rect").count() > 168
    );
    assert!(
        svg.contains("hour of the day (server time (UTC))"),
        "the default"
    );
    assert!(svg.contains("class=\"legend\""));
    ok(&digestd(
        dir.path(),
        &[
            "grid",
            "--user",
            "kiri",
            "--week",
            "2026-06-10T00:00:00Z",
            "--svg",
            "local.svg",
            "--svg-time",
            "local",
        ],
    ));
    let local = std::fs::read_to_string(dir.path().join("local.svg")).unwrap();
    assert!(local.contains("hour of the day (local time)"), "{local}");
    // A file name with CR/LF is written as given and said on one line.
    let out = ok(&digestd(dir.path(), &["grid", "--svg", "a\r\nb.svg"]));
    assert!(out.ends_with("wrote a\\r\\nb.svg\n"), "{out:?}");
    assert!(dir.path().join("a\r\nb.svg").exists());
}

/// Scheduler command lines that must exit 2 and write nothing.
const HOSTILE: &[&[&str]] = &[
    &["tick", "--at", "yesterday"],
    &["tick", "--at", "2026-13-01T00:00:00Z"],
    &[
        "simulate",
        "--from",
        "2026-04-02T00:00:00Z",
        "--to",
        "2026-04-01T00:00:00Z",
    ],
    &[
        "simulate",
        "--from",
        "2026-04-01T00:00:00Z",
        "--to",
        "2026-04-02T00:00:00Z",
        "--every",
        "0m",
    ],
    &[
        "simulate",
        "--from",
        "2026-04-01T00:00:00Z",
        "--to",
        "2026-04-02T00:00:00Z",
        "--every",
        "5y",
    ],
    &[
        "simulate",
        "--from",
        "2026-04-01T00:00:00Z",
        "--to",
        "2026-04-02T00:00:00Z",
        "--every",
        "abc",
    ],
    &[
        "simulate",
        "--from",
        "2000-01-01T00:00:00Z",
        "--to",
        "2099-01-01T00:00:00Z",
        "--every",
        "1s",
    ],
    &["--now", "noon", "tick", "--at", "2026-04-01T00:00:00Z"],
    // Far ahead of the clock: the periods in between would collapse.
    &["tick", "--at", "2099-01-01T00:00:00Z"],
    &[
        "--now",
        "2026-04-01T00:00:00Z",
        "tick",
        "--at",
        "2026-04-01T01:00:01Z",
    ],
    &["grid", "--week", "next week"],
    &["grid", "--user", "nobody"],
    &["grid", "--svg", "x.svg", "--svg-time", "moon"],
    // An --svg that cannot be written: refused before the grid is printed.
    &["grid", "--svg", "no-such-dir/x.svg"],
    &["grid", "--svg", "."],
    &["user", "set", "kiri", "--tz", "Europe/Atlantis"],
    &["user", "set", "kiri", "--tz", "UTC\r\nX: y"],
    &["user", "set", "kiri", "--week-start", "someday"],
    &["user", "set", "nobody", "--tz", "UTC"],
    // Nothing to change: a usage error, not "updated".
    &["user", "set", "kiri"],
    &["subscription", "pause", "999"],
    &["subscription", "resume", "999"],
];

#[test]
fn hostile_scheduler_input_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    world(dir.path(), "2026-03-01T00:00:00Z");
    let snapshot = || {
        let mut c = digestd::db::DbUrl::parse(&format!("sqlite://{}/t.db", dir.path().display()))
            .unwrap()
            .connect()
            .unwrap();
        let subs: Vec<(bool, Option<chrono::NaiveDateTime>)> = subscriptions::table
            .select((subscriptions::paused, subscriptions::next_due_at))
            .load(&mut c)
            .unwrap();
        (subs, runs(dir.path()))
    };
    let before = snapshot();
    for args in HOSTILE {
        let out = digestd(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // One line, but for a usage error, which is clap's whole message.
        if !err.starts_with("error: ") {
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        }
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(snapshot(), before, "{args:?} wrote something");
    }
    assert!(
        !dir.path().join("x.svg").exists(),
        "a bad --svg-time writes no file"
    );
    let out = digestd(dir.path(), &["grid", "--svg", "no-such-dir/x.svg"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("digestd: cannot write the SVG \"no-such-dir/x.svg\": "),
        "names the file: {err}"
    );
    // A bad cron expression in the config is refused before anything runs.
    std::fs::write(
        dir.path().join("c.toml"),
        "[schedule]\ntick = \"0 * * * *\"\n",
    )
    .unwrap();
    let out = digestd(
        dir.path(),
        &["--config", "c.toml", "tick", "--at", "2026-04-01T00:00:00Z"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[schedule] tick"));
    assert_eq!(snapshot(), before);
}

#[test]
fn tick_defaults_to_now_and_goes_ahead_only_one_interval_or_with_force() {
    let dir = tempfile::tempdir().unwrap();
    world(dir.path(), "2026-03-01T00:00:00Z");
    let now = ["--now", "2026-04-01T00:00:00Z"];
    fn at<'a>(now: &[&'a str], t: &'a str) -> Vec<&'a str> {
        [now, &["tick", "--at", t][..]].concat()
    }
    // One interval of the default quarter-hour tick ahead is a tick like
    // any other; an hour ahead is refused.
    let refused = digestd(dir.path(), &at(&now, "2026-04-01T01:00:00Z"));
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("more than one tick interval (15 min)"),
        "{refused:?}"
    );
    ok(&digestd(dir.path(), &at(&now, "2026-04-01T00:15:00Z")));
    // No --at: the clock's now (here the --now instant), already ticked.
    assert_eq!(
        ok(&digestd(dir.path(), &[&now[..], &["tick"][..]].concat())),
        ""
    );
    let before = runs(dir.path());
    let ahead = [&at(&now, "2026-05-01T00:00:00Z")[..], &["--force"][..]].concat();
    ok(&digestd(dir.path(), &ahead));
    assert!(runs(dir.path()) > before, "--force ticks ahead");
}
