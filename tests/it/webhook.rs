//! The webhook listener against a real HTTP server on loopback playing the
//! receiver (scripted 200 / 429 with Retry-After / 500 / 400 / 410 / 302,
//! and an answer past 64 KiB), through the real queue, on each back end.
//! Signatures are checked by the Standard Webhooks reference library
//! (Python's `standardwebhooks`, `tests/fixtures/webhook/verify.py`).

use crate::common;

use chrono::Duration;
use common::delivery::T0;
use common::http::{Gateway, Request};
use common::{at, TestDb};
use digestd::config::{WebhookConfig, WebhookTransport};
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;
use digestd::parties;
use digestd::validate::UrlPolicy;

/// What the tests allow: a plain-http receiver on loopback.
const LOOPBACK: UrlPolicy = UrlPolicy::ANY;

/// `ops` and `ana`; ana's webhook is `url`. Returns ana's secret.
fn world(c: &mut DbConn, url: &str) -> String {
    for name in ["ops", "ana"] {
        // Paris keeps Madrid's time: 08:00 is 07:00Z in November.
        common::delivery::user(c, name, &format!("{name}@example.com"));
    }
    let (p, secret) =
        parties::set_webhook(c, at("2026-11-01T00:00:00Z"), "ana", url, None, LOOPBACK).unwrap();
    assert_eq!(p.channel, "webhook");
    secret
}

fn notify(c: &mut DbConn, subject: &str) -> RequestId {
    common::delivery::notify_on(c, "ops", "ana", subject, &["webhook"])
}

use common::delivery::{webhook_loopback as delivery, webhook_with as delivery_with};

/// Each request's verdict from the reference library: "ok" or why not.
pub(crate) fn verify(secret: &str, reqs: &[Request]) -> Vec<String> {
    use std::io::Write;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/webhook/verify.py"
    );
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut input = String::new();
    for q in reqs {
        let headers: serde_json::Map<String, serde_json::Value> = q
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        input.push_str(
            &serde_json::json!({"secret": secret, "headers": headers, "body": q.body}).to_string(),
        );
        input.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the verifier (pip install standardwebhooks) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether `v` is what `docs/schema/webhook-digest.schema.json` describes.
fn check_schema(v: &serde_json::Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/schema/webhook-digest.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let id = "https://schemas.digestd.invalid/webhook-digest.schema.json";
    assert_eq!(schema["$id"], id);
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler.add_resource(id, schema).unwrap();
    let mut set = boon::Schemas::new();
    let idx = compiler.compile(id, &mut set).unwrap();
    if let Err(e) = set.validate(v, idx) {
        panic!("{v}: {e:#}");
    }
}

fn disabled(c: &mut DbConn) -> bool {
    common::delivery::disabled(c, parties::Channel::Webhook)
}

fn a_notification_and_a_digest_are_signed_as_the_reference_verifies(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![]);
    let secret = world(&mut c, &gw.url());
    let mut d = delivery();
    // A digest at 08:00 in Madrid (07:00Z), then a notification.
    common::one_change_digest(
        &mut c,
        "ana",
        "webhook",
        8,
        "Guardia de noche",
        "2026-11-23T07:00:00Z",
    );
    queue::run_pass(&mut c, &mut d, at("2026-11-23T07:00:00Z")).unwrap();
    let r = notify(&mut c, "Disk almost full");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(verify(&secret, &reqs), ["ok", "ok"]);
    // A wrong secret does not verify: the check is real.
    let other = parties::new_webhook_secret();
    assert!(verify(&other, &reqs).iter().all(|v| v.starts_with("bad")));
    for q in &reqs {
        assert_eq!((q.method.as_str(), q.path.as_str()), ("POST", "/send"));
        assert_eq!(q.header("content-type"), Some("application/json"));
        assert!(q.header("user-agent").unwrap().starts_with("digestd/"));
    }
    let digest: serde_json::Value = serde_json::from_str(&reqs[0].body).unwrap();
    check_schema(&digest);
    assert_eq!(digest["type"], "digest");
    assert_eq!(digest["kind"], "modification");
    assert_eq!(digest["frequency"], "daily");
    assert!(digest["subscription_id"].as_i64().unwrap() > 0);
    assert!(digest["request_id"].as_i64().unwrap() >= 1000);
    assert_eq!(digest["period"]["end"], "2026-11-23T07:00:00Z");
    let item = &digest["sections"][0]["items"][0];
    assert_eq!(item["title"], "Guardia de noche");
    assert!(item["change"]
        .as_str()
        .unwrap()
        .contains("Guardia de noche"));
    assert!(digest["manage_url"].as_str().unwrap().contains("/s/"));
    // The timestamp is the pass's instant, from the injected clock.
    assert_eq!(
        reqs[0].header("webhook-timestamp"),
        Some(at("2026-11-23T07:00:00Z").timestamp().to_string().as_str())
    );
    let n: serde_json::Value = serde_json::from_str(&reqs[1].body).unwrap();
    check_schema(&n);
    assert_eq!(n["type"], "notification");
    assert_eq!(n["request_id"], r.0);
    assert_eq!(n["subject"], "Disk almost full");
    assert_eq!(
        reqs[1].header("webhook-id"),
        Some(format!("msg_{}_{}", r.0, parties::find(&mut c, "ana").unwrap().0 .0).as_str())
    );
}

fn retries_keep_their_id_and_honour_retry_after(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(common::http::slow_then_failing());
    let secret = world(&mut c, &gw.url());
    let r = notify(&mut c, "Queue depth high");
    let mut d = delivery();
    common::delivery::retry_after_then_backoff(&mut c, &mut d, r);
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 3);
    // One id for every attempt; each attempt signed at its own instant.
    let ids: Vec<_> = reqs.iter().map(|q| q.header("webhook-id")).collect();
    assert!(ids.iter().all(|i| *i == ids[0] && i.is_some()), "{ids:?}");
    assert_ne!(
        reqs[0].header("webhook-timestamp"),
        reqs[2].header("webhook-timestamp")
    );
    assert_eq!(verify(&secret, &reqs), ["ok", "ok", "ok"]);
}

fn gone_disables_and_refusals_and_redirects_give_up(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![
        (400, vec![], "{\"error\": \"bad payload\"}".into()),
        (
            302,
            vec![("Location".into(), "http://127.0.0.1:9/elsewhere".into())],
            String::new(),
        ),
        (410, vec![], "gone".into()),
    ]);
    world(&mut c, &gw.url());
    let mut d = delivery();
    let mut show = |c: &mut DbConn, subject: &str, t: chrono::DateTime<chrono::Utc>| {
        let r = notify(c, subject);
        queue::run_pass(c, &mut d, t).unwrap();
        queue::show(c, r).unwrap()
    };
    common::delivery::given_up_at_once(&show(&mut c, "One", at(T0)), 400, "bad payload");
    assert!(!disabled(&mut c));
    let v = show(&mut c, "Two", at(T0) + Duration::minutes(1));
    assert_eq!(v.status, "failed");
    assert_eq!(v.recipients[0].reply_code, Some(302));
    let text = v.recipients[0].reply_message.clone().unwrap();
    assert!(text.contains("not followed"), "{text}");
    assert_eq!(gw.requests().len(), 2, "the redirect was not followed");
    let v = show(&mut c, "Three", at(T0) + Duration::minutes(2));
    assert_eq!(
        (v.status.as_str(), v.recipients[0].reply_code),
        ("failed", Some(410))
    );
    assert!(disabled(&mut c), "410 Gone disables the contact point");
    // Nothing more goes to it.
    let v = show(&mut c, "Four", at(T0) + Duration::minutes(3));
    assert_eq!(v.status, "failed");
    assert_eq!(
        v.recipients[0].reply_message.as_deref(),
        Some("no webhook address")
    );
    assert_eq!(gw.requests().len(), 3);
}

fn a_long_answer_is_cut_at_64_kib(db: &TestDb) {
    let mut c = db.conn();
    let big = "x".repeat(200 * 1024);
    let gw = Gateway::start(vec![(200, vec![], big.clone()), (503, vec![], big)]);
    world(&mut c, &gw.url());
    let mut d = delivery();
    let r = notify(&mut c, "Big answer");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status, "sent");
    assert_eq!(
        v.recipients[0].reply_message.as_deref(),
        Some("accepted (answer cut at 64 KiB)")
    );
    let r = notify(&mut c, "Big error");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(1)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    let text = v.recipients[0].reply_message.clone().unwrap();
    assert_eq!(v.recipients[0].reply_code, Some(503));
    assert!(
        text.ends_with("(answer cut at 64 KiB)") && text.len() < 1000,
        "{text}"
    );
}

fn private_targets_are_refused_without_allow_private(db: &TestDb) {
    let mut c = db.conn();
    let gw = Gateway::start(vec![]);
    world(&mut c, &gw.url());
    let now = at("2026-11-02T00:00:00Z");
    let https = UrlPolicy {
        allow_http: true,
        allow_private: false,
    };
    for url in [
        gw.url(),
        "http://localhost:8080/x".to_string(),
        "http://[::ffff:127.0.0.1]/x".into(),
        "http://0x7f000001/x".into(),
    ] {
        let e = parties::set_webhook(&mut c, now, "ops", &url, None, https).unwrap_err();
        assert!(e.to_string().contains("allow_private"), "{url}: {e}");
    }
    let e = parties::set_webhook(
        &mut c,
        now,
        "ops",
        "http://hooks.example.com/x",
        None,
        UrlPolicy::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("allow_http"), "{e}");
    // Set while allowed, refused when the settings no longer allow it:
    // checked again as it is sent, and nothing reaches the server.
    let r = notify(&mut c, "Internal");
    let mut d = delivery_with(WebhookConfig {
        transport: WebhookTransport::Http,
        allow_http: true,
        ..WebhookConfig::default()
    });
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status, "failed");
    let text = v.recipients[0].reply_message.clone().unwrap();
    assert!(
        text.contains("loopback") && text.contains("allow_private"),
        "{text}"
    );
    assert!(gw.requests().is_empty());
}

fn the_dir_transport_writes_what_would_be_posted(db: &TestDb) {
    let mut c = db.conn();
    let secret = world(&mut c, "https://hooks.example.com/digestd");
    // Two requests to one recipient: one message, a batch.
    let r = notify(&mut c, "To the outbox");
    notify(&mut c, "And another");
    let mut d = delivery_with(WebhookConfig::default());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let dir = d.outbox.root().join("webhook");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    let (head, body) = text.split_once("\n\n").unwrap();
    let mut lines = head.lines();
    assert_eq!(lines.next(), Some("POST https://hooks.example.com/digestd"));
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l.split_once(": ").unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    let q = Request {
        method: "POST".into(),
        path: "/digestd".into(),
        headers,
        body: body.trim_end_matches('\n').to_string(),
    };
    let v: serde_json::Value = serde_json::from_str(&q.body).unwrap();
    check_schema(&v);
    assert_eq!(v["type"], "batch");
    assert_eq!(v["messages"][1]["subject"], "And another");
    assert_eq!(
        q.header("webhook-id"),
        Some(
            format!(
                "msg_{}_{}_2",
                r.0,
                parties::find(&mut c, "ana").unwrap().0 .0
            )
            .as_str()
        )
    );
    assert_eq!(verify(&secret, &[q]), ["ok"]);
}

#[test]
fn the_cli_sets_a_webhook_shows_its_secret_once_and_test_alerts_it() {
    let gw = Gateway::start(vec![]);
    let (_dir, cfg) = common::delivery::webhook_cli();
    let run = |args: &[&str]| common::digestd_with_config(&cfg, args);
    let out = run(&["contact", "ana", "--channel", "webhook", "--set", &gw.url()]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let secret = text
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .expect("the secret is shown")
        .to_string();
    // Listings never show it.
    let shown = run(&["contact", "ana", "--json"]);
    assert!(!String::from_utf8_lossy(&shown.stdout).contains("whsec_"));
    let ok = run(&["test-alert", "--channel", "webhook", "--to", "ana"]);
    assert!(ok.status.success(), "{ok:?}");
    assert_eq!(verify(&secret, &gw.requests()), ["ok"]);
    // A new secret signs from now on.
    let out = run(&["contact", "ana", "--channel", "webhook", "--rotate-secret"]);
    let rotated = String::from_utf8(out.stdout).unwrap();
    assert!(rotated.starts_with("secret whsec_") && !rotated.contains(&secret));
    // Refused without allow_private: one line, exit 2.
    std::fs::write(&cfg, "[database]\nurl = \"sqlite://w.db\"\n").unwrap();
    let out = run(&[
        "contact",
        "ana",
        "--channel",
        "webhook",
        "--set",
        "https://127.0.0.1/x",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
}

backend_tests!(
    a_notification_and_a_digest_are_signed_as_the_reference_verifies,
    retries_keep_their_id_and_honour_retry_after,
    gone_disables_and_refusals_and_redirects_give_up,
    a_long_answer_is_cut_at_64_kib,
    private_targets_are_refused_without_allow_private,
    the_dir_transport_writes_what_would_be_posted,
);
