//! The HTTP face's limits, over raw sockets against a real server: the
//! head and idle timeouts, the cap on open connections, accepting when
//! descriptors run out; and the settings that tune them.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::web::Web;
use common::TestDb;
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
