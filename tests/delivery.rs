//! The nt queue over real SMTP on loopback, on each back end: batching per
//! sender and recipient, reply codes kept, transient failures retried with
//! backoff, permanent ones given up, a connection cut in the middle of DATA,
//! a server that is down and then back, cancel. The scripted server is in
//! `common/smtp.rs`; Postfix's `smtp-sink` carries the volume test.

mod common;

use chrono::Duration;
use common::smtp::{free_port, FaultSmtp};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{delivery_log, nt_queue};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, NewNotification};
use digestd::ids::RequestId;
use digestd::parties::{self, NewUser};

const T0: &str = "2026-11-23T09:00:00Z";

fn user(c: &mut DbConn, name: &str, email: &str) {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "Europe/Paris".into(),
            email: Some(email.into()),
            ..Default::default()
        },
    )
    .unwrap();
}

fn notify(c: &mut DbConn, from: &str, to: &str, subject: &str) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: from.into(),
            to: to.into(),
            subject: subject.into(),
            message: format!("Body of {subject}.\nSecond line."),
            ..Default::default()
        },
        at(T0),
    )
    .unwrap()
}

fn smtp(url: &str) -> Delivery {
    smtp_pool(url, EmailConfig::default().pool_size)
}

fn smtp_pool(url: &str, pool_size: u32) -> Delivery {
    let dir = tempfile::tempdir().unwrap().keep();
    Delivery::new(&EmailConfig {
        transport: "smtp".into(),
        smtp_url: url.into(),
        dir: dir.display().to_string(),
        pool_size,
        timeout_seconds: 5,
        ..EmailConfig::default()
    })
    .unwrap()
}

fn parse(data: &[u8]) -> mail_parser::Message<'_> {
    mail_parser::MessageParser::default()
        .parse(data)
        .expect("valid message")
}

/// The subject of the one message `to` received; fails unless exactly one.
fn one_message_to(got: &[common::smtp::Received], to: &str) -> String {
    let m: Vec<_> = got.iter().filter(|m| m.to == [to]).collect();
    assert_eq!(m.len(), 1, "one message to {to}");
    parse(&m[0].data).subject().unwrap().to_string()
}

/// Users p0, p1 … at `ok.p<i>@example.com`, each sent `subject(i)` by sys.
fn notified_users(c: &mut DbConn, n: usize, subject: impl Fn(usize) -> String) {
    for i in 0..n {
        user(c, &format!("p{i}"), &format!("ok.p{i}@example.com"));
        notify(c, "sys", &format!("p{i}"), &subject(i));
    }
}

fn happy_path_batches_per_sender_and_recipient(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ann", "ok.ann@example.com");
    user(&mut c, "bob", "fwd.bob@example.com");
    let a: Vec<RequestId> = (1..=3)
        .map(|i| notify(&mut c, "sys", "ann", &format!("Build {i} finished")))
        .collect();
    let b = notify(&mut c, "sys", "bob", "Disk almost full");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(
        (r.expanded, r.finished, r.gave_up, r.retrying),
        (4, 4, 0, 0)
    );
    assert_eq!(
        r.written.get("email"),
        Some(&2),
        "one message per recipient"
    );
    let got = server.received();
    assert_eq!(got.len(), 2);
    let to_ann = got.iter().find(|m| m.to == ["ok.ann@example.com"]).unwrap();
    let m = parse(&to_ann.data);
    assert_eq!(m.subject(), Some("Build 1 finished (and 2 more)"));
    let text = m.body_text(0).unwrap();
    for i in 1..=3 {
        assert!(
            text.contains(&format!("regarding Build {i} finished")),
            "{text}"
        );
    }
    assert_eq!(
        text.matches("Message sent on Mon, 23 Nov 2026 09:00 UTC")
            .count(),
        3
    );
    assert!(m
        .body_html(0)
        .unwrap()
        .contains("regarding Build 2 finished</h3>"));
    assert_eq!(to_ann.from, "digestd@localhost");
    for id in a.iter().chain([&b]) {
        let v = queue::show(&mut c, *id).unwrap();
        assert_eq!(v.status, "sent", "{v:?}");
        assert!(v
            .recipients
            .iter()
            .all(|r| r.successful && r.retry_count == 0));
    }
    // A 251 (will forward) at RCPT is delivery; the code kept is the reply
    // to the message itself.
    let vb = queue::show(&mut c, b).unwrap();
    assert_eq!(vb.recipients[0].reply_code, Some(250));
    // A second pass sends nothing again.
    let again = queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    assert!(again.written.is_empty());
    assert_eq!(server.received().len(), 2);
}

fn transient_failures_back_off_then_give_up_and_permanent_ones_stop_at_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "carl", "busy.carl@example.com");
    user(&mut c, "dora", "gone.dora@example.com");
    let rc = notify(&mut c, "sys", "carl", "Weekly report");
    let rd = notify(&mut c, "sys", "dora", "Weekly report");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let t0 = at(T0);
    queue::run_pass(&mut c, &mut d, t0).unwrap();
    let carl = queue::show(&mut c, rc).unwrap();
    let dora = queue::show(&mut c, rd).unwrap();
    assert_eq!(
        (carl.status.as_str(), dora.status.as_str()),
        ("sending", "failed")
    );
    let (cr, dr) = (&carl.recipients[0], &dora.recipients[0]);
    assert_eq!(
        (cr.retry_count, cr.reply_code, cr.gave_up),
        (1, Some(451), false)
    );
    assert!(
        cr.reply_message
            .as_deref()
            .unwrap()
            .contains("mailbox busy"),
        "{cr:?}"
    );
    assert_eq!(
        (dr.retry_count, dr.reply_code, dr.gave_up),
        (1, Some(550), true)
    );
    let next = |c: &mut DbConn| -> chrono::DateTime<chrono::Utc> {
        nt_queue::table
            .filter(nt_queue::request_id.eq(rc.0))
            .select(nt_queue::next_attempt_at)
            .first::<chrono::NaiveDateTime>(c)
            .unwrap()
            .and_utc()
    };
    // Base 5 minutes, doubling: +5 min after the first failure.
    assert_eq!(next(&mut c), t0 + Duration::minutes(5));
    // Not due before then: nothing is attempted.
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(4)).unwrap();
    assert_eq!(
        queue::show(&mut c, rc).unwrap().recipients[0].retry_count,
        1
    );
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(5)).unwrap();
    assert_eq!(
        queue::show(&mut c, rc).unwrap().recipients[0].retry_count,
        2
    );
    assert_eq!(next(&mut c), t0 + Duration::minutes(15));
    // The third attempt is the last (max_retries 3): given up, request failed.
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(15)).unwrap();
    let carl = queue::show(&mut c, rc).unwrap();
    assert_eq!(carl.status, "failed");
    // Every attempt is in the delivery log, in order.
    let log: Vec<(String, Option<i32>)> = delivery_log::table
        .filter(delivery_log::request_id.eq(rc.0))
        .select((delivery_log::outcome, delivery_log::reply_code))
        .order(delivery_log::id.asc())
        .load(&mut c)
        .unwrap();
    let want: Vec<(String, Option<i32>)> = vec![
        ("transient".into(), Some(451)),
        ("transient".into(), Some(451)),
        ("gave_up".into(), Some(451)),
    ];
    assert_eq!(log, want);
    let dora_log: Vec<String> = delivery_log::table
        .filter(delivery_log::request_id.eq(rd.0))
        .select(delivery_log::outcome)
        .load(&mut c)
        .unwrap();
    assert_eq!(dora_log, ["permanent"]);
    assert_eq!(
        (carl.recipients[0].retry_count, carl.recipients[0].gave_up),
        (3, true)
    );
    assert!(server.received().is_empty());
}

fn a_cut_connection_is_retried_and_the_pass_goes_on(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "erin", "cut.erin@example.com");
    user(&mut c, "finn", "ok.finn@example.com");
    let re = notify(&mut c, "sys", "erin", "Release notes");
    let rf = notify(&mut c, "sys", "finn", "Release notes");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let erin = queue::show(&mut c, re).unwrap();
    let finn = queue::show(&mut c, rf).unwrap();
    assert_eq!(
        finn.status, "sent",
        "finn's message went out on a new connection"
    );
    assert_eq!(erin.status, "sending");
    assert_eq!(
        (
            erin.recipients[0].retry_count,
            erin.recipients[0].reply_code
        ),
        (1, None)
    );
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, re).unwrap().status, "sent");
    // Each delivered exactly once.
    let got = server.received();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got.iter()
            .filter(|m| m.to == ["cut.erin@example.com"])
            .count(),
        1
    );
}

fn a_server_that_is_down_then_back_gets_the_message_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "gus", "ok.gus@example.com");
    let r = notify(&mut c, "sys", "gus", "Outage report");
    let port = free_port();
    let mut d = smtp(&format!("smtp://127.0.0.1:{port}"));
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert_eq!(
        v.recipients[0].reply_code, None,
        "no reply from a closed port"
    );
    let server = FaultSmtp::start_on(port);
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(server.received().len(), 1);
}

fn cancel_stops_what_was_not_sent(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "hal", "busy.hal@example.com");
    user(&mut c, "ivy", "ok.ivy@example.com");
    let rh = notify(&mut c, "sys", "hal", "Maintenance");
    let ri = notify(&mut c, "sys", "ivy", "Maintenance");
    queue::cancel_request(&mut c, ri, at(T0)).unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    // hal's failed once; cancel it while it waits for its retry.
    queue::cancel_request(&mut c, rh, at(T0)).unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    assert!(server.received().is_empty());
    assert_eq!(queue::show(&mut c, rh).unwrap().status, "cancelled");
    assert_eq!(queue::show(&mut c, ri).unwrap().status, "cancelled");
    assert!(
        queue::cancel_request(&mut c, ri, at(T0)).is_err(),
        "only once"
    );
}

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
    assert_eq!(
        names(&queue::show(&mut c, expanded).unwrap()),
        ["jo", "kim"]
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

/// Postfix's smtp-sink on a loopback port, dumping every message to a file.
struct Sink {
    child: std::process::Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Sink {
    fn start() -> Option<Sink> {
        let bin = ["/usr/sbin/smtp-sink", "/usr/bin/smtp-sink"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        let Some(bin) = bin else {
            assert!(
                std::env::var_os("CI").is_none(),
                "smtp-sink is missing: .ci/run installs postfix"
            );
            eprintln!("skipped: smtp-sink not installed (Debian package postfix)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let port = free_port();
        let mut cmd = std::process::Command::new(bin);
        // As root smtp-sink must drop privileges; the dump directory is
        // world-writable for that user.
        cmd.args(["-u", "nobody", "-d"])
            .arg(format!("{}/%M.", dir.path().display()))
            .arg(format!("127.0.0.1:{port}"))
            .arg("256");
        // Owned by the Sink from the start, so it is killed and reaped on
        // every path.
        let sink = Sink {
            child: cmd.spawn().expect("start smtp-sink"),
            port,
            dir,
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(sink);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("smtp-sink did not listen on {port}");
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn smtp_sink_receives_every_message_once(db: &TestDb) {
    let Some(sink) = Sink::start() else { return };
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 120;
    for i in 0..n {
        user(&mut c, &format!("u{i}"), &format!("user{i}@example.com"));
        notify(&mut c, "sys", &format!("u{i}"), &format!("Report {i}"));
    }
    let mut d = smtp(&format!("smtp://127.0.0.1:{}", sink.port));
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.written.get("email"), Some(&n), "{r}");
    assert_eq!(r.finished, n);
    let mut seen = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(sink.dir.path()).unwrap().flatten() {
        let raw = std::fs::read(e.path()).unwrap();
        let m = parse(&raw);
        let rcpt = m.header_raw("X-Rcpt-Args").unwrap().trim().to_string();
        let subject = m.subject().unwrap().to_string();
        assert!(m.body_html(0).is_some() && m.body_text(0).is_some());
        *seen.entry((rcpt, subject)).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), n, "one file per recipient");
    assert!(seen.values().all(|k| *k == 1), "no duplicates");
    assert!(seen.contains_key(&("<user7@example.com>".to_string(), "Report 7".to_string())));
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
            log: 1
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

/// `digestd queue run` killed with SIGKILL in the middle of a pass: after
/// the dead process's lease and claims expire, the next pass sends what was
/// not settled. Nothing is lost; a message whose row was marked delivered
/// before the kill is not sent again (only the ones in flight may be).
fn a_pass_killed_mid_delivery_loses_nothing_and_resends_only_the_unsettled(db: &TestDb) {
    use std::process::{Command, Stdio};
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 600;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("slow.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    let server = FaultSmtp::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |at: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
        cmd.current_dir(dir.path())
            .args(["--db", &db.url, "queue", "run", "--at", at])
            .env_remove("DIGESTD_DATABASE_URL")
            .env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env("DIGESTD_EMAIL__SMTP_URL", server.url())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    };
    let delivered = |c: &mut DbConn| -> Vec<String> {
        nt_queue::table
            .filter(nt_queue::is_successful.eq(true))
            .select(nt_queue::address)
            .load::<Option<String>>(c)
            .unwrap()
            .into_iter()
            .flatten()
            .collect()
    };
    let mut child = run(T0).spawn().unwrap();
    // Kill once some rows are marked delivered and some messages are not sent.
    let started = std::time::Instant::now();
    while delivered(&mut c).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "nothing settled in a minute"
        );
        assert!(child.try_wait().unwrap().is_none(), "the pass ended early");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let settled = delivered(&mut c);
    let sent_before = server.received().len();
    assert!(
        sent_before < n,
        "killed in the middle ({sent_before} of {n} sent)"
    );
    // The dead process's lease and claims last 10 minutes.
    let out = run("2026-11-23T09:11:00Z").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut count: std::collections::BTreeMap<String, usize> = Default::default();
    for m in server.received() {
        for to in m.to {
            *count.entry(to).or_default() += 1;
        }
    }
    assert_eq!(count.len(), n, "nothing lost");
    for a in &settled {
        assert_eq!(count[a], 1, "{a} was marked delivered before the kill");
    }
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(n as i64)));
}

fn two_processes_deliver_at_once_and_nothing_twice(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 300;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("ok.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    queue::expand(&mut c, at(T0)).unwrap();
    let server = FaultSmtp::start();
    let url = server.url();
    // Two processes deliver at T0 together, each with its own connection
    // (the first to claim may take every row: what matters is that no row
    // is sent by both).
    let workers: Vec<_> = (0..2)
        .map(|k| {
            let (url, db_url) = (url.clone(), db.url.clone());
            std::thread::spawn(move || {
                let mut c = digestd::db::DbUrl::parse(&db_url)
                    .unwrap()
                    .connect()
                    .unwrap();
                let mut d = smtp(&url);
                queue::run_queue(
                    &mut c,
                    &mut d,
                    at(T0),
                    &format!("worker-{k}"),
                    Duration::minutes(10),
                )
                .unwrap()
            })
        })
        .collect();
    let reports: Vec<queue::PassReport> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let delivered: usize = reports
        .iter()
        .map(|r| r.written.get("email").copied().unwrap_or(0))
        .sum();
    assert_eq!(delivered, n, "{reports:?}");
    let mut to: Vec<String> = server.received().into_iter().flat_map(|m| m.to).collect();
    assert_eq!(to.len(), n);
    to.sort();
    to.dedup();
    assert_eq!(to.len(), n, "no message twice");
    // Each request was final as soon as its row was written; a pass
    // sends nothing more.
    let mut last = smtp(&url);
    queue::run_pass(&mut c, &mut last, at(T0) + Duration::minutes(1)).unwrap();
    assert_eq!(server.received().len(), n);
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(n as i64)));
}

/// Two processes expanding the same pending requests at once: each request
/// gets its rows once and moves to `sending` once, and neither process
/// fails (on PostgreSQL the second waits for the first's rows, then finds
/// them no longer pending; SQLite has one writer at a time).
fn two_expansions_at_once_write_each_row_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 2_000;
    notified_users(&mut c, n, |i| format!("Notice {i}"));
    let start = std::sync::Arc::new(std::sync::Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (db_url, start) = (db.url.clone(), start.clone());
            std::thread::spawn(move || {
                let mut c = digestd::db::DbUrl::parse(&db_url)
                    .unwrap()
                    .connect()
                    .unwrap();
                start.wait();
                queue::expand(&mut c, at(T0))
            })
        })
        .collect();
    let expanded: Vec<usize> = workers
        .into_iter()
        .map(|w| w.join().unwrap().expect("an expansion failed"))
        .collect();
    let rows: i64 = nt_queue::table.count().get_result(&mut c).unwrap();
    assert_eq!(
        rows, n as i64,
        "one row per request ({expanded:?} expanded)"
    );
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sending"), Some(&(n as i64)));
    assert_eq!(s.requests.get("pending"), None);
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

fn a_claim_left_by_a_dead_round_expires_and_the_row_goes_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "kai", "ok.kai@example.com");
    let r = notify(&mut c, "sys", "kai", "Payroll");
    queue::expand(&mut c, at(T0)).unwrap();
    // A round of a process that died: its claim runs until T0 + 10 min.
    diesel::update(nt_queue::table)
        .set((
            nt_queue::claimed_by.eq(Some("dead-round")),
            nt_queue::claimed_until.eq(Some((at(T0) + Duration::minutes(10)).naive_utc())),
        ))
        .execute(&mut c)
        .unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert!(server.received().is_empty(), "claimed by another round");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(11)).unwrap();
    assert_eq!(server.received().len(), 1);
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
}

/// A sendmail stand-in: appends the message to `log` and exits with the
/// code found in `code` (0 when the file is absent).
fn fake_sendmail(dir: &std::path::Path) -> (String, std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("sendmail");
    let (log, code) = (dir.join("log"), dir.join("code"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >> {log}\necho '--end--' >> {log}\n[ -f {code} ] && exit $(cat {code})\nexit 0\n",
            log = log.display(),
            code = code.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (format!("{} -t -i", script.display()), log, code)
}

fn the_pipe_transport_reads_exit_codes_like_sendmail(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "lea", "lea@example.com");
    let r = notify(&mut c, "sys", "lea", "Via sendmail");
    let dir = tempfile::tempdir().unwrap();
    let (cmd, log, code) = fake_sendmail(dir.path());
    let mut d = Delivery::new(&EmailConfig {
        transport: "pipe".into(),
        pipe_command: cmd,
        ..EmailConfig::default()
    })
    .unwrap();
    // 75: try again later.
    std::fs::write(&code, "75").unwrap();
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert!(v.recipients[0]
        .reply_message
        .as_deref()
        .unwrap()
        .contains("exited 75"));
    // 0: delivered; the command got one whole message.
    std::fs::remove_file(&code).unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let got = std::fs::read_to_string(&log).unwrap();
    let last = got
        .split("--end--\n")
        .filter(|m| !m.is_empty())
        .last()
        .unwrap();
    let m = parse(last.as_bytes());
    assert_eq!(m.subject(), Some("Via sendmail"));
    // Any other code: given up at once.
    let r2 = notify(&mut c, "sys", "lea", "Refused");
    std::fs::write(&code, "67").unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(6)).unwrap();
    let v = queue::show(&mut c, r2).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].gave_up),
        ("failed", true)
    );
}

fn backoff_doubles_and_is_capped(_db: &TestDb) {
    let d = Delivery::new(&EmailConfig::default()).unwrap();
    let mins: Vec<i64> = (1..=9).map(|a| d.backoff(a).num_minutes()).collect();
    assert_eq!(mins, [5, 10, 20, 40, 80, 160, 320, 360, 360]);
}

fn the_db_transport_fills_an_sqlite_outbox_a_relay_can_drain(db: &TestDb) {
    use diesel::sql_types::{Binary, Text};
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        envelope_from: String,
        #[diesel(sql_type = Text)]
        recipient: String,
        #[diesel(sql_type = Binary)]
        message: Vec<u8>,
    }
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "lea", "lea@example.com");
    user(&mut c, "max", "max@example.com");
    let a = notify(&mut c, "sys", "lea", "First");
    let b = notify(&mut c, "sys", "lea", "Second");
    let m = notify(&mut c, "sys", "max", "Third");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay/outbox.db");
    let mut d = Delivery::new(&EmailConfig {
        transport: "db".into(),
        db_path: path.display().to_string(),
        dir: dir.path().join("files").display().to_string(),
        ..EmailConfig::default()
    })
    .unwrap();
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    for r in [a, b, m] {
        assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    }
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    // What a relay sees: one message per recipient, batched, valid MIME.
    let mut relay = diesel::SqliteConnection::establish(&path.display().to_string()).unwrap();
    let rows: Vec<Row> =
        diesel::sql_query("SELECT envelope_from, recipient, message FROM outbox ORDER BY id")
            .load(&mut relay)
            .unwrap();
    let got: Vec<(&str, &str, String)> = rows
        .iter()
        .map(|r| {
            let msg = parse(&r.message);
            (
                r.envelope_from.as_str(),
                r.recipient.as_str(),
                msg.subject().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "digestd@localhost");
    assert_eq!(got[0].1, "lea@example.com");
    assert_eq!(got[0].2, "First (and 1 more)");
    let text = parse(&rows[0].message).body_text(0).unwrap().to_string();
    assert!(text.contains("Body of Second."), "{text}");
    assert_eq!((got[1].1, got[1].2.as_str()), ("max@example.com", "Third"));
}

/// With PIPELINING, a refused recipient is answered with RSET and the
/// session goes on to the next message; nothing needs a new connection.
fn a_refusal_keeps_the_pipelined_session(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "bea", "busy.bea@example.com");
    user(&mut c, "gus", "gone.gus@example.com");
    user(&mut c, "oli", "ok.oli@example.com");
    let b = notify(&mut c, "sys", "bea", "One");
    let g = notify(&mut c, "sys", "gus", "Two");
    let o = notify(&mut c, "sys", "oli", "Three");
    let server = FaultSmtp::start();
    let mut d = smtp_pool(&server.url(), 1);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let code = |c: &mut DbConn, r| queue::show(c, r).unwrap().recipients[0].reply_code;
    assert_eq!(code(&mut c, b), Some(451));
    assert_eq!(code(&mut c, g), Some(550));
    assert_eq!(queue::show(&mut c, o).unwrap().status, "sent");
    assert_eq!(server.received().len(), 1);
    assert_eq!(server.sessions(), 1, "one session for all three");
}

/// On one session each message's body, final dot and the next message's
/// commands go in one write. A refused dot leaves the next message's
/// commands standing; a hang-up instead of the dot's reply sends the next
/// message (whose commands had gone out, not its body) on a new session,
/// once.
fn a_pipelined_run_survives_a_refused_dot_and_a_hang_up(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    // Queue order is by recipient id: the order they are created in.
    let names = ["ok.a", "late.b", "ok.c", "cut.d", "ok.e", "ok.f"];
    let mut reqs = Vec::new();
    for n in names {
        let name = n.replace('.', "_");
        user(&mut c, &name, &format!("{n}@example.com"));
        reqs.push(notify(&mut c, "sys", &name, n));
    }
    let server = FaultSmtp::start();
    let mut d = smtp_pool(&server.url(), 1);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let show = |c: &mut DbConn, i: usize| queue::show(c, reqs[i]).unwrap();
    assert_eq!(show(&mut c, 1).status, "failed");
    assert_eq!(show(&mut c, 1).recipients[0].reply_code, Some(554));
    assert_eq!(show(&mut c, 3).status, "sending", "cut: retried later");
    assert_eq!(show(&mut c, 3).recipients[0].retry_count, 1);
    for i in [0, 2, 4, 5] {
        assert_eq!(show(&mut c, i).status, "sent", "{}", names[i]);
    }
    assert_eq!(server.sessions(), 2, "a new session after the hang-up only");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(show(&mut c, 3).status, "sent");
    let mut got: Vec<String> = server.received().iter().map(|m| m.to.join(",")).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "cut.d@example.com",
            "ok.a@example.com",
            "ok.c@example.com",
            "ok.e@example.com",
            "ok.f@example.com"
        ],
        "each once, the refused one not at all"
    );
}

backend_tests!(
    a_pass_killed_mid_delivery_loses_nothing_and_resends_only_the_unsettled,
    a_backlog_is_expanded_round_by_round_and_each_sent_once,
    a_pair_cut_by_a_rounds_limit_gets_one_message,
    a_single_partys_request_gets_its_final_status_from_its_rows,
    new_rows_wait_for_their_pairs_retries_past_a_rounds_cut,
    a_group_request_waits_for_a_direct_one_to_the_same_member,
    a_party_deleted_by_hand_after_expansion_still_gets_its_row,
    a_request_cancelled_in_flight_is_left_out,
    purge_deletes_requests_finished_before_the_cutoff,
    a_request_is_final_when_its_last_row_is_written,
    a_pipelined_run_survives_a_refused_dot_and_a_hang_up,
    a_refusal_keeps_the_pipelined_session,
    the_db_transport_fills_an_sqlite_outbox_a_relay_can_drain,
    happy_path_batches_per_sender_and_recipient,
    transient_failures_back_off_then_give_up_and_permanent_ones_stop_at_once,
    a_cut_connection_is_retried_and_the_pass_goes_on,
    a_server_that_is_down_then_back_gets_the_message_once,
    cancel_stops_what_was_not_sent,
    groups_expand_to_each_user_once_or_go_to_the_group_address,
    backoff_doubles_and_is_capped,
    smtp_sink_receives_every_message_once,
    two_processes_deliver_at_once_and_nothing_twice,
    two_expansions_at_once_write_each_row_once,
    a_claim_left_by_a_dead_round_expires_and_the_row_goes_once,
    the_pipe_transport_reads_exit_codes_like_sendmail,
);
