//! The tick's guarantees beyond the year test: downtime catch-up, pause and
//! resume, creation mid-period, a timezone change between ticks, racing
//! runners (threads without the lease, processes with it), the lease, the
//! daemon's start-up catch-up and graceful shutdown, and hostile input.
//! (Just over 500 lines: each guarantee is one test, sharing one world.)

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use chrono::{DateTime, Duration, Utc};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::subscription_runs;
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::manage;
use digestd::parties::{self, NewUser, UserChanges};
use digestd::schedule::tick::{tick, Discard};
use digestd::schedule::{lease, DueRun};
use digestd::subscriptions::{self, SubscribeRequest};

fn user(c: &mut DbConn, name: &str, tz: &str, now: DateTime<Utc>) {
    parties::create_user(
        c,
        now,
        &NewUser {
            name: name.into(),
            timezone: tz.into(),
            email: Some(format!("{name}@example.com")),
            ..Default::default()
        },
    )
    .unwrap();
}

fn sub(
    c: &mut DbConn,
    party: &str,
    freq: &str,
    hour: Option<i64>,
    now: DateTime<Utc>,
) -> SubscriptionId {
    manage::subscribe(
        c,
        now,
        &SubscribeRequest {
            party: party.into(),
            frequency: freq.into(),
            kind: "modification".into(),
            hour,
            ..Default::default()
        },
    )
    .unwrap()
    .id()
}

/// Ticks every hour on the hour in [from, to), collecting the runs.
fn ticks(c: &mut DbConn, from: &str, to: &str) -> Vec<DueRun> {
    let (mut t, end) = (at(from), at(to));
    let mut runs = vec![];
    while t < end {
        runs.extend(tick(c, t, &mut Discard).unwrap());
        t += Duration::hours(1);
    }
    runs
}

fn stored_runs(c: &mut DbConn) -> i64 {
    subscription_runs::table.count().get_result(c).unwrap()
}

fn downtime_collapses_missed_periods_into_one(db: &TestDb) {
    let mut c = db.conn();
    let created = at("2026-11-02T00:00:00Z");
    user(&mut c, "berta", "Europe/Berlin", created);
    sub(&mut c, "berta", "daily", Some(8), created);
    // 08:00 in Berlin (UTC+1) is 07:00Z.
    let first = ticks(&mut c, "2026-11-02T00:00:00Z", "2026-11-02T08:00:00Z");
    assert_eq!(first.len(), 1);
    assert_eq!(
        (first[0].period.key.as_str(), first[0].tick),
        ("2026-11-02", at("2026-11-02T07:00:00Z"))
    );
    assert_eq!(
        (first[0].window_start, first[0].window_end),
        (created, at("2026-11-02T07:00:00Z"))
    );
    // Down until Thursday noon: the 3rd, 4th and 5th came due; one digest covers them.
    let back = tick(&mut c, at("2026-11-05T12:00:00Z"), &mut Discard).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].period.key, "2026-11-05");
    assert_eq!(
        (back[0].window_start, back[0].window_end),
        (at("2026-11-02T07:00:00Z"), at("2026-11-05T12:00:00Z"))
    );
    // Then on schedule again, the window chained from the catch-up.
    let next = ticks(&mut c, "2026-11-05T13:00:00Z", "2026-11-06T08:00:00Z");
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].period.key, "2026-11-06");
    assert_eq!(next[0].window_start, at("2026-11-05T12:00:00Z"));
    // Ticking the same instants again finds nothing.
    assert!(ticks(&mut c, "2026-11-02T00:00:00Z", "2026-11-06T08:00:00Z").is_empty());
    assert_eq!(stored_runs(&mut c), 3);
}

fn pause_gets_nothing_and_resume_has_no_burst(db: &TestDb) {
    let mut c = db.conn();
    let created = at("2026-11-02T00:00:00Z");
    user(&mut c, "hana", "Asia/Kathmandu", created);
    let id = sub(&mut c, "hana", "hourly", None, created);
    // Kathmandu is UTC+5:45: local hours start at :15 UTC; hourly ticks see each at the next :00.
    let before = ticks(&mut c, "2026-11-02T00:00:00Z", "2026-11-02T06:00:00Z");
    assert_eq!(before.len(), 5, "{before:?}");
    subscriptions::pause(&mut c, at("2026-11-02T06:00:00Z"), id).unwrap();
    assert!(ticks(&mut c, "2026-11-02T06:00:00Z", "2026-11-04T06:00:00Z").is_empty());
    let resumed = at("2026-11-04T06:20:00Z");
    manage::resume(&mut c, id, resumed).unwrap();
    let after = ticks(&mut c, "2026-11-04T06:00:00Z", "2026-11-04T10:00:00Z");
    // 07:15Z and 08:15Z are local hour starts after the resume (seen at 08:00 and
    // 09:00); 06:15Z was before it.
    let keys: Vec<&str> = after.iter().map(|r| r.period.key.as_str()).collect();
    assert_eq!(keys, ["2026-11-04T13:00+05:45", "2026-11-04T14:00+05:45"]);
    assert_eq!(
        after[0].window_start, resumed,
        "nothing from the paused time"
    );
    assert_eq!(after[1].window_start, after[0].window_end);
    // Resuming an active subscription changes nothing; unknown ids are refused.
    manage::resume(&mut c, id, at("2026-11-04T08:30:00Z")).unwrap();
    assert!(ticks(&mut c, "2026-11-04T10:00:00Z", "2026-11-04T11:00:00Z").len() == 1);
    assert!(
        subscriptions::pause(&mut c, at("2026-11-04T08:30:00Z"), SubscriptionId(999_999))
            .unwrap_err()
            .is_bad_input()
    );
}

fn two_periods_in_one_tick_interval_each_get_a_run(db: &TestDb) {
    // Pacific/Chatham springs from 02:45 to 03:45 (+12:45 → +13:45) on
    // 2026-09-27: local 02:00 starts at 13:15Z and 03:45 at 14:00Z, so the
    // 14:00Z tick sees two hourly periods. Both are sent, windows chained.
    let mut c = db.conn();
    let t0 = at("2026-09-26T12:00:00Z");
    user(&mut c, "kiri", "Pacific/Chatham", t0);
    sub(&mut c, "kiri", "hourly", None, t0);
    let runs = ticks(&mut c, "2026-09-26T13:00:00Z", "2026-09-26T15:00:00Z");
    let keys: Vec<&str> = runs.iter().map(|r| r.period.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "2026-09-27T01:00+12:45",
            "2026-09-27T02:00+12:45",
            "2026-09-27T03:45+13:45"
        ]
    );
    assert_eq!(runs[1].tick, at("2026-09-26T14:00:00Z"));
    assert_eq!(runs[2].tick, at("2026-09-26T14:00:00Z"));
    for w in runs.windows(2) {
        assert_eq!(w[1].window_start, w[0].window_end);
    }
}

fn created_mid_period_gets_no_earlier_period(db: &TestDb) {
    let mut c = db.conn();
    let t0 = at("2026-11-02T00:00:00Z");
    user(&mut c, "late", "UTC", t0);
    user(&mut c, "early", "UTC", t0);
    // Created at 10:00 for a daily 08:00 digest: today's was scheduled before it existed.
    sub(&mut c, "late", "daily", Some(8), at("2026-11-02T10:00:00Z"));
    // Created at 07:00: today's 08:00 digest is its first, covering 07:00-08:00.
    sub(
        &mut c,
        "early",
        "daily",
        Some(8),
        at("2026-11-02T07:00:00Z"),
    );
    let runs = ticks(&mut c, "2026-11-02T07:00:00Z", "2026-11-03T09:00:00Z");
    let got: BTreeSet<(String, String)> = runs
        .iter()
        .map(|r| (r.party_name.clone(), r.period.key.clone()))
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("early", "2026-11-02"),
        ("early", "2026-11-03"),
        ("late", "2026-11-03"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    let early = runs.iter().find(|r| r.party_name == "early").unwrap();
    assert_eq!(early.window_start, at("2026-11-02T07:00:00Z"));
    let late = runs.iter().find(|r| r.party_name == "late").unwrap();
    assert_eq!(late.window_start, at("2026-11-02T10:00:00Z"));
}

/// Daily keys must be consecutive local dates: no day lost, none twice.
fn assert_consecutive_days(runs: &[DueRun], first: &str, last: &str) {
    let keys: Vec<&str> = runs.iter().map(|r| r.period.key.as_str()).collect();
    let mut want = vec![];
    let mut d = chrono::NaiveDate::parse_from_str(first, "%Y-%m-%d").unwrap();
    let end = chrono::NaiveDate::parse_from_str(last, "%Y-%m-%d").unwrap();
    while d <= end {
        want.push(d.format("%Y-%m-%d").to_string());
        d = d.succ_opt().unwrap();
    }
    assert_eq!(keys, want);
}

fn timezone_change_between_ticks_neither_loses_nor_doubles(db: &TestDb) {
    let mut c = db.conn();
    let t0 = at("2026-11-19T00:00:00Z");
    user(&mut c, "west", "Asia/Tokyo", t0);
    user(&mut c, "east", "America/New_York", t0);
    sub(&mut c, "west", "daily", Some(8), t0);
    sub(&mut c, "east", "daily", Some(8), t0);
    let mut runs = ticks(&mut c, "2026-11-19T00:00:00Z", "2026-11-21T15:00:00Z");
    // Tokyo's 21st went out at 23:00Z on the 20th; New York's 21st at 13:00Z on the 21st.
    // Now they swap zones: Tokyo → New York would see "the 21st" again at 13:00Z on the
    // 22nd... no: New York's 21st has passed; its 22nd is next. New York → Tokyo sees
    // Tokyo's 22nd at 23:00Z on the 21st, the very next day.
    manage::update_user(
        &mut c,
        "west",
        &UserChanges {
            timezone: Some("America/New_York".into()),
            ..Default::default()
        },
    )
    .unwrap();
    manage::update_user(
        &mut c,
        "east",
        &UserChanges {
            timezone: Some("Asia/Tokyo".into()),
            ..Default::default()
        },
    )
    .unwrap();
    runs.extend(ticks(
        &mut c,
        "2026-11-21T15:00:00Z",
        "2026-11-25T00:00:00Z",
    ));
    let of = |name: &str| -> Vec<DueRun> {
        runs.iter()
            .filter(|r| r.party_name == name)
            .cloned()
            .collect()
    };
    let west = of("west");
    let east = of("east");
    // Tokyo's 19th (23:00Z on the 18th) came before the subscription existed.
    assert_consecutive_days(&west, "2026-11-20", "2026-11-24");
    // Now in Tokyo, the 25th goes out at 23:00Z on the 24th.
    assert_consecutive_days(&east, "2026-11-19", "2026-11-25");
    for (rs, tz_after) in [(&west, "America/New_York"), (&east, "Asia/Tokyo")] {
        assert_eq!(rs.last().unwrap().tz.name(), tz_after);
        for r in rs {
            assert_eq!(
                r.period.scheduled_local(r.tz).format("%H:%M").to_string(),
                "08:00",
                "{r:?}"
            );
        }
        for w in rs.windows(2) {
            assert_eq!(
                w[1].window_start, w[0].window_end,
                "windows chain across the change"
            );
        }
    }
    // Moving Tokyo → New York just after Tokyo's 22nd went out: New York's 22nd is skipped.
    let mut c2 = db.conn();
    user(&mut c2, "mover", "Asia/Tokyo", at("2026-11-24T00:00:00Z"));
    sub(
        &mut c2,
        "mover",
        "daily",
        Some(8),
        at("2026-11-24T00:00:00Z"),
    );
    let mut m = ticks(&mut c2, "2026-11-24T00:00:00Z", "2026-11-25T00:00:00Z");
    manage::update_user(
        &mut c2,
        "mover",
        &UserChanges {
            timezone: Some("America/New_York".into()),
            ..Default::default()
        },
    )
    .unwrap();
    m.extend(ticks(
        &mut c2,
        "2026-11-25T00:00:00Z",
        "2026-11-27T00:00:00Z",
    ));
    let keys: Vec<&str> = m
        .iter()
        .filter(|r| r.party_name == "mover")
        .map(|r| r.period.key.as_str())
        .collect();
    assert_eq!(keys, ["2026-11-25", "2026-11-26"]);
    // Hostile changes write nothing.
    for bad in [
        UserChanges {
            timezone: Some("Mars/Base".into()),
            ..Default::default()
        },
        UserChanges {
            daily_hour: Some(24),
            ..Default::default()
        },
    ] {
        assert!(manage::update_user(&mut c2, "mover", &bad)
            .unwrap_err()
            .is_bad_input());
    }
    assert!(
        manage::update_user(&mut c2, "ghost", &UserChanges::default())
            .unwrap_err()
            .is_bad_input()
    );
}

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
    downtime_collapses_missed_periods_into_one,
    pause_gets_nothing_and_resume_has_no_burst,
    created_mid_period_gets_no_earlier_period,
    two_periods_in_one_tick_interval_each_get_a_run,
    timezone_change_between_ticks_neither_loses_nor_doubles,
    racing_threads_without_the_lease_never_double,
    racing_processes_share_one_tick,
    the_lease_is_exclusive_while_held,
);

/// The default tick (every quarter hour) is on time in every zone only if
/// every UTC offset in use is a whole number of quarter hours: checked for
/// every zone the scheduler accepts, every six hours over two years (both
/// sides of each DST change).
#[test]
fn every_zone_offset_is_a_whole_number_of_quarter_hours() {
    use chrono::{Offset, TimeZone};
    let start = at("2026-01-01T00:00:00Z");
    let mut odd = vec![];
    for tz in chrono_tz::TZ_VARIANTS {
        for step in 0..(2 * 366 * 4) {
            let t = start + Duration::hours(6 * step);
            let offset = tz
                .offset_from_utc_datetime(&t.naive_utc())
                .fix()
                .local_minus_utc();
            if offset % (15 * 60) != 0 {
                odd.push((tz.name(), t, offset));
                break;
            }
        }
    }
    assert!(odd.is_empty(), "{odd:?}");
}
