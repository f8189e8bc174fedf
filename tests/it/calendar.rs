//! A forward digest's email carries its items as a calendar, on each back
//! end: two weeks of daily forward digests for a reader in London, sent
//! through the queue over SMTP (a real server on loopback), each message's
//! `text/calendar` part read back by two independent readers
//! (`tests/fixtures/calendar/read.py`: Python's `email`, then `icalendar`,
//! which reads a TZID as the IANA zone, and `vobject`, which converts with
//! the calendar's own VTIMEZONE). Events lie on both sides of the autumn
//! changes in Berlin (25 October), London (25 October) and New York
//! (1 November); every event's start, as either reader expands it in
//! London, is the time the digest's text gives its line, and the weekly
//! standup keeps its rule. A modification digest's email has no calendar,
//! and a retry sends the calendar rendered at the tick, byte for byte,
//! though the item changed in between.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::digest::{composer, item, put};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::{nt_bodies, nt_messages};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::items::{self, ItemInput};
use digestd::parties::{self, NewUser};
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;
use mail_parser::MimeHeaders;
use serde_json::Value;

/// The first day ticked and the day after the last.
const FROM: &str = "2026-10-20T00:00:00Z";
const TO: &str = "2026-11-03T00:00:00Z";
/// When Friday 23 October's digests are posted (07:00 BST), and max's first
/// delivery cut off; "Berlin review" is renamed right after.
const RENAMED: &str = "2026-10-23T06:00:00Z";
/// Within 80 characters (a digest's line shows it whole), over 75 octets
/// (its SUMMARY line folds between characters), every TEXT special.
const HOSTILE: &str = "Q4; budget, plan \\ review — Zoë's 東京オフィス, Raum 3; Café ☕";

fn user(c: &mut DbConn, name: &str, address: &str) {
    parties::create_user(
        c,
        at("2026-10-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "Europe/London".into(),
            email: Some(address.into()),
            locale: Some("en-GB".into()),
            ..Default::default()
        },
    )
    .unwrap();
}

fn event(uuid: u128, cal: &str, title: &str, start: &str, tz: Option<&str>) -> ItemInput {
    ItemInput {
        tz: tz.map(String::from),
        ..item(uuid, cal, title, start, "lena", "2026-10-01T00:00:00Z")
    }
}

fn subscription(party: &str, kind: &str, cal: &str) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: "daily".into(),
        kind: kind.into(),
        collection: Some(cal.into()),
        hour: Some(7),
        ..Default::default()
    }
}

/// lena (London) follows a calendar's upcoming items and its changes;
/// max too, at an address whose first delivery is cut off.
fn world(c: &mut DbConn) -> String {
    user(c, "lena", "ok.lena@example.com");
    user(c, "max", "cut.max@example.com");
    let cal = items::create_collection(c, at("2026-10-01T00:00:00Z"), "Calendar", None)
        .unwrap()
        .uuid;
    // Mondays 09:00 in New York, a reminder 15 minutes before.
    put(
        c,
        &ItemInput {
            rrule: Some("FREQ=WEEKLY;BYDAY=MO".into()),
            reminder: Some("2026-10-19T12:45:00Z".into()),
            url: Some("https://cal.example.org/e/standup?a=1&b=2".into()),
            ..event(
                1,
                &cal,
                "Standup",
                "2026-10-19T13:00:00Z",
                Some("America/New_York"),
            )
        },
    );
    let berlin = Some("Europe/Berlin");
    let new_york = Some("America/New_York");
    for (n, title, start, tz) in [
        (2, "Berlin review", "2026-10-23T07:00:00Z", berlin), // 09:00 CEST
        (3, "Berlin retro", "2026-10-26T08:00:00Z", berlin),  // 09:00 CET
        (4, "NY lunch", "2026-10-30T16:00:00Z", new_york),    // 12:00 EDT
        (5, "NY lunch again", "2026-11-02T17:00:00Z", new_york), // 12:00 EST
        (6, "UTC call", "2026-10-27T10:00:00Z", None),
        (7, HOSTILE, "2026-10-28T13:00:00Z", berlin),
    ] {
        put(c, &event(n, &cal, title, start, tz));
    }
    for (who, kind) in [
        ("lena", "forward"),
        ("lena", "modification"),
        ("max", "forward"),
    ] {
        let since = at(FROM);
        digestd::manage::subscribe(c, since, &subscription(who, kind, &cal)).unwrap();
    }
    cal
}

/// What the fixture reads of `messages`.
fn read(dir: &Path, messages: &[Vec<u8>]) -> Vec<Value> {
    let paths: Vec<String> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let p = dir.join(format!("m{i}.eml"));
            std::fs::write(&p, m).unwrap();
            p.display().to_string()
        })
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calendar/read.py"
    );
    let out = std::process::Command::new("python3")
        .arg(script)
        .args(["Europe/London", FROM, TO])
        .args(&paths)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the reader (pip install icalendar vobject) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// The item lines of a digest's text part: (when, title, repeats), without
/// the reminders' lines.
fn lines(text: &str) -> Vec<(String, String, bool)> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("* "))
        .filter(|l| !l.contains(" (reminder"))
        .map(|l| {
            let (when, rest) = l.split_once(": ").unwrap();
            let (title, repeats) = match rest.strip_suffix(" (repeats)") {
                Some(t) => (t, true),
                None => (rest, false),
            };
            (when.to_string(), title.to_string(), repeats)
        })
        .collect()
}

/// The calendar attached to the message `raw`, as sent.
fn calendar_of(raw: &[u8]) -> String {
    let parsed = common::delivery::parse(raw);
    let part = parsed
        .attachments()
        .find(|a| a.attachment_name() == Some("digest.ics"))
        .expect("a calendar");
    String::from_utf8(part.contents().to_vec()).unwrap()
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Both readers of the digest's calendar `cal` (its `text` part, the
/// message `raw`) list each item of the text once, at the time the text
/// gives, with its rule, zone and URL; each (reader, time, title) goes
/// into `seen`.
fn both_readers_agree(
    cal: &Value,
    text: &str,
    raw: &[u8],
    seen: &mut BTreeSet<(&'static str, String, String)>,
) {
    let listed = lines(text);
    assert!(!listed.is_empty(), "{text}");
    for reader in ["icalendar", "vobject"] {
        let r = &cal[reader];
        assert_eq!(str_of(&r["method"]), "PUBLISH", "{reader}");
        let events = r["events"].as_array().unwrap();
        // Each item once, and each is in the text.
        let titles: BTreeSet<&str> = events.iter().map(|e| str_of(&e["summary"])).collect();
        assert_eq!(titles.len(), events.len(), "{reader}: {events:?}");
        let in_text: BTreeSet<&str> = listed.iter().map(|(_, t, _)| t.as_str()).collect();
        assert_eq!(titles, in_text, "{reader}\n{text}");
        for (when, title, repeats) in &listed {
            let e = events
                .iter()
                .find(|e| str_of(&e["summary"]) == title)
                .unwrap();
            let starts: Vec<&str> = e["starts"].as_array().unwrap().iter().map(str_of).collect();
            assert!(
                starts.contains(&when.as_str()),
                "{reader}: {title} at {when} in the text, {starts:?} in the calendar\n{}",
                calendar_of(raw)
            );
            assert!(str_of(&e["uid"]).ends_with("@localhost"), "{e}");
            let rule = e["rrule"].as_str();
            assert_eq!(rule.is_some(), *repeats, "{reader}: {title}: {e}");
            if *repeats {
                assert_eq!(rule, Some("FREQ=WEEKLY;BYDAY=MO"), "{reader}");
                assert_eq!(str_of(&e["tzid"]), "America/New_York", "{reader}");
                assert_eq!(
                    str_of(&e["url"]),
                    "https://cal.example.org/e/standup?a=1&b=2"
                );
            }
            if title == "UTC call" {
                assert!(e["tzid"].is_null(), "{reader}: {e}");
            }
            seen.insert((reader, when.clone(), title.clone()));
        }
    }
}

/// Ticks and runs the queue through `d` every hour from [`FROM`] to
/// [`TO`]; max renames Friday's Berlin item at [`RENAMED`], after the
/// tick that posted Friday's digests.
fn tick_through_the_rename(c: &mut DbConn, cal: &str, d: &mut Delivery) {
    let mut comp = composer();
    let berlin = Some("Europe/Berlin");
    let mut t = at(FROM);
    while t < at(TO) {
        tick(c, t, &mut comp).unwrap();
        queue::run_pass(c, d, t).unwrap();
        if t == at(RENAMED) {
            // After the tick that posted Friday's digests, before max's
            // is retried.
            put(
                c,
                &ItemInput {
                    at: Some(RENAMED.into()),
                    actor: "max".into(),
                    ..event(
                        2,
                        cal,
                        "Berlin review, moved",
                        "2026-10-23T07:00:00Z",
                        berlin,
                    )
                },
            );
        }
        t += chrono::Duration::hours(1);
    }
}

fn forward_digests_carry_a_calendar_both_readers_agree_with(db: &TestDb) {
    let mut c = db.conn();
    let cal = world(&mut c);
    let server = FaultSmtp::start();
    let mut d = common::delivery::smtp(&server.url());
    tick_through_the_rename(&mut c, &cal, &mut d);
    let lena: Vec<Vec<u8>> = server
        .received()
        .into_iter()
        .filter(|m| m.to == ["ok.lena@example.com"])
        .map(|m| m.data)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let got = read(dir.path(), &lena);
    let mut seen = BTreeSet::new();
    let (mut forward, mut modification) = (0, 0);
    for (m, raw) in got.iter().zip(&lena) {
        let parsed = common::delivery::parse(raw);
        let text = parsed.body_text(0).unwrap().to_string();
        let parts: Vec<&str> = m["parts"].as_array().unwrap().iter().map(str_of).collect();
        let cals = m["calendars"].as_array().unwrap();
        if !text.contains("coming up in Calendar") {
            // A modification digest: text and HTML alone, as before.
            modification += 1;
            assert_eq!(
                parts,
                ["multipart/alternative", "text/plain", "text/html"],
                "{text}"
            );
            assert!(cals.is_empty());
            continue;
        }
        forward += 1;
        assert_eq!(
            parts,
            [
                "multipart/mixed",
                "multipart/alternative",
                "text/plain",
                "text/html",
                "text/calendar"
            ],
            "{text}"
        );
        assert_eq!(cals.len(), 1);
        let cal = &cals[0];
        assert_eq!(str_of(&cal["method_param"]), "PUBLISH");
        assert_eq!(str_of(&cal["charset"]).to_ascii_lowercase(), "utf-8");
        assert_eq!(str_of(&cal["filename"]), "digest.ics");
        assert_eq!(
            cal["bad_lines"],
            serde_json::json!([]),
            "folded at 75 octets"
        );
        both_readers_agree(cal, &text, raw, &mut seen);
    }
    // Fri 23, Mon 26, Tue 27, Wed 28, Fri 30 Oct and Mon 2 Nov; the
    // rename of Friday's item.
    assert_eq!((forward, modification), (6, 1));
    // Written out by hand: both sides of each change, as London reads them.
    for (when, title) in [
        ("Fri 23 Oct, 08:00 BST", "Berlin review"),
        ("Mon 26 Oct, 08:00 GMT", "Berlin retro"),
        ("Mon 26 Oct, 13:00 GMT", "Standup"),
        ("Tue 27 Oct, 10:00 GMT", "UTC call"),
        ("Wed 28 Oct, 13:00 GMT", HOSTILE),
        ("Fri 30 Oct, 16:00 GMT", "NY lunch"),
        ("Mon 2 Nov, 14:00 GMT", "Standup"),
        ("Mon 2 Nov, 17:00 GMT", "NY lunch again"),
    ] {
        for reader in ["icalendar", "vobject"] {
            let key = (reader, when.to_string(), title.to_string());
            assert!(seen.contains(&key), "{key:?} not seen");
        }
    }
    a_retry_sends_the_calendar_of_the_tick(&mut c, &server);
    preview_prints_the_calendar_of_a_forward_digest_alone(db, &mut c);
}

/// `digestd preview --ics` prints what the email attaches; a modification
/// digest, or any digest with `[email] calendar = false`, has none: exit
/// 2, one line, nothing on stdout.
fn preview_prints_the_calendar_of_a_forward_digest_alone(db: &TestDb, c: &mut DbConn) {
    use digestd::db::schema::{parties, subscriptions};
    let subs: Vec<(i64, String)> = subscriptions::table
        .inner_join(parties::table)
        .filter(parties::name.eq("lena"))
        .select((subscriptions::id, subscriptions::kind))
        .load(c)
        .unwrap();
    let id = |kind: &str| subs.iter().find(|(_, k)| k == kind).unwrap().0.to_string();
    let run = |id: &str, calendar: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_digestd"))
            .args(["--db", &db.url, "preview", id, "--ics"])
            .args(["--at", "2026-11-02T07:30:00Z"])
            .env_remove("DIGESTD_DATABASE_URL")
            .env_remove("RUST_LOG")
            .env("DIGESTD_EMAIL__CALENDAR", calendar)
            .output()
            .unwrap()
    };
    let out = run(&id("forward"), "true");
    let ics = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        ics.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"),
        "{ics}"
    );
    for line in [
        "SUMMARY:Standup",
        "RRULE:FREQ=WEEKLY;BYDAY=MO",
        "DTSTART;TZID=America/New_York:20261019T090000",
        "SUMMARY:NY lunch again",
        "DTSTART;TZID=America/New_York:20261102T120000",
    ] {
        assert!(ics.contains(&format!("\r\n{line}\r\n")), "{line}: {ics}");
    }
    for (id, calendar) in [(id("forward"), "false"), (id("modification"), "true")] {
        let out = run(&id, calendar);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("gets no calendar"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// max's first delivery (Friday's digest) was cut off and sent again an
/// hour later, after "Berlin review" was renamed: what was sent is the
/// calendar stored at the tick, byte for byte, the old title in it; and
/// so is every other calendar max received.
fn a_retry_sends_the_calendar_of_the_tick(c: &mut DbConn, server: &FaultSmtp) {
    let stored: Vec<(Option<String>, Option<String>)> = nt_messages::table
        .left_join(nt_bodies::table)
        .select((nt_messages::calendar, nt_bodies::calendar.nullable()))
        .load(c)
        .unwrap();
    let stored: BTreeSet<String> = stored
        .into_iter()
        .filter_map(|(own, shared)| own.or(shared))
        .collect();
    let sent: Vec<String> = server
        .received()
        .into_iter()
        .filter(|m| m.to == ["cut.max@example.com"])
        .map(|m| calendar_of(&m.data))
        .collect();
    assert_eq!(sent.len(), 6);
    // The first one max received is the one cut off at first.
    assert!(
        sent[0].contains("\r\nSUMMARY:Berlin review\r\n"),
        "{}",
        sent[0]
    );
    assert!(!sent.iter().any(|s| s.contains("moved")));
    for s in &sent {
        assert!(stored.contains(s), "{s}");
        // CRLF line ends, as stored and as sent.
        assert!(s.ends_with("END:VCALENDAR\r\n"), "{s}");
        assert!(!s.replace("\r\n", "").contains(['\r', '\n']), "{s}");
    }
}

backend_tests!(forward_digests_carry_a_calendar_both_readers_agree_with);
