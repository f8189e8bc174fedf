//! Two processes sharing one tick on PostgreSQL (issue 24 part 3): the
//! lease holder leads, the other helps by claiming the chunks no one holds
//! (`schedule::share_tick`), each run is recorded once, and a helper that
//! dies mid-chunk leaves its rows to the leader in the same tick. SQLite
//! has one writer: there the other process skips the tick.

use crate::common;

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::{at, TestDb};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use digestd::db::schema::{subscription_runs, subscriptions};
use digestd::db::DbConn;
use digestd::ids::RequestId;
use digestd::manage;
use digestd::parties::{self, NewUser};
use digestd::schedule::tick::{tick_as, Role};
use digestd::schedule::{share_tick, DueRun, HandOff, Shared};
use digestd::subscriptions::SubscribeRequest;

/// `n` users, each with an hourly digest due at 08:00.
fn world(c: &mut DbConn, n: usize) -> BTreeSet<i64> {
    let now = at("2026-11-02T00:00:00Z");
    (0..n)
        .map(|i| {
            let name = format!("s{i:04}");
            parties::create_user(
                c,
                now,
                &NewUser {
                    name: name.clone(),
                    timezone: "UTC".into(),
                    email: Some(format!("{name}@example.com")),
                    ..Default::default()
                },
            )
            .unwrap();
            manage::subscribe(
                c,
                now,
                &SubscribeRequest {
                    party: name,
                    frequency: "hourly".into(),
                    kind: "modification".into(),
                    ..Default::default()
                },
            )
            .unwrap()
            .id()
            .0
        })
        .collect()
}

const T: &str = "2026-11-02T08:00:00Z";

/// Hands nothing on, slowly: a chunk takes long enough for the other
/// process to claim chunks of its own meanwhile.
struct Slow;

impl HandOff for Slow {
    fn hand_off(&mut self, _: &mut DbConn, _: &DueRun) -> digestd::Result<Option<RequestId>> {
        Ok(None)
    }

    fn prepare(&mut self, _: &mut DbConn, _: &[DueRun]) -> digestd::Result<()> {
        std::thread::sleep(Duration::from_millis(30));
        Ok(())
    }
}

fn subs(runs: &[DueRun]) -> Vec<i64> {
    runs.iter().map(|r| r.subscription.0).collect()
}

fn stored_runs(c: &mut DbConn) -> i64 {
    subscription_runs::table.count().get_result(c).unwrap()
}

fn due(c: &mut DbConn, t: DateTime<Utc>) -> i64 {
    subscriptions::table
        .filter(subscriptions::next_due_at.le(t.naive_utc()))
        .count()
        .get_result(c)
        .unwrap()
}

/// Two owners tick at once in chunks of 10: on PostgreSQL one leads and
/// the other helps, both record runs, and together they record each
/// subscription's run once; on SQLite the second skips.
fn two_processes_share_one_tick_and_record_each_run_once(db: &TestDb) {
    let pool = db.open();
    let mut c = pool.conn().unwrap();
    let all = world(&mut c, 300);
    let start = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["a:1:x", "b:2:y"]
        .into_iter()
        .map(|owner| {
            let (pool, start) = (pool.clone(), start.clone());
            std::thread::spawn(move || {
                let mut c = pool.conn().unwrap();
                start.wait();
                let lease = chrono::Duration::minutes(10);
                share_tick(&mut c, at(T), owner, lease, &mut Slow, 10).unwrap()
            })
        })
        .collect();
    let shared: Vec<Shared> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let (mut led, mut helped, mut skipped) = (vec![], vec![], 0);
    for s in shared {
        match s {
            Shared::Led(r) => led.push(subs(&r)),
            Shared::Helped(r) => helped.push(subs(&r)),
            Shared::Skipped => skipped += 1,
        }
    }
    assert_eq!(led.len(), 1, "one leader");
    let mut got: Vec<i64> = led.concat();
    match c.backend() {
        digestd::db::Backend::Postgres => {
            assert_eq!(helped.len(), 1, "the other helped");
            assert!(
                !led[0].is_empty() && !helped[0].is_empty(),
                "both claimed runs: led {}, helped {}",
                led[0].len(),
                helped[0].len()
            );
            got.extend(helped.concat());
        }
        digestd::db::Backend::Sqlite => assert_eq!(skipped, 1, "SQLite: the other skipped"),
    }
    got.sort_unstable();
    assert_eq!(got.len(), 300, "each run handed on once");
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), all);
    assert_eq!(stored_runs(&mut c), 300);
    assert_eq!(due(&mut c, at(T)), 0, "nothing left due");
}

/// Sessions on this test's database waiting for a lock another holds.
fn lock_waits(c: &mut DbConn) -> i64 {
    let DbConn::Postgres(pg) = c else {
        unreachable!("row locks are PostgreSQL's")
    };
    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT count(*) FROM pg_stat_activity \
          WHERE datname = current_database() AND wait_event_type = 'Lock')",
    ))
    .get_result(pg)
    .unwrap()
}

/// A helper holding rows mid-chunk dies (its transaction rolls back): the
/// leader, which skipped them, waits for them and runs them in the same
/// tick. PostgreSQL only (SQLite has no second writer).
fn a_helper_that_dies_mid_chunk_leaves_its_rows_to_the_leader(db: &TestDb) {
    let pool = db.open();
    let mut c = pool.conn().unwrap();
    let all = world(&mut c, 60);
    let DbConn::Postgres(helper) = &mut *c else {
        return;
    };
    // The helper's chunk: the first 10 due rows, locked in its transaction.
    helper
        .batch_execute(
            "BEGIN; SELECT id FROM subscriptions ORDER BY next_due_at, id LIMIT 10 FOR UPDATE",
        )
        .unwrap();
    let leader = {
        let pool = pool.clone();
        std::thread::spawn(move || {
            let mut c = pool.conn().unwrap();
            tick_as(&mut c, at(T), &mut Slow, 25, Role::Leader).unwrap()
        })
    };
    // The leader runs the 50 free rows, then waits on the 10.
    let mut other = pool.conn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while stored_runs(&mut other) < 50 {
        assert!(std::time::Instant::now() < deadline, "the leader is stuck");
        std::thread::sleep(Duration::from_millis(20));
    }
    // It waits on the helper's row locks, as PostgreSQL shows.
    while lock_waits(&mut other) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the leader never waits"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!leader.is_finished(), "the leader waits for the held rows");
    assert_eq!(stored_runs(&mut other), 50);
    // The helper dies.
    helper.batch_execute("ROLLBACK").unwrap();
    let runs = leader.join().unwrap();
    assert_eq!(subs(&runs).into_iter().collect::<BTreeSet<_>>(), all);
    assert_eq!(runs.len(), 60);
    assert_eq!(stored_runs(&mut other), 60);
    assert_eq!(due(&mut other, at(T)), 0);
}

backend_tests!(
    two_processes_share_one_tick_and_record_each_run_once,
    a_helper_that_dies_mid_chunk_leaves_its_rows_to_the_leader,
);
