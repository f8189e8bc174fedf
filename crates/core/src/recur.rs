//! Recurring events: an item's RFC 5545 `RRULE` expanded with the `rrule`
//! crate from the item's start, in the item's own timezone, so that "every
//! Monday at 09:00 New York time" stays at 09:00 local across a DST change.
//!
//! The crate walks a rule period by period from its start, so an event that
//! began long ago would cost a tick one step per period since then (a
//! `FREQ=HOURLY` rule from 1900 is a million steps). Two things bound it:
//! - **skip ahead**: a rule without `COUNT` is expanded from a start moved
//!   forward by a whole number of its periods, in local wall-clock terms,
//!   to just before the window. The series is the same from there on: the
//!   periods keep their phase and every default the rule takes from its
//!   start (time of day, weekday, day of month) is kept.
//! - **bounds at the door** ([`validate`]): no rule finer than hourly; a
//!   `COUNT` series (which cannot be moved, its count starts at the start)
//!   of at most [`MAX_COUNT`] instances over at most [`MAX_COUNT_PERIODS`]
//!   periods; and no rule whose instances lie more than [`MAX_GAP_PERIODS`]
//!   periods apart (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29` is
//!   `FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29`), since the crate steps through
//!   every empty period to reach the next instance (an hourly rule steps
//!   over a day with no instance at once, so it is counted in days there).
//!
//! With both, expanding one item for one window costs at most a few hundred
//! steps plus the instances it returns.

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use rrule::{Frequency, RRule, RRuleSet, Unvalidated};

/// Longest rule text accepted.
const MAX_RULE: usize = 500;
/// Most instances a `COUNT` rule may have.
pub const MAX_COUNT: u32 = 1000;
/// Most periods (`FREQ` × `INTERVAL`) a `COUNT` series may span.
pub const MAX_COUNT_PERIODS: i64 = 2000;
/// Most periods between two instances of a rule (and from its start to
/// its first instance), checked over its first [`GAP_SAMPLE`] instances.
pub const MAX_GAP_PERIODS: i64 = 400;
/// How many instances [`validate`] looks at for the gap check.
const GAP_SAMPLE: u16 = 100;
/// How far before the window a moved start lies, in local time: more than
/// any UTC offset change, so that no instance in the window is lost.
const SLACK: Duration = Duration::days(2);

fn rule_body(rule: &str) -> Result<&str, String> {
    let body = rule.trim();
    let body = body.strip_prefix("RRULE:").unwrap_or(body);
    if body.is_empty() {
        return Err("empty rule".into());
    }
    if body.len() > MAX_RULE {
        return Err(format!("longer than {MAX_RULE} bytes"));
    }
    if body.chars().any(|c| c.is_control()) {
        return Err("one line only (DTSTART comes from the item's start)".into());
    }
    Ok(body)
}

/// The rule parsed, with the bounds that need no expansion: no `INTERVAL=0`,
/// nothing finer than hourly, a `COUNT` of at most [`MAX_COUNT`].
fn parse(rule: &str) -> Result<RRule<Unvalidated>, String> {
    let parsed: RRule<Unvalidated> = rule_body(rule)?.parse().map_err(|e| format!("{e}"))?;
    if parsed.get_interval() == 0 {
        return Err("INTERVAL must be at least 1".into());
    }
    if matches!(parsed.get_freq(), Frequency::Minutely | Frequency::Secondly) {
        return Err(
            "FREQ=MINUTELY and FREQ=SECONDLY are refused: digests are hourly at \
                    the finest (FREQ=HOURLY;BYMINUTE=0,30 repeats within an hour)"
                .into(),
        );
    }
    if parsed.get_count().is_some_and(|c| c > MAX_COUNT) {
        return Err(format!(
            "COUNT is at most {MAX_COUNT}; use UNTIL for a longer series"
        ));
    }
    Ok(parsed)
}

fn build(parsed: RRule<Unvalidated>, start: DateTime<Utc>, tz: Tz) -> Result<RRuleSet, String> {
    let dt_start = start.with_timezone(&rrule::Tz::from(tz));
    parsed.build(dt_start).map_err(|e| format!("{e}"))
}

/// Calendar units of `freq` from `a` to `b` (local wall-clock times),
/// counted by their fields, not rounded to whole units of time: two dates
/// in consecutive months are one month apart.
fn units_between(freq: Frequency, a: NaiveDateTime, b: NaiveDateTime) -> i64 {
    match freq {
        Frequency::Yearly => i64::from(b.year() - a.year()),
        Frequency::Monthly => {
            i64::from(b.year() - a.year()) * 12 + i64::from(b.month()) - i64::from(a.month())
        }
        Frequency::Weekly => (b.date() - a.date()).num_days().div_euclid(7),
        Frequency::Daily => (b.date() - a.date()).num_days(),
        Frequency::Hourly => (b - a).num_hours(),
        Frequency::Minutely => (b - a).num_minutes(),
        Frequency::Secondly => (b - a).num_seconds(),
    }
}

/// `t` moved forward by `n` units of `freq`, keeping the day of the month
/// and the time of day; `None` where that day does not exist.
fn shift(freq: Frequency, t: NaiveDateTime, n: i64) -> Option<NaiveDateTime> {
    let months = match freq {
        Frequency::Yearly => n.checked_mul(12)?,
        Frequency::Monthly => n,
        Frequency::Weekly => return t.checked_add_signed(Duration::try_weeks(n)?),
        Frequency::Daily => return t.checked_add_signed(Duration::try_days(n)?),
        Frequency::Hourly => return t.checked_add_signed(Duration::try_hours(n)?),
        Frequency::Minutely => return t.checked_add_signed(Duration::try_minutes(n)?),
        Frequency::Secondly => return t.checked_add_signed(Duration::try_seconds(n)?),
    };
    let m0 = i64::from(t.year()) * 12 + i64::from(t.month0()) + months;
    let year = i32::try_from(m0.div_euclid(12)).ok()?;
    let month = u32::try_from(m0.rem_euclid(12)).ok()? + 1;
    chrono::NaiveDate::from_ymd_opt(year, month, t.day()).map(|d| d.and_time(t.time()))
}

/// Where to start expanding a rule without `COUNT` so that the window
/// `[from, …)` loses nothing: the latest start, a whole number of the rule's
/// periods after `start`, at least [`SLACK`] before `from` in local time
/// and falling on a local time that exists once. `start` itself when there
/// is none.
fn moved_start(
    freq: Frequency,
    interval: u16,
    start: DateTime<Utc>,
    tz: Tz,
    from: DateTime<Utc>,
) -> DateTime<Utc> {
    let step = i64::from(interval);
    let s = start.with_timezone(&tz).naive_local();
    let target = from.with_timezone(&tz).naive_local() - SLACK;
    let mut k = units_between(freq, s, target).div_euclid(step) * step;
    // A leap day or a 31st is at most 8 years or 2 months away from one
    // that exists; a local time in a gap or an overlap one period.
    for _ in 0..16 {
        if k <= 0 {
            break;
        }
        if let Some(t) = shift(freq, s, k).filter(|t| *t <= target) {
            if let LocalResult::Single(moved) = tz.from_local_datetime(&t) {
                return moved.with_timezone(&Utc);
            }
        }
        k -= step;
    }
    start
}

/// Checks `rule` against the item it belongs to (its start and zone) and
/// returns it without a leading `RRULE:`. Beyond RFC 5545's rules, it
/// refuses what would make expanding the rule expensive (see the module
/// doc): it expands the first instances to check their spacing.
pub fn validate(rule: &str, start: DateTime<Utc>, tz: Tz) -> Result<String, String> {
    let parsed = parse(rule)?;
    let (freq, step) = (parsed.get_freq(), i64::from(parsed.get_interval()));
    let (count, has_until) = (parsed.get_count(), parsed.get_until().is_some());
    let sample = count.map_or(GAP_SAMPLE, |c| u16::try_from(c).unwrap_or(u16::MAX));
    let got = build(parsed, start, tz)?.all(sample);
    let periods = |a: DateTime<rrule::Tz>, b: DateTime<rrule::Tz>| {
        let (a, b) = (a.naive_local(), b.naive_local());
        match freq {
            // The crate steps over a day with no instance in one step.
            Frequency::Hourly if (b - a).num_days() >= 1 => (b - a).num_days() + 24,
            _ => units_between(freq, a, b).div_euclid(step),
        }
    };
    let local_start = start.with_timezone(&rrule::Tz::from(tz));
    let mut prev = local_start;
    for d in &got.dates {
        if periods(prev, *d) > MAX_GAP_PERIODS {
            return Err(format!(
                "instances more than {MAX_GAP_PERIODS} periods apart; use a coarser FREQ"
            ));
        }
        prev = *d;
    }
    // Fewer instances than asked, and not because UNTIL ended the series:
    // the crate gave up looking for the next one.
    let complete = match count {
        Some(c) => got.dates.len() == c as usize,
        None if has_until => !got.limited || got.dates.len() == usize::from(sample),
        None => got.dates.len() == usize::from(sample),
    };
    if !complete {
        return Err(format!(
            "instances more than {MAX_GAP_PERIODS} periods apart; use a coarser FREQ"
        ));
    }
    if count.is_some() && periods(local_start, prev) > MAX_COUNT_PERIODS {
        return Err(format!(
            "a COUNT series may span at most {MAX_COUNT_PERIODS} periods; use UNTIL"
        ));
    }
    Ok(rule_body(rule)?.to_string())
}

/// The instants in `[from, to)` of an event that starts at `start`, repeated
/// by `rule` (when there is one) in `tz`; at most `limit` of them.
pub fn occurrences(
    start: DateTime<Utc>,
    tz: Tz,
    rule: Option<&str>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    limit: usize,
) -> Result<Vec<DateTime<Utc>>, String> {
    if from >= to || limit == 0 {
        return Ok(Vec::new());
    }
    let Some(rule) = rule else {
        return Ok(if start >= from && start < to {
            vec![start]
        } else {
            Vec::new()
        });
    };
    if start >= to {
        return Ok(Vec::new());
    }
    let parsed = parse(rule)?;
    if parsed.get_until().is_some_and(|u| *u < from) {
        return Ok(Vec::new());
    }
    let base = match parsed.get_count() {
        Some(_) => start,
        None => moved_start(parsed.get_freq(), parsed.get_interval(), start, tz, from),
    };
    let z = rrule::Tz::from(tz);
    let set = build(parsed, base, tz)?
        .after(from.with_timezone(&z))
        .before(to.with_timezone(&z));
    let cap = u16::try_from(limit.saturating_add(1)).unwrap_or(u16::MAX);
    let got = set.all(cap);
    Ok(got
        .dates
        .into_iter()
        .map(|d| d.with_timezone(&Utc))
        .filter(|d| *d >= from && *d < to)
        .take(limit)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    #[test]
    fn weekly_keeps_its_local_hour_across_the_autumn_change() {
        // Mondays 09:00 in New York; DST ends on Sunday 2026-11-01.
        let start = utc(2026, 10, 19, 13, 0); // 09:00 EDT
        let got = occurrences(
            start,
            chrono_tz::America::New_York,
            Some("FREQ=WEEKLY;BYDAY=MO"),
            utc(2026, 10, 20, 0, 0),
            utc(2026, 11, 10, 0, 0),
            10,
        )
        .unwrap();
        // 13:00 UTC while EDT, 14:00 UTC once EST: both 09:00 local.
        assert_eq!(
            got,
            vec![
                utc(2026, 10, 26, 13, 0),
                utc(2026, 11, 2, 14, 0),
                utc(2026, 11, 9, 14, 0)
            ]
        );
    }

    #[test]
    fn the_window_is_half_open_and_the_limit_holds() {
        let start = utc(2026, 11, 1, 0, 0);
        let every_hour = |from, to, limit| {
            occurrences(start, Tz::UTC, Some("RRULE:FREQ=HOURLY"), from, to, limit).unwrap()
        };
        let got = every_hour(utc(2026, 11, 2, 0, 0), utc(2026, 11, 2, 3, 0), 100);
        assert_eq!(
            got,
            vec![
                utc(2026, 11, 2, 0, 0),
                utc(2026, 11, 2, 1, 0),
                utc(2026, 11, 2, 2, 0)
            ]
        );
        assert_eq!(
            every_hour(utc(2026, 11, 2, 0, 0), utc(2026, 11, 9, 0, 0), 5).len(),
            5
        );
    }

    #[test]
    fn count_and_until_end_the_series() {
        let start = utc(2026, 11, 2, 8, 0);
        let got = occurrences(
            start,
            Tz::UTC,
            Some("FREQ=DAILY;COUNT=3"),
            utc(2026, 11, 1, 0, 0),
            utc(2026, 12, 1, 0, 0),
            100,
        )
        .unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], utc(2026, 11, 4, 8, 0));
    }

    #[test]
    fn a_single_event_is_its_start_when_in_the_window() {
        let s = utc(2026, 11, 2, 8, 0);
        let w = |a, b| occurrences(s, Tz::UTC, None, a, b, 10).unwrap();
        assert_eq!(w(s, utc(2026, 11, 3, 0, 0)), vec![s]);
        assert!(w(utc(2026, 11, 2, 8, 1), utc(2026, 11, 3, 0, 0)).is_empty());
        assert!(w(utc(2026, 11, 1, 0, 0), s).is_empty());
    }

    /// The series expanded from the item's own start, step by step.
    fn unmoved(
        start: DateTime<Utc>,
        tz: Tz,
        rule: &str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Vec<DateTime<Utc>> {
        let z = rrule::Tz::from(tz);
        build(parse(rule).unwrap(), start, tz)
            .unwrap()
            .after(from.with_timezone(&z))
            .before(to.with_timezone(&z))
            .all(u16::MAX)
            .dates
            .into_iter()
            .map(|d| d.with_timezone(&Utc))
            .filter(|d| *d >= from && *d < to)
            .collect()
    }

    #[test]
    fn a_moved_start_gives_the_same_series() {
        use chrono_tz::{America, Australia, Europe, Pacific};
        let rules = [
            "FREQ=HOURLY;INTERVAL=5",
            "FREQ=HOURLY;BYHOUR=1,2,3;BYMINUTE=30",
            "FREQ=HOURLY;INTERVAL=7;BYMONTH=3,10,11",
            "FREQ=DAILY",
            "FREQ=DAILY;INTERVAL=3;BYHOUR=2;BYMINUTE=30",
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;WKST=SU",
            "FREQ=WEEKLY;INTERVAL=3",
            "FREQ=MONTHLY",
            "FREQ=MONTHLY;BYDAY=-1FR",
            "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR",
            "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=-1",
            "FREQ=YEARLY",
            "FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO",
            "FREQ=YEARLY;INTERVAL=2;BYMONTH=3;BYDAY=-1SU;BYHOUR=1",
            "FREQ=DAILY;UNTIL=20130601T000000Z",
        ];
        let zones = [
            Tz::UTC,
            America::New_York,
            Europe::London,
            Australia::Lord_Howe,
            Pacific::Apia, // skipped 30 December 2011 whole
        ];
        // Starts on a 31st, a leap day and in a spring-forward hour.
        let starts = [
            utc(2008, 1, 31, 7, 30),
            utc(2008, 2, 29, 12, 0),
            utc(2009, 3, 8, 7, 30),
        ];
        let mut compared = 0;
        for rule in rules {
            for tz in zones {
                for start in starts {
                    let mut from = utc(2011, 1, 3, 5, 0);
                    while from < utc(2014, 1, 1, 0, 0) {
                        let to = from + Duration::days(9);
                        let got = occurrences(start, tz, Some(rule), from, to, 10_000).unwrap();
                        let want = unmoved(start, tz, rule, from, to);
                        assert_eq!(got, want, "{rule} in {tz} from {start}, window {from}");
                        compared += want.len();
                        from += Duration::days(61) + Duration::hours(7);
                    }
                }
            }
        }
        assert!(compared > 3_000, "only {compared} instances compared");
    }

    #[test]
    fn an_old_start_is_moved_to_just_before_the_window() {
        let from = utc(2026, 11, 25, 9, 0);
        for (freq, rule_period) in [
            (Frequency::Hourly, Duration::hours(1)),
            (Frequency::Daily, Duration::days(1)),
            (Frequency::Weekly, Duration::weeks(1)),
        ] {
            let moved = moved_start(freq, 1, utc(1900, 1, 1, 0, 0), Tz::UTC, from);
            assert!(moved <= from - SLACK, "{freq:?}: {moved}");
            assert!(moved > from - SLACK - rule_period, "{freq:?}: {moved}");
        }
        // 29 February moves to the last leap year that leaves the slack.
        let moved = moved_start(Frequency::Yearly, 1, utc(1904, 2, 29, 9, 0), Tz::UTC, from);
        assert_eq!(moved, utc(2024, 2, 29, 9, 0));
        // A start inside the slack is not moved.
        let s = from - Duration::hours(5);
        assert_eq!(moved_start(Frequency::Hourly, 1, s, Tz::UTC, from), s);
    }

    #[test]
    fn an_hourly_rule_from_1900_expands_into_this_week() {
        let got = occurrences(
            utc(1900, 1, 1, 0, 15),
            Tz::UTC,
            Some("FREQ=HOURLY;INTERVAL=6"),
            utc(2026, 11, 25, 0, 0),
            utc(2026, 11, 26, 0, 0),
            100,
        )
        .unwrap();
        let hours: Vec<u32> = got.iter().map(|d| d.hour()).collect();
        // 1900-01-01 to 2026-11-25 is a whole number of days: same phase.
        assert_eq!(hours, vec![0, 6, 12, 18]);
        assert!(got.iter().all(|d| d.minute() == 15));
    }

    #[test]
    fn expensive_rules_are_refused() {
        let s = utc(1900, 1, 1, 0, 0);
        for (bad, why) in [
            ("FREQ=SECONDLY", "MINUTELY"),
            ("FREQ=MINUTELY;INTERVAL=15", "MINUTELY"),
            ("FREQ=DAILY;COUNT=1001", "COUNT"),
            ("FREQ=DAILY;COUNT=1000;BYDAY=MO", "span"),
            ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", "apart"),
            ("FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", "apart"),
            ("FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29", "apart"),
            ("FREQ=MONTHLY;BYMONTH=6;BYMONTHDAY=31", "apart"),
        ] {
            let err = validate(bad, s, Tz::UTC).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        for good in [
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
            "FREQ=HOURLY;BYMINUTE=0,15,30,45",
            "FREQ=HOURLY;BYMONTH=3",
            "FREQ=DAILY;COUNT=1000",
            "FREQ=WEEKLY;COUNT=3",
            "FREQ=DAILY;UNTIL=19000105T000000Z",
        ] {
            assert!(validate(good, s, Tz::UTC).is_ok(), "{good} refused");
        }
        // A stored rule finer than hourly is not expanded at all.
        assert!(occurrences(
            s,
            Tz::UTC,
            Some("FREQ=SECONDLY"),
            s,
            s + Duration::hours(1),
            5
        )
        .is_err());
    }

    #[test]
    fn hostile_rules_are_refused() {
        let s = utc(2026, 11, 2, 8, 0);
        for bad in [
            "",
            "RRULE:",
            "FREQ=FORTNIGHTLY",
            "BYDAY=MO",
            "FREQ=DAILY\r\nDTSTART:20260101T000000Z",
            "FREQ=DAILY;COUNT=x",
            "FREQ=DAILY;INTERVAL=0",
            "FREQ=MONTHLY;BYMONTHDAY=40",
            &"FREQ=DAILY;".repeat(100),
        ] {
            assert!(validate(bad, s, Tz::UTC).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            validate("RRULE:FREQ=WEEKLY;BYDAY=MO,WE", s, Tz::UTC).unwrap(),
            "FREQ=WEEKLY;BYDAY=MO,WE"
        );
    }
}
