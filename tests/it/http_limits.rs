//! The HTTP face's limits, over raw sockets against a real server: tokens
//! checked from the headers before any body is read, per-route body
//! limits, the budget of bodies in flight, the head and idle timeouts, the
//! cap on open connections; and the settings that tune them. The server
//! under a descriptor limit and under attack is in `http_under_attack.rs`.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::web::Web;
use common::TestDb;
use digestd::access::Scope;
use digestd::config::Config;

fn at() -> DateTime<Utc> {
    "2026-11-25T09:00:00Z".parse().unwrap()
}

/// Bounds every wait on the server; none is expected to come near it.
pub(crate) const HANG: Duration = Duration::from_secs(15);

fn connect(w: &Web) -> TcpStream {
    let addr = w.base.trim_start_matches("http://");
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    s
}

/// What came back before the server closed the connection, or `None`
/// when it still held it open after [`HANG`].
pub(crate) fn read_until_closed(s: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            // Closed with our unread bytes in its buffer: a reset after
            // the answer.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None
            }
            Err(e) => panic!("read: {e}"),
        }
    }
    Some(String::from_utf8_lossy(&got).into_owned())
}

/// Status, lowercase head, body of one answer.
fn parse(answer: &str) -> (u16, String, String) {
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole head");
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// A head declaring 16 MiB and the first bytes of its body; then nothing.
fn stalled_upload(w: &Web, method: &str, path: &str, token: Option<&str>) -> TcpStream {
    let mut s = connect(w);
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: 16777216\r\n\r\n[{{\"a"
    )
    .unwrap();
    s.flush().unwrap();
    s
}

const ITEM: &str = "/api/v1/items/6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003";

#[test]
fn a_body_without_a_valid_token_is_never_read() {
    let w = Web::start(TestDb::sqlite(), at());
    let routes = [
        ("POST", "/api/v1/modifications"),
        ("POST", "/api/v1/seen"),
        ("PUT", ITEM),
        ("POST", "/api/v1/collections"),
        ("POST", "/api/v1/users"),
        ("POST", "/api/v1/requests"),
        ("PUT", "/api/v1/users/asha"),
    ];
    for (method, path) in routes {
        for token in [None, Some("dgt_0000")] {
            let mut s = stalled_upload(&w, method, path, token);
            // The answer comes, and the connection closes, without the
            // rest of the body.
            let answer = read_until_closed(&mut s)
                .unwrap_or_else(|| panic!("{method} {path}: no answer without the body"));
            let (status, head, body) = parse(&answer);
            assert_eq!(status, 401, "{method} {path}: {answer}");
            assert!(head.contains("\r\nconnection: close"), "{answer}");
            assert!(head.contains("content-type: application/json"), "{answer}");
            assert!(body.contains("a valid token is required"), "{body}");
        }
    }
    // HEAD is GET's, with the same token rule.
    let head = |token: Option<&str>| {
        w.send(|c| common::web::with_token(c.head(w.url("/api/v1/token")), token))
            .status
    };
    assert_eq!(head(None), 401);
    let read = w.token("reader", Scope::Read);
    assert_eq!(head(Some(&read)), 200);
    // A real token without the scope: 403, just as soon.
    for path in ["/api/v1/modifications", "/api/v1/seen"] {
        let mut s = stalled_upload(&w, "POST", path, Some(&read));
        let answer = read_until_closed(&mut s).expect("an answer without the body");
        let (status, head, body) = parse(&answer);
        assert_eq!(status, 403, "{path}: {answer}");
        assert!(head.contains("\r\nconnection: close"), "{answer}");
        assert!(body.contains("needs ingest"), "{body}");
    }
}

#[test]
fn a_declared_body_over_the_routes_limit_is_refused_at_once() {
    let w = Web::start(TestDb::sqlite(), at());
    let admin = w.token("ops", Scope::Admin);
    // 16 MiB is the bulk limit, so over every other route's.
    let mut s = stalled_upload(&w, "PUT", "/api/v1/users/asha", Some(&admin));
    let answer = read_until_closed(&mut s).expect("an answer without the body");
    let (status, head, body) = parse(&answer);
    assert_eq!(status, 413, "{answer}");
    assert!(head.contains("\r\nconnection: close"), "{answer}");
    assert!(
        body.contains("request body is larger than 65536 bytes"),
        "{body}"
    );
}

#[test]
fn each_route_has_its_body_limit() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.max_api_body_bytes = 2048;
        c.http.max_form_bytes = 1024;
    });
    let admin = w.token("ops", Scope::Admin);
    let ingest = w.token("ci", Scope::Ingest);
    let big = format!(
        r#"{{"tz": "UTC", "email": "{}@example.com"}}"#,
        "a".repeat(3000)
    );
    // Declared, and sent in chunks with no length: 413 JSON either way.
    let a = w.put("/api/v1/users/asha", Some(&admin), big.clone());
    assert_eq!(a.status, 413, "{}", a.text);
    assert_eq!(a.error(), "request body is larger than 2048 bytes");
    let chunked = reqwest::blocking::Body::new(std::io::Cursor::new(big.clone().into_bytes()));
    let a = w.send(|c| {
        c.put(w.url("/api/v1/users/asha"))
            .bearer_auth(&admin)
            .header("content-type", "application/json")
            .body(chunked)
    });
    assert_eq!(a.status, 413, "{}", a.text);
    assert_eq!(a.error(), "request body is larger than 2048 bytes");
    // The same size is a bulk route's to read: refused for what it says.
    let a = w.post("/api/v1/modifications", Some(&ingest), big.clone());
    assert_eq!(a.status, 400, "{}", a.text);
    // A page's form over its limit: 413, as a page.
    let form = format!("email={}", "a".repeat(2000));
    for path in ["/subscribe", "/s/nosuchcode"] {
        let a = w.send(|c| {
            c.post(w.url(path))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form.clone())
        });
        assert_eq!(a.status, 413, "{path}: {}", a.text);
        assert!(a.text.contains("<html"), "{path}: a page, {}", a.text);
    }
    // In the language the browser asks for.
    let a = w.send(|c| {
        c.post(w.url("/subscribe"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept-language", "de")
            .body(form.clone())
    });
    assert_eq!(a.status, 413);
    assert!(a.text.contains("Das Formular ist größer"), "{}", a.text);
    // Within the limits all is as before.
    let a = w.put("/api/v1/users/asha", Some(&admin), r#"{"tz": "UTC"}"#);
    assert_eq!(a.status, 201, "{}", a.text);
}

#[test]
fn bodies_in_flight_share_one_budget() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.max_body_bytes = 64 * 1024;
        c.http.max_body_bytes_in_flight = 64 * 1024;
    });
    let ingest = w.token("ci", Scope::Ingest);
    // An upload that declares the whole budget and stalls holds it …
    let mut s = connect(&w);
    write!(
        s,
        "POST /api/v1/modifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ingest}\r\n\
         Content-Type: application/json\r\nContent-Length: 65536\r\n\r\n[{{\"a"
    )
    .unwrap();
    // … so another body waits, then is refused with a time to come back.
    let started = Instant::now();
    let refused = loop {
        let a = w.post("/api/v1/modifications", Some(&ingest), "[]");
        if a.status == 503 {
            break a;
        }
        assert!(
            started.elapsed() < HANG,
            "never refused: {} {}",
            a.status,
            a.text
        );
    };
    assert_eq!(refused.header("retry-after").as_deref(), Some("1"));
    assert_eq!(refused.header("connection").as_deref(), Some("close"));
    assert!(
        refused.error().contains("retry shortly"),
        "{}",
        refused.text
    );
    // A request without a body needs no room.
    assert_eq!(w.get("/api/v1/token", Some(&ingest)).status, 200);
    // Once the stalled upload is gone, bodies are read again.
    drop(s);
    let started = Instant::now();
    loop {
        let a = w.post("/api/v1/modifications", Some(&ingest), "[]");
        if a.status != 503 {
            assert_eq!(a.status, 201, "{}", a.text);
            break;
        }
        assert!(started.elapsed() < HANG, "the budget was never given back");
    }
}

#[test]
fn a_slow_head_is_cut_at_the_header_timeout() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.header_timeout_seconds = 1;
        c.http.idle_timeout_seconds = 60;
    });
    let mut s = connect(&w);
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    let started = Instant::now();
    // One byte of a header every half second, for as long as it is taken.
    let closed = loop {
        assert!(started.elapsed() < HANG, "a slow head was never cut");
        if s.write_all(b"X").is_err() {
            break true;
        }
        let mut buf = [0u8; 1024];
        match s.read(&mut buf) {
            Ok(0) => break true,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break true,
            Ok(_) => break false,
            Err(_) => {}
        }
    };
    assert!(closed, "answered instead of closed");
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.header_timeout_seconds = 60;
        c.http.idle_timeout_seconds = 2;
    });
    let mut s = connect(&w);
    // Requests more often than the idle timeout keep it open …
    let started = Instant::now();
    let mut answered = 0;
    while started.elapsed() < Duration::from_secs(3) {
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let answer = read_one(&mut s);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        answered += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(answered > 1);
    // … and then, with nothing sent, the server closes it.
    assert_eq!(read_until_closed(&mut s).as_deref(), Some(""));
}

/// One answer with a Content-Length body, leaving the connection open.
fn read_one(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "closed mid-answer");
        got.push(byte[0]);
    }
    let head = String::from_utf8(got).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().unwrap())
        })
        .expect("a content-length");
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    head + &String::from_utf8(body).unwrap()
}

/// `n` connections that send a request line and then nothing.
fn stalled_heads(w: &Web, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(w);
            s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
            s
        })
        .collect()
}

/// `n` whole requests that close after their answer, not read yet.
fn healthz_requests(w: &Web, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(w);
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            s
        })
        .collect()
}

/// How many of `socks` the server has closed without an answer (each
/// given 200 ms to show it).
fn closed_without_answer(socks: &mut [TcpStream]) -> usize {
    socks
        .iter_mut()
        .filter_map(|s| {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            read_until_closed(s)?.is_empty().then_some(())
        })
        .count()
}

/// Whether nothing has come back on `s` yet (the server has not served it).
fn unanswered(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let r = s.read(&mut buf);
    s.set_nonblocking(false).unwrap();
    matches!(&r, Err(e) if e.kind() == ErrorKind::WouldBlock)
}

#[test]
fn past_max_connections_requests_being_answered_keep_their_slots() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.max_connections = 4;
        c.http.header_timeout_seconds = 60;
    });
    let ingest = w.token("ci", Scope::Ingest);
    // Four uploads whose bodies stall: requests being answered, each in
    // a slot, which no newcomer may take.
    let uploads: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(&w);
            write!(
                s,
                "POST /api/v1/modifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ingest}\r\n\
                 Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{{\"a"
            )
            .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // Connecting still succeeds (the kernel's backlog), but no answer
    // comes while the slots are held, however long the newcomers wait.
    let mut waiting = healthz_requests(&w, 6);
    std::thread::sleep(Duration::from_secs(2));
    for s in &mut waiting {
        assert!(unanswered(s), "served past the cap");
    }
    // Freed slots serve them, four at a time.
    drop(uploads);
    for s in &mut waiting {
        let answer = read_until_closed(s).expect("served once slots freed");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}

#[test]
fn past_max_connections_the_longest_waiting_make_room() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.max_connections = 4;
        c.http.header_timeout_seconds = 60;
    });
    // Four heads that never end hold every slot, well within the header
    // timeout …
    let mut stalled = stalled_heads(&w, 4);
    std::thread::sleep(Duration::from_millis(1500));
    // … and whole requests are served anyway: each newcomer closes the
    // connection that waited longest for a request.
    let mut served = healthz_requests(&w, 6);
    for s in &mut served {
        let answer = read_until_closed(s).expect("served past stalled heads");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    // At least the first newcomer found no free slot; the ones after it
    // may have found the slots that answered requests gave back.
    let shed = closed_without_answer(&mut stalled);
    assert!(shed >= 1, "no stalled head gave up its slot");
    drop(stalled);
    // A newcomer sheds only one that has waited a while: fresh stalled
    // heads are left alone for the first second.
    let mut fresh = stalled_heads(&w, 4);
    let mut waiting = healthz_requests(&w, 1);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        unanswered(&mut waiting[0]),
        "a fresh connection was closed at once"
    );
    let answer = read_until_closed(&mut waiting[0]).expect("served after a second");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let closed = closed_without_answer(&mut fresh);
    assert_eq!(closed, 1, "one closed to make room for one");
}

#[test]
fn hostile_limit_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    let load = |toml: &str| {
        std::fs::write(&p, toml).unwrap();
        Config::load(Some(&p), Vec::new())
    };
    let ok = load("").unwrap();
    assert_eq!(ok.http.max_api_body_bytes, 64 * 1024);
    assert_eq!(ok.http.max_form_bytes, 16 * 1024);
    assert_eq!(ok.http.max_body_bytes_in_flight, 64 * 1024 * 1024);
    assert_eq!(ok.http.max_connections, 512);
    assert_eq!(ok.http.header_timeout_seconds, 10);
    assert_eq!(ok.http.idle_timeout_seconds, 60);
    let keys = [
        "max_api_body_bytes",
        "max_form_bytes",
        "max_body_bytes_in_flight",
        "max_connections",
        "header_timeout_seconds",
        "idle_timeout_seconds",
    ];
    for key in keys {
        for value in ["0", "-1", "\"ten\"", "1.5", "99999999999999"] {
            let e = load(&format!("[http]\n{key} = {value}\n"))
                .expect_err(&format!("{key} = {value}"))
                .to_string();
            assert!(
                e.contains(&format!("[http] {key} must be")),
                "{key} = {value}: {e}"
            );
        }
    }
    // Sizes that cannot hold together: a small limit above the bulk one,
    // a budget smaller than one bulk body.
    for (toml, key) in [
        (
            "[http]\nmax_body_bytes = 4096\nmax_api_body_bytes = 8192\nmax_form_bytes = 1024\n",
            "max_api_body_bytes",
        ),
        (
            "[http]\nmax_body_bytes = 4096\nmax_api_body_bytes = 1024\nmax_form_bytes = 8192\n",
            "max_form_bytes",
        ),
        (
            "[http]\nmax_body_bytes = 1048576\nmax_body_bytes_in_flight = 1024\n",
            "max_body_bytes_in_flight",
        ),
    ] {
        let e = load(toml).expect_err(toml).to_string();
        assert!(e.contains(&format!("[http] {key} must be")), "{toml}: {e}");
    }
    let tuned = load(
        "[http]\nmax_connections = 8\nheader_timeout_seconds = 2\nidle_timeout_seconds = 5\n\
         max_api_body_bytes = 4096\nmax_form_bytes = 2048\nmax_body_bytes_in_flight = 33554432\n",
    )
    .unwrap();
    assert_eq!(tuned.http.max_connections, 8);
    assert_eq!(tuned.http.idle_timeout_seconds, 5);
}
