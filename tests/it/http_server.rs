//! The HTTP server itself, over real HTTP on a port the OS chose, on both
//! back ends: health and readiness, JSON errors for what no route takes,
//! bearer tokens (made, listed, revoked by the CLI), security headers.

use crate::common;

use std::os::unix::ffi::OsStrExt;

use chrono::{DateTime, Duration, Utc};
use common::cli::Env;
use common::web::{each_backend, Web};
use common::TestDb;
use digestd::access::Scope;
use digestd::schedule::{self, lease};

fn at() -> DateTime<Utc> {
    "2026-11-25T09:00:00Z".parse().unwrap()
}

#[test]
fn healthz_answers_without_a_token() {
    each_backend(at(), |w| {
        let a = w.get("/healthz", None);
        assert_eq!(a.status, 200);
        assert_eq!(a.json()["status"], "ok");
        assert_eq!(
            a.header("x-content-type-options").as_deref(),
            Some("nosniff")
        );
        assert_eq!(a.header("x-frame-options").as_deref(), Some("DENY"));
        assert!(a
            .header("content-security-policy")
            .unwrap()
            .contains("default-src 'none'"));
    });
}

/// HSTS on every answer (pages, API, errors) when the public base is
/// https, with the configured age; none over http or with age 0.
#[test]
fn hsts_is_sent_when_the_public_base_is_https() {
    let with = |base: &str, age: u32| {
        let base = base.to_string();
        Web::start_with(TestDb::sqlite(), at(), move |c| {
            c.digest.base_url = base;
            c.http.hsts_max_age_seconds = age;
        })
    };
    let w = with("https://digests.example.org", 31_536_000);
    for path in ["/healthz", "/api/v1/queue", "/nowhere", "/s/abc"] {
        let a = w.get(path, None);
        assert_eq!(
            a.header("strict-transport-security").as_deref(),
            Some("max-age=31536000"),
            "{path} {}",
            a.status
        );
    }
    let w = with("HTTPS://digests.example.org", 600);
    assert_eq!(
        w.get("/healthz", None)
            .header("strict-transport-security")
            .as_deref(),
        Some("max-age=600")
    );
    for w in [
        with("http://digests.example.org", 600),
        with("https://x.example", 0),
    ] {
        assert_eq!(
            w.get("/healthz", None).header("strict-transport-security"),
            None
        );
    }
    if let Some(pg) = TestDb::postgres() {
        let w = Web::start_with(pg, at(), |c| c.digest.base_url = "https://d.example".into());
        let a = w.get("/healthz", None);
        assert_eq!(
            a.header("strict-transport-security").as_deref(),
            Some("max-age=31536000")
        );
    }
}

#[test]
fn readyz_follows_the_last_tick() {
    each_backend(at(), |w| {
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 503);
        assert_eq!(a.error(), "no tick has finished yet");
        // A tick at 09:00 (quarter-hour ticks): ready until two intervals,
        // half an hour, have passed.
        let mut c = w.db.conn();
        assert!(
            lease::acquire(&mut c, schedule::TICK_JOB, "t", at(), Duration::minutes(10)).unwrap()
        );
        lease::release(&mut c, schedule::TICK_JOB, "t", at()).unwrap();
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["last_tick"], "2026-11-25T09:00:00Z");
        w.clock.advance(Duration::minutes(29));
        assert_eq!(w.get("/readyz", None).status, 200);
        w.clock.advance(Duration::minutes(2));
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 503);
        assert!(
            a.error()
                .contains("more than two tick intervals (900 s each)"),
            "{}",
            a.text
        );
    });
}

#[test]
fn what_no_route_takes_is_a_json_error() {
    each_backend(at(), |w| {
        let a = w.get("/no/such/thing", None);
        assert_eq!(a.status, 404);
        assert_eq!(a.error(), "no such route");
        let a = w.post("/healthz", None, "{}");
        assert_eq!(a.status, 405);
        assert_eq!(a.error(), "method not allowed on this route");
    });
}

#[test]
fn a_token_is_needed_and_must_be_real() {
    each_backend(at(), |w| {
        let secret = w.token("ci", Scope::Ingest);
        let a = w.get("/api/v1/token", Some(&secret));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            a.json(),
            serde_json::json!({"name": "ci", "scope": "ingest"})
        );
        // None, unknown, malformed, another scheme, CR/LF and oversized: 401.
        assert_eq!(w.get("/api/v1/token", None).status, 401);
        // The last hex digit changed (a secret that ends in 0 gets a 1).
        let last = if secret.ends_with('0') { '1' } else { '0' };
        let wrong = format!("{}{last}", &secret[..secret.len() - 1]);
        for bad in [wrong.as_str(), "dgt_", "x", &"dgt_a".repeat(200)] {
            let a = w.get("/api/v1/token", Some(bad));
            assert_eq!(a.status, 401, "{bad}");
            assert!(a.error().starts_with("a valid token is required"));
        }
        let a = w.send(|c| {
            c.get(w.url("/api/v1/token"))
                .header("authorization", format!("Basic {secret}"))
        });
        assert_eq!(a.status, 401);
        let a = w.send(|c| {
            c.get(w.url("/api/v1/token"))
                .header("authorization", "Bearer")
        });
        assert_eq!(a.status, 401);
        // A read ticket is not a token.
        let a = w.get("/api/v1/token", Some("dgk_0000"));
        assert_eq!(a.status, 401);
    });
}

#[test]
fn tokens_are_made_listed_and_revoked_by_the_cli() {
    let env = Env::init();
    let out = env.ok(&["token", "add", "wiki", "--scope", "ingest"]);
    let secret = out.lines().last().unwrap().to_string();
    assert!(secret.starts_with("dgt_") && secret.len() == 68, "{secret}");
    let list = env.ok(&["token", "list"]);
    assert!(list.starts_with("wiki\tingest\tcreated "), "{list}");
    assert!(list.contains("last used never"));
    assert!(!list.contains(&secret[4..]), "a secret is never listed");
    let json = env.ok(&["token", "list", "--json"]);
    assert!(!json.contains(&secret[4..]));
    assert!(json.contains("\"scope\":\"ingest\""));
    // Hostile: a second token of that name, a bad scope, a bad name.
    env.refused(
        &["token", "add", "wiki", "--scope", "read"],
        b"",
        "a token named wiki exists",
    );
    env.refused(
        &["token", "add", "x", "--scope", "root"],
        b"",
        "scope: root is not one of admin, ingest, metrics, read",
    );
    let long = "m".repeat(5000);
    for hostile in [
        "Metrics",
        "metrics\r\nX: 1",
        "read,metrics",
        "",
        long.as_str(),
    ] {
        let out = env.refused(&["token", "add", "x", "--scope", hostile], b"", "scope: ");
        assert!(out.stderr.len() < 300, "{}", out.stderr);
    }
    let bytes = std::ffi::OsStr::from_bytes(b"metr\xffics");
    let out = env.run(&[
        std::ffi::OsStr::new("token"),
        "add".as_ref(),
        "x".as_ref(),
        "--scope".as_ref(),
        bytes,
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // The metrics scope is made like any other.
    let m = env.ok(&["token", "add", "prom", "--scope", "metrics"]);
    assert!(m.lines().last().unwrap().starts_with("dgt_"), "{m}");
    assert!(env.ok(&["token", "list"]).contains("prom\tmetrics\t"));
    env.ok(&["token", "revoke", "prom"]);
    // The field is named once: "invalid token name", not "token name name".
    env.refused(
        &["token", "add", "a\nb", "--scope", "read"],
        b"",
        "digestd: invalid token name \"a\\nb\": use 1-64 letters",
    );
    env.refused(
        &["token", "revoke", "a\r\nb"],
        b"",
        "digestd: invalid token name \"a\\r\\nb\": use 1-64 letters",
    );
    env.refused(&["token", "revoke", "nobody"], b"", "no token named nobody");
    // The secret works over HTTP until it is revoked, and using it is seen.
    let w = Web::start(TestDb::existing(&env.url), Utc::now());
    assert_eq!(w.get("/api/v1/token", Some(&secret)).status, 200);
    assert!(!env.ok(&["token", "list"]).contains("last used never"));
    env.ok(&["token", "revoke", "wiki"]);
    assert_eq!(w.get("/api/v1/token", Some(&secret)).status, 401);
    assert_eq!(env.ok(&["token", "list"]), "");
}

#[test]
fn tickets_are_made_listed_and_revoked_by_the_cli() {
    let env = Env::init();
    let coll = env.ok(&["collection", "add", "Team"]).trim().to_string();
    let out = env.ok(&["ticket", "add", &coll]);
    let (id, secret) = out.trim().split_once(' ').unwrap();
    assert!(secret.starts_with("dgk_"));
    let list = env.ok(&["ticket", "list", &coll]);
    assert!(list.starts_with(&format!("{id}\tcreated ")), "{list}");
    assert!(!list.contains(&secret[4..]));
    env.refused(&["ticket", "add", "not-a-uuid"], b"", "collection");
    env.refused(
        &["ticket", "add", "00000000-0000-4000-8000-000000000000"],
        b"",
        "no collection",
    );
    env.ok(&["ticket", "revoke", id]);
    env.refused(&["ticket", "revoke", id], b"", &format!("no ticket {id}"));
    assert_eq!(env.ok(&["ticket", "list", &coll]), "");
}

#[test]
fn the_openapi_document_lists_the_routes() {
    let w = Web::start(TestDb::sqlite(), at());
    let a = w.get("/api/v1/openapi.json", None);
    assert_eq!(a.status, 200);
    let doc = a.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    for path in ["/healthz", "/readyz", "/api/v1/token"] {
        assert!(doc["paths"][path]["get"].is_object(), "{path} missing");
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

/// `digestd web` on SIGTERM stops taking connections, lets a request in
/// flight finish (its rows are written and it gets its answer), then
/// exits 0.
#[test]
fn web_drains_a_request_in_flight_on_sigterm() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration as Wait, Instant};
    let env = Env::init();
    env.ok(&["user", "add", "asha", "--tz", "UTC"]);
    let coll = env.ok(&["collection", "add", "Team"]).trim().to_string();
    let token = env.ok(&["token", "add", "ci", "--scope", "ingest"]);
    let token = token.lines().last().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(env.dir.path())
        .args([
            "--config",
            env.config.to_str().unwrap(),
            "--db",
            &env.url,
            "web",
        ])
        .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut conn = loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(c) => break c,
            Err(_) if started.elapsed() < Wait::from_secs(20) => {
                std::thread::sleep(Wait::from_millis(50))
            }
            Err(e) => panic!("web did not start: {e}"),
        }
    };
    let body = format!(
        r#"[{{"collection":"{coll}","item":"6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003","actor":"asha","action":"created","at":"2026-11-24T09:00:00Z","title":"Standup","kind":"event"}}]"#
    );
    let (first, rest) = body.split_at(body.len() / 2);
    write!(
        conn,
        "POST /api/v1/modifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    )
    .unwrap();
    conn.flush().unwrap();
    // The request is in flight, half its body sent.
    std::thread::sleep(Wait::from_millis(200));
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // Draining: no new connection is taken …
    let stopped = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            stopped.elapsed() < Wait::from_secs(20),
            "still accepting after SIGTERM"
        );
        std::thread::sleep(Wait::from_millis(20));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "exited with a request in flight"
    );
    // … and the one in flight finishes.
    conn.write_all(rest.as_bytes()).unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.ends_with(r#"{"recorded":1}"#), "{answer}");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(stopped.elapsed() < Wait::from_secs(20), "web did not exit");
        std::thread::sleep(Wait::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(env.count("modifications"), 1);
}
