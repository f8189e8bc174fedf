//! `GET /metrics` over real HTTP on both back ends: the Prometheus text
//! read back by `prometheus-parse`, every metric present with its type,
//! the database's gauges against a known state and the test's clock, the
//! read scope required. Then the counters move: a tick and a queue pass
//! through `cycle::tick_and_deliver`, as the daemon runs them.

use crate::common;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use common::web::each_backend;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::config::Config;
use digestd::db::schema::nt_requests;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery, NewNotification};
use digestd::deliver::{bounce, queue::QUEUE_JOB};
use digestd::items::{self, ItemInput};
use digestd::manage;
use digestd::metrics::{self, Metrics};
use digestd::parties::{self, NewUser};
use digestd::schedule::{lease, TICK_JOB};
use digestd::subscriptions::SubscribeRequest;
use prometheus_parse::{Scrape, Value};

const NOW: &str = "2026-11-23T10:30:00Z";

fn scrape(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("exposition format")
}

/// The value of the sample `name{labels}` (labels matched exactly, as a set).
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: BTreeMap<&str, &str> = labels.iter().copied().collect();
    s.samples
        .iter()
        .find(|x| {
            x.metric == name
                && x.labels.len() == want.len()
                && want.iter().all(|(k, v)| x.labels.get(k) == Some(*v))
        })
        .map(|x| match &x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            Value::Histogram(h) => h.iter().map(|b| b.count).fold(0.0, f64::max),
            Value::Summary(_) => f64::NAN,
        })
}

/// The type of `name`'s samples: "counter", "gauge" or "histogram".
fn kind(s: &Scrape, name: &str) -> &'static str {
    let x = s
        .samples
        .iter()
        .find(|x| x.metric == name)
        .unwrap_or_else(|| panic!("no {name}"));
    match x.value {
        Value::Counter(_) => "counter",
        Value::Gauge(_) => "gauge",
        Value::Histogram(_) => "histogram",
        _ => "other",
    }
}

fn user(c: &mut DbConn, name: &str, phone: Option<&str>) {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "UTC".into(),
            email: Some(format!("{name}@example.com")),
            phone: phone.map(String::from),
            ..Default::default()
        },
    )
    .unwrap();
}

fn notify(c: &mut DbConn, to: &str, channels: &[&str], when: &str) -> digestd::ids::RequestId {
    queue::post_request(
        c,
        &Default::default(),
        &NewNotification {
            from: "ops".into(),
            to: to.into(),
            subject: format!("to {to} at {when}"),
            message: "Body.".into(),
            channels: channels.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
        at(when),
    )
    .unwrap()
}

/// A DSN for `address` that quotes the Message-ID of message `request`
/// made for `party` (a bounce counts only then, once per message).
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

const NAMES: &[(&str, &str)] = &[
    ("digestd_tick_duration_seconds", "histogram"),
    ("digestd_ticks_total", "counter"),
    ("digestd_runs_claimed_total", "counter"),
    ("digestd_digests_posted_total", "counter"),
    ("digestd_digests_empty_total", "counter"),
    ("digestd_queue_pass_duration_seconds", "histogram"),
    ("digestd_queue_passes_total", "counter"),
    ("digestd_deliveries_total", "counter"),
    ("digestd_requests", "gauge"),
    ("digestd_oldest_pending_request_age_seconds", "gauge"),
    ("digestd_bounces_total", "counter"),
    ("digestd_bounce_disabled_addresses", "gauge"),
    ("digestd_lease_held", "gauge"),
    ("digestd_last_tick_timestamp_seconds", "gauge"),
    ("digestd_build_info", "gauge"),
    ("digestd_cache_hits_total", "counter"),
    ("digestd_cache_misses_total", "counter"),
    ("digestd_cache_entries", "gauge"),
    ("digestd_cache_bytes", "gauge"),
    ("digestd_feed_renders_total", "counter"),
    ("digestd_feed_render_waits_total", "counter"),
];

/// `/metrics` takes a `metrics` token (or `read`, or `admin`); a
/// `metrics` token reads nothing else.
#[test]
fn metrics_need_the_metrics_scope() {
    each_backend(at(NOW), |w| {
        let m = w.token("prom", Scope::Metrics);
        assert_eq!(w.get("/metrics", Some(&m)).status, 200);
        let read = w.token("reader", Scope::Read);
        assert_eq!(w.get("/metrics", Some(&read)).status, 200);
        for path in [
            "/api/v1/queue",
            "/api/v1/collections",
            "/api/v1/users/nobody",
            "/api/v1/subscriptions",
            "/api/v1/requests/1",
        ] {
            let a = w.get(path, Some(&m));
            assert_eq!(a.status, 403, "{path}: {}", a.text);
        }
        let feed = "/atom/collection/00000000-0000-4000-8000-000000000001/changed";
        assert_eq!(w.get(feed, Some(&m)).status, 403);
        let a = w.post("/api/v1/modifications", Some(&m), "[]");
        assert_eq!(a.status, 403);
        let a = w.get("/metrics", None);
        assert_eq!(a.status, 401);
        assert!(a.error().contains("valid token"), "{}", a.text);
        let ingest = w.token("ci", Scope::Ingest);
        let a = w.get("/metrics", Some(&ingest));
        assert_eq!(a.status, 403);
        assert_eq!(
            a.error(),
            "this token's scope does not allow this (needs metrics)"
        );
        let a = w.get("/metrics", Some("not-a-token"));
        assert_eq!(a.status, 401);
        let admin = w.token("root", Scope::Admin);
        assert_eq!(w.get("/metrics", Some(&admin)).status, 200);
    });
    let doc = serde_json::to_value(digestd::http::openapi::document()).unwrap();
    assert!(
        doc["paths"]["/metrics"]["get"].is_object(),
        "in the OpenAPI document"
    );
}

#[test]
fn every_metric_is_there_with_its_type_and_the_database_state() {
    each_backend(at(NOW), |w| {
        let mut c = w.db.conn();
        user(&mut c, "ops", None);
        user(&mut c, "ann", None);
        user(&mut c, "bob", None);
        // Three pending requests, the oldest 90 minutes before NOW; one
        // more cancelled (final: not counted); one marked sending.
        notify(&mut c, "ann", &[], "2026-11-23T09:00:00Z");
        notify(&mut c, "bob", &[], "2026-11-23T09:30:00Z");
        notify(&mut c, "ann", &[], "2026-11-23T10:00:00Z");
        let gone = notify(&mut c, "bob", &[], "2026-11-23T08:00:00Z");
        queue::cancel_request(&mut c, gone, at(NOW)).unwrap();
        let busy = notify(&mut c, "bob", &[], "2026-11-23T07:00:00Z");
        diesel::update(nt_requests::table.find(busy.0))
            .set(nt_requests::status.eq("sending"))
            .execute(&mut c)
            .unwrap();
        // Two hard bounces of ann (disabled after one), one soft of bob.
        for raw in [
            dsn(&mut c, "ann", 1, "ann@example.com", "failed", "5.1.1"),
            dsn(&mut c, "ann", 2, "ann@example.com", "failed", "5.1.1"),
            dsn(&mut c, "bob", 3, "bob@example.com", "delayed", "4.4.1"),
        ] {
            bounce::inbound(&mut c, raw.as_bytes(), 1, at(NOW)).unwrap();
        }
        // A tick finished at 10:00; the queue lease is held now.
        let t = at("2026-11-23T10:00:00Z");
        assert!(lease::acquire(&mut c, TICK_JOB, "a:1:x", t, Duration::minutes(10)).unwrap());
        lease::release(&mut c, TICK_JOB, "a:1:x", t).unwrap();
        let holder = "host-b:42:0000beef";
        assert!(lease::acquire(&mut c, QUEUE_JOB, holder, at(NOW), Duration::minutes(10)).unwrap());

        let read = w.token("prometheus", Scope::Read);
        let a = w.get("/metrics", Some(&read));
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(
            a.header("content-type")
                .unwrap()
                .starts_with("text/plain; version=0.0.4"),
            "{:?}",
            a.header("content-type")
        );
        let s = scrape(&a.text);
        for (name, want) in NAMES {
            assert_eq!(kind(&s, name), *want, "{name}");
            assert!(s.docs.contains_key(*name), "{name} has HELP");
        }
        let v = |name: &str, labels: &[(&str, &str)]| {
            value(&s, name, labels).unwrap_or_else(|| panic!("no {name}{labels:?}"))
        };
        assert_eq!(v("digestd_requests", &[("status", "pending")]), 3.0);
        assert_eq!(v("digestd_requests", &[("status", "sending")]), 1.0);
        assert_eq!(
            value(&s, "digestd_requests", &[("status", "cancelled")]),
            None
        );
        assert_eq!(v("digestd_oldest_pending_request_age_seconds", &[]), 5400.0);
        assert_eq!(v("digestd_bounces_total", &[("kind", "hard")]), 2.0);
        assert_eq!(v("digestd_bounces_total", &[("kind", "soft")]), 1.0);
        assert_eq!(v("digestd_bounce_disabled_addresses", &[]), 1.0);
        assert_eq!(
            v("digestd_lease_held", &[("job", "queue"), ("owner", holder)]),
            1.0
        );
        assert_eq!(
            v("digestd_lease_held", &[("job", "tick"), ("owner", "")]),
            0.0
        );
        assert_eq!(
            v("digestd_last_tick_timestamp_seconds", &[]),
            t.timestamp() as f64
        );
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(v("digestd_build_info", &[("version", version)]), 1.0);
        // Nothing ran in this process: every counter is there, at 0.
        assert_eq!(v("digestd_ticks_total", &[("outcome", "ran")]), 0.0);
        assert_eq!(
            v(
                "digestd_deliveries_total",
                &[("channel", "sms"), ("outcome", "failed")]
            ),
            0.0
        );

        // The clock moves, the age follows; the lease expires.
        w.clock.advance(Duration::minutes(30));
        let s = scrape(&w.get("/metrics", Some(&read)).text);
        assert_eq!(
            value(&s, "digestd_oldest_pending_request_age_seconds", &[]),
            Some(7200.0)
        );
        assert_eq!(
            value(&s, "digestd_lease_held", &[("job", "queue"), ("owner", "")]),
            Some(0.0)
        );
    });
}

/// ann follows `Rota` daily at 09:00 UTC on email and SMS; ops edited it.
fn digest_world(c: &mut DbConn) {
    user(c, "ops", None);
    user(c, "ann", Some("+33612345678"));
    user(c, "bob", None);
    let coll = items::create_collection(c, at("2026-11-01T00:00:00Z"), "Rota", None)
        .unwrap()
        .uuid;
    manage::subscribe(
        c,
        at("2026-11-22T00:00:00Z"),
        &SubscribeRequest {
            party: "ann".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            collection: Some(coll.clone()),
            hour: Some(9),
            channels: vec!["email".into(), "sms".into()],
            ..Default::default()
        },
    )
    .unwrap();
    let when = "2026-11-22T15:00:00Z";
    items::put_item(
        c,
        at(when),
        &ItemInput {
            uuid: uuid::Uuid::from_u128(7).to_string(),
            collection: Some(coll),
            kind: "event".into(),
            title: "Night shift".into(),
            start: Some("2026-11-24T21:00:00Z".into()),
            actor: "ops".into(),
            at: Some(when.into()),
            ..Default::default()
        },
    )
    .unwrap();
}

fn counters_move(db: &TestDb) {
    let mut c = db.conn();
    digest_world(&mut c);
    // bob has no phone: an SMS to him is given up.
    notify(&mut c, "bob", &["sms"], "2026-11-23T08:00:00Z");
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::default();
    cfg.database.url = db.url.clone();
    cfg.email.dir = dir.path().display().to_string();
    let pool = db.open();
    let mut delivery = Delivery::new(&cfg.email, crate::common::rt()).unwrap();
    let m = Metrics::new();
    let t: DateTime<Utc> = at("2026-11-23T09:00:00Z");
    let tick = |d: &mut Delivery, owner: &str| {
        digestd::cycle::tick_and_deliver(&pool, &cfg, d, owner, t, &m).unwrap()
    };
    tick(&mut delivery, "me");
    // Again at the same instant: it runs, and nothing is due.
    tick(&mut delivery, "me");
    // While another process holds the tick lease: skipped on SQLite, and
    // on PostgreSQL helped (it claims what no one holds: nothing here).
    assert!(lease::acquire(&mut c, TICK_JOB, "other", t, Duration::minutes(10)).unwrap());
    tick(&mut delivery, "me");
    let other = match c.backend() {
        digestd::db::Backend::Sqlite => "skipped",
        digestd::db::Backend::Postgres => "helped",
    };

    let state = metrics::read_db(&mut c).unwrap();
    let s = scrape(&m.render(&state, t).unwrap());
    let v = |name: &str, labels: &[(&str, &str)]| {
        value(&s, name, labels).unwrap_or_else(|| panic!("no {name}{labels:?}"))
    };
    assert_eq!(v("digestd_ticks_total", &[("outcome", "ran")]), 2.0);
    assert_eq!(v("digestd_ticks_total", &[("outcome", other)]), 1.0);
    assert_eq!(v("digestd_ticks_total", &[("outcome", "failed")]), 0.0);
    assert_eq!(
        v("digestd_runs_claimed_total", &[("frequency", "daily")]),
        1.0
    );
    assert_eq!(
        v("digestd_runs_claimed_total", &[("frequency", "hourly")]),
        0.0
    );
    assert_eq!(
        v("digestd_digests_posted_total", &[("channel", "email")]),
        1.0
    );
    assert_eq!(
        v("digestd_digests_posted_total", &[("channel", "sms")]),
        1.0
    );
    assert_eq!(
        v("digestd_digests_posted_total", &[("channel", "xmpp")]),
        0.0
    );
    let d = |ch: &str, o: &str| {
        v(
            "digestd_deliveries_total",
            &[("channel", ch), ("outcome", o)],
        )
    };
    assert_eq!(d("email", "sent"), 1.0);
    assert_eq!(d("sms", "sent"), 1.0);
    assert_eq!(d("sms", "failed"), 1.0, "bob has no phone");
    assert_eq!(d("email", "retry"), 0.0);
    assert_eq!(v("digestd_queue_passes_total", &[("outcome", "ran")]), 3.0);
    // Every tick observed once in the histogram (its +Inf bucket).
    assert_eq!(v("digestd_tick_duration_seconds", &[]), 3.0);
    assert_eq!(v("digestd_queue_pass_duration_seconds", &[]), 3.0);
    assert_eq!(v("digestd_requests", &[("status", "pending")]), 0.0);
    assert_eq!(v("digestd_oldest_pending_request_age_seconds", &[]), 0.0);
    assert_eq!(
        v("digestd_lease_held", &[("job", "tick"), ("owner", "other")]),
        1.0
    );
}

backend_tests!(counters_move);
