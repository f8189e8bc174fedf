//! Recurring events: an item's RFC 5545 `RRULE` expanded with the `rrule`
//! crate from the item's start, in the item's own timezone, so that "every
//! Monday at 09:00 New York time" stays at 09:00 local across a DST change.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use rrule::{RRule, RRuleSet, Unvalidated};

/// Longest rule text accepted.
const MAX_RULE: usize = 500;

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

fn build(start: DateTime<Utc>, tz: Tz, rule: &str) -> Result<RRuleSet, String> {
    let body = rule_body(rule)?;
    let parsed: RRule<Unvalidated> = body.parse().map_err(|e| format!("{e}"))?;
    if parsed.get_interval() == 0 {
        return Err("INTERVAL must be at least 1".into());
    }
    let dt_start = start.with_timezone(&rrule::Tz::from(tz));
    parsed.build(dt_start).map_err(|e| format!("{e}"))
}

/// Checks `rule` against the item it belongs to (its start and zone) and
/// returns it without a leading `RRULE:`.
pub fn validate(rule: &str, start: DateTime<Utc>, tz: Tz) -> Result<String, String> {
    build(start, tz, rule)?;
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
    let z = rrule::Tz::from(tz);
    let set = build(start, tz, rule)?
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
    use chrono::TimeZone;

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
