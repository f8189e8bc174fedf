//! SQLite's WAL is checkpointed by each `Db`'s own thread, not by the
//! commit that fills it (`crates/store/src/checkpoint.rs`).

use crate::common;

use std::time::{Duration, Instant};

use common::TestDb;
use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::RunQueryDsl;
use digestd::db::{DbConn, DbUrl, SQLITE_AUTOCHECKPOINT_PAGES, SQLITE_PAGE_BYTES};

#[derive(diesel::QueryableByName)]
struct Value {
    #[diesel(sql_type = BigInt)]
    v: i64,
}

#[derive(diesel::QueryableByName)]
struct Autocheckpoint {
    #[diesel(sql_type = BigInt)]
    wal_autocheckpoint: i64,
}

#[derive(diesel::QueryableByName)]
struct PageSize {
    #[diesel(sql_type = BigInt)]
    page_size: i64,
}

fn page_size(c: &mut DbConn) -> i64 {
    diesel::sql_query("PRAGMA page_size")
        .get_result::<PageSize>(sqlite(c))
        .unwrap()
        .page_size
}

#[derive(diesel::QueryableByName)]
struct SizeLimit {
    #[diesel(sql_type = BigInt)]
    journal_size_limit: i64,
}

fn sqlite(c: &mut DbConn) -> &mut diesel::SqliteConnection {
    match c {
        DbConn::Sqlite(s) => s,
        _ => panic!("an SQLite connection"),
    }
}

/// A commit of about 3,000 pages (more than SQLite's default threshold of
/// 1,000, less than ours) leaves its pages in the WAL; the thread copies
/// every one into the database file on its own. Each row nearly fills a
/// page, whatever the page size.
#[test]
fn the_thread_checkpoints_what_a_commit_left_in_the_wal() {
    let t = TestDb::sqlite();
    let db = t.open();
    let mut c = db.conn().unwrap();
    let net: Autocheckpoint = diesel::sql_query("PRAGMA wal_autocheckpoint")
        .get_result(sqlite(&mut c))
        .unwrap();
    assert_eq!(
        net.wal_autocheckpoint,
        i64::from(SQLITE_AUTOCHECKPOINT_PAGES),
        "a pool connection checkpoints on commit only past the net"
    );
    let limit: SizeLimit = diesel::sql_query("PRAGMA journal_size_limit")
        .get_result(sqlite(&mut c))
        .unwrap();
    assert_eq!(limit.journal_size_limit, 64 << 20);
    const { assert!(3000 < SQLITE_AUTOCHECKPOINT_PAGES) };
    let row = page_size(&mut c) - 100;
    c.batch_execute(&format!(
        "CREATE TABLE filler (x BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO filler SELECT zeroblob({row}) FROM n;"
    ))
    .unwrap();
    let ck = db
        .checkpoints()
        .expect("an SQLite file has a checkpoint thread");
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        match ck.last() {
            Some(p) if p.frames >= 3000 && p.checkpointed == p.frames => break p,
            _ if Instant::now() > deadline => panic!("not checkpointed: {:?}", ck.last()),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    assert_eq!(done.busy, 0);
    // The rows are there, read through the database file.
    drop(c);
    drop(db);
    let mut fresh = DbUrl::parse(&t.url).unwrap().connect().unwrap();
    let n: Value = diesel::sql_query("SELECT COUNT(*) AS v FROM filler")
        .get_result(sqlite(&mut fresh))
        .unwrap();
    assert_eq!(n.v, 3000);
}

/// Only SQLite files have the thread: PostgreSQL checkpoints on its own,
/// and an in-memory database has no WAL.
#[test]
fn no_thread_for_memory_or_postgres() {
    let mem = digestd::db::Db::open("sqlite://:memory:", 1).unwrap();
    assert!(mem.checkpoints().is_none());
    if let Some(t) = TestDb::postgres() {
        assert!(t.open().checkpoints().is_none());
    }
}

/// A database created here gets the page size digestd sets; one created
/// with SQLite's default before keeps its 4 KiB pages (a page size cannot
/// change under WAL without a rebuild) and is read and written as before.
#[test]
fn a_new_database_gets_the_page_size_and_an_old_one_keeps_its_own() {
    let t = TestDb::sqlite();
    let mut c = DbUrl::parse(&t.url).unwrap().connect().unwrap();
    assert_eq!(page_size(&mut c), i64::from(SQLITE_PAGE_BYTES));
    drop(c);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut old =
        <diesel::SqliteConnection as diesel::Connection>::establish(path.to_str().unwrap())
            .unwrap();
    old.batch_execute(
        "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;
         CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (7);",
    )
    .unwrap();
    drop(old);
    let url = format!("sqlite://{}", path.display());
    let mut c = DbUrl::parse(&url).unwrap().connect().unwrap();
    assert_eq!(page_size(&mut c), 4096);
    c.batch_execute("INSERT INTO kept VALUES (8)").unwrap();
    let n: Value = diesel::sql_query("SELECT SUM(x) AS v FROM kept")
        .get_result(sqlite(&mut c))
        .unwrap();
    assert_eq!(n.v, 15);
}
