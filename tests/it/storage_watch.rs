//! The change watch (`db::watch`), which the feed caches trust instead of
//! asking the database: a write committed before [`Watch::generation`] is
//! called is always seen by that call, on both back ends, many times in a
//! row. On PostgreSQL the notification of such a write usually reaches
//! the listener's socket before anyone asks, so the second test checks the
//! barrier itself: every call waits for a statement the listener's
//! connection began after the call (the server sends a connection's
//! pending notifications before it reports that statement done).

use crate::common;

use common::TestDb;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use digestd::db::Watch;

fn each(f: impl Fn(&TestDb)) {
    f(&TestDb::sqlite());
    if let Some(pg) = TestDb::postgres() {
        f(&pg);
    }
}

/// The watch's generation once it can tell (PostgreSQL's listener
/// connects in the background).
fn connected(rt: &tokio::runtime::Runtime, watch: &Watch) -> u64 {
    for _ in 0..500 {
        if let Some(g) = rt.block_on(watch.generation()) {
            return g;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the watch never connected");
}

#[test]
fn every_write_committed_before_the_call_moves_the_generation() {
    each(|db| {
        let mut writer = db.conn();
        let watch = Watch::start(&db.open()).expect("watch");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut g = connected(&rt, &watch);
        for i in 0..300 {
            writer
                .batch_execute(&format!(
                    "INSERT INTO parties (kind, name, created_at) \
                     VALUES ('user', 'watched{i}', '2026-11-26 10:00:00')"
                ))
                .unwrap();
            let now = rt.block_on(watch.generation()).expect("still connected");
            assert!(now > g, "write {i} ({}): {now} after {g}", db.url);
            g = now;
        }
        // Nothing written since: nothing moves.
        for _ in 0..20 {
            assert_eq!(rt.block_on(watch.generation()), Some(g), "{}", db.url);
        }
    });
}

diesel::define_sql_function!(fn clock_timestamp() -> diesel::sql_types::Timestamptz);

#[test]
fn on_postgresql_every_call_waits_for_a_statement_begun_after_it() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    let mut c = diesel::PgConnection::establish(&db.url).unwrap();
    let watch = Watch::start(&db.open()).expect("watch");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    connected(&rt, &watch);
    let began = |c: &mut diesel::PgConnection| -> chrono::DateTime<chrono::Utc> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::Timestamptz)]
            query_start: chrono::DateTime<chrono::Utc>,
        }
        // pg_stat_activity is the whole server's: other tests' listeners
        // are there too, each in its own database.
        diesel::sql_query(
            "SELECT query_start FROM pg_stat_activity \
             WHERE application_name = $1 AND datname = current_database()",
        )
        .bind::<diesel::sql_types::Text, _>(digestd::db::watch::APPLICATION)
        .get_result::<Row>(c)
        .expect("the listener's connection")
        .query_start
    };
    for i in 0..100 {
        let asked: chrono::DateTime<chrono::Utc> = diesel::select(clock_timestamp())
            .get_result(&mut c)
            .unwrap();
        rt.block_on(watch.generation()).expect("still connected");
        let last = began(&mut c);
        assert!(
            last >= asked,
            "call {i}: the listener's last statement began at {last}, before the call at {asked}"
        );
    }
}
