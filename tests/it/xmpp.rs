//! The XMPP listener against a real Prosody on loopback (config in
//! `tests/fixtures/prosody/`), through the real queue, on each back end; a
//! second XMPP client reads what arrived.

use crate::common;

use std::time::Duration;

use common::prosody::{Prosody, Reader};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{EmailConfig, XmppConfig};
use digestd::db::schema::{delivery_log, nt_messages, nt_requests};
use digestd::db::DbConn;
use digestd::deliver::listener::{DeliveryError, Listener, Outgoing};
use digestd::deliver::queue::{self, Delivery, NewNotification};
use digestd::deliver::xmpp::XmppListener;
use digestd::ids::RequestId;
use digestd::parties::{self, NewUser};

const T0: &str = "2026-11-23T09:00:00Z";
const WAIT: Duration = Duration::from_secs(10);

fn user(c: &mut DbConn, name: &str, jid: Option<&str>) {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "Europe/Paris".into(),
            email: Some(format!("{name}@example.com")),
            xmpp: jid.map(String::from),
            ..Default::default()
        },
    )
    .unwrap();
}

fn notify(c: &mut DbConn, to: &str, subject: &str, message: &str) -> RequestId {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: "ops".into(),
            to: to.into(),
            subject: subject.into(),
            message: message.into(),
            channels: vec!["xmpp".into()],
            ..Default::default()
        },
        at(T0),
    )
    .unwrap()
}

fn xmpp_config(p: &Prosody) -> XmppConfig {
    XmppConfig {
        transport: digestd::config::XmppTransport::Xmpp,
        jid: "digestd@localhost".into(),
        password: "servicepw".into(),
        server: p.server(),
        tls: false,
        timeout_seconds: 5,
        ..XmppConfig::default()
    }
}

fn delivery(p: &Prosody) -> Delivery {
    crate::common::delivery::into_dir(&tempfile::tempdir().unwrap().keep())
        .with_xmpp(&xmpp_config(p))
        .unwrap()
}

fn prosody() -> Option<Prosody> {
    Prosody::start(&[("digestd", "servicepw"), ("bob", "bobpw")])
}

/// bob, carol and dave, each with an account.
fn prosody_for_three() -> Option<Prosody> {
    Prosody::start(&[
        ("digestd", "servicepw"),
        ("bob", "bobpw"),
        ("carol", "carolpw"),
        ("dave", "davepw"),
    ])
}

fn a_digest_reaches_a_second_xmpp_client(db: &TestDb) {
    let Some(p) = prosody() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    user(&mut c, "bob", Some("bob@localhost"));
    // 09:00 in Paris is 08:00Z.
    let chat = common::one_change_digest(
        &mut c,
        "bob",
        "xmpp",
        9,
        "Night shift handover",
        "2026-11-23T08:00:00Z",
    );
    let mut d = delivery(&p);
    queue::run_pass(&mut c, &mut d, at("2026-11-23T08:00:00Z")).unwrap();
    let id: i64 = nt_messages::table
        .select(nt_messages::request_id)
        .first(&mut c)
        .unwrap();
    let r = queue::show(&mut c, RequestId(id)).unwrap();
    assert_eq!(r.status, "sent", "{r:?}\n{}", p.log());
    // bob comes online afterwards: the server kept it for him.
    let mut bob = Reader::login(&p, "bob", "bobpw");
    assert_eq!(bob.bodies(1, WAIT), vec![chat]);
    assert!(bob.bodies(1, Duration::from_millis(500)).is_empty());
    let log: Vec<(String, Option<String>)> = delivery_log::table
        .select((delivery_log::outcome, delivery_log::remote_id))
        .load(&mut c)
        .unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].0, "sent");
    // Named after the request and the recipient: the same on a retry.
    assert_eq!(log[0].1, Some(format!("digestd-{id:08}-bob")));
    d.shutdown();
}

/// Two to one person go as one message; a cancelled one not at all.
fn notifications_to_one_person_go_as_one_message(db: &TestDb) {
    let Some(p) = prosody() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    user(&mut c, "bob", Some("bob@localhost"));
    let mut reader = Reader::login(&p, "bob", "bobpw");
    let a = notify(&mut c, "bob", "Disk 91% full", "on db-2");
    let b = notify(&mut c, "bob", "Backup late", "by 40 minutes");
    let never = notify(&mut c, "bob", "Cancelled", "must not arrive");
    queue::cancel_request(&mut c, never, at(T0)).unwrap();
    let mut d = delivery(&p);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    for r in [a, b] {
        assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    }
    let got = reader.bodies(1, WAIT);
    assert_eq!(
        got,
        vec!["Disk 91% full\non db-2\n\nBackup late\nby 40 minutes".to_string()]
    );
    // Nothing more comes: the next pass has nothing to send.
    let again = queue::run_pass(&mut c, &mut d, at(T0) + chrono::Duration::hours(1)).unwrap();
    assert_eq!(again.finished, 0);
    assert!(reader.bodies(1, Duration::from_millis(500)).is_empty());
}

fn an_unknown_account_is_retried_and_others_still_get_theirs(db: &TestDb) {
    let Some(p) = prosody() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    user(&mut c, "bob", Some("bob@localhost"));
    user(&mut c, "ghost", Some("ghost@localhost"));
    let g = notify(&mut c, "ghost", "Hello", "anyone?");
    let b = notify(&mut c, "bob", "Hello", "bob");
    let mut d = delivery(&p);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, g).unwrap();
    let msg = v.recipients[0].reply_message.clone().unwrap_or_default();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1),
        "{msg}"
    );
    assert!(msg.contains("service-unavailable"), "{msg}");
    assert_eq!(queue::show(&mut c, b).unwrap().status, "sent");
    // Retried with backoff until max_retries (3), then given up.
    let mut t = at(T0);
    for _ in 0..4 {
        t += chrono::Duration::hours(6);
        queue::run_pass(&mut c, &mut d, t).unwrap();
    }
    let v = queue::show(&mut c, g).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("failed", 3)
    );
    let mut bob = Reader::login(&p, "bob", "bobpw");
    assert_eq!(bob.bodies(1, WAIT), vec!["Hello\nbob".to_string()]);
    assert!(bob.bodies(1, Duration::from_millis(500)).is_empty());
}

fn a_domain_the_server_cannot_reach_is_given_up_at_once(db: &TestDb) {
    let Some(p) = prosody() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    // The test server has no server-to-server: it bounces with
    // not-allowed, which no retry will change.
    user(&mut c, "far", Some("far@elsewhere.example"));
    let r = notify(&mut c, "far", "Hello", "far away");
    let mut d = delivery(&p);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    let msg = v.recipients[0].reply_message.clone().unwrap_or_default();
    assert_eq!(v.status, "failed", "{msg}");
    // One attempt, given up at once, as email after a 5xx.
    assert_eq!(
        (v.recipients[0].retry_count, v.recipients[0].gave_up),
        (1, true)
    );
    assert!(msg.starts_with("xmpp: not-allowed (cancel)"), "{msg}");
}

fn a_killed_server_is_retried_and_delivers_after_it_returns(db: &TestDb) {
    let Some(mut p) = prosody() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    user(&mut c, "bob", Some("bob@localhost"));
    let mut d = delivery(&p);
    let first = notify(&mut c, "bob", "One", "before the crash");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, first).unwrap().status, "sent");
    // kill -9 under the open session, then a notification comes.
    p.kill();
    let second = notify(&mut c, "bob", "Two", "while it was down");
    let t1 = at(T0) + chrono::Duration::minutes(1);
    queue::run_pass(&mut c, &mut d, t1).unwrap();
    let v = queue::show(&mut c, second).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    let msg = v.recipients[0].reply_message.clone().unwrap();
    assert!(msg.starts_with("xmpp: "), "{msg}");
    p.up();
    // Five minutes on, the queue's backoff and the listener's own (2 s
    // after one failed login, on the same clock) are both over.
    queue::run_pass(&mut c, &mut d, t1 + chrono::Duration::minutes(5)).unwrap();
    let v = queue::show(&mut c, second).unwrap();
    assert_eq!(v.status, "sent", "{v:?}\n{}", p.log());
    let mut bob = Reader::login(&p, "bob", "bobpw");
    let got = bob.bodies(2, WAIT);
    assert!(bob.bodies(1, Duration::from_millis(500)).is_empty());
    assert_eq!(
        got,
        vec![
            "One\nbefore the crash".to_string(),
            "Two\nwhile it was down".to_string()
        ]
    );
    d.shutdown();
}

/// A subject stored before the validators refused U+FFFF (written here
/// straight to the row, as an old row would be): XML cannot carry it, so
/// that one request fails for good at its first attempt, and the other
/// people in the same batch get theirs.
fn a_body_xml_cannot_carry_fails_alone(db: &TestDb) {
    let Some(p) = prosody_for_three() else { return };
    let mut c = db.conn();
    user(&mut c, "ops", None);
    for name in ["bob", "carol", "dave"] {
        user(&mut c, name, Some(&format!("{name}@localhost")));
    }
    let b = notify(&mut c, "bob", "Disk 91% full", "on db-2");
    let bad = notify(&mut c, "carol", "Backup late", "by 40 minutes");
    let d = notify(&mut c, "dave", "Cert expires", "in 3 days");
    diesel::update(nt_requests::table.find(bad.0))
        .set(nt_requests::subject.eq("Backup \u{FFFF} late"))
        .execute(&mut c)
        .unwrap();
    let mut readers = [
        Reader::login(&p, "bob", "bobpw"),
        Reader::login(&p, "carol", "carolpw"),
        Reader::login(&p, "dave", "davepw"),
    ];
    let mut dl = delivery(&p);
    queue::run_pass(&mut c, &mut dl, at(T0)).unwrap();
    let v = queue::show(&mut c, bad).unwrap();
    let msg = v.recipients[0].reply_message.clone().unwrap_or_default();
    assert_eq!(v.status, "failed", "{msg}\n{}", p.log());
    assert_eq!(
        (v.recipients[0].retry_count, v.recipients[0].gave_up),
        (1, true),
        "{msg}"
    );
    assert!(msg.contains("U+FFFF"), "{msg}");
    for r in [b, d] {
        let v = queue::show(&mut c, r).unwrap();
        assert_eq!(v.status, "sent", "{v:?}\n{}", p.log());
    }
    let [bob, carol, dave] = &mut readers;
    assert_eq!(
        bob.bodies(1, WAIT),
        vec!["Disk 91% full\non db-2".to_string()]
    );
    assert_eq!(
        dave.bodies(1, WAIT),
        vec!["Cert expires\nin 3 days".to_string()]
    );
    assert!(carol.bodies(1, Duration::from_millis(500)).is_empty());
    // Nothing is left to retry.
    let again = queue::run_pass(&mut c, &mut dl, at(T0) + chrono::Duration::hours(6)).unwrap();
    assert_eq!(again.finished, 0);
    dl.shutdown();
}

/// The listener itself, below every validator: in one batch to four
/// people, the bodies XML 1.0 forbids (U+FFFF, U+FFFE, a C0 control) are
/// refused one by one, and the others, before and after them, arrive; the
/// session outlives the batch.
#[test]
fn the_listener_refuses_only_the_bodies_xml_cannot_carry() {
    let Some(p) = prosody_for_three() else { return };
    let mut readers = [
        Reader::login(&p, "bob", "bobpw"),
        Reader::login(&p, "carol", "carolpw"),
        Reader::login(&p, "dave", "davepw"),
    ];
    let mut l = XmppListener::new(&xmpp_config(&p), crate::common::rt().clone()).unwrap();
    let msg = |to: &str, body: &str| Outgoing::text(to, body, Default::default());
    let r = l.send(&[
        msg("bob@localhost", "for bob"),
        msg("carol@localhost", "for carol \u{FFFF}"),
        msg("dave@localhost", "for dave"),
        msg("carol@localhost", "\u{FFFE} for carol"),
        msg("carol@localhost", "for \u{1} carol"),
        msg("bob@localhost", "for bob again"),
    ]);
    for (i, want) in [(1, "U+FFFF"), (3, "U+FFFE"), (4, "U+0001")] {
        match &r[i] {
            Err(DeliveryError::Permanent { text, .. }) => {
                assert!(text.starts_with("xmpp: ") && text.contains(want), "{text}")
            }
            other => panic!("message {i}: {other:?}\n{}", p.log()),
        }
    }
    for i in [0, 2, 5] {
        assert!(r[i].is_ok(), "message {i}: {:?}\n{}", r[i], p.log());
    }
    let [bob, carol, dave] = &mut readers;
    assert_eq!(bob.bodies(2, WAIT), vec!["for bob", "for bob again"]);
    assert_eq!(dave.bodies(1, WAIT), vec!["for dave"]);
    assert!(carol.bodies(1, Duration::from_millis(500)).is_empty());
    // The same session takes the next batch: the service logged in once.
    let r = l.send(&[msg("carol@localhost", "for carol, clean")]);
    assert!(r[0].is_ok(), "{r:?}\n{}", p.log());
    assert_eq!(carol.bodies(1, WAIT), vec!["for carol, clean"]);
    let log = p.log();
    assert_eq!(
        log.matches("Authenticated as digestd@localhost").count(),
        1,
        "{log}"
    );
    l.shutdown();
}

#[test]
fn a_wrong_password_is_a_transient_failure_not_a_hang() {
    let Some(p) = prosody() else { return };
    let mut l = XmppListener::new(
        &XmppConfig {
            password: "wrong".into(),
            timeout_seconds: 3,
            ..xmpp_config(&p)
        },
        crate::common::rt().clone(),
    )
    .unwrap();
    let r = l.send(&[Outgoing::text("bob@localhost", "hi", Default::default())]);
    match &r[0] {
        Err(DeliveryError::Transient { text, .. }) => assert!(text.starts_with("xmpp: "), "{text}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn test_alert_reaches_the_account_and_refuses_bad_jids() {
    let Some(p) = prosody() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[xmpp]\ntransport = \"xmpp\"\njid = \"digestd@localhost\"\npassword = \"servicepw\"\n\
             server = \"{}\"\ntls = false\ntimeout_seconds = 5\n",
            p.server()
        ),
    )
    .unwrap();
    let run = |to: &str| {
        common::digestd_with_config(&cfg, &["test-alert", "--channel", "xmpp", "--to", to])
    };
    let ok = run("bob@localhost");
    assert!(ok.status.success(), "{ok:?}\n{}", p.log());
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("sent to bob@localhost: "));
    for bad in [
        "localhost",
        "bob@",
        "a@b@c",
        "bob@localhost\r\nx",
        " bob@localhost",
    ] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
    let mut bob = Reader::login(&p, "bob", "bobpw");
    let got = bob.bodies(1, WAIT);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("digestd test alert, "), "{got:?}");
    assert!(bob.bodies(1, Duration::from_millis(500)).is_empty());
}

backend_tests!(
    a_digest_reaches_a_second_xmpp_client,
    notifications_to_one_person_go_as_one_message,
    an_unknown_account_is_retried_and_others_still_get_theirs,
    a_domain_the_server_cannot_reach_is_given_up_at_once,
    a_killed_server_is_retried_and_delivers_after_it_returns,
    a_body_xml_cannot_carry_fails_alone,
);
