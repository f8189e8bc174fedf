use super::*;
use chrono::TimeZone;
use chrono_tz::{America::New_York, Europe::Berlin};

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

fn ev<'a>(uid: &'a str, summary: &'a str, start: Time) -> Event<'a> {
    Event {
        uid,
        summary,
        start,
        end: None,
        rrule: None,
        url: None,
        alarm: None,
    }
}

fn cal(events: &[Event]) -> String {
    let stamp = at(2026, 10, 20, 8, 0);
    calendar(events, None, stamp, (stamp, stamp + Duration::days(14)))
}

/// Every physical line within 75 octets, CRLF-terminated, no bare CR or
/// LF; the logical lines (unfolded) returned.
fn lines(ics: &str) -> Vec<String> {
    assert!(ics.ends_with("\r\n"), "{ics:?}");
    let mut out: Vec<String> = Vec::new();
    for l in ics[..ics.len() - 2].split("\r\n") {
        assert!(l.len() <= LINE_OCTETS, "{} octets: {l:?}", l.len());
        assert!(!l.contains(['\r', '\n']), "{l:?}");
        match l.strip_prefix(' ') {
            Some(rest) => out.last_mut().expect("a first line").push_str(rest),
            None => out.push(l.to_string()),
        }
    }
    out
}

fn value<'a>(lines: &'a [String], name: &str) -> Vec<&'a str> {
    lines.iter().filter_map(|l| l.strip_prefix(name)).collect()
}

#[test]
fn long_lines_fold_at_75_octets_between_characters() {
    for title in [
        "x".repeat(500),
        "ü".repeat(300),
        "€".repeat(200),
        "😀".repeat(100),
        format!("a{}", "😀é€".repeat(60)),
    ] {
        let ics = cal(&[ev("u@h", &title, Time::Utc(at(2026, 10, 21, 9, 0)))]);
        let ls = lines(&ics);
        assert_eq!(value(&ls, "SUMMARY:"), [title.as_str()]);
        // A folded line is cut only when the next character would not fit.
        for pair in ics.split("\r\n").collect::<Vec<_>>().windows(2) {
            if let Some(next) = pair[1].strip_prefix(' ') {
                let c = next.chars().next().unwrap();
                assert!(pair[0].len() + c.len_utf8() > LINE_OCTETS, "{pair:?}");
            }
        }
    }
    let mut s = String::new();
    fold(&"a".repeat(75), &mut s);
    assert_eq!(s, format!("{}\r\n", "a".repeat(75)));
    s.clear();
    fold(&"a".repeat(76), &mut s);
    assert_eq!(s, format!("{}\r\n a\r\n", "a".repeat(75)));
}

#[test]
fn text_is_escaped_and_no_title_starts_a_property() {
    assert_eq!(escape_text(r"a\b;c,d"), r"a\\b\;c\,d");
    assert_eq!(escape_text("a\r\nb\rc\nd"), r"a\nb\nc\nd");
    assert_eq!(escape_text("a\u{0}b\u{1b}c\u{7f}d\u{85}e\tf"), "abcde\tf");
    for hostile in [
        "Standup\r\nATTENDEE:mailto:evil@example.com",
        "x\nEND:VEVENT\nBEGIN:VEVENT\nUID:evil",
        "x\rDTSTART:19700101T000000Z",
        "x\r\n ORGANIZER:evil",
        "; , \\ :",
    ] {
        let url = format!("https://e.example/{hostile}");
        let mut e = ev("u@h", hostile, Time::Utc(at(2026, 10, 21, 9, 0)));
        e.url = Some(&url);
        e.rrule = Some("FREQ=DAILY\r\nATTENDEE:x");
        let ls = lines(&cal(&[e]));
        for bad in ["ATTENDEE", "ORGANIZER", "UID:evil", "DTSTART:1970"] {
            assert!(!ls.iter().any(|l| l.starts_with(bad)), "{bad}: {ls:#?}");
        }
        assert_eq!(value(&ls, "BEGIN:VEVENT").len(), 1);
        assert_eq!(value(&ls, "END:VEVENT").len(), 1);
        let summary = value(&ls, "SUMMARY:")[0];
        assert_eq!(
            unescape(summary),
            hostile.replace("\r\n", "\n").replace('\r', "\n")
        );
    }
}

/// TEXT read back as a client reads it.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n' | 'N') => out.push('\n'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The offset a VTIMEZONE of `ls` gives the local time `local` (the
/// observance with the latest onset at or before it), as RFC 5545 reads
/// observances without rules.
fn offset_at(ls: &[String], local: &str) -> String {
    let mut best: Option<(String, String)> = None;
    let mut onset = String::new();
    for l in ls {
        if let Some(d) = l.strip_prefix("DTSTART:") {
            onset = d.to_string();
        }
        if let Some(to) = l.strip_prefix("TZOFFSETTO:") {
            if onset.as_str() <= local && best.as_ref().is_none_or(|(o, _)| *o <= onset) {
                best = Some((onset.clone(), to.to_string()));
            }
        }
    }
    best.expect("an observance in force").1
}

#[test]
fn new_york_and_berlin_carry_their_dst_changes() {
    // Both sides of the autumn changes: Berlin on 25 Oct, New York on 1 Nov.
    let starts = [
        (
            New_York,
            at(2026, 10, 30, 13, 0),
            "20261030T090000",
            "-0400",
        ),
        (New_York, at(2026, 11, 2, 14, 0), "20261102T090000", "-0500"),
        (Berlin, at(2026, 10, 23, 7, 0), "20261023T090000", "+0200"),
        (Berlin, at(2026, 10, 26, 8, 0), "20261026T090000", "+0100"),
    ];
    let uids = ["a@h", "b@h", "c@h", "d@h"];
    let events: Vec<Event> = starts
        .iter()
        .zip(uids)
        .map(|((tz, t, _, _), uid)| ev(uid, "Meeting", Time::Zoned(*t, *tz)))
        .collect();
    let ics = cal(&events);
    let ls = lines(&ics);
    assert_eq!(value(&ls, "TZID:"), ["America/New_York", "Europe/Berlin"]);
    for (tz, _, local, offset) in starts {
        let dtstart = format!("DTSTART;TZID={}:{local}", tz.name());
        assert!(ls.contains(&dtstart), "{dtstart}\n{ics}");
        // The zone's own block.
        let from = ls
            .iter()
            .position(|l| *l == format!("TZID:{}", tz.name()))
            .unwrap();
        let to = from
            + ls[from..]
                .iter()
                .position(|l| l == "END:VTIMEZONE")
                .unwrap();
        assert_eq!(offset_at(&ls[from..to], local), offset, "{local} in {tz}");
    }
    // The transitions themselves, at their real instants.
    let ny_fall = "BEGIN:STANDARD DTSTART:20261101T020000 TZOFFSETFROM:-0400 \
                   TZOFFSETTO:-0500 TZNAME:EST END:STANDARD";
    let berlin_fall = "BEGIN:STANDARD DTSTART:20261025T030000 TZOFFSETFROM:+0200 \
                       TZOFFSETTO:+0100 TZNAME:CET END:STANDARD";
    let joined = ls.join(" ");
    assert!(joined.contains(ny_fall), "{ics}");
    assert!(joined.contains(berlin_fall), "{ics}");
    // No UTC event, no UTC zone.
    let utc = cal(&[ev("u@h", "x", Time::Zoned(at(2026, 10, 21, 9, 0), Tz::UTC))]);
    assert!(!utc.contains("VTIMEZONE"), "{utc}");
    assert!(utc.contains("\r\nDTSTART:20261021T090000Z\r\n"), "{utc}");
}

#[test]
fn a_recurring_event_keeps_its_rule_and_series_start() {
    let series = at(2025, 1, 6, 14, 0); // Mon 6 Jan 2025, 09:00 New York
    let mut e = ev("r@h", "Standup", Time::Zoned(series, New_York));
    e.rrule = Some("RRULE:FREQ=WEEKLY;BYDAY=MO");
    e.alarm = Some(Duration::minutes(-15));
    let ics = cal(&[e]);
    let ls = lines(&ics);
    assert_eq!(
        value(&ls, "DTSTART;TZID=America/New_York:"),
        ["20250106T090000"]
    );
    assert_eq!(value(&ls, "RRULE:"), ["FREQ=WEEKLY;BYDAY=MO"]);
    assert_eq!(value(&ls, "TRIGGER:"), ["-PT15M"]);
    // The zone read right at the series' start, over the window and two
    // years past it.
    let from = ls.iter().position(|l| l == "BEGIN:VTIMEZONE").unwrap();
    let to = ls.iter().position(|l| l == "END:VTIMEZONE").unwrap();
    let zone = &ls[from..to];
    assert_eq!(offset_at(zone, "20250106T090000"), "-0500");
    assert_eq!(offset_at(zone, "20261026T090000"), "-0400");
    assert_eq!(offset_at(zone, "20261109T090000"), "-0500");
    assert_eq!(offset_at(zone, "20280710T090000"), "-0400");
    // Not an observance for every year between.
    assert!(value(zone, "BEGIN:").len() < 12, "{ics}");
}

#[test]
fn an_all_day_item_is_a_date() {
    let mut e = ev(
        "d@h",
        "Holiday",
        Time::Date(NaiveDate::from_ymd_opt(2026, 11, 24).unwrap()),
    );
    e.end = Some(End::At(Time::Date(
        NaiveDate::from_ymd_opt(2026, 11, 26).unwrap(),
    )));
    let ics = cal(&[e]);
    assert!(ics.contains("\r\nDTSTART;VALUE=DATE:20261124\r\n"), "{ics}");
    assert!(ics.contains("\r\nDTEND;VALUE=DATE:20261126\r\n"), "{ics}");
    assert!(!ics.contains("VTIMEZONE"), "{ics}");
}

#[test]
fn the_second_of_two_alike_local_times_is_written_in_utc() {
    // 1 Nov 2026, 01:30 in New York happens twice: EDT (05:30Z), EST (06:30Z).
    for (utc_hour, written) in [
        (5, "\r\nDTSTART;TZID=America/New_York:20261101T013000\r\n"),
        (6, "\r\nDTSTART:20261101T063000Z\r\n"),
    ] {
        let t = Time::Zoned(at(2026, 11, 1, utc_hour, 30), New_York);
        let ics = cal(&[ev("a@h", "x", t)]);
        assert!(ics.contains(written), "{ics}");
    }
}

#[test]
fn durations_and_offsets() {
    assert_eq!(duration(Duration::minutes(-15)), "-PT15M");
    assert_eq!(duration(Duration::seconds(93_784)), "P1DT2H3M4S");
    assert_eq!(duration(Duration::days(2)), "P2D");
    assert_eq!(duration(Duration::zero()), "PT0S");
    assert_eq!(zone::utc_offset(-18_000), "-0500");
    assert_eq!(zone::utc_offset(3_208), "+005328");
    assert_eq!(zone::utc_offset(0), "+0000");
    let mut e = ev("x@h", "x", Time::Utc(at(2026, 10, 21, 9, 0)));
    e.end = Some(End::For(Duration::minutes(90)));
    assert!(cal(&[e]).contains("\r\nDURATION:PT1H30M\r\n"));
}

#[test]
fn calendars_merge_into_one_with_each_event_and_zone_once() {
    let a = cal(&[
        ev("a@h", "A", Time::Zoned(at(2026, 10, 30, 13, 0), New_York)),
        ev("b@h", "B", Time::Zoned(at(2026, 10, 23, 7, 0), Berlin)),
    ]);
    let b = cal(&[
        ev("b@h", "B", Time::Zoned(at(2026, 10, 23, 7, 0), Berlin)),
        ev("c@h", "C", Time::Zoned(at(2026, 11, 2, 14, 0), New_York)),
    ]);
    assert_eq!(merge(&[&a]), a);
    let m = merge(&[&a, &b]);
    let ls = lines(&m);
    assert_eq!(value(&ls, "UID:"), ["a@h", "b@h", "c@h"]);
    assert_eq!(value(&ls, "TZID:"), ["America/New_York", "Europe/Berlin"]);
    assert_eq!(value(&ls, "METHOD:"), ["PUBLISH"]);
    assert!(
        m.starts_with(HEAD) && m.ends_with("END:VCALENDAR\r\n"),
        "{m}"
    );
    let from = ls
        .iter()
        .position(|l| l == "TZID:America/New_York")
        .unwrap();
    let zone = &ls[from..from
        + ls[from..]
            .iter()
            .position(|l| l == "END:VTIMEZONE")
            .unwrap()];
    assert_eq!(offset_at(zone, "20261102T090000"), "-0500");
    assert_eq!(offset_at(zone, "20261030T090000"), "-0400");
}
