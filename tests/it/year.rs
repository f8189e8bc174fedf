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
//! compared with its expected periods. The expectations use nothing from
//! `digestd::schedule`: only chrono-tz in the UTC → local direction
//! (`offset_from_utc_datetime`), searched on a one-minute UTC grid, which
//! is exact because every offset and transition in force around 2026 is a
//! whole number of minutes (checked while scanning the zones).
//!
//! Longer than 500 lines on purpose: one world, one year of ticks and one
//! independent model of every zone's periods, checked against each other;
//! its parts only mean something together.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Instant;

use chrono::{
    DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::{Tz, TZ_VARIANTS};
use common::{at, TestDb};
use digestd::manage;
use digestd::parties::{self, NewUser};
use digestd::subscriptions::SubscribeRequest;

const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

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

fn first_tick() -> DateTime<Utc> {
    at("2026-01-01T00:00:00Z")
}

fn last_tick() -> DateTime<Utc> {
    at("2026-12-31T23:00:00Z")
}

fn minute() -> Duration {
    Duration::minutes(1)
}

/// The UTC offset of `tz` at `u`, in seconds (UTC → local only).
fn offset(tz: Tz, u: DateTime<Utc>) -> i64 {
    i64::from(
        tz.offset_from_utc_datetime(&u.naive_utc())
            .fix()
            .local_minus_utc(),
    )
}

/// The wall clock of `tz` at `u`.
fn local(tz: Tz, u: DateTime<Utc>) -> NaiveDateTime {
    u.naive_utc() + Duration::seconds(offset(tz, u))
}

fn floor_hour(n: NaiveDateTime) -> NaiveDateTime {
    n.date().and_hms_opt(n.hour(), 0, 0).expect("valid hour")
}

fn at_hour(d: NaiveDate, hour: u32) -> NaiveDateTime {
    d.and_hms_opt(hour, 0, 0).expect("hour < 24")
}

/// `u` as the zone's wall clock shows it, for messages.
fn show(tz: Tz, u: DateTime<Utc>) -> String {
    format!(
        "{} (local {})",
        u.format("%Y-%m-%dT%H:%MZ"),
        u.with_timezone(&tz).format("%Y-%m-%d %H:%M %:z")
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShiftKind {
    Gap,
    Overlap,
}

/// One offset change of a zone in 2026.
#[derive(Debug)]
struct Shift {
    kind: ShiftKind,
    /// Local hours (date, hour) whose clock hour meets the skipped or
    /// repeated interval.
    hours: Vec<(NaiveDate, u32)>,
}

/// What the test knows about a zone, found by scanning UTC → local.
#[derive(Debug)]
struct Zone {
    tz: Tz,
    shifts: Vec<Shift>,
    /// The largest offset in force from 2025-12-01 to 2027-02-01, which
    /// bounds every search below.
    max_offset: i64,
}

/// Scans 2025-12-01 .. 2027-02-01 in 15-minute UTC steps; each offset
/// change is pinned to its minute, and the ones in 2026 become shifts.
fn analyse(tz: Tz) -> Zone {
    let step = Duration::minutes(15);
    let (from, to) = (at("2025-12-01T00:00:00Z"), at("2027-02-01T00:00:00Z"));
    let (year_from, year_to) = (first_tick(), at("2027-01-01T00:00:00Z"));
    let mut prev_t = from;
    let mut prev_o = offset(tz, from);
    let mut max_offset = prev_o;
    let mut shifts = Vec::new();
    let mut t = from + step;
    while t <= to {
        let o = offset(tz, t);
        max_offset = max_offset.max(o);
        if o != prev_o {
            let mut m = prev_t + minute();
            while offset(tz, m) == prev_o {
                m += minute();
            }
            // The one-minute grid below is exact only if transitions fall
            // on whole minutes and do not come twice in 15 minutes.
            assert_eq!(
                offset(tz, m - Duration::seconds(1)),
                prev_o,
                "{tz}: transition at {m} is not on a whole minute"
            );
            assert_eq!(offset(tz, m), o, "{tz}: two transitions near {m}");
            assert!(
                prev_o % 60 == 0 && o % 60 == 0,
                "{tz}: offset not whole minutes"
            );
            if m >= year_from && m < year_to {
                let (before, after) = (
                    m.naive_utc() + Duration::seconds(prev_o),
                    m.naive_utc() + Duration::seconds(o),
                );
                let (kind, lo, hi) = if o > prev_o {
                    (ShiftKind::Gap, before, after)
                } else {
                    (ShiftKind::Overlap, after, before)
                };
                // Every clock hour [H:00, H+1:00) that meets [lo, hi): for
                // whole-hour shifts at :00 exactly the hours whose :00 is
                // skipped or repeated; for Lord Howe's 30-minute shifts also
                // the hour the shift starts in (01:00 when 02:00 falls back
                // to 01:30), whose :00 is not repeated.
                let mut h = floor_hour(lo);
                let mut hours = Vec::new();
                while h < hi {
                    hours.push((h.date(), h.hour()));
                    h += Duration::hours(1);
                }
                shifts.push(Shift { kind, hours });
            }
        }
        prev_t = t;
        prev_o = o;
        t += step;
    }
    Zone {
        tz,
        shifts,
        max_offset,
    }
}

impl Zone {
    fn shift_hours(&self, kind: Option<ShiftKind>) -> impl Iterator<Item = (NaiveDate, u32)> + '_ {
        self.shifts
            .iter()
            .filter(move |s| kind.is_none_or(|k| s.kind == k))
            .flat_map(|s| s.hours.iter().copied())
    }

    /// The first UTC instant whose wall clock reads `n` or later: the first
    /// occurrence of a repeated time, the end of the gap that swallows a
    /// missing one. Every earlier instant v has local(v) <= v + max_offset
    /// < n, so the walk starts at n - max_offset, one minute at a time.
    fn first_at_or_after(&self, n: NaiveDateTime) -> DateTime<Utc> {
        let mut u = (n - Duration::seconds(self.max_offset)).and_utc();
        u -= Duration::seconds(u.timestamp().rem_euclid(60));
        while local(self.tz, u) < n {
            u += minute();
        }
        u
    }
}

#[derive(Debug, Clone, Copy)]
enum Freq {
    Hourly,
    Daily {
        hour: u32,
    },
    Weekly {
        day: u32,
        hour: u32,
        week_start: u32,
    },
}

#[derive(Debug)]
struct Spec {
    zone: usize,
    freq: Freq,
}

impl Spec {
    fn label(&self, zones: &[Zone]) -> String {
        let tz = zones[self.zone].tz;
        match self.freq {
            Freq::Hourly => format!("{tz} hourly"),
            Freq::Daily { hour } => format!("{tz} daily {hour:02}:00"),
            Freq::Weekly {
                day,
                hour,
                week_start,
            } => format!(
                "{tz} weekly {} {hour:02}:00 (week starts {})",
                DAY_NAMES[day as usize], DAY_NAMES[week_start as usize]
            ),
        }
    }
}

/// One expected period: its key (None for hourly, whose key format the
/// rules leave open) and its instant.
type Expected = BTreeMap<DateTime<Utc>, Option<String>>;

/// The expected periods of `spec` scheduled in [first tick, last tick].
/// `late_days` collects daily and weekly periods whose instant falls on a
/// later local date than their own (a gap that swallows the end of a day).
fn expected(spec: &Spec, zones: &[Zone], late_days: &mut Vec<String>) -> Expected {
    let z = &zones[spec.zone];
    let (lo, hi) = (first_tick(), last_tick());
    let mut out = Expected::new();
    // Daily and weekly: local date D at H:00 is due at the first instant at
    // or after local D H:00. When H:00 is in a gap that runs past midnight
    // (none in 2026, but the rule covers it) that instant shows local date
    // D+1: the period is still D's (key D), due at the gap's end, because a
    // missing local time resolves to the first instant after the gap.
    // Requiring local(u).date() == D instead would find no instant and
    // silently drop D. Such cases are listed on stderr.
    let mut due = |key: String, d: NaiveDate, hour: u32, out: &mut Expected| {
        let u = z.first_at_or_after(at_hour(d, hour));
        if local(z.tz, u).date() != d {
            late_days.push(format!("{} {key} at {}", z.tz, show(z.tz, u)));
        }
        if u >= lo && u <= hi {
            let old = out.insert(u, Some(key));
            assert!(old.is_none(), "{tz}: two periods at {u}", tz = z.tz);
        }
    };
    let (first_day, last_day) = (
        NaiveDate::from_ymd_opt(2025, 12, 20).expect("date"),
        NaiveDate::from_ymd_opt(2027, 1, 2).expect("date"),
    );
    match spec.freq {
        Freq::Daily { hour } => {
            for d in first_day.iter_days().take_while(|d| *d <= last_day) {
                due(d.format("%Y-%m-%d").to_string(), d, hour, &mut out);
            }
        }
        Freq::Weekly {
            day,
            hour,
            week_start,
        } => {
            for w in first_day.iter_days().take_while(|d| *d <= last_day) {
                if w.weekday().num_days_from_monday() != week_start {
                    continue;
                }
                let d = w + Duration::days(i64::from((day + 7 - week_start) % 7));
                due(w.format("week-%Y-%m-%d").to_string(), d, hour, &mut out);
            }
        }
        Freq::Hourly => {
            // A period starts at u when the wall clock reads exactly H:00,
            // or when u ends a gap that skipped an H:00 (the clock jumped
            // from `prev` over H:00 to a time past it).
            let mut prev = local(z.tz, lo - minute());
            let mut u = lo;
            while u <= hi {
                let cur = local(z.tz, u);
                let on_hour = cur.minute() == 0 && cur.second() == 0;
                let gap_end = cur > prev + minute() && floor_hour(cur) > prev;
                if on_hour || gap_end {
                    out.insert(u, None);
                }
                prev = cur;
                u += minute();
            }
        }
    }
    out
}

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
    let mut chained = first_tick();
    for r in runs {
        if r.window_start != chained {
            push(
                "window chain",
                format!(
                    "period {} window starts {}, previous window ended {}",
                    r.key, r.window_start, chained
                ),
            );
        }
        if r.window_end != r.tick {
            push(
                "window end",
                format!(
                    "period {} window ends {}, not at its tick {}",
                    r.key, r.window_end, r.tick
                ),
            );
        }
        chained = r.window_end;
    }
}

fn user_name(i: usize) -> String {
    format!("u{:04}", i + 1)
}

fn year(db: &TestDb) {
    let t0 = Instant::now();
    let zones: Vec<Zone> = TZ_VARIANTS.iter().map(|tz| analyse(*tz)).collect();
    let t_scan = t0.elapsed();

    // What each user subscribes to.
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

    let mut conn = db.conn();
    let now = first_tick();
    let ids: HashMap<i64, usize> = conn
        .write_tx(|c| {
            for (i, z) in zones.iter().enumerate() {
                let name = user_name(i);
                parties::create_user(
                    c,
                    now,
                    &NewUser {
                        name: name.clone(),
                        timezone: z.tz.name().into(),
                        email: Some(format!("{name}@example.com")),
                        week_start: Some(
                            DAY_NAMES[WEEK_STARTS[i % WEEK_STARTS.len()] as usize].into(),
                        ),
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
        .expect("setup");
    let t_setup = t0.elapsed();

    // Tick every hour of 2026.
    let mut runs: Vec<Vec<Obs>> = specs.iter().map(|_| Vec::new()).collect();
    let mut t = first_tick();
    let mut total = 0usize;
    while t <= last_tick() {
        let due = digestd::schedule::tick(&mut conn, t, &mut digestd::schedule::tick::Discard)
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
    let t_ticks = t0.elapsed();

    // Compare, subscription by subscription.
    let mut bad: Vec<(&'static str, String)> = Vec::new();
    let mut late_days = Vec::new();
    let mut expected_total = 0usize;
    for (spec, got) in specs.iter().zip(&runs) {
        let exp = expected(spec, &zones, &mut late_days);
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
    if !bad.is_empty() {
        let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
        for (c, _) in &bad {
            *by_cat.entry(c).or_default() += 1;
        }
        let mut msg = format!("{} mismatches {by_cat:?}; the first {SHOW}:\n", bad.len());
        for (_, line) in bad.iter().take(SHOW) {
            let _ = writeln!(msg, "  {line}");
        }
        eprintln!("{msg}");
        panic!("{msg}");
    }
}

backend_tests!(year);
