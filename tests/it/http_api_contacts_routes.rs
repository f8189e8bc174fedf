//! The admin-only contact point routes
//! (`/api/v1/{users,groups}/{name}/contacts/{channel}`), over real HTTP on
//! both back ends: a webhook's or a preset's URL through `[webhook]`'s SSRF
//! guard, a webhook's secret answered once, rotated, removed; other tokens
//! and bad requests refused; the routes in the OpenAPI document. Every
//! refusal is one line of JSON with the stored contact points read back
//! unchanged (the helpers are `http_api_contacts.rs`'s).

use crate::common;

use common::web::Web;
use common::TestDb;
use digestd::access::Scope;
use digestd::config::Config;
use serde_json::{json, Value};

use crate::http_api_contacts::{at, point, refused};

/// Runs `f` on SQLite and, when the suite runs on PostgreSQL, there too,
/// with settings changed by `tune`.
fn each_backend_with(tune: impl Fn(&mut Config), f: impl Fn(&Web)) {
    f(&Web::start_with(TestDb::sqlite(), at(), &tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(), &tune));
    }
}
/// URLs the SSRF guard must refuse whatever the scheme rule says: loopback
/// in several spellings, link-local (cloud metadata), private, IPv6
/// loopback and mapped, localhost names; credentials; CR/LF; too long.
fn hostile_urls(scheme: &str) -> Vec<(String, &'static str)> {
    let s = scheme;
    vec![
        (format!("{s}://127.0.0.1/hook"), "loopback"),
        (format!("{s}://127.1/hook"), "loopback"),
        (format!("{s}://0x7f000001/"), "loopback"),
        (format!("{s}://2130706433/"), "loopback"),
        (format!("{s}://0177.0.0.1/"), "loopback"),
        (
            format!("{s}://169.254.169.254/latest/meta-data/"),
            "link-local",
        ),
        (format!("{s}://10.1.2.3/"), "private"),
        (format!("{s}://192.168.0.1/"), "private"),
        (format!("{s}://[::1]/"), "loopback"),
        (format!("{s}://[::ffff:127.0.0.1]/"), "loopback"),
        (format!("{s}://localhost/"), "localhost"),
        (format!("{s}://hooks.localhost./"), "localhost"),
        (format!("{s}://0.0.0.0/"), "unspecified"),
        (
            format!("{s}://user:pass@hooks.example.com/x"),
            "credentials",
        ),
        (format!("{s}://hooks.example.com@127.0.0.1/"), "credentials"),
        (format!("{s}://token@hooks.example.com/"), "credentials"),
        (
            format!("{s}://hooks.example.com/x\r\nX-Injected: 1"),
            "webhook url",
        ),
        (format!("{s}://hooks.example.com/a b"), "webhook url"),
        (format!("{s}://hooks.example.com/#frag"), "fragment"),
        (
            format!("{s}://hooks.example.com/{}", "a".repeat(2_100)),
            "longer than",
        ),
        ("ftp://hooks.example.com/".into(), "https"),
        ("javascript:alert(1)".into(), "webhook url"),
        ("".into(), "webhook url"),
    ]
}

/// Each hostile URL on each URL channel, for a user that has a webhook
/// and a group: 400, nothing stored changes. `scheme` http runs with
/// `[webhook] allow_http`, so the address rules (not the scheme) refuse.
fn urls_are_guarded(w: &Web, scheme: &str) {
    let admin = w.token("admin", Scope::Admin);
    assert_eq!(
        w.put("/api/v1/users/ann", Some(&admin), r#"{"tz": "UTC"}"#)
            .status,
        201
    );
    assert_eq!(w.put("/api/v1/groups/team", Some(&admin), "").status, 201);
    let body = json!({"address": "https://hooks.example.com/d/ann"}).to_string();
    let a = w.put("/api/v1/users/ann/contacts/webhook", Some(&admin), body);
    assert_eq!(a.status, 200, "{}", a.text);
    for (url, why) in hostile_urls(scheme) {
        for path in [
            "/api/v1/users/ann/contacts/webhook",
            "/api/v1/users/ann/contacts/slack",
            "/api/v1/groups/team/contacts/ntfy",
        ] {
            let body = json!({"address": url}).to_string();
            refused(w, 400, why, || w.put(path, Some(&admin), body));
        }
    }
}

#[test]
fn webhook_urls_pass_the_ssrf_guard_or_write_nothing() {
    each_backend_with(|_| {}, |w| urls_are_guarded(w, "https"));
    each_backend_with(
        |c| c.webhook.allow_http = true,
        |w| urls_are_guarded(w, "http"),
    );
}

#[test]
fn a_webhook_is_set_with_its_secret_once_rotated_and_removed() {
    common::web::each_backend(at(), |w| {
        let admin = w.token("admin", Scope::Admin);
        assert_eq!(
            w.put("/api/v1/users/ann", Some(&admin), r#"{"tz": "UTC"}"#)
                .status,
            201
        );
        let body = json!({"address": "https://hooks.example.com/d/ann?k=s3cr3t"}).to_string();
        let a = w.put("/api/v1/users/ann/contacts/webhook", Some(&admin), body);
        assert_eq!(a.status, 200, "{}", a.text);
        let j = a.json();
        let secret = j["secret"].as_str().unwrap().to_string();
        assert!(secret.starts_with("whsec_"), "{j}");
        assert_eq!(j["contact"]["address"], "https://hooks.example.com/***");
        assert!(!a.text.contains("s3cr3t"), "{}", a.text);
        let (url, stored_secret, _) = point(w, "ann", "webhook").unwrap();
        assert_eq!(url, "https://hooks.example.com/d/ann?k=s3cr3t");
        assert_eq!(stored_secret.as_deref(), Some(secret.as_str()));
        // Shown once: never in a GET, the URL's path masked there too.
        let a = w.get("/api/v1/users/ann", Some(&admin));
        assert!(
            !a.text.contains(&secret) && !a.text.contains("s3cr3t"),
            "{}",
            a.text
        );
        assert!(
            a.text.contains("https://hooks.example.com/***"),
            "{}",
            a.text
        );
        // Rotated: a new one, answered once; or the one given.
        let a = w.post(
            "/api/v1/users/ann/contacts/webhook/secret",
            Some(&admin),
            "",
        );
        assert_eq!(a.status, 200, "{}", a.text);
        let rotated = a.json()["secret"].as_str().unwrap().to_string();
        assert_ne!(rotated, secret);
        assert_eq!(
            point(w, "ann", "webhook").unwrap().1.as_deref(),
            Some(rotated.as_str())
        );
        let given = digestd::parties::new_webhook_secret();
        let body = json!({"secret": given}).to_string();
        let a = w.post(
            "/api/v1/users/ann/contacts/webhook/secret",
            Some(&admin),
            body,
        );
        assert_eq!(a.json()["secret"], given.as_str(), "{}", a.text);
        assert_eq!(point(w, "ann", "webhook").unwrap().1, Some(given));
        // A preset has no secret.
        let body = json!({"address": "https://hooks.slack.com/services/T0/B0/xyz"}).to_string();
        let a = w.put("/api/v1/users/ann/contacts/slack", Some(&admin), body);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.json().get("secret").is_none(), "{}", a.text);
        assert_eq!(point(w, "ann", "slack").unwrap().1, None);
        // A group's, through its own path.
        assert_eq!(w.put("/api/v1/groups/team", Some(&admin), "").status, 201);
        let body = json!({"address": "https://ntfy.example.net/team"}).to_string();
        let a = w.put("/api/v1/groups/team/contacts/ntfy", Some(&admin), body);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            point(w, "team", "ntfy").unwrap().0,
            "https://ntfy.example.net/team"
        );
        // Removed: gone with its secret; a second time is 404.
        let a = w.delete("/api/v1/users/ann/contacts/webhook", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["removed"]["channel"], "webhook");
        assert_eq!(point(w, "ann", "webhook"), None);
        assert!(point(w, "ann", "slack").is_some());
        refused(w, 404, "no webhook address", || {
            w.delete("/api/v1/users/ann/contacts/webhook", Some(&admin))
        });
        refused(w, 404, "no webhook address", || {
            w.post(
                "/api/v1/users/ann/contacts/webhook/secret",
                Some(&admin),
                "",
            )
        });
        let a = w.delete("/api/v1/groups/team/contacts/ntfy", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(point(w, "team", "ntfy"), None);
    });
}

/// Requests an admin may send to the contact routes that are still wrong:
/// (path, body, status, what the one-line error says).
fn bad_requests() -> Vec<(&'static str, &'static str, u16, &'static str)> {
    let url = r#"{"address": "https://hooks.example.com/x"}"#;
    vec![
        (
            "/api/v1/users/ann/contacts/pager",
            url,
            400,
            "unknown channel",
        ),
        (
            "/api/v1/users/ann/contacts/web%0D%0Ahook",
            url,
            400,
            "unknown channel",
        ),
        (
            "/api/v1/users/ann/contacts/slack",
            r#"{"address": "https://hooks.slack.com/x", "secret": "whsec_x"}"#,
            400,
            "only a webhook",
        ),
        (
            "/api/v1/users/ann/contacts/webhook",
            r#"{"address": "https://hooks.example.com/x", "secret": "whsec_short"}"#,
            400,
            "webhook secret",
        ),
        (
            "/api/v1/users/ann/contacts/webhook",
            r#"{"address": "https://hooks.example.com/x", "admin": true}"#,
            400,
            "unknown field",
        ),
        (
            "/api/v1/users/ann/contacts/webhook",
            r#"{"address": "https://a.example/", "address": "https://b.example/"}"#,
            400,
            "duplicate key",
        ),
        (
            "/api/v1/users/ann/contacts/webhook",
            "{}",
            400,
            "missing field",
        ),
        (
            "/api/v1/users/ann/contacts/webhook",
            "",
            400,
            "request body",
        ),
        (
            "/api/v1/users/ann/contacts/email",
            r#"{"address": "not an address"}"#,
            400,
            "email",
        ),
        (
            "/api/v1/users/team/contacts/webhook",
            url,
            400,
            "is a group, not a user",
        ),
        (
            "/api/v1/groups/ann/contacts/webhook",
            url,
            400,
            "is a user, not a group",
        ),
        (
            "/api/v1/users/nobody/contacts/webhook",
            url,
            404,
            "no user named",
        ),
        (
            "/api/v1/users/a%0D%0Ab/contacts/webhook",
            url,
            404,
            "no user named",
        ),
    ]
}

#[test]
fn the_contact_routes_refuse_other_tokens_and_bad_requests() {
    common::web::each_backend(at(), |w| {
        let admin = w.token("admin", Scope::Admin);
        let read = w.token("reader", Scope::Read);
        let ingest = w.token("ingest", Scope::Ingest);
        assert_eq!(
            w.put("/api/v1/users/ann", Some(&admin), r#"{"tz": "UTC"}"#)
                .status,
            201
        );
        assert_eq!(w.put("/api/v1/groups/team", Some(&admin), "").status, 201);
        let body = json!({"address": "https://hooks.example.com/d/ann"}).to_string();
        assert_eq!(
            w.put(
                "/api/v1/users/ann/contacts/webhook",
                Some(&admin),
                body.clone()
            )
            .status,
            200
        );
        let hook = "/api/v1/users/ann/contacts/webhook";
        for (token, status, needle) in [
            (Some(read.as_str()), 403, "needs admin"),
            (Some(ingest.as_str()), 403, "needs admin"),
            (None, 401, "a valid token"),
            (Some("not-a-token"), 401, "a valid token"),
        ] {
            refused(w, status, needle, || w.put(hook, token, body.clone()));
            refused(w, status, needle, || w.delete(hook, token));
            refused(w, status, needle, || {
                w.post(&format!("{hook}/secret"), token, "")
            });
            refused(w, status, needle, || {
                w.put("/api/v1/groups/team/contacts/slack", token, body.clone())
            });
        }
        let put = |path: &str, body: &str| w.put(path, Some(&admin), body.to_string());
        for (path, body, status, needle) in bad_requests() {
            refused(w, status, needle, || put(path, body));
        }
        refused(w, 400, "not valid UTF-8", || {
            w.put(
                hook,
                Some(&admin),
                b"{\"address\": \"https://hooks.example.com/\xff\"}".to_vec(),
            )
        });
        let huge = json!({"address": format!("https://hooks.example.com/{}", "a".repeat(70_000))});
        refused(w, 413, "larger than", || {
            w.put(hook, Some(&admin), huge.to_string())
        });
        refused(w, 400, "only a webhook has a secret", || {
            w.post("/api/v1/users/ann/contacts/slack/secret", Some(&admin), "")
        });
        refused(w, 400, "webhook secret", || {
            w.post(
                &format!("{hook}/secret"),
                Some(&admin),
                r#"{"secret": "whsec_***"}"#,
            )
        });
        refused(w, 404, "no matrix address", || {
            w.delete("/api/v1/users/ann/contacts/matrix", Some(&admin))
        });
        refused(w, 415, "application/json", || {
            w.send(|c| {
                c.put(w.url(hook))
                    .bearer_auth(&admin)
                    .header("content-type", "text/plain")
                    .body(body.clone())
            })
        });
    });
}

#[test]
fn the_openapi_document_lists_the_contact_routes() {
    let w = Web::start(TestDb::sqlite(), at());
    let doc: Value = w.get("/api/v1/openapi.json", None).json();
    for (path, method) in [
        ("/api/v1/users/{name}/contacts/{channel}", "put"),
        ("/api/v1/users/{name}/contacts/{channel}", "delete"),
        ("/api/v1/users/{name}/contacts/{channel}/secret", "post"),
        ("/api/v1/groups/{name}/contacts/{channel}", "put"),
        ("/api/v1/groups/{name}/contacts/{channel}", "delete"),
        ("/api/v1/groups/{name}/contacts/{channel}/secret", "post"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{path} {method}");
    }
    let user = &doc["components"]["schemas"]["UserBody"]["properties"];
    assert!(user["matrix"].is_object(), "{user}");
    let element = &doc["components"]["schemas"]["UserElement"]["properties"];
    assert!(element["matrix"].is_object(), "{element}");
}
