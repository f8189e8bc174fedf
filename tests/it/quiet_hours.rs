//! Quiet hours, on each back end: a notification to a person inside them
//! waits in the queue, with its reason, until they end (the injected
//! clock drives queue passes before and after); an urgent one goes at
//! once; a group's request holds only its quiet member's row; hourly
//! digests inside them are merged into the first one after (each change
//! once, after downtime too, across DST nights); a daily digest at an
//! hour inside them is still sent; hostile windows are refused with
//! nothing written. The CLI, API and pages are in `quiet_hours_web.rs`.

use crate::common;

use chrono::Duration;
use common::delivery::{in_fresh_dir, next_attempt, user};
use common::digest::{item, put, requests};
use common::pages::mails_in;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::delivery_log;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, NewNotification};
use digestd::digest::Composer;
use digestd::ids::RequestId;
use digestd::parties::{self, UserChanges};
use digestd::subscriptions::SubscribeRequest;
use digestd::{items, manage, schedule};

const NIGHT: &str = "22:00-07:00";
const HELD: &str = "held: quiet hours until 07:00 Europe/Paris (06:00 UTC)";

fn quiet(c: &mut DbConn, name: &str, window: &str) {
    let ch = UserChanges {
        quiet_hours: Some(window.into()),
        ..Default::default()
    };
    manage::update_user(c, name, &ch).unwrap();
}

fn post(c: &mut DbConn, to: &str, expand_group: bool, urgent: bool, when: &str) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: "sys".into(),
            to: to.into(),
            expand_group,
            subject: format!("Disk full ({to})"),
            message: "Clean up.".into(),
            urgent,
            ..Default::default()
        },
        at(when),
    )
    .unwrap()
}

/// The `delivery_log` rows of request `r`: outcome and reply text.
fn log_of(c: &mut DbConn, r: RequestId) -> Vec<(String, Option<String>)> {
    delivery_log::table
        .filter(delivery_log::request_id.eq(r.0))
        .select((delivery_log::outcome, delivery_log::reply_message))
        .order(delivery_log::id.asc())
        .load(c)
        .unwrap()
}

fn a_notification_waits_for_the_end_of_quiet_hours(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ana", "ana@example.com");
    quiet(&mut c, "ana", NIGHT);
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    // 23:30 in Paris.
    let r = post(&mut c, "ana", false, false, "2026-11-23T22:30:00Z");
    let report = queue::run_pass(&mut c, &mut d, at("2026-11-23T22:30:00Z")).unwrap();
    assert_eq!((report.held, report.retrying, report.gave_up), (1, 0, 0));
    assert!(mails_in(&dir).is_empty());
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status.as_str(), "sending");
    let row = &v.recipients[0];
    assert_eq!(
        (row.successful, row.gave_up, row.retry_count),
        (false, false, 0)
    );
    assert_eq!(
        (row.reply_code, row.reply_message.as_deref()),
        (None, Some(HELD))
    );
    assert_eq!(next_attempt(&mut c, r), at("2026-11-24T06:00:00Z"));
    assert_eq!(log_of(&mut c, r), [("transient".into(), Some(HELD.into()))]);
    // A second before the end: still waiting, nothing written.
    queue::run_pass(&mut c, &mut d, at("2026-11-24T05:59:59Z")).unwrap();
    assert!(mails_in(&dir).is_empty());
    assert_eq!(log_of(&mut c, r).len(), 1);
    // At 07:00 in Paris it goes, as its first attempt.
    let report = queue::run_pass(&mut c, &mut d, at("2026-11-24T06:00:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert_eq!(mails_in(&dir).len(), 1);
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status.as_str(), "sent");
    assert_eq!(
        (v.recipients[0].successful, v.recipients[0].retry_count),
        (true, 0)
    );
    assert_eq!(log_of(&mut c, r)[1].0, "sent");
}

fn an_urgent_notification_goes_at_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ana", "ana@example.com");
    quiet(&mut c, "ana", NIGHT);
    let (mut d, email) = in_fresh_dir();
    let r = post(&mut c, "ana", false, true, "2026-11-23T22:30:00Z");
    let report = queue::run_pass(&mut c, &mut d, at("2026-11-23T22:30:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert_eq!(queue::show(&mut c, r).unwrap().status.as_str(), "sent");
    assert_eq!(mails_in(std::path::Path::new(&email.dir)).len(), 1);
    // Outside quiet hours nothing waits either; clearing them ends the hold.
    let plain = post(&mut c, "ana", false, false, "2026-11-24T10:00:00Z");
    queue::run_pass(&mut c, &mut d, at("2026-11-24T10:00:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, plain).unwrap().status.as_str(), "sent");
    quiet(&mut c, "ana", "");
    let late = post(&mut c, "ana", false, false, "2026-11-24T22:30:00Z");
    queue::run_pass(&mut c, &mut d, at("2026-11-24T22:30:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, late).unwrap().status.as_str(), "sent");
}

fn a_group_holds_only_its_quiet_members_row(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "jo", "jo@example.com");
    user(&mut c, "kim", "kim@example.com");
    quiet(&mut c, "jo", NIGHT);
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "ops", None).unwrap();
    parties::add_member(&mut c, "ops", "jo").unwrap();
    parties::add_member(&mut c, "ops", "kim").unwrap();
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    let r = post(&mut c, "ops", true, false, "2026-11-23T22:30:00Z");
    queue::run_pass(&mut c, &mut d, at("2026-11-23T22:30:00Z")).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    let of = |v: &queue::RequestView, who: &str| {
        let x = v.recipients.iter().find(|x| x.party == who).unwrap();
        (x.successful, x.reply_message.clone())
    };
    assert_eq!(v.status.as_str(), "sending");
    assert_eq!(of(&v, "jo"), (false, Some(HELD.into())));
    assert!(of(&v, "kim").0);
    assert_eq!(mails_in(&dir).len(), 1);
    queue::run_pass(&mut c, &mut d, at("2026-11-24T06:00:00Z")).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status.as_str(), "sent");
    assert!(of(&v, "jo").0 && of(&v, "kim").0);
    assert_eq!(mails_in(&dir).len(), 2);
}

/// ana in Paris (24-hour clock) follows collection Night hourly; ed edits it.
fn night_world(c: &mut DbConn, since: &str, frequency: &str, hour: Option<i64>) -> String {
    common::digest::user(c, "ana", "Europe/Paris", "en-GB", None);
    common::digest::user(c, "ed", "Europe/Paris", "en-GB", None);
    let night = items::create_collection(c, at("2026-01-01T00:00:00Z"), "Night", None)
        .unwrap()
        .uuid;
    let r = SubscribeRequest {
        party: "ana".into(),
        frequency: frequency.into(),
        kind: "modification".into(),
        collection: Some(night.clone()),
        hour,
        ..Default::default()
    };
    manage::subscribe(c, at(since), &r).unwrap();
    quiet(c, "ana", NIGHT);
    night
}

/// Ticks at each instant of `ticks` (hourly from the first to the last,
/// when `hourly`), putting each of `changes` (title, instant) before the
/// first tick after it; the instants whose tick found runs, with each
/// run's window.
fn tick_through(
    c: &mut DbConn,
    coll: &str,
    ticks: &[&str],
    changes: &[(&str, &str)],
) -> Vec<(String, String, String)> {
    let mut comp = Composer::new(&Default::default(), &EmailConfig::default()).unwrap();
    let mut pending: Vec<(u128, &str, &str)> = changes
        .iter()
        .enumerate()
        .map(|(i, (t, w))| (i as u128 + 1, *t, *w))
        .collect();
    let mut ran = Vec::new();
    for t in ticks {
        while let Some(&(n, title, when)) = pending.first().filter(|p| at(p.2) < at(t)) {
            put(c, &item(n, coll, title, "2026-12-24T10:00:00Z", "ed", when));
            pending.remove(0);
        }
        for run in schedule::tick(c, at(t), &mut comp).unwrap() {
            let f = |x: chrono::DateTime<chrono::Utc>| x.format("%dT%H:%M").to_string();
            ran.push((f(run.tick), f(run.window_start), f(run.window_end)));
        }
    }
    ran
}

/// Every hour from `from` for `n` hours, as RFC 3339.
fn hours(from: &str, n: i64) -> Vec<String> {
    (0..n)
        .map(|k| (at(from) + Duration::hours(k)).to_rfc3339())
        .collect()
}

fn hourly_digests_in_quiet_hours_are_merged_into_the_first_after(db: &TestDb) {
    let mut c = db.conn();
    let night = night_world(&mut c, "2026-11-22T00:00:00Z", "hourly", None);
    // 19:00 to 09:00 in Paris.
    let ticks = hours("2026-11-23T18:00:00Z", 15);
    let ticks: Vec<&str> = ticks.iter().map(String::as_str).collect();
    let changes = [
        ("Before the night", "2026-11-23T20:30:00Z"),
        ("At midnight", "2026-11-23T23:10:00Z"),
        ("Before dawn", "2026-11-24T04:50:00Z"),
        ("After seven", "2026-11-24T06:30:00Z"),
    ];
    let ran = tick_through(&mut c, &night, &ticks, &changes);
    let want = [
        ("23T18:00", "22T00:00", "23T18:00"),
        ("23T19:00", "23T18:00", "23T19:00"),
        ("23T20:00", "23T19:00", "23T20:00"),
        // 07:00 in Paris: the night, 21:00 to 07:00, in one window.
        ("24T06:00", "23T20:00", "24T06:00"),
        ("24T07:00", "24T06:00", "24T07:00"),
        ("24T08:00", "24T07:00", "24T08:00"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(ran, want);
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 2, "the night's digest and the next hour's");
    assert!(
        reqs[0].heading().starts_with("3 changes in Night since"),
        "{}",
        reqs[0].heading()
    );
    assert!(reqs[0].heading().contains("21:00"), "{}", reqs[0].heading());
    assert_eq!(reqs[0].period, "2026-11-24T07:00+01:00");
    assert!(reqs[1].heading().starts_with("1 change in Night since"));
    for (title, _) in changes {
        let n: usize = reqs.iter().map(|r| r.text.matches(title).count()).sum();
        assert_eq!(n, 1, "{title} in exactly one digest");
    }
    // The digests of the night are not held in the queue: they were never
    // posted, and the 07:00 one goes at once.
    let (mut d, email) = in_fresh_dir();
    let report = queue::run_pass(&mut c, &mut d, at("2026-11-24T08:00:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert!(!mails_in(std::path::Path::new(&email.dir)).is_empty());
    assert!(requests(&mut c).iter().all(|r| r.status == "sent"));
}

fn after_downtime_the_skipped_hours_are_not_sent_one_by_one(db: &TestDb) {
    let mut c = db.conn();
    let night = night_world(&mut c, "2026-11-22T00:00:00Z", "hourly", None);
    // The tick is down from 19:00 to 03:00 Paris time, then runs hourly.
    let mut ticks = vec!["2026-11-23T18:00:00Z".to_string()];
    ticks.extend(hours("2026-11-24T02:00:00Z", 6));
    let ticks: Vec<&str> = ticks.iter().map(String::as_str).collect();
    let changes = [("Overnight", "2026-11-23T23:00:00Z")];
    let ran = tick_through(&mut c, &night, &ticks, &changes);
    let at_: Vec<&str> = ran.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(at_, ["23T18:00", "24T06:00", "24T07:00"]);
    assert_eq!(ran[1].1, "23T18:00", "one window from the last digest");
    assert_eq!(requests(&mut c).len(), 1);
}

fn a_daily_digest_inside_quiet_hours_is_still_sent(db: &TestDb) {
    let mut c = db.conn();
    let night = night_world(&mut c, "2026-11-22T00:00:00Z", "daily", Some(23));
    // 23:00 in Paris.
    let ran = tick_through(
        &mut c,
        &night,
        &["2026-11-23T22:00:00Z"],
        &[("Noon", "2026-11-23T12:00:00Z")],
    );
    assert_eq!(ran.len(), 1);
    let (mut d, email) = in_fresh_dir();
    let report = queue::run_pass(&mut c, &mut d, at("2026-11-23T22:00:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert_eq!(mails_in(std::path::Path::new(&email.dir)).len(), 1);
}

fn dst_nights_end_at_seven_local(db: &TestDb) {
    let mut c = db.conn();
    let night = night_world(&mut c, "2026-03-01T00:00:00Z", "hourly", None);
    // 29 March: 02:00 CET → 03:00 CEST; 07:00 CEST is 05:00 UTC.
    let ticks = hours("2026-03-28T19:00:00Z", 12);
    let ticks: Vec<&str> = ticks.iter().map(String::as_str).collect();
    let ran = tick_through(&mut c, &night, &ticks, &[]);
    let at_: Vec<&str> = ran.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(at_, ["28T19:00", "28T20:00", "29T05:00", "29T06:00"]);
    // 25 October: 03:00 CEST → 02:00 CET; 07:00 CET is 06:00 UTC.
    let ticks = hours("2026-10-24T18:00:00Z", 14);
    let ticks: Vec<&str> = ticks.iter().map(String::as_str).collect();
    let ran = tick_through(&mut c, &night, &ticks, &[]);
    let at_: Vec<&str> = ran.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(at_, ["24T18:00", "24T19:00", "25T06:00", "25T07:00"]);
    // A notification in the repeated hour waits for 07:00 CET as well.
    user(&mut c, "sys", "sys@example.com");
    let r = post(&mut c, "ana", false, false, "2026-10-25T01:30:00Z");
    let (mut d, _email) = in_fresh_dir();
    queue::run_pass(&mut c, &mut d, at("2026-10-25T01:30:00Z")).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.recipients[0].reply_message.as_deref(), Some(HELD));
    assert_eq!(next_attempt(&mut c, r), at("2026-10-25T06:00:00Z"));
}

fn hostile_windows_are_refused_and_nothing_is_written(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ana", "ana@example.com");
    quiet(&mut c, "ana", NIGHT);
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "ops", None).unwrap();
    let before = (
        parties::list_users(&mut c).unwrap(),
        parties::list_groups(&mut c).unwrap(),
    );
    let long = "2".repeat(100_000);
    for bad in [
        "25:00-07:00",
        "22:00-22:00",
        "22-7",
        "22:00–07:00",
        "22:00-07:00\r\nX: y",
        "２２:００-07:00",
        long.as_str(),
    ] {
        let ch = UserChanges {
            quiet_hours: Some(bad.into()),
            daily_hour: Some(5),
            ..Default::default()
        };
        let e = manage::update_user(&mut c, "ana", &ch)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid quiet hours") && !e.contains('\n'),
            "{e}"
        );
        assert!(e.len() < 300, "{e:.80}");
        assert!(manage::update_group(&mut c, "ops", &ch).is_err());
        let new = parties::NewUser {
            name: "eve".into(),
            timezone: "UTC".into(),
            quiet_hours: Some(bad.into()),
            ..Default::default()
        };
        assert!(parties::create_user(&mut c, at("2026-11-23T00:00:00Z"), &new).is_err());
    }
    let after = (
        parties::list_users(&mut c).unwrap(),
        parties::list_groups(&mut c).unwrap(),
    );
    assert_eq!(after, before);
    assert_eq!(after.0[0].quiet_hours, NIGHT);
}

crate::backend_tests!(
    a_notification_waits_for_the_end_of_quiet_hours,
    an_urgent_notification_goes_at_once,
    a_group_holds_only_its_quiet_members_row,
    hourly_digests_in_quiet_hours_are_merged_into_the_first_after,
    after_downtime_the_skipped_hours_are_not_sent_one_by_one,
    a_daily_digest_inside_quiet_hours_is_still_sent,
    dst_nights_end_at_seven_local,
    hostile_windows_are_refused_and_nothing_is_written,
);
