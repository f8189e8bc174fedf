//! The HTTP face's limits, over raw sockets against a real server: tokens
//! checked from the headers before any body is read, per-route body
//! limits, the budget of bodies in flight, the head and idle timeouts, the
//! cap on open connections; and the settings that tune them.

mod common;

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
const HANG: Duration = Duration::from_secs(15);

fn connect(w: &Web) -> TcpStream {
    let addr = w.base.trim_start_matches("http://");
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    s
}

/// What came back before the server closed the connection, or `None`
/// when it still held it open after [`HANG`].
fn read_until_closed(s: &mut TcpStream) -> Option<String> {
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
    let mut s = stalled_upload(&w, "POST", "/api/v1/modifications", Some(&read));
    let answer = read_until_closed(&mut s).expect("an answer without the body");
    let (status, head, body) = parse(&answer);
    assert_eq!(status, 403, "{answer}");
    assert!(head.contains("\r\nconnection: close"), "{answer}");
    assert!(body.contains("needs ingest"), "{body}");
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

#[test]
fn past_max_connections_new_ones_wait_until_a_slot_frees() {
    let w = Web::start_with(TestDb::sqlite(), at(), |c| {
        c.http.max_connections = 4;
        c.http.header_timeout_seconds = 60;
    });
    // Four connections that stall in their head take every slot.
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(&w);
            s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    // Connecting still succeeds (the kernel's backlog), but no answer
    // comes while the slots are held.
    let mut waiting: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = connect(&w);
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    for s in &mut waiting {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 64];
        let r = s.read(&mut buf);
        assert!(
            matches!(&r, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "served past the cap: {r:?}"
        );
        s.set_nonblocking(false).unwrap();
    }
    // Freed slots serve them, four at a time.
    drop(stalled);
    for s in &mut waiting {
        let answer = read_until_closed(s).expect("served once slots freed");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
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

/// `digestd web` with a small descriptor limit: connections past it make
/// `accept` fail (EMFILE). The server neither dies nor spins: it warns at
/// most once a second, and serves again once connections close.
#[test]
fn running_out_of_descriptors_pauses_accepting() {
    use common::cli::Env;
    use std::process::{Command, Stdio};
    let env = Env::init();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_digestd"))
        .args([
            "--config",
            env.config.to_str().unwrap(),
            "--db",
            &env.url,
            "web",
        ])
        .current_dir(env.dir.path())
        .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .env("DIGESTD_HTTP__HEADER_TIMEOUT_SECONDS", "60")
        .env("DIGESTD_LOG__LEVEL", "warn")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let healthz = |addr: &str| -> Option<String> {
        let mut s = TcpStream::connect(addr).ok()?;
        s.set_read_timeout(Some(HANG)).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .ok()?;
        read_until_closed(&mut s)
    };
    let started = Instant::now();
    while healthz(&addr).is_none_or(|a| !a.starts_with("HTTP/1.1 200")) {
        assert!(started.elapsed() < HANG, "web did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    // More stalled connections than descriptors: the kernel takes them
    // all (the backlog), the server only as many as it can open.
    let flood_started = Instant::now();
    let flood: Vec<TcpStream> = (0..150)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    assert!(child.try_wait().unwrap().is_none(), "web died");
    drop(flood);
    // Served again once they are gone.
    let started = Instant::now();
    loop {
        if healthz(&addr).is_some_and(|a| a.starts_with("HTTP/1.1 200")) {
            break;
        }
        assert!(started.elapsed() < HANG, "not served after the flood");
        std::thread::sleep(Duration::from_millis(100));
    }
    let elapsed = flood_started.elapsed().as_secs();
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warned = stderr.matches("accept failed").count();
    assert!(
        warned >= 1,
        "the descriptor limit was never reached: {stderr}"
    );
    assert!(
        warned as u64 <= elapsed + 2,
        "{warned} warnings in {elapsed} s: {stderr}"
    );
}
