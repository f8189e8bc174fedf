//! `digestd bench burst` at a toy size on each back end: every user's
//! digest reaches the real smtp-sink exactly once. Correctness only; the
//! speed is the bench's own report.

use crate::common;

use common::cli::{assert_refused, os_args, Env};
use common::TestDb;
use diesel::dsl::{count, count_star};
use diesel::prelude::*;
use digestd::db::schema::{delivery_log, nt_queue, nt_requests};

const USERS: usize = 2_000;

fn every_digest_reaches_the_sink_once(db: &TestDb) {
    if !common::smtp::have_postfix(&["smtp-sink", "smtp-source"]) {
        eprintln!("skipped: Postfix's smtp-sink and smtp-source are not installed");
        return;
    }
    let env = Env::new();
    let users = USERS.to_string();
    let args = [
        "--db",
        &db.url,
        "bench",
        "burst",
        "--users",
        &users,
        "--sessions",
        "2",
    ];
    let out = env.run_raw(&args, b"");
    assert_eq!(out.code, 0, "{out:?}");
    // The sink's own count of what digestd sent it.
    let counted = format!("smtp-sink counted {USERS} messages from digestd");
    assert!(out.stdout.contains(&counted), "{}", out.stdout);
    // Three ticks (UTC+2, +1, +0 at 09:00 local), each with its share.
    let ticks: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("tick 2026-11-23 0"))
        .collect();
    assert_eq!(ticks.len(), 3, "{}", out.stdout);
    for needle in [
        "ratio burst/floor",
        "queue passes",
        "peak memory",
        "list 28 changes",
    ] {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }

    // The database agrees: one digest per user, each sent once.
    let mut c = db.conn();
    let (requests, recipients): (i64, i64) = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .select((
            count_star(),
            count(nt_requests::party_to).aggregate_distinct(),
        ))
        .first(&mut c)
        .unwrap();
    assert_eq!((requests, recipients), (USERS as i64, USERS as i64));
    let unsent: i64 = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .filter(nt_requests::status.ne("sent"))
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(unsent, 0);
    let rows: Vec<(i64, bool, i32)> = nt_queue::table
        .select((
            nt_queue::request_id,
            nt_queue::is_successful,
            nt_queue::retry_count,
        ))
        .load(&mut c)
        .unwrap();
    assert_eq!(rows.len(), USERS);
    assert!(
        rows.iter().all(|r| r.1 && r.2 == 0),
        "a row not sent first time"
    );
    // One attempt per request, every one a success.
    let (attempts, requests_tried): (i64, i64) = delivery_log::table
        .select((
            count_star(),
            count(delivery_log::request_id).aggregate_distinct(),
        ))
        .first(&mut c)
        .unwrap();
    assert_eq!((attempts, requests_tried), (USERS as i64, USERS as i64));
    let failed: i64 = delivery_log::table
        .filter(delivery_log::outcome.ne("sent"))
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(failed, 0);
}

fn bad_sizes_are_refused_and_nothing_is_written(db: &TestDb) {
    let env = Env::new();
    for bad in [
        &["--users", "0"][..],
        &["--zones", "0"][..],
        &["--zones", "21"][..],
        &["--sessions", "0"][..],
        &["--workers", "0"][..],
        &["--workers", "257"][..],
        &["--chunk", "0"][..],
        &["--chunk", "1000001"][..],
    ] {
        let mut args = vec!["--db", &db.url, "bench", "burst"];
        args.extend_from_slice(bad);
        let out = env.run_raw(&args, b"");
        assert_refused(&out, "bench burst: --", &os_args(&args));
    }
    // Refused before the database was opened: on SQLite no file, on
    // PostgreSQL no tables.
    match db.url.strip_prefix("sqlite://") {
        Some(path) => assert!(!std::path::Path::new(path).exists(), "{path} written"),
        None => {
            use diesel::connection::SimpleConnection;
            let mut pg = diesel::PgConnection::establish(&db.url).unwrap();
            pg.batch_execute("SELECT 1").unwrap();
            let tables: i64 = diesel::sql_query(
                "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'",
            )
            .get_result::<Count>(&mut pg)
            .unwrap()
            .n;
            assert_eq!(tables, 0);
        }
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

backend_tests!(
    every_digest_reaches_the_sink_once,
    bad_sizes_are_refused_and_nothing_is_written
);
