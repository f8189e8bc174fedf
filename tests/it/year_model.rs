//! The year test's independent model of the scheduler (`year.rs`): every
//! zone's 2026 transitions and each subscription's expected periods. It
//! uses nothing from `digestd::schedule`: only chrono-tz in the UTC → local
//! direction (`offset_from_utc_datetime`), searched on a one-minute UTC
//! grid, which is exact because every offset and transition in force around
//! 2026 is a whole number of minutes (checked while scanning the zones).

use std::collections::BTreeMap;

use chrono::{
    DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;

use crate::common::at;

pub(crate) const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

pub(crate) fn first_tick() -> DateTime<Utc> {
    at("2026-01-01T00:00:00Z")
}

pub(crate) fn last_tick() -> DateTime<Utc> {
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
pub(crate) fn show(tz: Tz, u: DateTime<Utc>) -> String {
    format!(
        "{} (local {})",
        u.format("%Y-%m-%dT%H:%MZ"),
        u.with_timezone(&tz).format("%Y-%m-%d %H:%M %:z")
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShiftKind {
    Gap,
    Overlap,
}

/// One offset change of a zone in 2026.
#[derive(Debug)]
pub(crate) struct Shift {
    kind: ShiftKind,
    /// Local hours (date, hour) whose clock hour meets the skipped or
    /// repeated interval.
    hours: Vec<(NaiveDate, u32)>,
}

/// What the test knows about a zone, found by scanning UTC → local.
#[derive(Debug)]
pub(crate) struct Zone {
    pub(crate) tz: Tz,
    pub(crate) shifts: Vec<Shift>,
    /// The largest offset in force from 2025-12-01 to 2027-02-01, which
    /// bounds every search below.
    max_offset: i64,
}

/// Scans 2025-12-01 .. 2027-02-01 in 15-minute UTC steps; each offset
/// change is pinned to its minute, and the ones in 2026 become shifts.
pub(crate) fn analyse(tz: Tz) -> Zone {
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
    pub(crate) fn shift_hours(
        &self,
        kind: Option<ShiftKind>,
    ) -> impl Iterator<Item = (NaiveDate, u32)> + '_ {
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
pub(crate) enum Freq {
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
pub(crate) struct Spec {
    pub(crate) zone: usize,
    pub(crate) freq: Freq,
}

impl Spec {
    pub(crate) fn label(&self, zones: &[Zone]) -> String {
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
pub(crate) type Expected = BTreeMap<DateTime<Utc>, Option<String>>;

/// The expected periods of `spec` scheduled in [first tick, last tick].
/// `late_days` collects daily and weekly periods whose instant falls on a
/// later local date than their own (a gap that swallows the end of a day).
pub(crate) fn expected(spec: &Spec, zones: &[Zone], late_days: &mut Vec<String>) -> Expected {
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
