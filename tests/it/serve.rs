//! The daemon as a user runs it: the real binary, a real SQLite file, real
//! signals. The scheduler's command line (`tick`, `simulate`, `grid`) is
//! `serve_scheduler_cli.rs`, with the helpers here.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use digestd::db::schema::subscription_runs;

pub(crate) fn digestd(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .args(["--db", "sqlite://t.db"])
        .args(args)
        .env_remove("DIGESTD_DATABASE_URL")
        .output()
        .unwrap()
}

pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub(crate) fn runs(dir: &std::path::Path) -> i64 {
    let mut c = digestd::db::DbUrl::parse(&format!("sqlite://{}/t.db", dir.display()))
        .unwrap()
        .connect()
        .unwrap();
    subscription_runs::table.count().get_result(&mut c).unwrap()
}

pub(crate) fn world(dir: &std::path::Path, now: &str) {
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

/// The daemon on `port` answers HTTP beside its ticks; the start-up tick
/// made it ready and `/metrics` counts it.
fn ready_with_its_tick_counted(port: u16, token: &str, started: Instant) {
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
            .bearer_auth(token)
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
}

/// What `serve` logged at the default level: a start line naming its
/// settings, a line per tick and queue pass, a line per HTTP request
/// (method, route template, status), and never the token.
fn check_the_log(err: &str, port: u16, token: &str) {
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
    assert!(!err.contains(token), "the token is not logged");
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
    ready_with_its_tick_counted(port, &token, started);
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
    check_the_log(&err, port, &token);
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
