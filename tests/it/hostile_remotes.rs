//! Far ends that misbehave, over real sockets on loopback: a webhook
//! receiver that accepts and never answers, one that streams an endless
//! answer, and a Matrix homeserver that answers garbage. Each costs a
//! bounded wait and a retry, never a hung pass, a panic or unbounded
//! memory.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::delivery::T0;
use common::http::Gateway;
use common::{at, TestDb};
use digestd::config::{MatrixConfig, MatrixTransport, WebhookConfig, WebhookTransport};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::parties::{self, Channel, ContactChange};
use digestd::validate::UrlPolicy;

/// A server on loopback that reads each request's head and then does
/// `answer` with the socket: its URL.
fn raw_server(answer: fn(&mut std::net::TcpStream)) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                answer(&mut s);
            });
        }
    });
    format!("http://127.0.0.1:{port}/hook")
}

fn users(c: &mut DbConn) {
    for name in ["ops", "ana"] {
        common::delivery::user(c, name, &format!("{name}@example.com"));
    }
}

fn webhook(timeout_seconds: u64) -> Delivery {
    common::delivery::webhook_with(WebhookConfig {
        transport: WebhookTransport::Http,
        allow_http: true,
        allow_private: true,
        timeout_seconds,
        ..WebhookConfig::default()
    })
}

fn a_receiver_that_never_answers_costs_the_timeout_and_a_retry(db: &TestDb) {
    let mut c = db.conn();
    users(&mut c);
    let url = raw_server(|_| std::thread::sleep(Duration::from_secs(60)));
    let t = at("2026-11-01T00:00:00Z");
    parties::set_webhook(&mut c, t, "ana", &url, None, UrlPolicy::ANY).unwrap();
    let r = common::delivery::notify_on(&mut c, "ops", "ana", "Silence", &["webhook"]);
    let mut d = webhook(1);
    let start = Instant::now();
    let report = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(report.retrying, 1, "{report}");
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status, "sending");
    let text = v.recipients[0].reply_message.clone().unwrap();
    assert!(text.starts_with("webhook: "), "{text}");
}

fn an_endless_answer_is_read_to_64_kib_and_no_further(db: &TestDb) {
    let mut c = db.conn();
    users(&mut c);
    // No length, no end: a gigabyte and more if it were read.
    let url = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..16_384 {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let t = at("2026-11-01T00:00:00Z");
    parties::set_webhook(&mut c, t, "ana", &url, None, UrlPolicy::ANY).unwrap();
    let r = common::delivery::notify_on(&mut c, "ops", "ana", "Flood", &["webhook"]);
    let mut d = webhook(10);
    let start = Instant::now();
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(v.status, "sent");
    assert_eq!(
        v.recipients[0].reply_message.as_deref(),
        Some("accepted (answer cut at 64 KiB)")
    );
}

fn a_homeserver_that_answers_garbage_is_retried(db: &TestDb) {
    let mut c = db.conn();
    users(&mut c);
    let set = ContactChange::Set("@ana:example.org".into());
    parties::change_contact(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        "ana",
        Channel::Matrix,
        &set,
    )
    .unwrap();
    let junk = |status: u16, body: &str| (status, vec![], body.to_string());
    let gw = Gateway::start(vec![
        junk(200, "<html>not the API</html>"),
        junk(200, "{\"room_id\": 42}"),
        junk(502, "\u{0}\u{1}\u{2}garbage"),
    ]);
    let cfg = MatrixConfig {
        transport: MatrixTransport::Matrix,
        homeserver: format!("http://127.0.0.1:{}", gw.port),
        user: "@digestd:example.org".into(),
        access_token: "token".into(),
        allow_http: true,
        timeout_seconds: 5,
        ..MatrixConfig::default()
    };
    let (d, email) = common::delivery::in_fresh_dir();
    let mut d = d.with_matrix(&cfg, &email).unwrap();
    let r = common::delivery::notify_on(&mut c, "ops", "ana", "Hello", &["matrix"]);
    // Retried twice; the third failure is the last of [email] max_retries.
    for (minutes, status) in [(0, "sending"), (30, "sending"), (90, "failed")] {
        let when = at(T0) + chrono::Duration::minutes(minutes);
        queue::run_pass(&mut c, &mut d, when).unwrap();
        let v = queue::show(&mut c, r).unwrap();
        assert_eq!(v.status, status, "after {minutes} min: {v:?}");
        let text = v.recipients[0].reply_message.clone().unwrap();
        assert!(text.starts_with("matrix"), "{text}");
        assert!(!text.contains('\u{0}'), "{text:?}");
    }
    // Each pass looks in the account's record of ana first (garbage there is
    // read as "cannot look": a room is opened unrecorded), then creates the
    // room; the 502 ends the second pass at the look, and the third gets
    // the gateway's default answer, an object without a room id.
    let calls: Vec<String> = gw
        .requests()
        .iter()
        .map(|r| {
            let last = r.path.rsplit('/').next().unwrap_or("");
            format!("{} {last}", r.method)
        })
        .collect();
    assert_eq!(
        calls,
        [
            "GET org.digestd.direct.@ana:example.org",
            "POST createRoom",
            "GET org.digestd.direct.@ana:example.org",
            "GET org.digestd.direct.@ana:example.org",
            "POST createRoom"
        ]
    );
    // Garbage is the server's trouble, not the person's: still enabled.
    assert!(!common::delivery::disabled(&mut c, Channel::Matrix));
}

backend_tests!(
    a_receiver_that_never_answers_costs_the_timeout_and_a_retry,
    an_endless_answer_is_read_to_64_kib_and_no_further,
    a_homeserver_that_answers_garbage_is_retried,
);
