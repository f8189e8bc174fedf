//! The webhook listener posts a batch several at once (`[webhook]
//! concurrency`), against HTTP servers on loopback through the real
//! queue, on each back end: different endpoints are in flight together,
//! never more than the setting allows, and one endpoint's posts go one
//! after another in the queue's order.

use crate::common;

use common::delivery::T0;
use common::http::Gateway;
use common::{at, TestDb};
use digestd::config::WebhookConfig;
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;
use digestd::parties;
use digestd::validate::UrlPolicy;

/// `ops`, and one person per URL of `urls` (`p0`, `p1`, … with that
/// webhook, created in that order), each sent one notification from ops
/// in that order. Returns (person, request) pairs.
fn people_with_webhooks(c: &mut DbConn, urls: &[String]) -> Vec<(String, RequestId)> {
    common::delivery::user(c, "ops", "ops@example.com");
    let now = at("2026-11-01T00:00:00Z");
    let mut out = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let name = format!("p{i}");
        common::delivery::user(c, &name, &format!("{name}@example.com"));
        parties::set_webhook(c, now, &name, url, None, UrlPolicy::ANY).unwrap();
        let r = common::delivery::notify_on(c, "ops", &name, &format!("Notice {i}"), &["webhook"]);
        out.push((name, r));
    }
    out
}

/// A pass at T0 posting with `concurrency` to `urls` (one person each, as
/// [`people_with_webhooks`]), each of whose requests must be sent.
fn posted(c: &mut DbConn, urls: &[String], concurrency: usize) -> Vec<(String, RequestId)> {
    let sent = people_with_webhooks(c, urls);
    let mut d = common::delivery::webhook_with(WebhookConfig {
        concurrency,
        ..common::delivery::loopback_hooks()
    });
    queue::run_pass(c, &mut d, at(T0)).unwrap();
    all_sent(c, &sent);
    sent
}

/// `n` endpoints on `gw`: its URL and `/0`, `/1`, …
fn endpoints(gw: &Gateway, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{}/{i}", gw.url())).collect()
}

/// Every request of `sent` is `sent` in the queue.
fn all_sent(c: &mut DbConn, sent: &[(String, RequestId)]) {
    for (name, r) in sent {
        let v = queue::show(c, *r).unwrap();
        assert_eq!(v.status, "sent", "{name}: {v:?}");
    }
}

/// Four endpoints whose receiver answers none until all four posts are
/// in: the pass gets its answers only if the four are in flight at once
/// (posted one at a time, each reply would wait 3 s in vain).
fn four_endpoints_are_in_flight_at_once(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![]);
    gw.hold_until(4);
    posted(&mut c, &endpoints(&gw, 4), 4);
    assert_eq!(
        gw.holds_given_up(),
        0,
        "a reply waited for the four in vain"
    );
    assert_eq!(gw.max_in_flight(), 4);
    let mut paths: Vec<String> = gw.requests().into_iter().map(|q| q.path).collect();
    paths.sort();
    assert_eq!(paths, ["/send/0", "/send/1", "/send/2", "/send/3"]);
}

/// Twelve endpoints, a receiver slow enough for posts to overlap, and
/// `concurrency = 3`: never more than three in flight, and three at once.
fn never_more_in_flight_than_the_setting(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![]);
    gw.set_delay(150);
    posted(&mut c, &endpoints(&gw, 12), 3);
    assert_eq!(gw.requests().len(), 12);
    assert_eq!(gw.max_in_flight(), 3);
}

/// Four people share one endpoint, two others have their own: the shared
/// one gets its four posts one at a time, in the queue's order (by
/// recipient), while the others are posted beside them.
fn one_endpoints_posts_keep_the_queues_order(db: &TestDb) {
    let mut c = db.conn();
    let shared = Gateway::start(vec![]);
    shared.set_delay(100);
    let other = Gateway::start(vec![]);
    let mut urls = vec![shared.url(); 4];
    urls.insert(2, format!("{}/a", other.url()));
    urls.push(format!("{}/b", other.url()));
    let sent = posted(&mut c, &urls, 4);
    assert_eq!(
        shared.max_in_flight(),
        1,
        "one endpoint, one post at a time"
    );
    let got: Vec<String> = shared
        .requests()
        .iter()
        .map(|q| q.header("webhook-id").unwrap().to_string())
        .collect();
    let want: Vec<String> = sent
        .iter()
        .enumerate()
        .filter(|(i, _)| urls[*i] == shared.url())
        .map(|(_, (name, r))| {
            let party = parties::find(&mut c, name).unwrap().0 .0;
            format!("msg_{}_{party}", r.0)
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(other.requests().len(), 2);
}

backend_tests!(
    four_endpoints_are_in_flight_at_once,
    never_more_in_flight_than_the_setting,
    one_endpoints_posts_keep_the_queues_order,
);
