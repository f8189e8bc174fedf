//! A held notification follows the quiet hours its recipient has now, on
//! each back end: clearing them releases it at the next pass (sent once),
//! a narrower window holds it again until the new end, a new zone moves
//! the end, a group's own rows follow the group's; a row waiting on a
//! retry's backoff after a real failure keeps its wait; an urgent one is
//! never held. The CLI, the API and the manage page are in
//! `quiet_hours_change_web.rs`.

use crate::common;

use common::delivery::{in_fresh_dir, next_attempt, smtp, user};
use common::pages::mails_in;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{delivery_log, nt_queue};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, NewNotification, RELEASED};
use digestd::ids::RequestId;
use digestd::manage;
use digestd::parties::{self, UserChanges};

const NIGHT: &str = "22:00-07:00";
/// 22:30 in Paris: inside [`NIGHT`].
const HELD_AT: &str = "2026-12-03T21:30:00Z";
const HELD: &str = "held: quiet hours until 07:00 Europe/Paris (06:00 UTC)";

fn prefs(c: &mut DbConn, name: &str, quiet: Option<&str>, tz: Option<&str>) {
    let ch = UserChanges {
        quiet_hours: quiet.map(str::to_string),
        timezone: tz.map(str::to_string),
        ..Default::default()
    };
    manage::update_user(c, name, &ch).unwrap();
}

fn post(c: &mut DbConn, to: &str, urgent: bool, when: &str) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: "ana".into(),
            to: to.into(),
            subject: format!("Rota ({to})"),
            message: "Changed.".into(),
            urgent,
            ..Default::default()
        },
        at(when),
    )
    .unwrap()
}

/// Request `r`'s first row: its reply text, retry count and held mark.
fn row(c: &mut DbConn, r: RequestId) -> (Option<String>, i32, bool) {
    nt_queue::table
        .filter(nt_queue::request_id.eq(r.0))
        .select((
            nt_queue::smtp_reply_message,
            nt_queue::retry_count,
            nt_queue::held,
        ))
        .first(c)
        .unwrap()
}

fn outcomes(c: &mut DbConn, r: RequestId) -> Vec<String> {
    delivery_log::table
        .filter(delivery_log::request_id.eq(r.0))
        .select(delivery_log::outcome)
        .order(delivery_log::id.asc())
        .load(c)
        .unwrap()
}

/// ana and ben (Paris, quiet at night); a notification to ben held at
/// [`HELD_AT`] until 07:00 in Paris.
fn held_for_ben(c: &mut DbConn, d: &mut Delivery) -> RequestId {
    user(c, "ana", "ana@example.com");
    user(c, "ben", "ben@example.com");
    prefs(c, "ben", Some(NIGHT), None);
    let r = post(c, "ben", false, HELD_AT);
    let report = queue::run_pass(c, d, at(HELD_AT)).unwrap();
    assert_eq!(report.held, 1);
    assert_eq!(row(c, r), (Some(HELD.into()), 0, true));
    assert_eq!(next_attempt(c, r), at("2026-12-04T06:00:00Z"));
    r
}

fn clearing_quiet_hours_sends_the_held_notification_at_the_next_pass(db: &TestDb) {
    let mut c = db.conn();
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    let r = held_for_ben(&mut c, &mut d);
    prefs(&mut c, "ben", Some(""), None);
    // Due at once, and saying so until a pass claims it.
    assert_eq!(row(&mut c, r), (Some(RELEASED.into()), 0, false));
    assert!(next_attempt(&mut c, r) <= at("2026-12-03T21:41:00Z"));
    let report = queue::run_pass(&mut c, &mut d, at("2026-12-03T21:41:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert_eq!(queue::show(&mut c, r).unwrap().status.as_str(), "sent");
    assert_eq!(mails_in(&dir).len(), 1);
    // Once: the old window's end sends nothing more.
    queue::run_pass(&mut c, &mut d, at("2026-12-04T06:00:00Z")).unwrap();
    assert_eq!(mails_in(&dir).len(), 1);
    assert_eq!(outcomes(&mut c, r), ["transient", "sent"]);
    assert_eq!(row(&mut c, r).1, 0);
}

fn a_narrower_window_holds_it_until_the_new_end(db: &TestDb) {
    let mut c = db.conn();
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    let r = held_for_ben(&mut c, &mut d);
    prefs(&mut c, "ben", Some("22:00-23:00"), None);
    let report = queue::run_pass(&mut c, &mut d, at("2026-12-03T21:41:00Z")).unwrap();
    assert_eq!(report.held, 1);
    let new = "held: quiet hours until 23:00 Europe/Paris (22:00 UTC)";
    assert_eq!(row(&mut c, r), (Some(new.into()), 0, true));
    assert_eq!(next_attempt(&mut c, r), at("2026-12-03T22:00:00Z"));
    queue::run_pass(&mut c, &mut d, at("2026-12-03T21:59:59Z")).unwrap();
    assert!(mails_in(&dir).is_empty());
    queue::run_pass(&mut c, &mut d, at("2026-12-03T22:00:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status.as_str(), "sent");
    assert_eq!(mails_in(&dir).len(), 1);
}

fn a_new_zone_moves_the_end(db: &TestDb) {
    let mut c = db.conn();
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    let r = held_for_ben(&mut c, &mut d);
    // 06:41 in Tokyo: quiet until 07:00 there, 22:00 UTC.
    prefs(&mut c, "ben", None, Some("Asia/Tokyo"));
    queue::run_pass(&mut c, &mut d, at("2026-12-03T21:41:00Z")).unwrap();
    let new = "held: quiet hours until 07:00 Asia/Tokyo (22:00 UTC)";
    assert_eq!(row(&mut c, r), (Some(new.into()), 0, true));
    assert_eq!(next_attempt(&mut c, r), at("2026-12-03T22:00:00Z"));
    queue::run_pass(&mut c, &mut d, at("2026-12-03T22:00:00Z")).unwrap();
    assert_eq!(mails_in(&dir).len(), 1);
    // 22:30 in Tokyo, held; then to a zone where it is day: sent at the
    // next pass.
    let late = post(&mut c, "ben", false, "2026-12-04T13:30:00Z");
    queue::run_pass(&mut c, &mut d, at("2026-12-04T13:30:00Z")).unwrap();
    assert!(row(&mut c, late).2);
    prefs(&mut c, "ben", None, Some("America/New_York"));
    queue::run_pass(&mut c, &mut d, at("2026-12-04T13:31:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, late).unwrap().status.as_str(), "sent");
}

/// A port nothing listens on: a connection to it is refused (transient).
fn refusing_smtp() -> Delivery {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    smtp(&format!("smtp://127.0.0.1:{port}"))
}

fn a_retry_in_backoff_keeps_its_wait(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ana", "ana@example.com");
    user(&mut c, "ben", "ben@example.com");
    // No quiet hours yet: the attempt fails, and waits on its backoff.
    let failed = post(&mut c, "ben", false, "2026-12-03T21:20:00Z");
    let report = queue::run_pass(&mut c, &mut refusing_smtp(), at("2026-12-03T21:20:00Z")).unwrap();
    assert_eq!((report.retrying, report.held), (1, 0));
    let (_, retries, held) = row(&mut c, failed);
    assert_eq!((retries, held), (1, false));
    let wait = next_attempt(&mut c, failed);
    assert!(wait > at("2026-12-03T21:23:00Z"), "{wait}");
    // Then quiet hours, a notification held beside the failed one, and a
    // change: the held one goes, the failed one keeps its wait.
    prefs(&mut c, "ben", Some(NIGHT), None);
    let (mut d, email) = in_fresh_dir();
    let r = post(&mut c, "ben", false, "2026-12-03T21:21:00Z");
    let report = queue::run_pass(&mut c, &mut d, at("2026-12-03T21:21:00Z")).unwrap();
    assert_eq!(report.held, 1);
    prefs(&mut c, "ben", Some(""), None);
    assert_eq!(next_attempt(&mut c, failed), wait);
    queue::run_pass(&mut c, &mut d, at("2026-12-03T21:23:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status.as_str(), "sent");
    let v = queue::show(&mut c, failed).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert_eq!(outcomes(&mut c, failed), ["transient"]);
    assert_eq!(next_attempt(&mut c, failed), wait);
    assert_eq!(mails_in(std::path::Path::new(&email.dir)).len(), 1);
}

fn an_urgent_notification_is_never_held(db: &TestDb) {
    let mut c = db.conn();
    let (mut d, email) = in_fresh_dir();
    let r = held_for_ben(&mut c, &mut d);
    let urgent = post(&mut c, "ben", true, "2026-12-03T21:35:00Z");
    queue::run_pass(&mut c, &mut d, at("2026-12-03T21:35:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, urgent).unwrap().status.as_str(), "sent");
    assert!(!row(&mut c, urgent).2);
    assert_eq!(mails_in(std::path::Path::new(&email.dir)).len(), 1);
    prefs(&mut c, "ben", Some(""), None);
    queue::run_pass(&mut c, &mut d, at("2026-12-03T21:41:00Z")).unwrap();
    assert_eq!(outcomes(&mut c, urgent), ["sent"]);
    assert_eq!(queue::show(&mut c, r).unwrap().status.as_str(), "sent");
    assert_eq!(mails_in(std::path::Path::new(&email.dir)).len(), 2);
}

fn a_groups_own_rows_follow_the_groups_quiet_hours(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ana", "ana@example.com");
    user(&mut c, "ben", "ben@example.com");
    prefs(&mut c, "ben", Some(NIGHT), None);
    let t0 = at("2026-11-01T00:00:00Z");
    parties::create_group(&mut c, t0, "ops", Some("ops@example.com")).unwrap();
    parties::add_member(&mut c, "ops", "ben").unwrap();
    let night = UserChanges {
        quiet_hours: Some(NIGHT.into()),
        timezone: Some("Europe/Paris".into()),
        ..Default::default()
    };
    manage::update_group(&mut c, "ops", &night).unwrap();
    let (mut d, email) = in_fresh_dir();
    let dir = std::path::PathBuf::from(&email.dir);
    let own = post(&mut c, "ops", false, HELD_AT);
    let n = NewNotification {
        from: "ana".into(),
        to: "ops".into(),
        expand_group: true,
        subject: "To each".into(),
        message: "Changed.".into(),
        ..Default::default()
    };
    let each = queue::post_request(&mut c, &EmailConfig::default(), &n, at(HELD_AT)).unwrap();
    assert_eq!(
        queue::run_pass(&mut c, &mut d, at(HELD_AT)).unwrap().held,
        2
    );
    // The group's window cleared: its own row goes; ben's, a member's,
    // follows ben's own window and waits.
    let clear = UserChanges {
        quiet_hours: Some(String::new()),
        ..Default::default()
    };
    manage::update_group(&mut c, "ops", &clear).unwrap();
    let report = queue::run_pass(&mut c, &mut d, at("2026-12-03T21:41:00Z")).unwrap();
    assert_eq!(report.held, 0);
    assert_eq!(queue::show(&mut c, own).unwrap().status.as_str(), "sent");
    assert_eq!(row(&mut c, each), (Some(HELD.into()), 0, true));
    assert_eq!(mails_in(&dir).len(), 1);
    queue::run_pass(&mut c, &mut d, at("2026-12-04T06:00:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, each).unwrap().status.as_str(), "sent");
}

crate::backend_tests!(
    clearing_quiet_hours_sends_the_held_notification_at_the_next_pass,
    a_narrower_window_holds_it_until_the_new_end,
    a_new_zone_moves_the_end,
    a_retry_in_backoff_keeps_its_wait,
    an_urgent_notification_is_never_held,
    a_groups_own_rows_follow_the_groups_quiet_hours,
);
