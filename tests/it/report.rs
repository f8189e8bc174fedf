//! The operator's daily report (`digestd::report`), on each back end: its
//! numbers for data made by a real tick and queue pass, and `digestd
//! report` / `digestd tick` through the binary. When it is posted is
//! `report_posting.rs`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use chrono::Duration;
use common::delivery::{notify, smtp, user};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{nt_queue, nt_requests, ops_reports};
use digestd::db::DbConn;
use digestd::deliver::bounce;
use digestd::deliver::queue;
use digestd::report::{self, DigestCounts};

/// A DSN for `address` that quotes the Message-ID of message `request`
/// made for `party` (a bounce counts only then).
fn dsn(
    c: &mut DbConn,
    party: &str,
    request: i64,
    address: &str,
    action: &str,
    status: &str,
) -> String {
    use digestd::db::schema::parties;
    let party: i64 = parties::table
        .filter(parties::name.eq(party))
        .select(parties::id)
        .first(c)
        .unwrap();
    let key = digestd::deliver::msgid::MessageKey::load(c).unwrap();
    let id = key.message_id(request, party, 1, "localhost");
    format!(
        "From: MAILER-DAEMON@mx.example.net\r\nTo: digestd@localhost\r\n\
         Subject: Undelivered\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/report; report-type=delivery-status; boundary=\"B1\"\r\n\r\n\
         --B1\r\nContent-Type: text/plain\r\n\r\nNot delivered.\r\n\r\n\
         --B1\r\nContent-Type: message/delivery-status\r\n\r\n\
         Reporting-MTA: dns; mx.example.net\r\n\r\n\
         Final-Recipient: rfc822; {address}\r\nAction: {action}\r\nStatus: {status}\r\n\r\n\
         --B1\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <{id}>\r\n\r\n--B1--\r\n"
    )
}

fn subscribe(c: &mut DbConn, party: &str, collection: &str) {
    digestd::manage::subscribe(
        c,
        at("2026-11-22T00:00:00Z"),
        &digestd::subscriptions::SubscribeRequest {
            party: party.into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            collection: Some(collection.into()),
            hour: Some(8),
            channels: vec!["email".into()],
            ..Default::default()
        },
    )
    .unwrap();
}

/// alice, bob, dan and eve (Europe/Paris) each follow a collection daily at
/// 08:00 local (07:00Z); carol changes the one bob does not follow, so the
/// real tick at 07:00Z posts three digests and finds bob's empty; at 07:05Z
/// a real SMTP server takes alice's, refuses eve's for good and dan's for
/// now (a retry pending).
/// alice then posts bob a notification (pending at T0, 09:00Z), bob's
/// address bounces hard and alice's soft.
pub(crate) fn seed(c: &mut DbConn) -> i64 {
    user(c, "alice", "alice@example.com");
    user(c, "bob", "bob@example.com");
    user(c, "carol", "carol@example.com");
    user(c, "dan", "busy.dan@example.com");
    user(c, "eve", "gone.eve@example.com");
    let t0 = at("2026-11-01T00:00:00Z");
    let rota = digestd::items::create_collection(c, t0, "Rota", None)
        .unwrap()
        .uuid;
    let quiet = digestd::items::create_collection(c, t0, "Quiet", None)
        .unwrap()
        .uuid;
    subscribe(c, "alice", &rota);
    subscribe(c, "bob", &quiet);
    subscribe(c, "dan", &rota);
    subscribe(c, "eve", &rota);
    let when = "2026-11-22T15:00:00Z";
    digestd::items::put_item(
        c,
        at(when),
        &digestd::items::ItemInput {
            uuid: uuid::Uuid::from_u128(7).to_string(),
            collection: Some(rota),
            kind: "event".into(),
            title: "Standup".into(),
            start: Some("2026-11-24T21:00:00Z".into()),
            actor: "carol".into(),
            at: Some(when.into()),
            ..Default::default()
        },
    )
    .unwrap();
    let mut comp = digestd::digest::Composer::new(
        &digestd::config::DigestConfig::default(),
        &EmailConfig::default(),
    )
    .unwrap();
    let runs = digestd::schedule::run_tick(
        c,
        at("2026-11-23T07:00:00Z"),
        "test-ticker",
        Duration::minutes(10),
        &mut comp,
    )
    .unwrap()
    .expect("the lease is free");
    assert_eq!(runs.len(), 4);
    let server = FaultSmtp::start();
    queue::run_pass(c, &mut smtp(&server.url()), at("2026-11-23T07:05:00Z")).unwrap();
    assert_eq!(server.received().len(), 1, "alice's digest");
    let digest: i64 = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .filter(nt_requests::status.eq("sent"))
        .select(nt_requests::request_id)
        .first(c)
        .unwrap();
    let note = notify(c, "alice", "bob", "hello").0;
    for raw in [
        dsn(c, "bob", note, "bob@example.com", "failed", "5.1.1"),
        dsn(c, "alice", digest, "alice@example.com", "delayed", "4.4.1"),
    ] {
        bounce::inbound(c, raw.as_bytes(), 1, at("2026-11-23T08:00:00Z")).unwrap();
    }
    note
}

fn numbers_for_seeded_data(db: &TestDb) {
    let mut c = db.conn();
    let note = seed(&mut c);
    let r = report::read(&mut c, at("2026-11-23T09:30:00Z")).unwrap();
    assert_eq!(r.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(r.since, at("2026-11-22T09:30:00Z"));
    assert_eq!(r.digests.len(), 1, "{:?}", r.digests);
    assert_eq!(
        r.digests["email"]["daily"],
        DigestCounts {
            due: 4,
            posted: 3,
            empty: 1,
            sent: 1,
            failed: 1,
        }
    );
    assert_eq!((r.bounces_hard, r.bounces_soft), (1, 1));
    assert_eq!(r.addresses_disabled, 1);
    assert_eq!(r.retries_pending, 1);
    // dan's digest, retried, is older than the notification (pending
    // since T0, 09:00Z).
    let dans: i64 = nt_requests::table
        .filter(nt_requests::status.eq("sending"))
        .select(nt_requests::request_id)
        .first(&mut c)
        .unwrap();
    assert_ne!(dans, note);
    let oldest = r.oldest_unfinished.as_ref().expect("dan's digest waits");
    assert_eq!(oldest.request_id, dans);
    assert_eq!(oldest.status, "sending");
    assert_eq!(oldest.requested_at, at("2026-11-23T07:00:00Z"));
    let text = r.text(digestd::i18n::Locale::En);
    assert!(text.contains("Retries pending: 1"), "{text}");
    // Without it, the notification is the oldest.
    queue::cancel_request(
        &mut c,
        digestd::ids::RequestId(dans),
        at("2026-11-23T09:00:00Z"),
    )
    .unwrap();
    let r = report::read(&mut c, at("2026-11-23T09:30:00Z")).unwrap();
    let oldest = r
        .oldest_unfinished
        .as_ref()
        .expect("the notification waits");
    assert_eq!(oldest.request_id, note);
    assert_eq!(oldest.status, "pending");
    assert_eq!(oldest.requested_at, at(common::delivery::T0));
    assert_eq!(r.latest_tick, Some(at("2026-11-23T07:00:00Z")));
    let run = r.latest_run.as_ref().expect("a digest went out");
    assert_eq!(run.scheduled_at, at("2026-11-23T07:00:00Z"));
    assert_eq!(run.sent_at, at("2026-11-23T07:05:00Z"));
    assert_eq!(run.late_seconds, 300);
    let tick = r.leases.iter().find(|l| l.job == "tick").unwrap();
    assert_eq!(tick.holder, None);
    let text = r.text(digestd::i18n::Locale::En);
    assert!(
        text.contains("email    daily           4       3       1       1       1"),
        "{text}"
    );
    assert!(text.contains("(300 s late)"), "{text}");
    assert!(
        text.contains("Bounces: 1 hard, 1 soft; addresses disabled: 1"),
        "{text}"
    );
    // A day later the last 24 hours hold none of it; the waiting request
    // is still there.
    let r = report::read(&mut c, at("2026-11-24T09:30:00Z")).unwrap();
    assert!(r.digests.is_empty(), "{:?}", r.digests);
    assert_eq!(
        (r.bounces_hard, r.bounces_soft, r.addresses_disabled),
        (0, 0, 0)
    );
    assert_eq!(r.oldest_unfinished.map(|o| o.request_id), Some(note));
    assert_eq!(r.latest_run, None);
}

pub(crate) fn reports(c: &mut DbConn) -> Vec<(String, i64)> {
    ops_reports::table
        .select((ops_reports::local_date, ops_reports::request_id))
        .order(ops_reports::local_date)
        .load(c)
        .unwrap()
}

pub(crate) fn digestd(dir: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .arg("--config")
        .arg(config)
        .args(args)
        .env_remove("DIGESTD_DATABASE_URL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

/// `digestd tick` posts the report when due; `queue run` sends it;
/// `digestd report --json` prints the numbers; a bad `[ops]` exits 2.
fn through_the_binary(db: &TestDb) {
    {
        let mut c = db.conn();
        seed(&mut c);
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("digestd.toml");
    let outbox = dir.path().join("outbox");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{}\"\n[email]\ndir = \"{}\"\n[ops]\nreport_to = \"ops@example.com\"\nreport_hour = 9\n",
            db.url,
            outbox.display()
        ),
    )
    .unwrap();
    let out = digestd(
        dir.path(),
        &config,
        &["--now", "2026-11-23T09:30:00Z", "report", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["digests"]["email"]["daily"]["posted"], 3);
    assert_eq!(v["digests"]["email"]["daily"]["failed"], 1);
    assert_eq!(v["retries_pending"], 1);
    assert_eq!(v["digests"]["email"]["daily"]["empty"], 1);
    assert_eq!(v["latest_run"]["late_seconds"], 300);
    assert_eq!(v["bounces_hard"], 1);
    let text = digestd(
        dir.path(),
        &config,
        &["--now", "2026-11-23T09:30:00Z", "report"],
    );
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("Retries pending: 1"));
    // Before 09:00 the tick posts no report; at 09:00 it does, once.
    for (now, posted) in [
        ("2026-11-23T08:00:00Z", false),
        ("2026-11-23T09:00:00Z", true),
        ("2026-11-23T10:00:00Z", false),
    ] {
        let out = digestd(dir.path(), &config, &["--now", now, "tick"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stderr).contains("daily report posted");
        assert_eq!(said, posted, "{now}");
    }
    let out = digestd(
        dir.path(),
        &config,
        &["--now", "2026-11-23T10:00:00Z", "queue", "run"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = db.conn();
    let rows = reports(&mut c);
    assert_eq!(rows.len(), 1);
    let ok: bool = nt_queue::table
        .filter(nt_queue::request_id.eq(rows[0].1))
        .select(nt_queue::is_successful)
        .first(&mut c)
        .unwrap();
    assert!(ok, "the report was delivered");
    // A bad [ops] setting: one line, exit 2, nothing done.
    for bad in [
        "report_hour = 24",
        "report_tz = \"Nowhere/Land\"",
        "report_to = \"ops\"",
    ] {
        let cfgfile = dir.path().join("bad.toml");
        std::fs::write(
            &cfgfile,
            format!("[database]\nurl = \"{}\"\n[ops]\n{bad}\n", db.url),
        )
        .unwrap();
        let out = digestd(dir.path(), &cfgfile, &["report"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("[ops] report_"), "{err}");
    }
}

backend_tests!(numbers_for_seeded_data, through_the_binary,);
