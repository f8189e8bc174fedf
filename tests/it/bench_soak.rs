//! `digestd bench soak` at a toy size on each back end: its checks pass
//! (every due digest out exactly once, counted by the real smtp-sink) and
//! its report has each part; on PostgreSQL with two server processes on
//! one address too; bad sizes are refused with exit 2. The figures are
//! the bench's own report, not checked here.

use crate::common;

use common::cli::{assert_refused, os_args, Env};
use common::TestDb;

const USERS: usize = 40;
const HOURS: usize = 2;

fn a_short_soak_delivers_every_digest_once(db: &TestDb, servers: usize) {
    if !common::smtp::have_postfix(&["smtp-sink"]) {
        eprintln!("skipped: Postfix's smtp-sink is not installed");
        return;
    }
    let env = Env::new();
    let users = USERS.to_string();
    let servers = servers.to_string();
    let args = [
        "--db",
        &db.url,
        "bench",
        "soak",
        "--users",
        &users,
        "--collections",
        "4",
        "--seconds",
        "4",
        "--hour-seconds",
        "2",
        "--readers",
        "2",
        "--ingest-per-second",
        "5",
        "--batch",
        "10",
        "--compare-seconds",
        "1",
        "--idle-seconds",
        "0",
        "--servers",
        &servers,
    ];
    let out = env.run_raw(&args, b"");
    assert_eq!(out.code, 0, "{out:?}");
    let hours: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("hour to "))
        .collect();
    assert_eq!(hours.len(), HOURS, "{}", out.stdout);
    for h in &hours {
        assert!(h.contains(&format!("{USERS} runs")), "{h}");
        // With several servers, each one's memory is shown.
        assert_eq!(h.contains(" MiB each"), servers != "1", "{h}");
    }
    assert!(!out.stdout.contains(" errors"), "{}", out.stdout);
    let once = format!(
        "exactly once: {} runs over {} (subscription, period) pairs",
        USERS * HOURS,
        USERS * HOURS
    );
    for needle in [
        once.as_str(),
        "ingest beside readers:",
        "GET changed feed, If-None-Match",
        "GET /api/v1/queue",
        "resident before each tick: at most",
        "resident, each minute's peak",
    ] {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }
}

fn bad_sizes_are_refused(db: &TestDb) {
    let env = Env::new();
    for bad in [
        &["--users", "0"][..],
        &["--readers", "0"][..],
        &["--hour-seconds", "0"][..],
        &["--seconds", "5", "--hour-seconds", "10"][..],
        &["--ingest-per-second", "0"][..],
        &["--servers", "0"][..],
        &["--servers", "9"][..],
    ] {
        let mut args = vec!["--db", &db.url, "bench", "soak"];
        args.extend_from_slice(bad);
        let out = env.run_raw(&args, b"");
        assert_refused(&out, "bench soak: --", &os_args(&args));
    }
}

#[test]
fn soak_on_sqlite() {
    let db = TestDb::sqlite();
    bad_sizes_are_refused(&db);
    a_short_soak_delivers_every_digest_once(&db, 1);
}

#[test]
fn soak_on_postgres_with_two_servers() {
    if let Some(db) = TestDb::postgres() {
        bad_sizes_are_refused(&db);
        a_short_soak_delivers_every_digest_once(&db, 2);
    }
}
