//! A conditional feed GET is answered from the process's memory (heads,
//! tokens, tickets: `http::cache`), so these check that memory is never
//! stale, on both back ends: a change committed by another process
//! (`digestd record`, `token revoke`, `ticket revoke` run as children)
//! makes the next conditional GET a 200 with a new ETag, or a 401; on
//! PostgreSQL, a change made while the change listener has lost its
//! connection is not answered 304 either; and the pool replaces a
//! connection the server killed instead of handing it out again.

use crate::common;
use crate::common::atom;

use atom::*;
use common::web::{Answer, Web};
use common::TestDb;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use digestd::access;

fn conditional(w: &Web, p: &str, token: &str, etag: &str) -> Answer {
    w.send(|c| {
        c.get(w.url(p))
            .bearer_auth(token)
            .header("if-none-match", etag)
    })
}

fn with_ticket(w: &Web, p: &str, ticket: &str, etag: &str) -> Answer {
    w.send(|c| {
        c.get(w.url(&format!("{p}&ticket={ticket}")))
            .header("if-none-match", etag)
    })
}

/// `digestd --db URL args…` as a child process, `stdin` on its input.
fn digestd(w: &Web, args: &[&str], stdin: &str) {
    common::digestd_on(&w.db.url, args, stdin.as_bytes());
}

/// Polls until the feed answers 304 to its own tag twice over: the head
/// and the credentials are then in memory (whatever the last write was).
fn current(w: &Web, p: &str, token: &str) -> String {
    let etag = w.get(p, Some(token)).header("etag").expect("an ETag");
    for _ in 0..2 {
        assert_eq!(conditional(w, p, token, &etag).status, 304);
    }
    etag
}

fn record_line(coll: &str, title: &str) -> String {
    format!(
        r#"{{"collection":"{coll}","item":"{X}","actor":"bob","action":"edited","at":"2026-11-16T11:45:00Z","title":"{title}","kind":"event","changes":[{{"attribute":"location","old":"Room 1","new":"Room 2"}}]}}"#
    )
}

#[test]
fn another_process_recording_makes_the_next_conditional_get_fresh() {
    each(|w, wo| {
        let p = path(&wo.cal, "changed", WINDOW);
        let etag = current(w, &p, &wo.read);
        // Another collection's change: still 304 (and served again).
        digestd(
            w,
            &["--now", "2026-11-16T12:00:00Z", "record"],
            &record_line(&wo.other.uuid, "Elsewhere"),
        );
        assert_eq!(conditional(w, &p, &wo.read, &etag).status, 304);
        // This collection's, by another process: the very next poll is 200.
        digestd(
            w,
            &["--now", "2026-11-16T12:00:00Z", "record"],
            &record_line(&wo.cal.uuid, "From afar"),
        );
        let fresh = conditional(w, &p, &wo.read, &etag);
        let f = feed(&fresh);
        assert!(f.entries.iter().any(|e| title(&e.title) == "From afar"));
        let new = fresh.header("etag").unwrap();
        assert_ne!(new, etag);
        assert_eq!(conditional(w, &p, &wo.read, &new).status, 304);
    });
}

#[test]
fn a_revoked_token_or_ticket_is_refused_on_the_next_request() {
    each(|w, wo| {
        let p = path(&wo.cal, "changed", WINDOW);
        let etag = current(w, &p, &wo.read);
        let (id, ticket) =
            access::add_ticket(&mut w.db.conn(), now(), wo.cal.id).expect("a ticket");
        for _ in 0..2 {
            assert_eq!(with_ticket(w, &p, &ticket, &etag).status, 304);
        }
        digestd(w, &["ticket", "revoke", &id.to_string()], "");
        assert_eq!(with_ticket(w, &p, &ticket, &etag).status, 401);
        assert_eq!(conditional(w, &p, &wo.read, &etag).status, 304);
        digestd(w, &["token", "revoke", "widget"], "");
        assert_eq!(conditional(w, &p, &wo.read, &etag).status, 401);
        // And a route that only checks the token.
        assert_eq!(w.get("/api/v1/collections", Some(&wo.read)).status, 401);
    });
}

/// The one change listener of this test's database, once it is there and
/// is not `gone` (a backend just terminated may still be listed).
fn listener(c: &mut diesel::PgConnection, gone: Option<i32>) -> i32 {
    for _ in 0..600 {
        let l = listeners(c);
        if let [one] = l[..] {
            if Some(one) != gone {
                return one;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no change listener came back");
}

/// The backends of this test's database but ours that are LISTENing.
fn listeners(c: &mut diesel::PgConnection) -> Vec<i32> {
    #[derive(QueryableByName)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    diesel::sql_query(
        "SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND application_name = 'digestd change listener'",
    )
    .load::<Pid>(c)
    .unwrap()
    .into_iter()
    .map(|p| p.pid)
    .collect()
}

#[test]
fn a_change_while_the_listener_is_cut_off_is_not_answered_304() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let w = web(db);
    let wo = world(&w);
    let p = path(&wo.cal, "changed", WINDOW);
    let mut etag = current(&w, &p, &wo.read);
    let mut pg = diesel::PgConnection::establish(&w.db.url).unwrap();
    let mut gone = None;
    for round in 0..3 {
        let cut = listener(&mut pg, gone);
        // Waits (up to 10 s) until the backend has ended.
        pg.batch_execute(&format!("SELECT pg_terminate_backend({cut}, 10000)"))
            .unwrap();
        gone = Some(cut);
        // Changed while nobody listens: no notification will ever come.
        pg.batch_execute(&format!(
            "UPDATE collections SET feed_version = feed_version + 1 WHERE id = {}",
            wo.cal.id.0
        ))
        .unwrap();
        let a = conditional(&w, &p, &wo.read, &etag);
        assert_eq!(a.status, 200, "round {round}: {}", a.text);
        etag = a.header("etag").unwrap();
        assert_eq!(conditional(&w, &p, &wo.read, &etag).status, 304);
    }
}

#[test]
fn the_pool_replaces_a_connection_the_server_killed() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    #[derive(QueryableByName, Debug)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let pid = |c: &mut digestd::db::DbConn| {
        diesel::sql_query("SELECT pg_backend_pid() AS pid").get_result::<Pid>(c)
    };
    let pool = digestd::db::Db::open(&db.url, 1).unwrap();
    let first = pid(&mut pool.conn().unwrap()).unwrap().pid;
    let mut other = diesel::PgConnection::establish(&db.url).unwrap();
    other
        .batch_execute(&format!("SELECT pg_terminate_backend({first}, 10000)"))
        .unwrap();
    // The pool hands the dead connection out once (no check on checkout):
    // its use fails, and on return it is dropped.
    let e = pid(&mut pool.conn().unwrap());
    assert!(e.is_err(), "the killed connection answered: {e:?}");
    for _ in 0..3 {
        let again = pid(&mut pool.conn().unwrap()).expect("a new connection");
        assert_ne!(again.pid, first);
    }
}
