//! The exhaustive year test of the scheduler: every zone chrono-tz knows,
//! ticked every hour of 2026, against periods computed independently.
//!
//! Setup, in one database, with every subscription created at
//! 2026-01-01T00:00:00Z:
//! - one user per zone in `chrono_tz::TZ_VARIANTS` (week starting Monday,
//!   Sunday or Saturday in turn) with daily modification digests at the
//!   zone's 2026 gap and overlap hours plus 08:00 (00:00, 08:00 and 23:00
//!   for a zone without a transition), a weekly digest on a day varying by
//!   zone at the gap hour (else 02:00), and a weekly digest on the weekday
//!   and hour of each of the zone's transitions, so that weekly digests
//!   really land in gaps and overlaps;
//! - hourly digests in a sample of odd zones (half-hour and 45-minute
//!   offsets, a 30-minute DST shift, DST at midnight).
//!
//! Then `digestd::schedule::tick` runs in-process on every hour UTC from
//! 2026-01-01T00:00Z to 2026-12-31T23:00Z, and each subscription's runs are
//! compared with its expected periods. The expectations are the
//! independent model of `year_model.rs`, which uses nothing from
//! `digestd::schedule`: only chrono-tz in the UTC → local direction.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Instant;

use chrono::{DateTime, Datelike, Duration, Utc};
use chrono_tz::TZ_VARIANTS;
use common::TestDb;
use digestd::db::DbConn;
use digestd::manage;
use digestd::parties::{self, NewUser};
use digestd::subscriptions::SubscribeRequest;

use crate::year_model::{
    analyse, expected, first_tick, last_tick, show, Expected, Freq, ShiftKind, Spec, Zone,
    DAY_NAMES,
};

/// Users' first days of week, in turn across zones: Monday, Sunday, Saturday.
const WEEK_STARTS: [u32; 3] = [0, 6, 5];

const HOURLY_ZONES: [&str; 11] = [
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "America/St_Johns",
    "Pacific/Chatham",
    "America/Santiago",
    "America/Havana",
    "Asia/Beirut",
    "Asia/Kolkata",
    "Australia/Adelaide",
];

/// Mismatch lines printed before failing.
const SHOW: usize = 30;

/// One run as the tick returned it.
#[derive(Debug)]
struct Obs {
    key: String,
    scheduled: DateTime<Utc>,
    tick: DateTime<Utc>,
    window_start: DateTime<Utc>,
    window_end: DateTime<Utc>,
}

/// Every mismatch of one subscription, appended to `bad` as
/// (category, line).
fn check(
    spec: &Spec,
    zones: &[Zone],
    exp: &Expected,
    runs: &[Obs],
    bad: &mut Vec<(&'static str, String)>,
) {
    let tz = zones[spec.zone].tz;
    let label = spec.label(zones);
    let mut push = |cat: &'static str, s: String| bad.push((cat, format!("{label}: {s}")));
    if runs.len() != exp.len() {
        push(
            "count",
            format!("{} runs, expected {}", runs.len(), exp.len()),
        );
    }
    let mut keys = HashSet::new();
    let mut seen = BTreeSet::new();
    for r in runs {
        if !keys.insert(r.key.as_str()) {
            push(
                "duplicate key",
                format!(
                    "period {} run twice (again at {})",
                    r.key,
                    show(tz, r.scheduled)
                ),
            );
        }
        if !seen.insert(r.scheduled) {
            push(
                "duplicate instant",
                format!("two runs scheduled at {}", show(tz, r.scheduled)),
            );
        }
        match exp.get(&r.scheduled) {
            None => push(
                "unexpected run",
                format!(
                    "period {} scheduled at {}, which is no expected period",
                    r.key,
                    show(tz, r.scheduled)
                ),
            ),
            Some(Some(k)) if *k != r.key => push(
                "wrong key",
                format!(
                    "run at {} has key {}, expected {k}",
                    show(tz, r.scheduled),
                    r.key
                ),
            ),
            Some(_) => {}
        }
        if r.tick < r.scheduled || r.tick >= r.scheduled + Duration::hours(1) {
            push(
                "tick out of range",
                format!(
                    "period {} scheduled at {} ran at tick {}",
                    r.key,
                    show(tz, r.scheduled),
                    r.tick.format("%Y-%m-%dT%H:%MZ")
                ),
            );
        }
    }
    for (u, key) in exp {
        if !seen.contains(u) {
            push(
                "missing period",
                format!(
                    "no run for period {} due at {}",
                    key.as_deref().unwrap_or("(hourly)"),
                    show(tz, *u)
                ),
            );
        }
    }
    for (cat, s) in window_mismatches(runs) {
        push(cat, s);
    }
}

/// Each run whose window does not start where the one before ended (the
/// first at the first tick) or does not end at its own tick.
fn window_mismatches(runs: &[Obs]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut chained = first_tick();
    for r in runs {
        if r.window_start != chained {
            out.push((
                "window chain",
                format!(
                    "period {} window starts {}, previous window ended {}",
                    r.key, r.window_start, chained
                ),
            ));
        }
        if r.window_end != r.tick {
            out.push((
                "window end",
                format!(
                    "period {} window ends {}, not at its tick {}",
                    r.key, r.window_end, r.tick
                ),
            ));
        }
        chained = r.window_end;
    }
    out
}

fn user_name(i: usize) -> String {
    format!("u{:04}", i + 1)
}

/// What each user subscribes to: per zone, daily digests at its shift
/// hours and 08:00 (00:00 and 23:00 too without shifts), weekly ones on a
/// day varying by zone at its gap hour and at each shift's weekday and
/// hour, and an hourly one in [`HOURLY_ZONES`].
fn specs(zones: &[Zone]) -> Vec<Spec> {
    let mut specs: Vec<Spec> = Vec::new();
    for (i, z) in zones.iter().enumerate() {
        let week_start = WEEK_STARTS[i % WEEK_STARTS.len()];
        let mut hours: BTreeSet<u32> = z.shift_hours(None).map(|(_, h)| h).collect();
        if hours.is_empty() {
            hours.extend([0, 23]);
        }
        hours.insert(8);
        for hour in hours {
            specs.push(Spec {
                zone: i,
                freq: Freq::Daily { hour },
            });
        }
        let gap_hour = z.shift_hours(Some(ShiftKind::Gap)).map(|(_, h)| h).next();
        let mut weekly: BTreeSet<(u32, u32)> = BTreeSet::new();
        weekly.insert(((i % 7) as u32, gap_hour.unwrap_or(2)));
        for (d, h) in z.shift_hours(None) {
            weekly.insert((d.weekday().num_days_from_monday(), h));
        }
        for (day, hour) in weekly {
            specs.push(Spec {
                zone: i,
                freq: Freq::Weekly {
                    day,
                    hour,
                    week_start,
                },
            });
        }
        if HOURLY_ZONES.contains(&z.tz.name()) {
            specs.push(Spec {
                zone: i,
                freq: Freq::Hourly,
            });
        }
    }
    for name in HOURLY_ZONES {
        assert!(
            zones.iter().any(|z| z.tz.name() == name),
            "{name} is not in TZ_VARIANTS"
        );
    }
    specs
}

/// One user per zone and `specs` subscribed, in one transaction at the
/// first tick; the index in `specs` of each subscription id.
fn setup(conn: &mut DbConn, zones: &[Zone], specs: &[Spec]) -> HashMap<i64, usize> {
    let now = first_tick();
    conn.write_tx(|c| {
        for (i, z) in zones.iter().enumerate() {
            let name = user_name(i);
            parties::create_user(
                c,
                now,
                &NewUser {
                    name: name.clone(),
                    timezone: z.tz.name().into(),
                    email: Some(format!("{name}@example.com")),
                    week_start: Some(DAY_NAMES[WEEK_STARTS[i % WEEK_STARTS.len()] as usize].into()),
                    ..Default::default()
                },
            )?;
        }
        let mut ids = HashMap::new();
        for (k, s) in specs.iter().enumerate() {
            let (frequency, hour, day) = match s.freq {
                Freq::Hourly => ("hourly", None, None),
                Freq::Daily { hour } => ("daily", Some(i64::from(hour)), None),
                Freq::Weekly { day, hour, .. } => (
                    "weekly",
                    Some(i64::from(hour)),
                    Some(DAY_NAMES[day as usize].to_string()),
                ),
            };
            let id = manage::subscribe(
                c,
                now,
                &SubscribeRequest {
                    party: user_name(s.zone),
                    frequency: frequency.into(),
                    kind: "modification".into(),
                    collection: None,
                    channels: vec![],
                    hour,
                    day,
                    ..Default::default()
                },
            )?;
            ids.insert(id.id().0, k);
        }
        Ok(ids)
    })
    .expect("setup")
}

/// Ticks every hour of 2026: each spec's runs (by the index `ids` gives
/// its subscription), and how many there were in all.
fn tick_the_year(
    conn: &mut DbConn,
    ids: &HashMap<i64, usize>,
    n_specs: usize,
) -> (Vec<Vec<Obs>>, usize) {
    let mut runs: Vec<Vec<Obs>> = (0..n_specs).map(|_| Vec::new()).collect();
    let mut t = first_tick();
    let mut total = 0usize;
    while t <= last_tick() {
        let due = digestd::schedule::tick(conn, t, &mut digestd::schedule::tick::Discard)
            .unwrap_or_else(|e| panic!("tick at {t}: {e}"));
        total += due.len();
        for r in due {
            let k = *ids
                .get(&r.subscription.0)
                .unwrap_or_else(|| panic!("run of unknown subscription {}", r.subscription));
            runs[k].push(Obs {
                key: r.period.key,
                scheduled: r.period.scheduled,
                tick: r.tick,
                window_start: r.window_start,
                window_end: r.window_end,
            });
        }
        t += Duration::hours(1);
    }
    (runs, total)
}

/// Fails with the count of `bad` by category and its first lines.
fn fail_on(bad: &[(&'static str, String)]) {
    if bad.is_empty() {
        return;
    }
    let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, _) in bad {
        *by_cat.entry(c).or_default() += 1;
    }
    let mut msg = format!("{} mismatches {by_cat:?}; the first {SHOW}:\n", bad.len());
    for (_, line) in bad.iter().take(SHOW) {
        let _ = writeln!(msg, "  {line}");
    }
    eprintln!("{msg}");
    panic!("{msg}");
}

fn year(db: &TestDb) {
    let t0 = Instant::now();
    let zones: Vec<Zone> = TZ_VARIANTS.iter().map(|tz| analyse(*tz)).collect();
    let t_scan = t0.elapsed();
    let specs = specs(&zones);
    let mut conn = db.conn();
    let ids = setup(&mut conn, &zones, &specs);
    let t_setup = t0.elapsed();
    let (runs, total) = tick_the_year(&mut conn, &ids, specs.len());
    let t_ticks = t0.elapsed();

    // Compare, subscription by subscription.
    let mut bad: Vec<(&'static str, String)> = Vec::new();
    let mut late_days = Vec::new();
    let mut expected_total = 0usize;
    for (spec, got) in specs.iter().zip(&runs) {
        let exp: Expected = expected(spec, &zones, &mut late_days);
        expected_total += exp.len();
        check(spec, &zones, &exp, got, &mut bad);
    }
    let t_check = t0.elapsed();

    let shift_count: usize = zones.iter().map(|z| z.shifts.len()).sum();
    eprintln!(
        "year: {} zones ({} with 2026 transitions, {} transitions), {} subscriptions, \
         {total} runs, {expected_total} expected; scan {:.1?}, setup {:.1?}, ticks {:.1?}, check {:.1?}",
        zones.len(),
        zones.iter().filter(|z| !z.shifts.is_empty()).count(),
        shift_count,
        specs.len(),
        t_scan,
        t_setup - t_scan,
        t_ticks - t_setup,
        t_check - t_ticks,
    );
    if !late_days.is_empty() {
        eprintln!(
            "periods due on a later local date than their own ({}): {:?}",
            late_days.len(),
            late_days
        );
    }
    fail_on(&bad);
}

backend_tests!(year);
