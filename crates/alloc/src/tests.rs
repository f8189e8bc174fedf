//! SQLite on mimalloc, in a process of its own (this crate's test binary,
//! whose one test routes SQLite before anything opens it).

#![allow(unsafe_code)]

use std::ffi::{c_void, CString};

use libmimalloc_sys as mi;
use libsqlite3_sys as sqlite;

use super::{init, route_sqlite, MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS};

/// Runs `sql` on `db`; panics with SQLite's message if it fails.
fn exec(db: *mut sqlite::sqlite3, sql: &str) {
    let sql = CString::new(sql).unwrap();
    // SAFETY: `db` is open; `sql` is a NUL-terminated string; no callback.
    let rc = unsafe {
        sqlite::sqlite3_exec(
            db,
            sql.as_ptr(),
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, sqlite::SQLITE_OK, "{sql:?}");
}

#[test]
fn sqlite_allocates_from_mimalloc_and_refuses_it_once_started() {
    // SAFETY: reads one of mimalloc's options.
    let delay = || unsafe { mi::mi_option_get(MI_OPTION_PURGE_DELAY) };
    assert_eq!(
        delay(),
        1_000,
        "mimalloc's own default, read at the option's place"
    );
    init();
    assert_eq!(delay(), PURGE_DELAY_MS as std::ffi::c_long);
    assert!(
        super::huge_pages_disabled(),
        "init left transparent huge pages on"
    );
    // `init` routed SQLite; it accepts the methods again until it starts.
    assert!(
        route_sqlite(),
        "SQLite did not take the methods before its first use"
    );
    // A block SQLite allocates is mimalloc's (with glibc's malloc it is not).
    // SAFETY: sqlite3_malloc/sqlite3_free are paired; the query only reads.
    unsafe {
        let p = sqlite::sqlite3_malloc(100);
        assert!(!p.is_null());
        assert!(mi::mi_is_in_heap_region(p as *const c_void));
        sqlite::sqlite3_free(p);
    }
    // And SQLite works on it: 4,000 rows of 1 KiB written, sorted, grown.
    let mut db = std::ptr::null_mut();
    let name = CString::new(":memory:").unwrap();
    // SAFETY: `db` receives the handle, closed below.
    assert_eq!(
        unsafe { sqlite::sqlite3_open(name.as_ptr(), &mut db) },
        sqlite::SQLITE_OK
    );
    exec(
        db,
        "CREATE TABLE t (k INTEGER, v BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
         INSERT INTO t SELECT i, randomblob(1024) FROM n;
         CREATE TABLE s AS SELECT k, v || v AS v FROM t ORDER BY v;
         CREATE INDEX s_v ON s (v);",
    );
    // SQLite's own count of what it holds, read through x_size.
    let used = super::sqlite_memory_used();
    assert!(used > 8_000_000, "SQLite holds {used} bytes");
    // SAFETY: `db` is open and nothing uses it after.
    assert_eq!(unsafe { sqlite::sqlite3_close(db) }, sqlite::SQLITE_OK);
    // Once SQLite has started, it keeps the allocator it has.
    assert!(!route_sqlite());
}
