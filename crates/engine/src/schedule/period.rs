//! Local periods: the hour, day or week of a subscription in its user's
//! timezone, and the instant each is scheduled at.
//!
//! Rules (see docs/scheduling.md for worked examples):
//! - hourly: every local clock hour that elapses is a period. A local hour
//!   that starts in a gap (spring forward) is scheduled at the first instant
//!   after the gap, which for a one-hour gap is the next hour's start, so a
//!   23-hour day has 23 periods; an hour that happens twice (fall back) is
//!   two periods, so a 25-hour day has 25.
//! - daily: each local date, at the subscription's local hour.
//! - weekly: each local week (starting on the user's first day of week), on
//!   the chosen day at the chosen hour.
//! - For daily and weekly, a local time in a gap resolves to the first
//!   instant after the gap; one that happens twice to its first occurrence.

use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone,
    Timelike, Utc,
};
use chrono_tz::Tz;

use crate::subscriptions::Frequency;

/// When a subscription's digests are due, in its user's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    pub tz: Tz,
    pub frequency: Frequency,
    /// Local hour (daily, weekly).
    pub hour: u8,
    /// Local day, 0 = Monday (weekly).
    pub day: u8,
    /// The user's first day of week, 0 = Monday (weekly).
    pub week_start: u8,
}

/// One period of one subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    /// Unique per subscription: the local date (daily), the local date the
    /// week starts on (weekly, `week-YYYY-MM-DD`), or the local start with
    /// its UTC offset (hourly, so the two 01:00s of a fall-back day differ).
    pub key: String,
    /// The instant the period's digest is due.
    pub scheduled: DateTime<Utc>,
}

impl Period {
    /// The scheduled instant as the user's wall clock shows it.
    pub fn scheduled_local(&self, tz: Tz) -> DateTime<Tz> {
        self.scheduled.with_timezone(&tz)
    }
}

/// The first instant after the gap that swallows local time `n`: the first
/// UTC instant whose local time is at or after `n`. Offsets are within
/// ±26 h and no fall-back lies within a day of a gap, so local time is
/// monotone over the search range.
fn gap_end(tz: Tz, n: NaiveDateTime) -> DateTime<Utc> {
    let mut lo = (n - Duration::hours(26)).and_utc().timestamp();
    let mut hi = (n + Duration::hours(26)).and_utc().timestamp();
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let t = DateTime::from_timestamp(mid, 0).expect("in range");
        if t.with_timezone(&tz).naive_local() >= n {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    DateTime::from_timestamp(lo, 0).expect("in range")
}

/// Local time `n` as one instant: a gap resolves to its end, a repeated
/// time to its first occurrence.
pub(crate) fn resolve_first(tz: Tz, n: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&n) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
        LocalResult::None => gap_end(tz, n),
    }
}

/// Every instant local time `n` names: one, two in an overlap, or the
/// gap's end.
fn resolve_all(tz: Tz, n: NaiveDateTime) -> impl Iterator<Item = DateTime<Utc>> {
    let (a, b) = match tz.from_local_datetime(&n) {
        LocalResult::Single(t) => (t.with_timezone(&Utc), None),
        LocalResult::Ambiguous(x, y) => (x.with_timezone(&Utc), Some(y.with_timezone(&Utc))),
        LocalResult::None => (gap_end(tz, n), None),
    };
    std::iter::once(a).chain(b)
}

fn at_hour(d: NaiveDate, hour: u8) -> NaiveDateTime {
    d.and_time(NaiveTime::from_hms_opt(u32::from(hour), 0, 0).expect("hour < 24"))
}

fn hourly_key(tz: Tz, t: DateTime<Utc>) -> String {
    t.with_timezone(&tz).format("%Y-%m-%dT%H:%M%:z").to_string()
}

/// Hourly period instants around local hour `ln`, sorted and deduplicated.
fn hourly_candidates(tz: Tz, ln: NaiveDateTime) -> Vec<DateTime<Utc>> {
    let mut v: Vec<DateTime<Utc>> = (-3..=3)
        .flat_map(|k| resolve_all(tz, ln + Duration::hours(k)))
        .collect();
    v.sort();
    v.dedup();
    v
}

impl Rule {
    fn weekly_date(&self, week: NaiveDate) -> NaiveDate {
        week + Duration::days(i64::from((7 + self.day - self.week_start) % 7))
    }

    /// The local date the week containing local date `d` starts on.
    fn week_of(&self, d: NaiveDate) -> NaiveDate {
        let back = (7 + d.weekday().num_days_from_monday() as u8 - self.week_start) % 7;
        d - Duration::days(i64::from(back))
    }

    fn daily(&self, d: NaiveDate) -> Period {
        Period {
            key: d.format("%Y-%m-%d").to_string(),
            scheduled: resolve_first(self.tz, at_hour(d, self.hour)),
        }
    }

    fn weekly(&self, week: NaiveDate) -> Period {
        Period {
            key: week.format("week-%Y-%m-%d").to_string(),
            scheduled: resolve_first(self.tz, at_hour(self.weekly_date(week), self.hour)),
        }
    }

    fn hourly(&self, t: DateTime<Utc>) -> Period {
        Period {
            key: hourly_key(self.tz, t),
            scheduled: t,
        }
    }

    fn local_hour_floor(&self, t: DateTime<Utc>) -> NaiveDateTime {
        let l = t.with_timezone(&self.tz).naive_local();
        l.date()
            .and_time(NaiveTime::from_hms_opt(l.hour(), 0, 0).expect("valid"))
    }

    /// The latest period scheduled at or before `t`.
    pub(crate) fn latest_at_or_before(&self, t: DateTime<Utc>) -> Period {
        let d = t.with_timezone(&self.tz).date_naive();
        match self.frequency {
            Frequency::Hourly => {
                let c = hourly_candidates(self.tz, self.local_hour_floor(t));
                let s = c
                    .into_iter()
                    .rev()
                    .find(|s| *s <= t)
                    .expect("an hour starts within 3 h");
                self.hourly(s)
            }
            Frequency::Daily => {
                let p = self.daily(d);
                if p.scheduled <= t {
                    p
                } else {
                    self.daily(d.pred_opt().expect("date in range"))
                }
            }
            Frequency::Weekly => {
                let w = self.week_of(d);
                let p = self.weekly(w);
                if p.scheduled <= t {
                    p
                } else {
                    self.weekly(w - Duration::days(7))
                }
            }
        }
    }

    /// The first period scheduled strictly after `t`.
    pub fn first_after(&self, t: DateTime<Utc>) -> Period {
        let d = t.with_timezone(&self.tz).date_naive();
        match self.frequency {
            Frequency::Hourly => {
                let c = hourly_candidates(self.tz, self.local_hour_floor(t));
                let s = c
                    .into_iter()
                    .find(|s| *s > t)
                    .expect("an hour starts within 3 h");
                self.hourly(s)
            }
            Frequency::Daily => {
                let p = self.daily(d);
                if p.scheduled > t {
                    p
                } else {
                    self.daily(d.succ_opt().expect("date in range"))
                }
            }
            Frequency::Weekly => {
                let w = self.week_of(d);
                let p = self.weekly(w);
                if p.scheduled > t {
                    p
                } else {
                    self.weekly(w + Duration::days(7))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn rule(tz: &str, frequency: Frequency, hour: u8) -> Rule {
        Rule {
            tz: tz.parse().unwrap(),
            frequency,
            hour,
            day: 0,
            week_start: 0,
        }
    }

    /// All periods scheduled in [from, to), by walking first_after.
    fn walk(r: &Rule, from: &str, to: &str) -> Vec<Period> {
        let (mut t, end) = (utc(from) - Duration::seconds(1), utc(to));
        let mut v = vec![];
        loop {
            let p = r.first_after(t);
            if p.scheduled >= end {
                return v;
            }
            t = p.scheduled;
            v.push(p);
        }
    }

    #[test]
    fn new_york_spring_forward_day_has_23_hours_and_fall_back_day_25() {
        let r = rule("America/New_York", Frequency::Hourly, 0);
        // Local 2026-03-08 00:00 EST = 05:00Z; next local midnight EDT = 04:00Z on the 9th.
        assert_eq!(
            walk(&r, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z").len(),
            23
        );
        // Local 2026-11-01 00:00 EDT = 04:00Z; next local midnight EST = 05:00Z on the 2nd.
        let fall = walk(&r, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z");
        assert_eq!(fall.len(), 25);
        assert!(fall.iter().any(|p| p.key == "2026-11-01T01:00-04:00"));
        assert!(fall.iter().any(|p| p.key == "2026-11-01T01:00-05:00"));
    }

    #[test]
    fn daily_in_gap_fires_after_gap_and_in_overlap_fires_once() {
        let r = rule("America/New_York", Frequency::Daily, 2);
        assert_eq!(
            r.first_after(utc("2026-03-08T00:00:00Z")).scheduled,
            utc("2026-03-08T07:00:00Z")
        );
        let r = rule("America/New_York", Frequency::Daily, 1);
        let days = walk(&r, "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z");
        assert_eq!(
            days.iter().map(|p| p.scheduled).collect::<Vec<_>>(),
            [utc("2026-11-01T05:00:00Z"), utc("2026-11-02T06:00:00Z")]
        );
    }

    #[test]
    fn lord_howe_half_hour_gap_and_santiago_midnight_gap() {
        // Lord Howe springs from 02:00 to 02:30 (+10:30 → +11) on 2026-10-04.
        let r = rule("Australia/Lord_Howe", Frequency::Daily, 2);
        let p = r.first_after(utc("2026-10-03T12:00:00Z"));
        assert_eq!(p.scheduled_local(r.tz).format("%H:%M").to_string(), "02:30");
        // Santiago springs from 00:00 to 01:00 on 2026-09-06.
        let r = rule("America/Santiago", Frequency::Daily, 0);
        let p = r.first_after(utc("2026-09-05T12:00:00Z"));
        assert_eq!(p.key, "2026-09-06");
        assert_eq!(p.scheduled_local(r.tz).format("%H:%M").to_string(), "01:00");
    }

    #[test]
    fn weekly_respects_week_start_and_day() {
        // Week starts Sunday; digest on Friday 17:00 Asia/Kolkata (+05:30).
        let r = Rule {
            tz: "Asia/Kolkata".parse().unwrap(),
            frequency: Frequency::Weekly,
            hour: 17,
            day: 4,
            week_start: 6,
        };
        let p = r.first_after(utc("2026-11-22T00:00:00Z"));
        assert_eq!(p.key, "week-2026-11-22");
        assert_eq!(p.scheduled, utc("2026-11-27T11:30:00Z"));
        assert_eq!(r.latest_at_or_before(utc("2026-11-27T11:30:00Z")), p);
        assert_eq!(
            r.latest_at_or_before(utc("2026-11-27T11:29:59Z")).key,
            "week-2026-11-15"
        );
    }
}
