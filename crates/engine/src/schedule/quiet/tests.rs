//! Quiet windows across DST changes: New York, Berlin, and zones whose
//! offsets are off the hour (Adelaide, Lord Howe, Kolkata).

use super::*;
use crate::subscriptions::Frequency;
use crate::validate::quiet_hours;

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn q(s: &str) -> QuietHours {
    quiet_hours(s).unwrap().unwrap()
}

fn until(window: &str, tz: &str, at: &str) -> Option<String> {
    let tz: Tz = tz.parse().unwrap();
    quiet_until(&q(window), tz, utc(at)).map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

#[test]
fn a_night_window_ends_at_its_local_end() {
    let ny = "America/New_York";
    // 23:00 EST: quiet until 07:00 EST.
    assert_eq!(
        until("22:00-07:00", ny, "2026-11-20T04:00:00Z").as_deref(),
        Some("2026-11-20T12:00:00Z")
    );
    // 02:00 EST, after midnight: the same end.
    assert_eq!(
        until("22:00-07:00", ny, "2026-11-20T07:00:00Z").as_deref(),
        Some("2026-11-20T12:00:00Z")
    );
    // The start is inside, the end outside.
    assert_eq!(
        until("22:00-07:00", ny, "2026-11-20T03:00:00Z").as_deref(),
        Some("2026-11-20T12:00:00Z")
    );
    assert_eq!(until("22:00-07:00", ny, "2026-11-20T12:00:00Z"), None);
    assert_eq!(until("22:00-07:00", ny, "2026-11-20T02:59:59Z"), None);
    // A daytime window.
    assert_eq!(
        until("12:00-13:30", ny, "2026-11-20T17:10:00Z").as_deref(),
        Some("2026-11-20T18:30:00Z")
    );
    assert_eq!(until("12:00-13:30", ny, "2026-11-20T16:59:00Z"), None);
}

#[test]
fn new_york_across_its_changes() {
    let ny = "America/New_York";
    // Spring forward, 8 March 2026, 02:00 EST → 03:00 EDT. A night of
    // 22:00-07:00 is an hour shorter: 07:00 EDT is 11:00 UTC.
    assert_eq!(
        until("22:00-07:00", ny, "2026-03-08T04:00:00Z").as_deref(),
        Some("2026-03-08T11:00:00Z")
    );
    // An end in the gap (02:30 never happens) ends at the gap's end, 03:00 EDT.
    assert_eq!(
        until("22:00-02:30", ny, "2026-03-08T05:00:00Z").as_deref(),
        Some("2026-03-08T07:00:00Z")
    );
    assert_eq!(until("22:00-02:30", ny, "2026-03-08T07:00:00Z"), None);
    // Fall back, 1 November 2026, 02:00 EDT → 01:00 EST. An end at 01:30
    // happens twice: the window ends at the first, 05:30 UTC.
    assert_eq!(
        until("22:00-01:30", ny, "2026-11-01T04:30:00Z").as_deref(),
        Some("2026-11-01T05:30:00Z")
    );
    // 01:15 EST, the second time round: the window has ended.
    assert_eq!(until("22:00-01:30", ny, "2026-11-01T06:15:00Z"), None);
    // The night across it is an hour longer: 07:00 EST is 12:00 UTC.
    assert_eq!(
        until("22:00-07:00", ny, "2026-11-01T03:00:00Z").as_deref(),
        Some("2026-11-01T12:00:00Z")
    );
}

#[test]
fn berlin_across_its_changes() {
    let b = "Europe/Berlin";
    // 29 March 2026, 02:00 CET → 03:00 CEST: 23:00 CET to 07:00 CEST.
    assert_eq!(
        until("22:00-07:00", b, "2026-03-28T22:00:00Z").as_deref(),
        Some("2026-03-29T05:00:00Z")
    );
    // A start in the gap: 03:00 CEST is inside 02:30-06:00; 01:45 CET is not.
    assert_eq!(
        until("02:30-06:00", b, "2026-03-29T01:00:00Z").as_deref(),
        Some("2026-03-29T04:00:00Z")
    );
    assert_eq!(until("02:30-06:00", b, "2026-03-29T00:45:00Z"), None);
    // 25 October 2026, 03:00 CEST → 02:00 CET: 07:00 CET is 06:00 UTC.
    assert_eq!(
        until("22:00-07:00", b, "2026-10-24T21:00:00Z").as_deref(),
        Some("2026-10-25T06:00:00Z")
    );
    // An end at 02:30, which happens twice: its first occurrence (CEST).
    assert_eq!(
        until("23:00-02:30", b, "2026-10-24T23:30:00Z").as_deref(),
        Some("2026-10-25T00:30:00Z")
    );
    assert_eq!(until("23:00-02:30", b, "2026-10-25T01:10:00Z"), None);
}

#[test]
fn zones_off_the_hour() {
    // Adelaide, +09:30 → +10:30 on 4 October 2026 at 02:00.
    assert_eq!(
        until("22:00-07:00", "Australia/Adelaide", "2026-10-03T13:00:00Z").as_deref(),
        Some("2026-10-03T20:30:00Z")
    );
    // Lord Howe moves by 30 minutes: 02:00 → 02:30 (+10:30 → +11:00); an
    // end at 02:15 is in the gap and ends at 02:30.
    assert_eq!(
        until("23:00-02:15", "Australia/Lord_Howe", "2026-10-03T13:00:00Z").as_deref(),
        Some("2026-10-03T15:30:00Z")
    );
    // Kolkata, +05:30 all year.
    assert_eq!(
        until("22:00-07:00", "Asia/Kolkata", "2026-11-20T17:00:00Z").as_deref(),
        Some("2026-11-21T01:30:00Z")
    );
    assert_eq!(
        until("22:00-07:00", "Asia/Kolkata", "2026-11-21T01:30:00Z"),
        None
    );
}

#[test]
fn hourly_periods_inside_move_to_the_first_after() {
    let rule = Rule {
        tz: "Europe/Berlin".parse().unwrap(),
        frequency: Frequency::Hourly,
        hour: 0,
        day: 0,
        week_start: 0,
    };
    let night = q("22:00-07:00");
    // 23:00 CEST → 07:00 CET, the night the clocks go back.
    assert_eq!(
        moved_past(Some(&night), &rule, utc("2026-10-24T21:00:00Z")),
        Some(utc("2026-10-25T06:00:00Z"))
    );
    assert_eq!(
        moved_past(Some(&night), &rule, utc("2026-10-25T06:00:00Z")),
        None
    );
    assert_eq!(moved_past(None, &rule, utc("2026-10-24T21:00:00Z")), None);
    // A window ending at half past: the first hour after it.
    let half = q("22:00-06:30");
    assert_eq!(
        moved_past(Some(&half), &rule, utc("2026-11-20T22:00:00Z")),
        Some(utc("2026-11-21T06:00:00Z"))
    );
}

#[test]
fn the_end_reads_in_both_zones() {
    let paris: Tz = "Europe/Paris".parse().unwrap();
    assert_eq!(
        until_text(paris, utc("2026-11-21T06:00:00Z")),
        "07:00 Europe/Paris (06:00 UTC)"
    );
    assert_eq!(
        until_text(Tz::UTC, utc("2026-11-21T06:00:00Z")),
        "06:00 UTC"
    );
    assert_eq!(
        seconds_until(utc("2026-11-21T05:00:00Z"), utc("2026-11-21T06:00:00Z")),
        3600
    );
    let now = utc("2026-11-21T05:00:00.250Z");
    assert_eq!(seconds_until(now, utc("2026-11-21T06:00:00Z")), 3600);
}
