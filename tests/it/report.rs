//! The operator's daily report (`digestd::report`), on each back end: its
//! numbers for data made by a real tick and queue pass, its posting once
//! per local day in `[ops] report_tz` (repeated ticks, two connections, a
//! DST day, not before `report_hour`, not at all without `report_to`), and
//! `digestd report` / `digestd tick` through the binary.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use chrono::{DateTime, Duration, Utc};
use common::delivery::{notify, smtp, user};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{Config, EmailConfig, OpsConfig};
use digestd::db::schema::{delivery_log, nt_queue, nt_requests, ops_reports};
use digestd::db::DbConn;
use digestd::deliver::bounce;
use digestd::deliver::queue::{self, Delivery};
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

fn dir_delivery() -> Delivery {
    let dir = tempfile::tempdir().unwrap().keep();
    Delivery::new(
        &EmailConfig {
            dir: dir.display().to_string(),
            ..EmailConfig::default()
        },
        crate::common::rt(),
    )
    .unwrap()
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

fn ops(to: &str, hour: u32, tz: &str) -> Config {
    Config {
        ops: OpsConfig {
            report_to: to.into(),
            report_hour: hour,
            report_tz: tz.into(),
        },
        ..Config::default()
    }
}

fn reports(c: &mut DbConn) -> Vec<(String, i64)> {
    ops_reports::table
        .select((ops_reports::local_date, ops_reports::request_id))
        .order(ops_reports::local_date)
        .load(c)
        .unwrap()
}

fn posted_once_per_local_day(db: &TestDb) {
    let cfg = ops("ops@example.com", 7, "Europe/Paris");
    let mut c = db.conn();
    let mut other = db.conn();
    // 07:00 in Paris is 06:00Z.
    assert_eq!(
        report::post_if_due(&mut c, &cfg, at("2026-11-23T05:59:59Z")).unwrap(),
        None
    );
    let first = report::post_if_due(&mut c, &cfg, at("2026-11-23T06:00:00Z"))
        .unwrap()
        .expect("due at 07:00 local");
    for t in [
        "2026-11-23T06:00:00Z",
        "2026-11-23T07:00:00Z",
        "2026-11-23T22:59:59Z",
    ] {
        assert_eq!(
            report::post_if_due(&mut c, &cfg, at(t)).unwrap(),
            None,
            "{t}"
        );
        assert_eq!(
            report::post_if_due(&mut other, &cfg, at(t)).unwrap(),
            None,
            "{t}"
        );
    }
    // 23:00Z is midnight in Paris: the 24th, before its hour.
    assert_eq!(
        report::post_if_due(&mut c, &cfg, at("2026-11-23T23:00:00Z")).unwrap(),
        None
    );
    let second = report::post_if_due(&mut other, &cfg, at("2026-11-24T06:30:00Z"))
        .unwrap()
        .expect("the next day's");
    assert_eq!(
        reports(&mut c),
        vec![
            ("2026-11-23".to_string(), first.0),
            ("2026-11-24".to_string(), second.0)
        ]
    );
    // The queue sends it to the address, as the system party.
    let pass = queue::run_pass(&mut c, &mut dir_delivery(), at("2026-11-24T06:31:00Z")).unwrap();
    assert_eq!(pass.finished, 2);
    let sent: Vec<(Option<String>, bool)> = nt_queue::table
        .select((nt_queue::address, nt_queue::is_successful))
        .load(&mut c)
        .unwrap();
    assert_eq!(sent, vec![(Some("ops@example.com".to_string()), true); 2]);
    let status: Vec<String> = nt_requests::table
        .select(nt_requests::status)
        .load(&mut c)
        .unwrap();
    assert_eq!(status, ["sent", "sent"]);
    let logged: i64 = delivery_log::table
        .filter(delivery_log::outcome.eq("sent"))
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(logged, 2);
}

/// Two connections race for the same day's report: one posts it.
fn two_connections_post_one(db: &TestDb) {
    let cfg = ops("ops@example.com", 0, "UTC");
    let conns: Vec<DbConn> = (0..2).map(|_| db.conn()).collect();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = conns
        .into_iter()
        .map(|mut c| {
            let (cfg, barrier) = (cfg.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                report::post_if_due(&mut c, &cfg, at("2026-11-23T12:00:00Z")).unwrap()
            })
        })
        .collect();
    let posted: Vec<_> = handles
        .into_iter()
        .filter_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(posted.len(), 1);
    let mut c = db.conn();
    assert_eq!(
        reports(&mut c),
        vec![("2026-11-23".to_string(), posted[0].0)]
    );
    let requests: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!(requests, 1);
}

fn not_posted_without_report_to(db: &TestDb) {
    let mut c = db.conn();
    let cfg = Config::default();
    assert_eq!(cfg.ops.report_to, "");
    for h in 0..24 {
        let t = at("2026-11-23T00:00:00Z") + Duration::hours(h);
        assert_eq!(report::post_if_due(&mut c, &cfg, t).unwrap(), None);
    }
    assert!(reports(&mut c).is_empty());
    let requests: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!(requests, 0);
}

/// 2026-11-01 in New York has 01:00 twice (EDT, then EST at 06:00Z): the
/// report at 01:00 is posted by the first tick at 01:00 only; the next day
/// has its own.
fn dst_day_posts_once(db: &TestDb) {
    let cfg = ops("ops@example.com", 1, "America/New_York");
    let mut c = db.conn();
    let mut posted: Vec<DateTime<Utc>> = Vec::new();
    // From midnight local (04:00Z, EDT) to 02:00 local the next day.
    let start = at("2026-11-01T04:00:00Z");
    for q in 0..(27 * 4) {
        let t = start + Duration::minutes(15 * q);
        if report::post_if_due(&mut c, &cfg, t).unwrap().is_some() {
            posted.push(t);
        }
    }
    assert_eq!(
        posted,
        vec![at("2026-11-01T05:00:00Z"), at("2026-11-02T06:00:00Z")]
    );
    let dates: Vec<String> = reports(&mut c).into_iter().map(|r| r.0).collect();
    assert_eq!(dates, ["2026-11-01", "2026-11-02"]);
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

/// The daemon's tick (`cycle::tick_and_deliver`) posts the report when due
/// and its queue pass sends it in the same call; later ticks that day post
/// nothing.
fn the_daemon_posts_and_sends_it(db: &TestDb) {
    let mut cfg = ops("ops@example.com", 7, "UTC");
    cfg.database.url = db.url.clone();
    let pool = digestd::db::Db::open(&db.url, 2).unwrap();
    let m = digestd::metrics::Metrics::new();
    let mut d = dir_delivery();
    for t in [
        "2026-11-23T06:00:00Z",
        "2026-11-23T07:00:00Z",
        "2026-11-23T08:00:00Z",
    ] {
        digestd::cycle::tick_and_deliver(&pool, &cfg, &mut d, "daemon", at(t), &m).unwrap();
    }
    let mut c = db.conn();
    let rows = reports(&mut c);
    assert_eq!(rows.len(), 1);
    let sent: Vec<(Option<String>, bool)> = nt_queue::table
        .select((nt_queue::address, nt_queue::is_successful))
        .load(&mut c)
        .unwrap();
    assert_eq!(sent, vec![(Some("ops@example.com".to_string()), true)]);
    let date: chrono::NaiveDateTime = nt_requests::table
        .find(rows[0].1)
        .select(nt_requests::request_date)
        .first(&mut c)
        .unwrap();
    assert_eq!(date.and_utc(), at("2026-11-23T07:00:00Z"));
}

backend_tests!(
    numbers_for_seeded_data,
    posted_once_per_local_day,
    two_connections_post_one,
    not_posted_without_report_to,
    dst_day_posts_once,
    through_the_binary,
    the_daemon_posts_and_sends_it,
);
