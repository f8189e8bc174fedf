//! Unit tests of `words`.

use super::*;
use crate::ids::{CollectionId, PartyId};
use chrono::TimeZone;

fn t(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, h, m, 0).unwrap()
}

#[test]
fn times_follow_the_locale_and_zone() {
    let us = Style::new(chrono_tz::America::Los_Angeles, "en-US");
    assert_eq!(us.when(t(23, 0)), "Mon, Nov 23, 3:00 PM PST");
    let de = Style::new(chrono_tz::Europe::Berlin, "de-DE");
    // A German reader reads the names of days and months in German.
    assert_eq!(de.when(t(23, 0)), "Di., 24. Nov., 00:00 CET");
    // English words with a German reader's clock and date order (the
    // operator's pages show a person's times so).
    let english = Style {
        lang: Locale::En,
        ..de
    };
    assert_eq!(english.when(t(23, 0)), "Tue 24 Nov, 00:00 CET");
    let en_de = Style::new(chrono_tz::Europe::Berlin, "en-DE");
    assert_eq!(en_de.when(t(23, 0)), "Tue 24 Nov, 12:00 AM CET");
    let gb = Style::new(chrono_tz::Europe::London, "en-GB");
    assert_eq!(gb.time(t(15, 5)), "15:05");
    let india = Style::new(chrono_tz::Asia::Kolkata, "en-IN");
    assert_eq!(india.when(t(3, 30)), "Mon 23 Nov, 9:00 AM IST");
}

#[test]
fn the_cosmo_sentence() {
    let us = Style::new(chrono_tz::America::Los_Angeles, "en-US");
    let c = ItemChange {
        item_uuid: "u".into(),
        collection: CollectionId(1),
        kind: "event".into(),
        title: "Janitor's Pipe Dream".into(),
        action: Action::Edited,
        actors: vec![PartyId(3)],
        first_at: t(1, 0),
        first_id: 1,
        last_at: t(1, 0),
        url: None,
        changes: vec![AttrChange {
            attribute: "start".into(),
            old: Some("2026-11-23T23:00:00Z".into()),
            new: Some("2026-11-24T00:00:00Z".into()),
        }],
    };
    assert_eq!(
            change_line(&us, &c, "gr24", "Calendar").text(),
            "gr24 changed the start time of Janitor's Pipe Dream from 3:00 PM to 4:00 PM PST on Mon, Nov 23"
        );
    let de = Style::new(chrono_tz::Europe::Berlin, "de-AT");
    let line = change_line(&de, &c, "gr24", "Kalender");
    assert_eq!(
        line.text(),
        "gr24 hat Janitor's Pipe Dream geändert – Startzeit von 00:00 auf 01:00 CET am Di., 24. Nov."
    );
    assert_eq!(line.title(), "Janitor's Pipe Dream");
    let ja = Style::new(chrono_tz::Asia::Tokyo, "ja-JP");
    let line = change_line(&ja, &c, "gr24", "カレンダー");
    assert_eq!(
        line.text(),
        "gr24が「Janitor's Pipe Dream」の開始時刻を変更しました: 11月24日(火) 08:00 → 09:00 JST"
    );
    assert_eq!(line.title(), "Janitor's Pipe Dream");
    assert_eq!(line.before(), "gr24が「");
}

#[test]
fn people_and_clipping() {
    let n = |v: &[&str]| {
        people(
            Locale::En,
            &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(n(&[]), "Someone");
    assert_eq!(n(&["a", "b"]), "a and b");
    assert_eq!(n(&["a", "b", "c"]), "a, b and 1 other");
    let long = "é".repeat(100);
    let c = clip(&long);
    assert_eq!(c.chars().count(), MAX_VALUE_CHARS + 1);
    assert!(c.ends_with('…'));
}

/// Each of clip's paths against the plain definition: the first
/// [`MAX_VALUE_CHARS`] characters, and `…` when any were left out.
#[test]
fn clipping_cuts_after_the_limit_in_characters_on_every_path() {
    let plain = |s: &str| {
        let head: String = s.chars().take(MAX_VALUE_CHARS).collect();
        if head.len() < s.len() {
            format!("{head}…")
        } else {
            head
        }
    };
    let a = |n: usize| "a".repeat(n);
    for s in [
        String::new(),
        a(79),
        a(80),
        a(81),
        a(500),
        // Fewer than 80 characters in more than 80 bytes: kept whole.
        "é".repeat(79),
        "é".repeat(80),
        "é".repeat(81),
        // ASCII up to the limit, then a character of several bytes.
        format!("{}é", a(80)),
        format!("{}é", a(79)),
        format!("{}🎉{}", a(79), a(10)),
        format!("{}🎉{}", a(40), a(60)),
    ] {
        assert_eq!(clip(&s), plain(&s), "{s:?}");
    }
}

/// The audit's finding 14: five edits with 24,000 changes each made a
/// 16 MB email. One item's line spells out five changes and counts the
/// rest, so it stays short.
#[test]
fn an_edit_of_thousands_of_attributes_is_one_short_line() {
    let us = Style::new(chrono_tz::UTC, "en-US");
    let changes = (0..24_000)
        .map(|i| AttrChange {
            attribute: format!("field{i}"),
            old: Some("x".repeat(500)),
            new: Some("y".repeat(500)),
        })
        .collect();
    let c = ItemChange {
        item_uuid: "u".into(),
        collection: CollectionId(1),
        kind: "task".into(),
        title: "Big".into(),
        action: Action::Edited,
        actors: vec![],
        first_at: t(1, 0),
        first_id: 1,
        last_at: t(1, 0),
        url: None,
        changes,
    };
    let line = change_line(&us, &c, "Someone", "Tasks");
    let line = line.text();
    assert!(line.ends_with(", and 23995 more changes"), "{line:.200}");
    assert_eq!(
        line.matches(", and the field").count(),
        MAX_CHANGES_SHOWN - 1
    );
    assert!(line.len() < 2_000, "{} bytes", line.len());
    let mut six = c.clone();
    six.changes.truncate(MAX_CHANGES_SHOWN + 1);
    assert!(change_line(&us, &six, "Someone", "Tasks")
        .text()
        .ends_with(", and 1 more change"));
    six.changes.truncate(MAX_CHANGES_SHOWN);
    assert!(!change_line(&us, &six, "Someone", "Tasks")
        .text()
        .contains("more change"));
}

/// Every action's sentence, pinned word for word: the lines are written
/// piece by piece into one string each, and every piece is here
/// (clipped kinds and values, renamed and underscored attributes,
/// missing old or new values, an instant beside plain text).
#[test]
fn every_sentence_word_for_word() {
    let us = Style::new(chrono_tz::America::Los_Angeles, "en-US");
    let ch = |a: &str, o: Option<&str>, n: Option<&str>| AttrChange {
        attribute: a.into(),
        old: o.map(String::from),
        new: n.map(String::from),
    };
    let item = |action: Action, kind: &str, changes: Vec<AttrChange>| ItemChange {
        item_uuid: "u".into(),
        collection: CollectionId(1),
        kind: kind.into(),
        title: "Plan".into(),
        action,
        actors: vec![],
        first_at: t(1, 0),
        first_id: 1,
        last_at: t(1, 0),
        url: None,
        changes,
    };
    let line = |c: &ItemChange| {
        let l = change_line(&us, c, "ann", "Work");
        assert_eq!(l.title(), "Plan");
        format!("{}|{}", l.before(), l.after())
    };
    let long_kind = "k".repeat(MAX_VALUE_CHARS + 5);
    let cut_kind = format!("{}…", "k".repeat(MAX_VALUE_CHARS));
    let start = ch("start", None, Some("2026-11-23T23:00:00Z"));
    for (c, want) in [
        (
            item(Action::Created, "event", vec![start.clone()]),
            "ann created the event |, starting Mon, Nov 23, 3:00 PM PST".to_string(),
        ),
        (
            item(Action::Created, "event", vec![]),
            "ann created the event |".into(),
        ),
        (
            item(Action::Deleted, &long_kind, vec![]),
            format!("ann deleted the {cut_kind} |"),
        ),
        (
            item(Action::Added, "task", vec![]),
            "ann added | to Work".into(),
        ),
        (
            item(Action::Removed, "task", vec![]),
            "ann removed | from Work".into(),
        ),
        (
            item(Action::Now, "task", vec![]),
            "ann marked | as now".into(),
        ),
        (item(Action::Edited, "task", vec![]), "ann changed |".into()),
        (
            item(
                Action::Edited,
                "task",
                vec![
                    ch("due_date", Some("a"), Some("b")),
                    ch("rrule", None, Some("FREQ=DAILY")),
                    ch("body", Some("old"), None),
                    ch("kind", None, None),
                    ch("status", Some("2026-11-23T23:00:00Z"), Some("soon")),
                    ch("owner", Some("x"), Some("y")),
                ],
            ),
            "ann changed the due date of | from “a” to “b”, and the recurrence to \
                 “FREQ=DAILY”, and the text from “old” to nothing, and the type to nothing, \
                 and the status from Mon, Nov 23, 3:00 PM PST to “soon”, and 1 more change"
                .into(),
        ),
        (
            item(
                Action::Edited,
                "task",
                vec![ch("note", None, Some(&"v".repeat(MAX_VALUE_CHARS + 1)))],
            ),
            format!(
                "ann changed the note of | to “{}…”",
                "v".repeat(MAX_VALUE_CHARS)
            ),
        ),
    ] {
        assert_eq!(line(&c), want, "{:?}", c.action);
    }
}

/// A subscription's digests share one subject, whatever they hold and
/// whenever they are sent: it names the frequency, the kind and the
/// collection, never a count or a date.
#[test]
fn a_subject_names_the_subscription_not_the_period() {
    use crate::subscriptions::{Frequency, Kind};
    assert_eq!(
        subject(
            Locale::En,
            Kind::Modification,
            Frequency::Daily,
            Some("Calendar")
        ),
        "Daily digest: Calendar"
    );
    assert_eq!(
        subject(
            Locale::En,
            Kind::Forward,
            Frequency::Weekly,
            Some("Team calendar")
        ),
        "Weekly agenda: Team calendar"
    );
    assert_eq!(
        subject(Locale::En, Kind::Modification, Frequency::Hourly, None),
        "Hourly digest: all collections"
    );
}

#[test]
fn what_seen_marks_left_out_is_said_in_the_singular_and_the_plural() {
    assert_eq!(
        seen_left_out(Locale::En, 1),
        "1 change you have already seen is left out"
    );
    assert_eq!(
        seen_left_out(Locale::En, 2),
        "2 changes you have already seen are left out"
    );
    assert_eq!(
        seen_left_out(Locale::En, 1000),
        "1000 changes you have already seen are left out"
    );
}
