//! The tick's guarantees beyond the year test: downtime catch-up, pause and
//! resume, two periods in one tick interval, creation mid-period, a
//! timezone change between ticks (and hostile changes), and every zone's
//! offset a whole number of quarter hours. Who claims a run (racing
//! runners, the lease, chunks) and `simulate` are `schedule_claims.rs`.

use crate::common;

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::subscription_runs;
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::manage;
use digestd::parties::{self, NewUser, UserChanges};
use digestd::schedule::tick::{tick, Discard};
use digestd::schedule::DueRun;
use digestd::subscriptions::{self, SubscribeRequest};

pub(crate) fn user(c: &mut DbConn, name: &str, tz: &str, now: DateTime<Utc>) {
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

pub(crate) fn sub(
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
pub(crate) fn ticks(c: &mut DbConn, from: &str, to: &str) -> Vec<DueRun> {
    let (mut t, end) = (at(from), at(to));
    let mut runs = vec![];
    while t < end {
        runs.extend(tick(c, t, &mut Discard).unwrap());
        t += Duration::hours(1);
    }
    runs
}

pub(crate) fn stored_runs(c: &mut DbConn) -> i64 {
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

/// Moves `name` to zone `tz`.
fn set_zone(c: &mut DbConn, name: &str, tz: &str) {
    let change = UserChanges {
        timezone: Some(tz.into()),
        ..Default::default()
    };
    manage::update_user(c, name, &change).unwrap();
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
    set_zone(&mut c, "west", "America/New_York");
    set_zone(&mut c, "east", "Asia/Tokyo");
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
    set_zone(&mut c2, "mover", "America/New_York");
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

backend_tests!(
    downtime_collapses_missed_periods_into_one,
    pause_gets_nothing_and_resume_has_no_burst,
    created_mid_period_gets_no_earlier_period,
    two_periods_in_one_tick_interval_each_get_a_run,
    timezone_change_between_ticks_neither_loses_nor_doubles,
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
