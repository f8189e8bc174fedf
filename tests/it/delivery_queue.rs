//! The nt queue's semantics, on each back end: groups expanded to their
//! members, a backlog expanded round by round, every message holding all
//! of its pair's due rows however a round's limit cuts them, final statuses
//! from the rows, cancel in flight, purge, and the backoff schedule. What
//! the `dir` transport's outbox holds is `delivery_queue_outbox.rs`. The
//! shared helpers are in `common/delivery.rs`.

use crate::common;

use chrono::Duration;
use common::delivery::{notified_users, notify, one_message_to, parse, smtp, smtp_pool, user, T0};
use common::smtp::{free_port, FaultSmtp};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{delivery_log, nt_queue};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, NewNotification};
use digestd::parties;

fn groups_expand_to_each_user_once_or_go_to_the_group_address(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "jo", "ok.jo@example.com");
    user(&mut c, "kim", "ok.kim@example.com");
    parties::create_group(&mut c, at(T0), "ops", Some("ok.ops@example.com")).unwrap();
    parties::create_group(&mut c, at(T0), "oncall", None).unwrap();
    parties::add_member(&mut c, "ops", "jo").unwrap();
    parties::add_member(&mut c, "ops", "oncall").unwrap();
    parties::add_member(&mut c, "oncall", "jo").unwrap();
    parties::add_member(&mut c, "oncall", "kim").unwrap();
    // A member whose address is disabled gets a row with no address,
    // given up: listed, never sent to.
    user(&mut c, "lee", "ok.lee@example.com");
    parties::add_member(&mut c, "oncall", "lee").unwrap();
    parties::change_contact(
        &mut c,
        at(T0),
        "lee",
        parties::Channel::Email,
        &parties::ContactChange::Disable,
    )
    .unwrap();
    let cfg = EmailConfig::default();
    let post = |c: &mut DbConn, expand: bool| {
        queue::post_request(
            c,
            &cfg,
            &NewNotification {
                from: "sys".into(),
                to: "ops".into(),
                expand_group: expand,
                subject: "Incident".into(),
                message: "Resolved.".into(),
                ..Default::default()
            },
            at(T0),
        )
        .unwrap()
    };
    let expanded = post(&mut c, true);
    let whole = post(&mut c, false);
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let names = |v: &queue::RequestView| -> Vec<String> {
        v.recipients.iter().map(|r| r.party.clone()).collect()
    };
    let shown = queue::show(&mut c, expanded).unwrap();
    assert_eq!(names(&shown), ["jo", "kim", "lee"]);
    let lee = &shown.recipients[2];
    assert_eq!(
        (lee.address.as_deref(), lee.gave_up),
        (None, true),
        "{lee:?}"
    );
    assert_eq!(names(&queue::show(&mut c, whole).unwrap()), ["ops"]);
    let mut to: Vec<String> = server.received().into_iter().flat_map(|m| m.to).collect();
    to.sort();
    assert_eq!(
        to,
        [
            "ok.jo@example.com",
            "ok.kim@example.com",
            "ok.ops@example.com"
        ]
    );
}

/// A backlog larger than a pass's first round is expanded a round at a
/// time, between claims; every request ends final and every notification
/// is in exactly one message.
fn a_backlog_is_expanded_round_by_round_and_each_sent_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "amy", "ok.amy@example.com");
    let n = 1_500;
    for i in 0..n {
        notify(&mut c, "sys", "amy", &format!("N{i}"));
    }
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!((r.expanded, r.finished), (n, n), "{r}");
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(n as i64)));
    let mut seen = std::collections::BTreeMap::new();
    for m in server.received() {
        let text = parse(&m.data).body_text(0).unwrap().to_string();
        for line in text.lines() {
            if let Some((_, subject)) = line.split_once(" regarding ") {
                *seen.entry(subject.to_string()).or_insert(0) += 1;
            }
        }
    }
    assert_eq!(seen.len(), n, "every notification");
    assert!(seen.values().all(|k| *k == 1), "none twice");
    assert_eq!(
        server.received().len(),
        1,
        "one sender, one recipient: one message"
    );
}

/// A request expanded over a group and a direct one to a member of it,
/// from the same sender, go out as one message even when the direct one
/// is expanded in a later round than the group's.
fn a_group_request_waits_for_a_direct_one_to_the_same_member(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 1_000;
    notified_users(&mut c, n, |i| format!("P{i}"));
    user(&mut c, "zed", "ok.zed@example.com");
    parties::create_group(&mut c, at(T0), "crew", None).unwrap();
    parties::add_member(&mut c, "crew", "zed").unwrap();
    queue::post_request(
        &mut c,
        &EmailConfig::default(),
        &NewNotification {
            from: "sys".into(),
            to: "crew".into(),
            expand_group: true,
            subject: "To the crew".into(),
            message: "Everyone.".into(),
            ..Default::default()
        },
        at(T0),
    )
    .unwrap();
    notify(&mut c, "sys", "zed", "To zed");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.finished, n + 2, "{r}");
    let got = server.received();
    assert_eq!(got.len(), n + 1, "one message per recipient");
    assert_eq!(
        one_message_to(&got, "ok.zed@example.com"),
        "To the crew (and 1 more)"
    );
}

/// The history sweep deletes requests finished before the cutoff with
/// their rows and log, and nothing open or newer.
fn purge_deletes_requests_finished_before_the_cutoff(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ann", "ok.ann@example.com");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let old = notify(&mut c, "sys", "ann", "Old");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let newer = notify(&mut c, "sys", "ann", "Newer");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(2)).unwrap();
    let open = notify(&mut c, "sys", "ann", "Open");
    let p = queue::purge(&mut c, at(T0) + Duration::hours(1)).unwrap();
    assert_eq!(
        p,
        queue::QueuePurged {
            requests: 1,
            rows: 1,
            log: 1,
            bodies: 0
        }
    );
    assert!(queue::show(&mut c, old).is_err(), "gone");
    assert_eq!(queue::show(&mut c, newer).unwrap().status, "sent");
    assert_eq!(queue::show(&mut c, open).unwrap().status, "pending");
    let logged: i64 = delivery_log::table.count().get_result(&mut c).unwrap();
    assert_eq!(logged, 1, "the newer request's attempt stays");
}

/// A request cancelled after its round was claimed, while the builder is
/// still behind the sender, is left out of the message it was to be part
/// of; the rest of that message still goes out.
fn a_request_cancelled_in_flight_is_left_out(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    // A slow server (20 ms a message, 4 sessions): the builder runs at most
    // three chunks of 256 ahead of the sender, so the last recipient's
    // message, in the fourth chunk, is built about 1.3 s into the pass.
    let n = 800;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("slow.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    let last = format!("p{}", n - 1);
    let keep = notify(&mut c, "sys", &last, "Keep");
    let gone = notify(&mut c, "sys", &last, "Gone");
    let server = FaultSmtp::start();
    let (url, db_url) = (server.url(), db.url.clone());
    let pass = std::thread::spawn(move || {
        let mut c = digestd::db::DbUrl::parse(&db_url)
            .unwrap()
            .connect()
            .unwrap();
        let mut d = smtp_pool(&url, 4);
        queue::run_pass(&mut c, &mut d, at(T0)).unwrap()
    });
    let started = std::time::Instant::now();
    loop {
        let claimed: Option<Option<String>> = nt_queue::table
            .filter(nt_queue::request_id.eq(gone.0))
            .select(nt_queue::claimed_by)
            .first(&mut c)
            .optional()
            .unwrap();
        if matches!(claimed, Some(Some(_))) {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "never claimed"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    queue::cancel_request(&mut c, gone, at(T0)).unwrap();
    assert!(
        server.received().len() < n / 2,
        "cancelled early in the pass"
    );
    let r = pass.join().unwrap();
    assert_eq!(r.finished, n + 1, "{r}");
    let got = server.received();
    assert_eq!(got.len(), n);
    let to_last = format!("slow.{last}@example.com");
    assert_eq!(
        one_message_to(&got, &to_last),
        format!("Notice {} (and 1 more)", n - 1)
    );
    let m = got.iter().find(|m| m.to == [to_last.as_str()]).unwrap();
    let text = parse(&m.data).body_text(0).unwrap().to_string();
    assert!(
        text.contains("regarding Keep") && !text.contains("Gone"),
        "{text}"
    );
    assert_eq!(queue::show(&mut c, keep).unwrap().status, "sent");
    let v = queue::show(&mut c, gone).unwrap();
    assert_eq!(v.status, "cancelled");
    assert!(!v.recipients[0].successful);
}

/// The queue keeps no foreign key on parties: a member deleted by hand
/// after a group request was expanded still gets the message at the
/// address the row was expanded with, and the request finishes.
fn a_party_deleted_by_hand_after_expansion_still_gets_its_row(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "jo", "ok.jo@example.com");
    parties::create_group(&mut c, at(T0), "crew", None).unwrap();
    parties::add_member(&mut c, "crew", "jo").unwrap();
    let r = queue::post_request(
        &mut c,
        &EmailConfig::default(),
        &NewNotification {
            from: "sys".into(),
            to: "crew".into(),
            expand_group: true,
            subject: "Rota".into(),
            message: "Next week's rota.".into(),
            ..Default::default()
        },
        at(T0),
    )
    .unwrap();
    queue::expand(&mut c, at(T0)).unwrap();
    diesel::sql_query("DELETE FROM parties WHERE name = 'jo'")
        .execute(&mut c)
        .unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(
        one_message_to(&server.received(), "ok.jo@example.com"),
        "Rota"
    );
}

/// New requests and retries of the same pairs go out together even when
/// the retries due outnumber a round: a new row whose pair's older rows
/// fall past the round's cut waits for the round that takes them.
fn new_rows_wait_for_their_pairs_retries_past_a_rounds_cut(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 1_001;
    notified_users(&mut c, n, |i| format!("Old {i}"));
    // The server is down: every row is retried five minutes later.
    let port = free_port();
    let mut d = smtp(&format!("smtp://127.0.0.1:{port}"));
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.retrying, n, "{r}");
    let later = at(T0) + Duration::minutes(5);
    // p999's by email and SMS (p999 has no number): its SMS row lies past
    // the cut, its email row in the cut's own group.
    for i in [0, n - 2, n - 1] {
        let channels = if i == n - 2 {
            vec!["email", "sms"]
        } else {
            vec!["email"]
        };
        queue::post_request(
            &mut c,
            &EmailConfig::default(),
            &NewNotification {
                from: "sys".into(),
                to: format!("p{i}"),
                subject: format!("New {i}"),
                message: "Posted during the outage.".into(),
                channels: channels.into_iter().map(String::from).collect(),
                ..Default::default()
            },
            later,
        )
        .unwrap();
    }
    let server = FaultSmtp::start_on(port);
    // The first round: the new rows, and the first 1,000 retries (p0 to
    // p999); p1000's new row waits for its retry.
    let r = queue::run_pass(&mut c, &mut d, later).unwrap();
    assert_eq!(r.finished, n + 3, "{r}");
    let got = server.received();
    assert_eq!(got.len(), n, "one message per recipient");
    for i in [0, n - 2, n - 1] {
        assert_eq!(
            one_message_to(&got, &format!("ok.p{i}@example.com")),
            format!("Old {i} (and 1 more)")
        );
    }
}

/// Final statuses of requests to one party, whose rows are all settled in
/// one write (sent, failed) or across writes (email and SMS, no number).
fn a_single_partys_request_gets_its_final_status_from_its_rows(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ann", "ok.ann@example.com");
    user(&mut c, "bob", "gone.bob@example.com");
    let sent = notify(&mut c, "sys", "ann", "One");
    let failed = notify(&mut c, "sys", "bob", "Two");
    let partial = queue::post_request(
        &mut c,
        &EmailConfig::default(),
        &NewNotification {
            from: "sys".into(),
            to: "ann".into(),
            subject: "Three".into(),
            message: "By mail and SMS.".into(),
            channels: vec!["email".into(), "sms".into()],
            ..Default::default()
        },
        at(T0),
    )
    .unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.finished, 3, "{r}");
    let status = |c: &mut DbConn, id| queue::show(c, id).unwrap().status;
    assert_eq!(status(&mut c, sent), "sent");
    assert_eq!(status(&mut c, failed), "failed");
    assert_eq!(status(&mut c, partial), "partial_failure");
}

/// A pair whose requests straddle a round's limit, by the expansion's and
/// then by the claim's count, still gets one message holding all of them.
fn a_pair_cut_by_a_rounds_limit_gets_one_message(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    // The first round takes 1,000 rows in order of sender and recipient:
    // 999 one-request recipients, then the first of zed's three.
    let n = 999;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("ok.p{i}@example.com"));
    }
    user(&mut c, "zed", "ok.zed@example.com");
    notify(&mut c, "sys", "zed", "Z0");
    for i in 0..n {
        notify(&mut c, "sys", &format!("p{i}"), &format!("P{i}"));
    }
    notify(&mut c, "sys", "zed", "Z1");
    notify(&mut c, "sys", "zed", "Z2");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!((r.expanded, r.finished), (n + 3, n + 3), "{r}");
    let got = server.received();
    assert_eq!(got.len(), n + 1, "one message per recipient");
    assert_eq!(
        one_message_to(&got, "ok.zed@example.com"),
        "Z0 (and 2 more)"
    );
}

/// Statuses follow the rows as they are written: a process that does not
/// hold the queue lease (and so runs no status update) still leaves final
/// each request whose last row it wrote; one with a row to retry stays
/// `sending`.
fn a_request_is_final_when_its_last_row_is_written(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "amy", "ok.amy@example.com");
    user(&mut c, "bob", "busy.bob@example.com");
    let ra = notify(&mut c, "sys", "amy", "Done");
    let rb = notify(&mut c, "sys", "bob", "Not yet");
    queue::expand(&mut c, at(T0)).unwrap();
    let ten = Duration::minutes(10);
    assert!(
        digestd::schedule::lease::acquire(&mut c, queue::QUEUE_JOB, "elsewhere", at(T0), ten)
            .unwrap()
    );
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let report = queue::run_queue(&mut c, &mut d, at(T0), "here", ten).unwrap();
    assert_eq!(report.finished, 1, "{report:?}");
    assert_eq!(queue::show(&mut c, ra).unwrap().status, "sent");
    assert_eq!(queue::show(&mut c, rb).unwrap().status, "sending");
}

fn backoff_doubles_and_is_capped(_db: &TestDb) {
    let d = Delivery::new(&EmailConfig::default(), crate::common::rt()).unwrap();
    let mins: Vec<i64> = (1..=9).map(|a| d.backoff(a).num_minutes()).collect();
    assert_eq!(mins, [5, 10, 20, 40, 80, 160, 320, 360, 360]);
}

backend_tests!(
    a_backlog_is_expanded_round_by_round_and_each_sent_once,
    a_pair_cut_by_a_rounds_limit_gets_one_message,
    a_single_partys_request_gets_its_final_status_from_its_rows,
    new_rows_wait_for_their_pairs_retries_past_a_rounds_cut,
    a_group_request_waits_for_a_direct_one_to_the_same_member,
    a_party_deleted_by_hand_after_expansion_still_gets_its_row,
    a_request_cancelled_in_flight_is_left_out,
    purge_deletes_requests_finished_before_the_cutoff,
    a_request_is_final_when_its_last_row_is_written,
    groups_expand_to_each_user_once_or_go_to_the_group_address,
    backoff_doubles_and_is_capped,
);
