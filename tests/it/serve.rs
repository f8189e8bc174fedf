//! The daemon and the scheduler's command line, as a user runs them: the
//! real binary, a real SQLite file, real signals.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use digestd::db::schema::{subscription_runs, subscriptions};

fn digestd(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .args(["--db", "sqlite://t.db"])
        .args(args)
        .env_remove("DIGESTD_DATABASE_URL")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn runs(dir: &std::path::Path) -> i64 {
    let mut c = digestd::db::DbUrl::parse(&format!("sqlite://{}/t.db", dir.display()))
        .unwrap()
        .connect()
        .unwrap();
    subscription_runs::table.count().get_result(&mut c).unwrap()
}

fn world(dir: &std::path::Path, now: &str) {
    ok(&digestd(dir, &["init"]));
    ok(&digestd(
        dir,
        &[
            "--now",
            now,
            "user",
            "add",
            "kiri",
            "--tz",
            "Pacific/Chatham",
            "--email",
            "kiri@example.com",
        ],
    ));
    ok(&digestd(
        dir,
        &[
            "--now",
            now,
            "subscribe",
            "kiri",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--all",
        ],
    ));
}

#[test]
fn serve_catches_up_at_start_and_finishes_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // Subscribed three hours ago (the test reads the wall clock, as serve does).
    let three_hours_ago = (chrono::Utc::now() - chrono::Duration::hours(3)).to_rfc3339();
    world(dir.path(), &three_hours_ago);
    let token = ok(&digestd(
        dir.path(),
        &["token", "add", "prometheus", "--scope", "read"],
    ));
    let token = token.lines().last().unwrap().trim().to_string();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir.path())
        .args(["--db", "sqlite://t.db", "serve"])
        .env_remove("DIGESTD_DATABASE_URL")
        .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The start-up tick delivers the missed hours as one run.
    let started = Instant::now();
    while runs(dir.path()) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no start-up tick"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // It answers HTTP beside its ticks, and the start-up tick made it ready.
    let base = format!("http://127.0.0.1:{port}");
    let get = |path: &str| reqwest::blocking::get(format!("{base}{path}")).unwrap();
    assert_eq!(get("/healthz").status(), 200);
    let ready = loop {
        let r = get("/readyz");
        if r.status() == 200 || started.elapsed() > Duration::from_secs(20) {
            break r;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ready.status(), 200, "{}", ready.text().unwrap());
    // /metrics counts the start-up tick (counted just after its lease is
    // released, which is what made it ready: wait for it the same way).
    let ticks = loop {
        let r = reqwest::blocking::Client::new()
            .get(format!("{base}/metrics"))
            .bearer_auth(&token)
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
        let text = r.text().unwrap();
        let ran = text
            .lines()
            .find_map(|l| l.strip_prefix("digestd_ticks_total{outcome=\"ran\"} "))
            .map(|v| v.parse::<f64>().unwrap());
        if ran.is_some_and(|n| n >= 1.0) || started.elapsed() > Duration::from_secs(20) {
            break ran;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(ticks.is_some_and(|n| n >= 1.0), "{ticks:?}");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "clean exit on SIGTERM");
    // At the default log level: a start line, a line per tick and pass.
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let start = err
        .lines()
        .find(|l| l.contains("digestd serve started"))
        .unwrap_or_else(|| panic!("{err}"));
    for want in [
        "version=",
        "database=sqlite://t.db",
        "tick=0 */15 * * * *",
        "email=dir",
        &format!("http=http://127.0.0.1:{port}"),
    ] {
        assert!(start.contains(want), "{want} in {start}");
    }
    assert!(
        err.lines()
            .any(|l| l.contains(" tick ") && l.contains("runs=1")),
        "{err}"
    );
    assert!(err.lines().any(|l| l.contains("queue: ")), "{err}");
    // And a line per HTTP request: method, route template, status.
    assert!(
        err.lines().any(|l| l.contains(" INFO ")
            && l.contains("request")
            && l.contains("method=GET")
            && l.contains("/metrics")
            && l.contains("status=200")),
        "{err}"
    );
    assert!(!err.contains(&token), "the token is not logged");
    assert_eq!(runs(dir.path()), 1, "three missed hours, one digest");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the HTTP port is closed after shutdown"
    );
}

/// A port nothing listens on now (the OS picks it; it is released at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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
}

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
    for args in [
        &["tick", "--at", "yesterday"][..],
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
        &["user", "set", "kiri", "--tz", "Europe/Atlantis"],
        &["user", "set", "kiri", "--tz", "UTC\r\nX: y"],
        &["user", "set", "kiri", "--week-start", "someday"],
        &["user", "set", "nobody", "--tz", "UTC"],
        // Nothing to change: a usage error, not "updated".
        &["user", "set", "kiri"],
        &["subscription", "pause", "999"],
        &["subscription", "resume", "999"],
    ] {
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
