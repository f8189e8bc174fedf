//! Each due run is claimed once, on each back end: racing threads without
//! the lease never double, racing processes share one tick through it, the
//! lease is exclusive while held, a tick in many chunks claims each run
//! once; and `simulate`, which claims nothing, prints exactly the runs the
//! real ticks then record. The helpers are `schedule.rs`'s.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use chrono::{DateTime, Duration, Utc};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::subscription_runs;
use digestd::db::DbConn;
use digestd::schedule::tick::{tick, Discard};
use digestd::schedule::{lease, DueRun};

use crate::schedule::{stored_runs, sub, ticks, user};

fn many_due(c: &mut DbConn, n: usize, now: DateTime<Utc>) {
    for i in 0..n {
        let name = format!("r{i:04}");
        user(c, &name, "UTC", now);
        sub(c, &name, "daily", Some(8), now);
    }
}

fn racing_threads_without_the_lease_never_double(db: &TestDb) {
    let pool = db.open();
    many_due(&mut pool.conn().unwrap(), 120, at("2026-11-02T00:00:00Z"));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                tick(
                    &mut pool.conn().unwrap(),
                    at("2026-11-02T08:00:00Z"),
                    &mut Discard,
                )
            })
        })
        .collect();
    let mut seen = BTreeMap::new();
    for h in handles {
        // A loser on PostgreSQL may fail on the unique key; that is the guard working.
        if let Ok(runs) = h.join().unwrap() {
            for r in runs {
                *seen.entry((r.subscription, r.period.key)).or_insert(0) += 1;
            }
        }
    }
    assert!(seen.values().all(|n| *n == 1), "a run was handed on twice");
    let mut c = pool.conn().unwrap();
    // Whatever a failed loser left due, the next tick picks up.
    tick(&mut c, at("2026-11-02T09:00:00Z"), &mut Discard).unwrap();
    assert_eq!(stored_runs(&mut c), 120);
    let distinct: i64 = subscription_runs::table
        .select(diesel::dsl::count(subscription_runs::subscription_id).aggregate_distinct())
        .get_result(&mut c)
        .unwrap();
    assert_eq!(distinct, 120);
}

fn racing_processes_share_one_tick(db: &TestDb) {
    let mut c = db.conn();
    many_due(&mut c, 150, at("2026-11-02T00:00:00Z"));
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_digestd"))
                .args(["--db", &db.url, "tick", "--at", "2026-11-02T08:00:00Z"])
                .env_remove("DIGESTD_DATABASE_URL")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut lines = vec![];
    for ch in children {
        let out = ch.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => lines.extend(
                String::from_utf8(out.stdout)
                    .unwrap()
                    .lines()
                    .map(str::to_string),
            ),
            Some(2) => assert!(stderr.contains("lease"), "{stderr}"),
            other => panic!("tick exited {other:?}: {stderr}"),
        }
    }
    let subs: BTreeSet<i64> = lines
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["subscription"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines.len(), 150, "every due run printed once");
    assert_eq!(subs.len(), 150);
    assert_eq!(stored_runs(&mut c), 150);
}

fn the_lease_is_exclusive_while_held(db: &TestDb) {
    let mut c = db.conn();
    let t = at("2026-11-02T08:00:00Z");
    let ttl = Duration::minutes(10);
    assert!(lease::acquire(&mut c, "tick", "a", t, ttl).unwrap());
    assert!(!lease::acquire(&mut c, "tick", "b", t + Duration::minutes(9), ttl).unwrap());
    assert!(
        lease::acquire(&mut c, "tick", "a", t + Duration::minutes(9), ttl).unwrap(),
        "the holder renews"
    );
    lease::release(&mut c, "tick", "b", t).unwrap(); // not b's to release
                                                     // No expiry lets another in while the holder lives (it is freed when
                                                     // the holder dies: tests/it/lease.rs).
    assert!(!lease::acquire(&mut c, "tick", "b", t + Duration::minutes(20), ttl).unwrap());
    lease::release(&mut c, "tick", "a", t + Duration::minutes(21)).unwrap();
    assert!(lease::acquire(&mut c, "tick", "a", t + Duration::minutes(21), ttl).unwrap());
    // The other job's lease is separate.
    assert!(lease::acquire(&mut c, "queue", "b", t, ttl).unwrap());
}

/// What a subscription's scheduler state looks like, to compare before and
/// after a simulation.
fn scheduler_state(c: &mut DbConn) -> Vec<(i64, Option<chrono::NaiveDateTime>, Option<String>)> {
    use digestd::db::schema::subscriptions as s;
    s::table
        .select((s::id, s::next_due_at, s::last_period))
        .order(s::id)
        .load(c)
        .unwrap()
}

fn key(r: &DueRun) -> (i64, String, DateTime<Utc>, DateTime<Utc>, DateTime<Utc>) {
    (
        r.subscription.0,
        r.period.key.clone(),
        r.tick,
        r.window_start,
        r.window_end,
    )
}

/// `simulate` prints exactly the runs the real ticks then record, and
/// writes nothing, even on a connection that has already ticked (so its
/// statements are prepared against the real tables).
fn simulate_matches_the_real_ticks_and_writes_nothing(db: &TestDb) {
    let mut c = db.conn();
    let created = at("2026-03-20T00:00:00Z");
    for (name, tz) in [
        ("lh", "Australia/Lord_Howe"),
        ("ch", "Pacific/Chatham"),
        ("ny", "America/New_York"),
        ("sa", "America/Santiago"),
    ] {
        user(&mut c, name, tz, created);
        sub(&mut c, name, "daily", Some(2), created);
        sub(&mut c, name, "hourly", None, created);
    }
    let first = ticks(&mut c, "2026-03-20T00:00:00Z", "2026-03-21T00:00:00Z");
    assert!(!first.is_empty());
    let (runs_before, state_before) = (stored_runs(&mut c), scheduler_state(&mut c));
    let (from, to) = (at("2026-03-21T00:00:00Z"), at("2026-04-10T00:00:00Z"));
    let mut simulated = vec![];
    let hourly = |from, to| {
        digestd::schedule::Ticks::Every(Duration::hours(1))
            .instants(from, to)
            .unwrap()
    };
    let n = digestd::schedule::simulate(
        &mut c,
        &hourly(from, to),
        "sim",
        Duration::minutes(5),
        &mut |r| {
            simulated.push(key(r));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(n, simulated.len());
    assert_eq!(stored_runs(&mut c), runs_before, "simulate recorded runs");
    assert_eq!(
        scheduler_state(&mut c),
        state_before,
        "simulate moved a subscription"
    );
    // Santiago leaves DST on 2026-04-05 and Lord_Howe too: the range
    // holds 25-hour days; the real ticks must agree run for run.
    let real: Vec<_> = ticks(&mut c, "2026-03-21T00:00:00Z", "2026-04-10T00:00:00Z")
        .iter()
        .map(key)
        .collect();
    assert_eq!(simulated, real);
    let runs_after = stored_runs(&mut c);
    assert_eq!(runs_after, runs_before + real.len() as i64);
    // Again on the same connection, whose statements were prepared while
    // the copies of the first simulation were there and then gone.
    let state_after = scheduler_state(&mut c);
    let again = digestd::schedule::simulate(
        &mut c,
        &hourly(to, to + Duration::days(2)),
        "sim",
        Duration::minutes(5),
        &mut |_| Ok(()),
    )
    .unwrap();
    assert!(again > 0);
    assert_eq!(
        stored_runs(&mut c),
        runs_after,
        "second simulate recorded runs"
    );
    assert_eq!(scheduler_state(&mut c), state_after);
}

/// A tick goes through as many transactions as it needs: with chunks of
/// 7, 60 due subscriptions (two zones, daily and hourly) take nine, and
/// each gets exactly one run, none is left due, and the next tick at the
/// same instant finds nothing.
fn a_tick_in_many_chunks_claims_each_once(db: &TestDb) {
    let mut c = db.conn();
    let created = at("2026-11-02T00:00:00Z");
    let mut ids = BTreeSet::new();
    for i in 0..30 {
        let name = format!("c{i}");
        let tz = if i % 2 == 0 { "Asia/Kathmandu" } else { "UTC" };
        user(&mut c, &name, tz, created);
        ids.insert(sub(&mut c, &name, "hourly", None, created).0);
        ids.insert(sub(&mut c, &name, "daily", Some(0), created).0);
    }
    let t = at("2026-11-03T00:00:00Z");
    let runs = digestd::schedule::tick::tick_in_chunks(&mut c, t, &mut Discard, 7).unwrap();
    let got: BTreeMap<i64, usize> = runs.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.subscription.0).or_default() += 1;
        m
    });
    assert_eq!(got.keys().copied().collect::<BTreeSet<_>>(), ids);
    assert!(got.values().all(|&n| n == 1), "{got:?}");
    assert_eq!(stored_runs(&mut c), 60);
    assert!(tick(&mut c, t, &mut Discard).unwrap().is_empty());
}

backend_tests!(
    a_tick_in_many_chunks_claims_each_once,
    simulate_matches_the_real_ticks_and_writes_nothing,
    racing_threads_without_the_lease_never_double,
    racing_processes_share_one_tick,
    the_lease_is_exclusive_while_held,
);
