//! The SMS listener against a real HTTP server on loopback playing the
//! gateway (scripted 200 / 429 with Retry-After / 500 / 400), through the
//! real queue, on each back end.

use crate::common;

use chrono::Duration;
use common::http::Gateway;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::SmsConfig;
use digestd::db::schema::delivery_log;
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::RequestId;
use digestd::parties::{self, NewUser};
use digestd::text::gsm::segments;

const T0: &str = "2026-11-23T09:00:00Z";

fn world(c: &mut DbConn) {
    for (name, phone) in [("ops", "+14155550100"), ("ana", "+34600111222")] {
        parties::create_user(
            c,
            at("2026-11-01T00:00:00Z"),
            &NewUser {
                name: name.into(),
                timezone: "Europe/Madrid".into(),
                email: Some(format!("{name}@example.com")),
                phone: Some(phone.into()),
                ..Default::default()
            },
        )
        .unwrap();
    }
}

fn text(c: &mut DbConn, subject: &str) -> RequestId {
    common::delivery::notify_on(c, "ops", "ana", subject, &["sms"])
}

fn delivery(gw: &Gateway, shape: &str) -> Delivery {
    delivery_to(&gw.url(), shape)
}

fn delivery_to(endpoint: &str, shape: &str) -> Delivery {
    crate::common::delivery::into_dir(&tempfile::tempdir().unwrap().keep())
        .with_sms(&SmsConfig {
            transport: digestd::config::SmsTransport::Http,
            endpoint: endpoint.into(),
            shape: shape.into(),
            username: "AC123".into(),
            password: "secret".into(),
            from: "+15550001111".into(),
            max_segments: 2,
            ..SmsConfig::default()
        })
        .unwrap()
}

fn accepted_message_keeps_the_gateway_id(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let r = text(&mut c, "Ñandú alert: cañería rota");
    let gw = Gateway::start(vec![]);
    let mut d = delivery(&gw, "twilio");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status, "sent");
    assert_eq!(v.recipients[0].reply_code, Some(200));
    assert_eq!(
        v.recipients[0].reply_message.as_deref(),
        Some("accepted (id SM0001)")
    );
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 1);
    let q = &reqs[0];
    assert_eq!((q.method.as_str(), q.path.as_str()), ("POST", "/send"));
    assert_eq!(q.form("To").as_deref(), Some("+34600111222"));
    assert_eq!(q.form("From").as_deref(), Some("+15550001111"));
    assert_eq!(q.form("Body").as_deref(), Some("Ñandú alert: cañería rota"));
    // Basic auth: base64("AC123:secret").
    assert_eq!(q.header("Authorization"), Some("Basic QUMxMjM6c2VjcmV0"));
    // The gateway's id is in the delivery log.
    let log: Vec<(String, Option<String>, Option<String>)> = delivery_log::table
        .select((
            delivery_log::outcome,
            delivery_log::address,
            delivery_log::remote_id,
        ))
        .load(&mut c)
        .unwrap();
    assert_eq!(
        log,
        vec![(
            "sent".into(),
            Some("+34600111222".into()),
            Some("SM0001".into())
        )]
    );
}

fn rate_limits_honour_retry_after_and_server_errors_back_off(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let r = text(&mut c, "Queue depth high");
    let gw = Gateway::start(common::http::slow_then_failing());
    let mut d = delivery(&gw, "twilio");
    common::delivery::retry_after_then_backoff(&mut c, &mut d, r);
    assert_eq!(gw.requests().len(), 3);
}

fn a_refused_number_is_given_up_at_once(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let r = text(&mut c, "Hello");
    let gw = Gateway::start(vec![(400, vec![], "{\"message\": \"invalid To\"}".into())]);
    let mut d = delivery(&gw, "twilio");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    common::delivery::given_up_at_once(&queue::show(&mut c, r).unwrap(), 400, "invalid To");
}

fn json_shape_and_long_bodies_fit_their_segments(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let long = "Résumé ÿ ".repeat(40);
    let r = text(&mut c, &long);
    let gw = Gateway::start(vec![]);
    let mut d = delivery(&gw, "json");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let q = &gw.requests()[0];
    assert_eq!(q.header("Content-Type"), Some("application/json"));
    let v: serde_json::Value = serde_json::from_str(&q.body).unwrap();
    assert_eq!(v["to"], "+34600111222");
    assert_eq!(v["from"], "+15550001111");
    let body = v["text"].as_str().unwrap();
    // ÿ is not GSM-7: UCS-2, two segments of 67 units at most.
    assert!(body.encode_utf16().count() <= 134, "{body}");
    assert_eq!(segments(body), 2);
    assert!(body.ends_with("..."), "{body}");
}

#[test]
fn test_alert_sends_one_sms_now_and_refuses_bad_numbers() {
    let gw = Gateway::start(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[sms]\ntransport = \"http\"\nendpoint = \"{}\"\nauth_header = \"Bearer t0k\"\n",
            gw.url()
        ),
    )
    .unwrap();
    let run = |to: &str| {
        common::digestd_with_config(&cfg, &["test-alert", "--channel", "sms", "--to", to])
    };
    let ok = run("+34600111222");
    assert!(ok.status.success(), "{ok:?}");
    assert!(String::from_utf8_lossy(&ok.stdout)
        .starts_with("sent to +34600111222: 200 accepted (id SM0001)"));
    let q = &gw.requests()[0];
    assert_eq!(q.header("Authorization"), Some("Bearer t0k"));
    assert!(q.form("Body").unwrap().starts_with("digestd test alert"));
    for bad in ["0612345678", "+1", "+34 600\n111"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
    assert_eq!(gw.requests().len(), 1, "nothing sent for a bad number");
}

fn a_gateway_that_is_down_is_retried_and_gets_it_once_back(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let r = text(&mut c, "Pager test");
    // A port nothing listens on yet: connection refused.
    let port = common::smtp::free_port();
    let mut d = delivery_to(&format!("http://127.0.0.1:{port}/send"), "twilio");
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
        .starts_with("gateway: "));
    // Not before the backoff, even with the gateway back.
    let gw = Gateway::start_on(port, vec![]);
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(4)).unwrap();
    assert!(gw.requests().is_empty());
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    assert_eq!(gw.requests().len(), 1, "sent once");
}

fn a_cancelled_text_is_never_sent(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    let r = text(&mut c, "Never mind");
    queue::cancel_request(&mut c, r, at(T0)).unwrap();
    let gw = Gateway::start(vec![]);
    let mut d = delivery(&gw, "twilio");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "cancelled");
    assert!(gw.requests().is_empty());
}

fn a_digest_reaches_the_gateway(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c);
    // 08:00 in Madrid is 07:00Z.
    let t = at("2026-11-23T07:00:00Z");
    let sms = common::one_change_digest(
        &mut c,
        "ana",
        "sms",
        8,
        "Guardia de noche",
        "2026-11-23T07:00:00Z",
    );
    let gw = Gateway::start(vec![]);
    let mut d = delivery(&gw, "twilio");
    let report = queue::run_pass(&mut c, &mut d, t).unwrap();
    assert_eq!(report.finished, 1);
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].form("To").as_deref(), Some("+34600111222"));
    assert_eq!(reqs[0].form("Body"), Some(sms));
}

backend_tests!(
    a_digest_reaches_the_gateway,
    a_gateway_that_is_down_is_retried_and_gets_it_once_back,
    a_cancelled_text_is_never_sent,
    accepted_message_keeps_the_gateway_id,
    rate_limits_honour_retry_after_and_server_errors_back_off,
    a_refused_number_is_given_up_at_once,
    json_shape_and_long_bodies_fit_their_segments,
);
