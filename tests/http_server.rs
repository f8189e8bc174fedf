//! The HTTP server itself, over real HTTP on a port the OS chose, on both
//! back ends: health and readiness, JSON errors for what no route takes,
//! bearer tokens (made, listed, revoked by the CLI), security headers.

mod common;

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

#[test]
fn readyz_follows_the_last_tick() {
    each_backend(at(), |w| {
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 503);
        assert_eq!(a.error(), "no tick has finished yet");
        // A tick at 09:00 (hourly ticks): ready until two hours have passed.
        let mut c = w.db.conn();
        assert!(
            lease::acquire(&mut c, schedule::TICK_JOB, "t", at(), Duration::minutes(10)).unwrap()
        );
        lease::release(&mut c, schedule::TICK_JOB, "t", at()).unwrap();
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["last_tick"], "2026-11-25T09:00:00Z");
        w.clock.advance(Duration::minutes(119));
        assert_eq!(w.get("/readyz", None).status, 200);
        w.clock.advance(Duration::minutes(2));
        let a = w.get("/readyz", None);
        assert_eq!(a.status, 503);
        assert!(
            a.error()
                .contains("more than two tick intervals (3600 s each)"),
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
        let wrong = format!("{}0", &secret[..secret.len() - 1]);
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
        "scope: root is not one of admin, ingest, read",
    );
    env.refused(
        &["token", "add", "a\nb", "--scope", "read"],
        b"",
        "token name",
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
