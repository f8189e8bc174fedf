//! `digestd bench ndjson` at a toy size on each back end: the server it
//! starts stores every line of the one large POST (and of the warm-up
//! before it), and the report names the body and the server's memory;
//! bad sizes and a missing server binary are refused with one clear line.
//! The figures are the bench's own report, not checked here.

use crate::common;

use common::cli::{assert_refused, os_args, Env};
use common::TestDb;
use diesel::dsl::count_star;
use diesel::prelude::*;
use digestd::db::schema::modifications;

/// Lines in the large POST; the warm-up POST before it sends 10 more.
const LINES: i64 = 1_200;
const WARM_UP: i64 = 10;

fn every_line_is_stored(db: &TestDb) {
    let env = Env::new();
    let lines = LINES.to_string();
    let args = ["--db", &db.url, "bench", "ndjson", "--lines", &lines];
    let out = env.run_raw(&args, b"");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with(&format!("bench ndjson: {LINES} lines, ")),
        "{}",
        out.stdout
    );
    for needle in ["posted as NDJSON in ", "server resident: ", " for the POST"] {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }
    let stored: i64 = modifications::table
        .select(count_star())
        .get_result(&mut db.conn())
        .unwrap();
    assert_eq!(stored, LINES + WARM_UP);
}

fn bad_runs_are_refused(db: &TestDb) {
    let env = Env::new();
    let args = ["--db", &db.url, "bench", "ndjson", "--lines", "0"];
    let out = env.run_raw(&args, b"");
    assert_refused(&out, "bench ndjson: --lines", &os_args(&args));
    let missing = env.dir.path().join("no-such-digestd");
    let missing = missing.to_str().unwrap();
    let args = ["--db", &db.url, "bench", "ndjson", "--server", missing];
    let out = env.run_raw(&args, b"");
    assert_refused(&out, "bench ndjson: --server", &os_args(&args));
}

#[test]
fn ndjson_on_sqlite() {
    let db = TestDb::sqlite();
    // Refused runs write nothing: the bench after them finds the empty
    // database it needs.
    bad_runs_are_refused(&db);
    every_line_is_stored(&db);
}

#[test]
fn ndjson_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        bad_runs_are_refused(&db);
        every_line_is_stored(&db);
    }
}
