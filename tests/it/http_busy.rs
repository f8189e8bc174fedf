//! A database that says "not now" over real HTTP: while another process
//! holds SQLite's write lock past the busy timeout, a write answers 503
//! with `Retry-After` and a one-line JSON error, writes nothing, and the
//! same request succeeds once the lock is gone. (The client may retry a
//! 503; a 500 tells it nothing.)

use crate::common;
use crate::http_api::support;

use common::web::Web;
use common::TestDb;
use diesel::connection::SimpleConnection;
use diesel::Connection;
use support::*;

#[test]
fn a_write_behind_a_held_lock_is_503_with_retry_after_and_writes_nothing() {
    let w = Web::start(TestDb::sqlite(), at());
    let wd = world(&w);
    let path = w.db.url.strip_prefix("sqlite://").unwrap().to_string();
    let mut other = diesel::SqliteConnection::establish(&path).unwrap();
    other.batch_execute("BEGIN IMMEDIATE").unwrap();
    let before = rows(&w);
    let body = ndjson(&[line(&wd.coll, "Standup")]);
    let a = post_ndjson(&w, &wd.ingest, body.clone());
    assert_eq!(a.status, 503, "{}", a.text);
    assert_eq!(a.header("retry-after").as_deref(), Some("1"));
    assert!(a.error().contains("busy"), "{}", a.text);
    assert_eq!(a.json()["retry_after_seconds"], 1);
    other.batch_execute("ROLLBACK").unwrap();
    assert_eq!(rows(&w), before, "a refused write wrote nothing");
    let a = post_ndjson(&w, &wd.ingest, body);
    assert!(a.status < 300, "{} {}", a.status, a.text);
    assert_eq!(rows(&w)["modifications"], before["modifications"] + 1);
}
