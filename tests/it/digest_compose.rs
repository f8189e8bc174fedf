//! Digests composed end to end on each back end: the tick hands each due
//! run to the real [`Composer`]; these tests read what it posted — the
//! window collapsed, own changes left out or shown, empty digests, series
//! expanded across DST and from 1900, HTML escaped, SMS segments, the cap.
//! Expected texts are written out by hand from the scenario, not computed
//! with the code under test. The shared helpers are in `common/digest.rs`.

use crate::common;

use common::digest::{
    calendar_week, calendar_world, composer, daily, item, put, requests, subscribe, user, Req,
};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::subscription_runs;
use digestd::db::DbConn;
use digestd::digest::Composer;
use digestd::items::{self, ItemInput};
use digestd::manage;
use digestd::parties;
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;
use digestd::text::gsm as sms;

fn modification_digest_collapses_the_window_and_leaves_out_own_changes(db: &TestDb) {
    let mut c = db.conn();
    let (cal, gr24) = calendar_world(&mut c);
    subscribe(&mut c, daily("ann", &cal));
    calendar_week(&mut c, &cal);
    let mut comp = composer();
    assert!(tick(&mut c, at("2026-11-22T16:00:00Z"), &mut comp)
        .unwrap()
        .is_empty());
    let runs = tick(&mut c, at("2026-11-22T17:00:00Z"), &mut comp).unwrap();
    assert_eq!(runs.len(), 1);
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    // The window began at the subscription, Saturday 4:00 PM in Los Angeles.
    // The subject names the subscription; the first line what is inside.
    assert_eq!(r.subject, "Daily digest: Calendar");
    assert_eq!(r.heading(), "2 changes in Calendar since Saturday 4:00 PM");
    assert!(
        r.text.contains(
            "gr24 changed the start time of Janitor's Pipe Dream from 3:00 PM to 4:00 PM PST on Mon, Nov 23"
        ),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("gr24 deleted the event Old offsite"),
        "{}",
        r.text
    );
    for absent in ["Budget sync", "Ann's own meeting", "Phantom"] {
        assert!(!r.text.contains(absent), "{absent} in {}", r.text);
        assert!(!r.html.contains(absent));
    }
    // Every change is gr24's, so the digest comes from gr24.
    assert_eq!(
        (r.from, r.status.as_str(), r.period.as_str()),
        (gr24.0, "pending", "2026-11-22")
    );
    // The run points at its request.
    let rid: Option<i64> = subscription_runs::table
        .select(subscription_runs::request_id)
        .first(&mut c)
        .unwrap();
    assert!(rid.is_some());
}

fn include_own_shows_the_subscribers_changes(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    subscribe(
        &mut c,
        SubscribeRequest {
            include_own: true,
            ..daily("ann", &cal)
        },
    );
    calendar_week(&mut c, &cal);
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut composer()).unwrap();
    let r = &requests(&mut c)[0];
    assert_eq!(r.heading(), "3 changes in Calendar since Saturday 4:00 PM");
    assert!(
        r.text.contains(
            "ann changed the start time of Ann's own meeting from 10:00 AM to 11:00 AM PST"
        ),
        "{}",
        r.text
    );
    // Two actors: the digest comes from the system party.
    let system = parties::find(&mut c, "digestd").unwrap().0;
    assert_eq!(r.from, system.0);
}

fn empty_digests_record_the_run_and_post_only_when_asked(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    user(&mut c, "bob", "America/Los_Angeles", "en-US", None);
    subscribe(&mut c, daily("ann", &cal));
    subscribe(
        &mut c,
        SubscribeRequest {
            send_empty: true,
            ..daily("bob", &cal)
        },
    );
    let mut comp = composer();
    let runs = tick(&mut c, at("2026-11-22T17:00:00Z"), &mut comp).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((comp.posted, comp.empty), (1, 1));
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].heading(),
        "No changes in Calendar since Saturday 4:00 PM"
    );
    assert_eq!(reqs[0].subject, "Daily digest: Calendar");
    let recorded: i64 = subscription_runs::table.count().get_result(&mut c).unwrap();
    assert_eq!(recorded, 2);
    // The window chains from the empty run: the next day's digest starts at
    // this tick, not at the subscription.
    calendar_week_late(&mut c, &cal);
    tick(&mut c, at("2026-11-23T17:00:00Z"), &mut comp).unwrap();
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1..].iter().all(
        |r| r.heading() == "1 change in Calendar since Sunday 9:00 AM"
            && r.subject == "Daily digest: Calendar"
    ));
}

fn calendar_week_late(c: &mut DbConn, cal: &str) {
    put(
        c,
        &item(
            2,
            cal,
            "Budget sync",
            "2026-11-24T20:00:00Z",
            "gr24",
            "2026-11-23T09:00:00Z",
        ),
    );
}

fn forward_digest_expands_a_series_in_its_own_zone_across_dst(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "lena", "Europe/London", "en-GB", None);
    let cal = items::create_collection(&mut c, at("2026-10-01T00:00:00Z"), "Calendar", None)
        .unwrap()
        .uuid;
    // Mondays 09:00 in New York from 19 October (13:00Z while EDT).
    put(
        &mut c,
        &ItemInput {
            rrule: Some("FREQ=WEEKLY;BYDAY=MO".into()),
            tz: Some("America/New_York".into()),
            ..item(
                1,
                &cal,
                "Standup",
                "2026-10-19T13:00:00Z",
                "lena",
                "2026-10-01T00:00:00Z",
            )
        },
    );
    manage::subscribe(
        &mut c,
        at("2026-10-20T00:00:00Z"),
        &SubscribeRequest {
            party: "lena".into(),
            frequency: "daily".into(),
            kind: "forward".into(),
            collection: Some(cal.clone()),
            hour: Some(7),
            ..Default::default()
        },
    )
    .unwrap();
    let mut comp = composer();
    // London leaves BST on 25 October, New York leaves EDT on 1 November.
    // Monday 26 Oct: 09:00 EDT = 13:00 GMT. Monday 2 Nov: 09:00 EST = 14:00 GMT.
    let mut t = at("2026-10-20T00:00:00Z");
    while t < at("2026-11-03T00:00:00Z") {
        tick(&mut c, t, &mut comp).unwrap();
        t += chrono::Duration::hours(1);
    }
    let reqs = requests(&mut c);
    let mondays: Vec<&Req> = reqs
        .iter()
        .filter(|r| r.period == "2026-10-26" || r.period == "2026-11-02")
        .collect();
    assert_eq!(
        mondays.len(),
        2,
        "{:?}",
        reqs.iter().map(|r| &r.period).collect::<Vec<_>>()
    );
    assert!(
        mondays[0]
            .text
            .contains("Mon 26 Oct, 13:00 GMT: Standup (repeats)"),
        "{}",
        mondays[0].text
    );
    assert!(
        mondays[1]
            .text
            .contains("Mon 2 Nov, 14:00 GMT: Standup (repeats)"),
        "{}",
        mondays[1].text
    );
    // Only Mondays have the standup; other days are empty and not sent.
    assert_eq!(reqs.len(), 2);
}

/// The audit's stalled tick: a series that began in 1900 is expanded from
/// just before the window, and still lands on its own local hours.
fn a_series_from_1900_shows_in_this_weeks_digest(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "lena", "Europe/London", "en-GB", None);
    let cal = items::create_collection(&mut c, at("2026-10-01T00:00:00Z"), "Calendar", None)
        .unwrap()
        .uuid;
    // Every six hours from 1900-01-01 00:00 in Tokyo (on +09:00 since 1888):
    // 00, 06, 12 and 18 JST.
    put(
        &mut c,
        &ItemInput {
            rrule: Some("FREQ=HOURLY;INTERVAL=6".into()),
            tz: Some("Asia/Tokyo".into()),
            ..item(
                1,
                &cal,
                "Sensor check",
                "1899-12-31T15:00:00Z",
                "lena",
                "2026-10-01T00:00:00Z",
            )
        },
    );
    manage::subscribe(
        &mut c,
        at("2026-11-23T00:00:00Z"),
        &SubscribeRequest {
            party: "lena".into(),
            frequency: "daily".into(),
            kind: "forward".into(),
            collection: Some(cal.clone()),
            hour: Some(7),
            send_empty: true,
            ..Default::default()
        },
    )
    .unwrap();
    tick(&mut c, at("2026-11-24T07:00:00Z"), &mut composer()).unwrap();
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 1);
    // 18:00 JST is 09:00 GMT, 00:00 JST 15:00 GMT the day before, and so on.
    for hm in [
        "24 Nov, 09:00 GMT",
        "24 Nov, 15:00 GMT",
        "24 Nov, 21:00 GMT",
        "25 Nov, 03:00 GMT",
    ] {
        assert!(
            reqs[0]
                .text
                .contains(&format!("{hm}: Sensor check (repeats)")),
            "{hm} missing from {}",
            reqs[0].text
        );
    }
}

fn html_escapes_untrusted_text(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ann", "America/Los_Angeles", "en-US", None);
    user(&mut c, "eve", "Europe/Paris", "fr-FR", None);
    let cal = items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Q&A <team>", None)
        .unwrap()
        .uuid;
    subscribe(&mut c, daily("ann", &cal));
    let evil = "<script>alert('x')</script> & \"friends\"";
    put(
        &mut c,
        &item(
            9,
            &cal,
            evil,
            "2026-11-23T23:00:00Z",
            "eve",
            "2026-11-22T10:00:00Z",
        ),
    );
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut composer()).unwrap();
    let r = &requests(&mut c)[0];
    assert!(!r.html.contains("<script>"), "{}", r.html);
    assert!(!r.html.contains("<team>"));
    assert!(
        r.html.contains(
            "&#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62; &#38; &#34;friends&#34;"
        ),
        "{}",
        r.html
    );
    // Plain text keeps the title as it is.
    assert!(r.text.contains(evil));
    assert_eq!(r.heading(), "1 change in Q&A <team> since Saturday 4:00 PM");
}

fn sms_fits_its_segments_with_non_gsm_text_and_links_the_rest(db: &TestDb) {
    let mut c = db.conn();
    user(
        &mut c,
        "ola",
        "Europe/Warsaw",
        "pl-PL",
        Some("+48221234567"),
    );
    let cal = items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Kalendarz", None)
        .unwrap()
        .uuid;
    // ola's own changes: included through the setting.
    subscribe(
        &mut c,
        SubscribeRequest {
            channels: vec!["sms".into()],
            include_own: true,
            ..daily("ola", &cal)
        },
    );
    for i in 0..12u128 {
        let title = format!("Zażółć gęślą jaźń nr {i}");
        put(
            &mut c,
            &item(
                100 + i,
                &cal,
                &title,
                "2026-11-23T10:00:00Z",
                "ola",
                "2026-11-22T01:00:00Z",
            ),
        );
    }
    let cfg = DigestConfig {
        sms_segments: 2,
        ..DigestConfig::default()
    };
    let mut comp = Composer::new(&cfg, &EmailConfig::default()).unwrap();
    tick(&mut c, at("2026-11-22T08:00:00Z"), &mut comp).unwrap();
    assert_eq!(comp.posted, 1);
    let r = &requests(&mut c)[0];
    // Two segments: 134 UTF-16 units when a character (ż) needs UCS-2. The
    // signed link to the whole digest leaves no room for a title here, so
    // the cut falls before the first one and the rest is GSM-7.
    let units: usize = r.sms.encode_utf16().count();
    let ucs2 = r.sms.chars().any(|ch| "żółćęśąźń".contains(ch));
    assert!(!ucs2 || units <= 134, "{units}: {}", r.sms);
    assert!(units > 100, "it should use the room it has: {}", r.sms);
    assert!(sms::segments(&r.sms) <= 2, "{}", r.sms);
    assert!(
        r.sms.starts_with("12 changes in Kalendarz since"),
        "{}",
        r.sms
    );
    // The link to the whole digest, signed (`digest::link`).
    let full = whole_link(&mut c);
    assert!(full.len() > "http://localhost:8080/d/1/2026-11-22/".len());
    assert!(r.sms.ends_with(&format!(" {full}")), "{}", r.sms);
    assert!(r.sms.contains("..."), "{}", r.sms);
}

/// Subscription 1's whole-digest link for 2026-11-22.
fn whole_link(c: &mut digestd::db::DbConn) -> String {
    digestd::digest::link::LinkKey::load(c).unwrap().url(
        "http://localhost:8080",
        digestd::ids::SubscriptionId(1),
        "2026-11-22",
    )
}

fn the_cap_shows_max_items_and_counts_the_rest(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    subscribe(&mut c, daily("ann", &cal));
    for i in 0..5u128 {
        put(
            &mut c,
            &item(
                50 + i,
                &cal,
                &format!("Event {i}"),
                "2026-11-28T18:00:00Z",
                "gr24",
                "2026-11-22T02:00:00Z",
            ),
        );
    }
    let cfg = DigestConfig {
        max_items: 3,
        ..DigestConfig::default()
    };
    let mut comp = Composer::new(&cfg, &EmailConfig::default()).unwrap();
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut comp).unwrap();
    let r = &requests(&mut c)[0];
    assert_eq!(r.heading(), "5 changes in Calendar since Saturday 4:00 PM");
    assert_eq!(
        r.text.matches("gr24 created the event").count(),
        3,
        "{}",
        r.text
    );
    let more = format!("... and 2 more: {}", whole_link(&mut c));
    assert!(r.text.contains(&more), "{}", r.text);
    assert!(r.html.contains("and 2 more"), "{}", r.html);
}

backend_tests!(
    a_series_from_1900_shows_in_this_weeks_digest,
    modification_digest_collapses_the_window_and_leaves_out_own_changes,
    include_own_shows_the_subscribers_changes,
    empty_digests_record_the_run_and_post_only_when_asked,
    forward_digest_expands_a_series_in_its_own_zone_across_dst,
    html_escapes_untrusted_text,
    sms_fits_its_segments_with_non_gsm_text_and_links_the_rest,
    the_cap_shows_max_items_and_counts_the_rest,
);
