//! `digestd bench webhook` and `digestd bench matrix` at toy sizes on
//! each back end: every message of every run, the queue's and the bare
//! client's, reaches the receiver (or the rooms of the Synapse the bench
//! starts) exactly once, and the database holds every request sent; bad
//! sizes are refused before anything is written. The figures are the
//! bench's own report, not checked here. The Matrix one needs Synapse
//! (`common::synapse`: skipped without it unless required).

use crate::common;

use common::cli::{assert_refused, os_args, Env};
use common::TestDb;
use diesel::dsl::count_star;
use diesel::prelude::*;
use digestd::db::schema::{delivery_log, nt_requests};

/// Every request of the bench's `rounds` runs of `n` sent, each with one
/// successful attempt.
fn all_sent(db: &TestDb, n: i64) {
    let mut c = db.conn();
    let (requests, unsent): (i64, i64) = (
        nt_requests::table
            .select(count_star())
            .get_result(&mut c)
            .unwrap(),
        nt_requests::table
            .filter(nt_requests::status.ne("sent"))
            .count()
            .get_result(&mut c)
            .unwrap(),
    );
    assert_eq!((requests, unsent), (n, 0));
    let attempts: Vec<String> = delivery_log::table
        .select(delivery_log::outcome)
        .load(&mut c)
        .unwrap();
    assert_eq!(attempts.len() as i64, n);
    assert!(attempts.iter().all(|o| o == "sent"), "{attempts:?}");
}

/// Runs `bench NAME ARGS` on `db`, which must succeed and print each of
/// `needles`.
fn bench_prints(db: &TestDb, name: &str, args: &[&str], needles: &[&str]) {
    let env = Env::new();
    let mut all = vec!["--db", &db.url, "bench", name];
    all.extend_from_slice(args);
    let out = env.run_raw(&all, b"");
    assert_eq!(out.code, 0, "{out:?}");
    for needle in needles {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }
}

fn every_webhook_reaches_the_receiver_once(db: &TestDb) {
    let args = ["--messages", "30", "--size", "200", "--rounds", "2"];
    let mut needles = vec![
        "digestd queue (run 2)",
        "bare reqwest client (run 2)",
        "digestd queue, nothing posted",
        "ratio digestd/bare client (fastest runs): ",
        "the receiver took each of 120 messages once, signed",
        "    cores busy ",
        "CPU a message (fastest runs): bare client ",
    ];
    if db.url.starts_with("postgres") {
        // The backend serving the queue is on this machine: its CPU counts.
        needles.push("its PostgreSQL backend");
    }
    bench_prints(db, "webhook", &args, &needles);
    // The two runs' requests and the pass that posts nothing.
    all_sent(db, 90);
}

/// A receiver that waits before it answers, both sides posting three at
/// once: every message still arrives once and the report says so.
fn a_slow_receiver_and_three_in_flight_lose_nothing(db: &TestDb) {
    let args = [
        "--messages",
        "12",
        "--size",
        "100",
        "--rounds",
        "1",
        "--concurrency",
        "3",
        "--latency-ms",
        "20",
    ];
    let needles = [
        "3 in flight",
        "answering after 20 ms",
        "the receiver took each of 24 messages once, signed",
    ];
    bench_prints(db, "webhook", &args, &needles);
    all_sent(db, 24);
}

fn every_matrix_message_reaches_the_rooms_once(db: &TestDb) {
    if !common::synapse::available() {
        return;
    }
    let args = [
        "--messages",
        "8",
        "--size",
        "200",
        "--rooms",
        "3",
        "--rounds",
        "2",
    ];
    let needles = [
        "over 3 rooms",
        "digestd queue (run 2)",
        "ratio digestd/bare client (fastest runs): ",
        "every one of 32 messages arrived once",
    ];
    bench_prints(db, "matrix", &args, &needles);
    all_sent(db, 16);
}

fn bad_sizes_are_refused_and_nothing_is_written(db: &TestDb) {
    let env = Env::new();
    for (bench, bad) in [
        ("webhook", &["--messages", "0"][..]),
        ("webhook", &["--size", "0"][..]),
        ("webhook", &["--rounds", "0"][..]),
        ("webhook", &["--concurrency", "0"][..]),
        ("webhook", &["--concurrency", "65"][..]),
        ("webhook", &["--latency-ms", "10001"][..]),
        ("matrix", &["--messages", "0"][..]),
        ("matrix", &["--rooms", "0"][..]),
        ("matrix", &["--rounds", "21"][..]),
    ] {
        let mut args = vec!["--db", &db.url, "bench", bench];
        args.extend_from_slice(bad);
        let out = env.run_raw(&args, b"");
        assert_refused(&out, &format!("bench {bench}: --"), &os_args(&args));
    }
    if let Some(path) = db.url.strip_prefix("sqlite://") {
        assert!(!std::path::Path::new(path).exists(), "{path} written");
    }
}

backend_tests!(
    every_webhook_reaches_the_receiver_once,
    a_slow_receiver_and_three_in_flight_lose_nothing,
    every_matrix_message_reaches_the_rooms_once,
    bad_sizes_are_refused_and_nothing_is_written
);
