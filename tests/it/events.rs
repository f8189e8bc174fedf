//! The operators' events: each change records its event in its own
//! transaction (one rolled back records none), and the queue passes post
//! them to a real HTTP receiver on loopback, signed as Python's
//! `standardwebhooks` verifies, in order per subscription, retried with
//! the same `webhook-id`, given up after `give_up_hours`, replayed; the
//! per-message events come with the settle when `[events]` asks for them.
//! On each back end; the CLI's `events` commands on SQLite.

use crate::common;

use chrono::Duration;
use common::delivery::{user, T0};
use common::http::{Gateway, Request};
use common::{at, TestDb};
use digestd::config::EventsConfig;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::events::{self, EventRow, Kind};
use digestd::ids::SubscriptionId;
use digestd::remove::{self, Via};
use digestd::subscriptions::{self, SubscribeRequest, Subscribed};
use digestd::{manage, parties};

fn all(c: &mut DbConn) -> Vec<EventRow> {
    events::list(c, None, None, 10_000).unwrap()
}

fn kinds(rows: &[EventRow]) -> Vec<String> {
    rows.iter().map(|e| e.kind.clone()).collect()
}

/// `name` (Paris) subscribed daily at 08:00 to a new collection `coll`
/// by email at `when`.
fn subscribed(c: &mut DbConn, name: &str, coll: &str, when: &str) -> SubscriptionId {
    user(c, name, &format!("{name}@example.com"));
    let uuid = digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), coll, None)
        .unwrap()
        .uuid;
    let req = SubscribeRequest {
        party: name.into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        collection: Some(uuid),
        hour: Some(8),
        ..Default::default()
    };
    match manage::subscribe(c, at(when), &req).unwrap() {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    }
}

fn posting(url: &str) -> EventsConfig {
    EventsConfig {
        url: url.into(),
        secret: parties::new_webhook_secret(),
        ..EventsConfig::default()
    }
}

fn delivery(cfg: &EventsConfig) -> Delivery {
    let (d, _) = common::delivery::in_fresh_dir();
    d.with_events(cfg).unwrap()
}

fn body(q: &Request) -> serde_json::Value {
    serde_json::from_str(&q.body).unwrap()
}

fn every_change_records_its_event_in_its_transaction(db: &TestDb) {
    let mut c = db.conn();
    let s = subscribed(&mut c, "ana", "Rota", "2026-11-22T00:00:00Z");
    subscriptions::pause(&mut c, at("2026-11-22T01:00:00Z"), s).unwrap();
    // Pausing what is paused and resuming what runs change nothing.
    subscriptions::pause(&mut c, at("2026-11-22T01:30:00Z"), s).unwrap();
    manage::resume(&mut c, s, at("2026-11-22T02:00:00Z")).unwrap();
    manage::resume(&mut c, s, at("2026-11-22T02:30:00Z")).unwrap();
    remove::unsubscribe(&mut c, at("2026-11-22T03:00:00Z"), &[s], Via::OneClick).unwrap();
    remove::unsubscribe(&mut c, at("2026-11-22T03:30:00Z"), &[s], Via::Page).unwrap();
    remove::subscription(&mut c, at("2026-11-22T04:00:00Z"), s).unwrap();
    let rows = all(&mut c);
    assert_eq!(
        kinds(&rows),
        [
            "subscription.created",
            "subscription.paused",
            "subscription.resumed",
            "unsubscribe",
            "subscription.ended"
        ]
    );
    let created = &rows[0].data;
    assert_eq!(created["subscription"], s.0);
    assert_eq!(created["party"], "ana");
    assert_eq!(created["collection"], "Rota");
    assert_eq!(created["frequency"], "daily");
    assert_eq!(created["hour"], 8);
    assert_eq!(created["channels"], serde_json::json!(["email"]));
    assert_eq!(rows[3].data["how"], "one-click");
    assert_eq!(rows[4].data["why"], "deleted");
    assert_eq!(rows[1].occurred_at, at("2026-11-22T01:00:00Z"));
    assert!(rows
        .iter()
        .all(|e| e.status == "pending" && e.attempts == 0));

    // A change that rolls back leaves no event.
    let t = subscribed(&mut c, "bo", "Ops", "2026-11-22T05:00:00Z");
    let before = all(&mut c).len();
    let failed: digestd::Result<()> = c.write_tx(|c| {
        subscriptions::pause_in_tx(c, at("2026-11-22T06:00:00Z"), t)?;
        Err(digestd::Error::invalid("changed my mind"))
    });
    assert!(failed.is_err());
    assert_eq!(
        all(&mut c).len(),
        before,
        "the rolled-back pause left an event"
    );
    assert!(!subscriptions::get(&mut c, t).unwrap().paused);

    // Filters: by type and by instant.
    let ended = events::list(&mut c, None, Some(Kind::SubscriptionEnded), 10).unwrap();
    assert_eq!(ended.len(), 1);
    let late = events::list(&mut c, Some(at("2026-11-22T04:00:00Z")), None, 10).unwrap();
    assert_eq!(kinds(&late), ["subscription.ended", "subscription.created"]);
}

fn posted_signed_in_order_per_subscription_retried_and_replayed(db: &TestDb) {
    let mut c = db.conn();
    // The first post fails; the rest are accepted.
    let gw = Gateway::start(vec![(503, vec![], "{\"error\": \"starting\"}".into())]);
    let cfg = posting(&gw.url());
    let s1 = subscribed(&mut c, "ana", "Rota", "2026-11-23T08:00:00Z");
    subscriptions::pause(&mut c, at("2026-11-23T08:01:00Z"), s1).unwrap();
    let s2 = subscribed(&mut c, "bo", "Ops", "2026-11-23T08:02:00Z");
    let mut d = delivery(&cfg);
    let t = at(T0);

    // Pass 1: ana's created event fails; the pass stops posting.
    let r = queue::run_pass(&mut c, &mut d, t).unwrap();
    assert_eq!((r.events.sent, r.events.retrying), (0, 1));
    assert_eq!(gw.requests().len(), 1);
    // Pass 2, before the retry is due: ana's events wait, in order; bo's
    // goes.
    let r = queue::run_pass(&mut c, &mut d, t + Duration::seconds(10)).unwrap();
    assert_eq!((r.events.sent, r.events.retrying), (1, 0));
    // Pass 3, after 30 s: ana's two, created before paused.
    let r = queue::run_pass(&mut c, &mut d, t + Duration::seconds(31)).unwrap();
    assert_eq!(r.events.sent, 2);
    assert!(r.to_string().contains("events posted 2"), "{r}");
    let reqs = gw.requests();
    let seen: Vec<(String, i64)> = reqs
        .iter()
        .map(|q| {
            let b = body(q);
            (
                b["type"].as_str().unwrap().to_string(),
                b["data"]["subscription"].as_i64().unwrap(),
            )
        })
        .collect();
    let created = "subscription.created".to_string();
    assert_eq!(
        seen,
        [
            (created.clone(), s1.0),
            (created.clone(), s2.0),
            (created, s1.0),
            ("subscription.paused".to_string(), s1.0)
        ]
    );
    // Signed as the reference library verifies; a wrong secret does not.
    assert_eq!(
        crate::webhook::verify(&cfg.secret, &reqs),
        ["ok", "ok", "ok", "ok"]
    );
    let other = parties::new_webhook_secret();
    assert!(crate::webhook::verify(&other, &reqs)
        .iter()
        .all(|v| v.starts_with("bad")));
    // The retry kept its id; the timestamp is each post's pass.
    assert_eq!(reqs[0].header("webhook-id"), reqs[2].header("webhook-id"));
    assert_eq!(
        reqs[2].header("webhook-timestamp"),
        Some((t + Duration::seconds(31)).timestamp().to_string().as_str())
    );
    let b = body(&reqs[3]);
    assert_eq!(b["timestamp"], "2026-11-23T08:01:00.000000Z");
    assert_eq!(b["data"]["party"], "ana");
    let listed = all(&mut c);
    assert!(listed.iter().all(|e| e.status == "sent"), "{listed:?}");
    assert_eq!(listed[0].attempts, 2);
    assert!(listed[0].last_error.is_none());

    // A pass with nothing due posts nothing; a replay posts all again,
    // with the ids they had.
    let r = queue::run_pass(&mut c, &mut d, t + Duration::seconds(40)).unwrap();
    assert_eq!(r.events, Default::default());
    assert_eq!(
        events::replay(
            &mut c,
            at("2026-11-23T08:00:00Z"),
            None,
            t + Duration::minutes(1)
        )
        .unwrap(),
        3
    );
    queue::run_pass(&mut c, &mut d, t + Duration::minutes(1)).unwrap();
    let again = gw.requests();
    assert_eq!(again.len(), 7);
    let ids = |qs: &[Request]| -> Vec<String> {
        let mut v: Vec<String> = qs
            .iter()
            .map(|q| q.header("webhook-id").unwrap().to_string())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(ids(&again[4..]), ids(&again[..4]));
}

fn a_receiver_that_stays_down_costs_one_post_a_pass_then_gives_up(db: &TestDb) {
    let mut c = db.conn();
    let down = vec![(500, vec![], "down".to_string()); 20];
    let gw = Gateway::start(down);
    let cfg = EventsConfig {
        give_up_hours: 1,
        ..posting(&gw.url())
    };
    subscribed(&mut c, "ana", "Rota", "2026-11-23T08:30:00Z");
    subscribed(&mut c, "bo", "Ops", "2026-11-23T08:30:00Z");
    let mut d = delivery(&cfg);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(
        gw.requests().len(),
        1,
        "one failure ends the pass's posting"
    );
    let e = &all(&mut c)[0];
    assert_eq!((e.status.as_str(), e.attempts), ("pending", 1));
    assert!(
        e.last_error.as_deref().unwrap().contains("500 down"),
        "{e:?}"
    );
    // An hour after they happened, the next failure gives each up.
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    let rows = all(&mut c);
    assert!(rows.iter().all(|e| e.status == "failed"), "{rows:?}");
    assert_eq!(gw.requests().len(), 3);
}

fn per_message_events_come_with_the_settle_when_asked(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "ops", "ops@example.com");
    user(&mut c, "ana", "ana@example.com");
    common::one_change_digest(
        &mut c,
        "ana",
        "email",
        8,
        "Night shift",
        "2026-11-23T07:00:00Z",
    );
    let refused = Gateway::start(vec![(400, vec![], "no".into()); 2]);
    let gw = Gateway::start(vec![]);
    // Only the per-message types are posted: the others are skipped.
    let cfg = EventsConfig {
        types: vec!["digest.delivered".into(), "delivery.failed".into()],
        ..posting(&gw.url())
    };
    let mut d = hooks(&cfg);
    parties::set_webhook(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        "ana",
        &refused.url(),
        None,
        digestd::validate::UrlPolicy::ANY,
    )
    .unwrap();
    let n = common::delivery::notify_on(&mut c, "ops", "ana", "Disk full", &["webhook"]);
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.events.skipped, 1, "subscription.created is not posted");
    let mut posted: Vec<serde_json::Value> = gw.requests().iter().map(body).collect();
    posted.sort_by_key(|b| b["type"].as_str().unwrap().to_string());
    let types: Vec<&str> = posted.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["delivery.failed", "digest.delivered"], "{posted:?}");
    let (failed, delivered) = (&posted[0]["data"], &posted[1]["data"]);
    assert_eq!(delivered["party"], "ana");
    assert_eq!(delivered["channel"], "email");
    assert_eq!(delivered["address"], "ana@example.com");
    assert!(delivered["subscription"].as_i64().unwrap() > 0);
    assert_eq!(failed["request"], n.0);
    assert_eq!(failed["kind"], "notification");
    assert_eq!(failed["reply_code"], 400);
    assert!(failed["reason"].as_str().unwrap().contains("400"));
    let statuses: Vec<String> = all(&mut c).into_iter().map(|e| e.status).collect();
    assert_eq!(statuses, ["skipped", "sent", "sent"]);

    // Without [events] url, no per-message event is recorded.
    let mut plain = hooks(&EventsConfig::default());
    let again = common::delivery::notify_on(&mut c, "ops", "ana", "Disk full again", &["webhook"]);
    let before = all(&mut c).len();
    queue::run_pass(&mut c, &mut plain, at("2026-11-23T09:30:00Z")).unwrap();
    assert_eq!(queue::show(&mut c, again).unwrap().status, "failed");
    assert_eq!(all(&mut c).len(), before);
}

/// A delivery posting webhooks over http to loopback, with `cfg`'s events.
fn hooks(cfg: &EventsConfig) -> Delivery {
    let (d, email) = common::delivery::in_fresh_dir();
    d.with_events(cfg)
        .unwrap()
        .with_webhook(
            &digestd::config::WebhookConfig {
                transport: digestd::config::WebhookTransport::Http,
                allow_http: true,
                allow_private: true,
                ..Default::default()
            },
            &email,
        )
        .unwrap()
}

fn purge_keeps_what_waits_to_be_posted(db: &TestDb) {
    let mut c = db.conn();
    let s = subscribed(&mut c, "ana", "Rota", "2026-11-01T00:00:00Z");
    subscriptions::pause(&mut c, at("2026-11-20T00:00:00Z"), s).unwrap();
    let cutoff = at("2026-11-10T00:00:00Z");
    // Posting: the pending one stays.
    assert_eq!(events::purge_before(&mut c, cutoff, true).unwrap(), 0);
    // Nothing posts them: it goes, the newer one stays.
    assert_eq!(events::purge_before(&mut c, cutoff, false).unwrap(), 1);
    assert_eq!(kinds(&all(&mut c)), ["subscription.paused"]);
    let (n, oldest) = events::pending(&mut c).unwrap();
    assert_eq!((n, oldest), (1, Some(at("2026-11-20T00:00:00Z"))));
}

backend_tests!(
    every_change_records_its_event_in_its_transaction,
    posted_signed_in_order_per_subscription_retried_and_replayed,
    a_receiver_that_stays_down_costs_one_post_a_pass_then_gives_up,
    per_message_events_come_with_the_settle_when_asked,
    purge_keeps_what_waits_to_be_posted,
);

/// A bad `[events]` section (written under `dir`) is refused before
/// anything runs: exit 2, naming the setting.
fn bad_events_sections_are_refused(dir: &std::path::Path) {
    for (section, says) in [
        (
            "url = \"ftp://x.example/\"\nsecret = \"whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3\"",
            "[events] url",
        ),
        (
            "url = \"https://x.example/\"\nsecret = \"nope\"",
            "[events] secret",
        ),
        ("types = [\"digest.sent\"]", "[events] types"),
    ] {
        let bad = dir.join("bad.toml");
        std::fs::write(
            &bad,
            format!("[database]\nurl = \"sqlite://w.db\"\n[events]\n{section}\n"),
        )
        .unwrap();
        let out = common::digestd_with_config(&bad, &["events", "list"]);
        assert_eq!(out.status.code(), Some(2), "{section}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{section}: {err}");
    }
}

#[test]
fn the_cli_lists_replays_and_refuses_bad_input() {
    let (dir, cfg) = common::delivery::webhook_cli();
    let run = |args: &[&str]| common::digestd_with_config(&cfg, args);
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    ok(&[
        "contact",
        "ana",
        "--channel",
        "email",
        "--set",
        "ana@example.com",
    ]);
    let coll = ok(&["collection", "add", "Rota"]).trim().to_string();
    let id = ok(&[
        "subscribe",
        "ana",
        "--collection",
        &coll,
        "--frequency",
        "daily",
        "--kind",
        "modification",
    ]);
    let id = id.lines().last().unwrap().trim().to_string();
    ok(&["subscription", "pause", &id]);
    let lines = ok(&["events", "list", "--json"]);
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = rows.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["subscription.created", "subscription.paused"]);
    assert_eq!(rows[1]["data"]["party"], "ana");
    let text = ok(&["events", "list", "--type", "subscription.paused"]);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\tsubscription.paused\tpending\t"), "{text}");
    // Nothing was sent, so nothing is replayed; no URL is said.
    let out = ok(&["events", "replay", "--since", "-1d"]);
    assert!(out.contains("0 event(s) pending again"), "{out}");
    assert!(out.contains("[events] url"), "{out}");
    // `queue run` with [events] url posts them, as `serve`'s passes do.
    let gw = Gateway::start(vec![]);
    let secret = parties::new_webhook_secret();
    let posting = dir.path().join("posting.toml");
    std::fs::write(
        &posting,
        format!(
            "{}[events]\nurl = \"{}\"\nsecret = \"{secret}\"\n",
            std::fs::read_to_string(&cfg).unwrap(),
            gw.url()
        ),
    )
    .unwrap();
    let out = common::digestd_with_config(&posting, &["queue", "run"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("events posted 2"),
        "{out:?}"
    );
    let reqs = gw.requests();
    assert_eq!(crate::webhook::verify(&secret, &reqs), ["ok", "ok"]);
    let sent = ok(&["events", "list", "--type", "subscription.paused"]);
    assert!(sent.contains("\tsent\t"), "{sent}");
    assert!(ok(&["events", "secret"]).trim().starts_with("whsec_"));
    let purged = ok(&["queue", "purge", "--older-than", "1d"]);
    assert!(purged.contains(" and 0 events from before "), "{purged}");
    for bad in [
        &["events", "list", "--type", "digest.sent"][..],
        &["events", "list", "--since", "yesterday"],
        &["events", "list", "--limit", "0"],
        &["events", "replay", "--since", "2026-13-01T00:00:00Z"],
        &["events", "list", "--type", "unsubscribe\r\nX: y"],
    ] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
    bad_events_sections_are_refused(dir.path());
}
