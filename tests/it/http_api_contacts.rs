//! A user's Matrix ID through `PUT /api/v1/users/{name}` and its bulk
//! form, and the admin-only contact point routes
//! (`/api/v1/{users,groups}/{name}/contacts/{channel}`: a webhook's or a
//! preset's URL through `[webhook]`'s SSRF guard, a webhook's secret
//! answered once, rotated, removed), over real HTTP on both back ends.
//! Every refusal is one line of JSON with the stored contact points read
//! back unchanged (addresses, secrets, rooms, flags), not just counted.

use crate::common;

use chrono::{DateTime, Utc};
use common::web::{Answer, Web};
use common::TestDb;
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::config::Config;
use digestd::db::schema::{contact_points, parties, users};
use serde_json::{json, Value};

fn at() -> DateTime<Utc> {
    "2026-11-24T10:00:00Z".parse().unwrap()
}

/// Runs `f` on SQLite and, when the suite runs on PostgreSQL, there too,
/// with settings changed by `tune`.
fn each_backend_with(tune: impl Fn(&mut Config), f: impl Fn(&Web)) {
    f(&Web::start_with(TestDb::sqlite(), at(), &tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(), &tune));
    }
}

type Row = (
    i64,
    String,
    String,
    Option<String>,
    bool,
    bool,
    i32,
    Option<String>,
);

/// Everything these routes may write: every contact point whole (its
/// secret and Matrix room too), and how many parties and users there are.
fn stored(w: &Web) -> (Vec<Row>, i64, i64) {
    let c = &mut w.db.conn();
    let rows = contact_points::table
        .select((
            contact_points::party_id,
            contact_points::channel,
            contact_points::address,
            contact_points::secret,
            contact_points::verified,
            contact_points::disabled,
            contact_points::bounce_count,
            contact_points::matrix_room,
        ))
        .order(contact_points::id.asc())
        .load(c)
        .unwrap();
    let p = parties::table.count().get_result(c).unwrap();
    let u = users::table.count().get_result(c).unwrap();
    (rows, p, u)
}

/// `name`'s contact point on `channel`: (address, secret, room).
fn point(w: &Web, name: &str, channel: &str) -> Option<(String, Option<String>, Option<String>)> {
    contact_points::table
        .inner_join(parties::table.on(parties::id.eq(contact_points::party_id)))
        .filter(parties::name.eq(name))
        .filter(contact_points::channel.eq(channel))
        .select((
            contact_points::address,
            contact_points::secret,
            contact_points::matrix_room,
        ))
        .first(&mut w.db.conn())
        .optional()
        .unwrap()
}

/// Sends, and requires `status`, a one-line error holding `needle`, and
/// nothing changed in what is stored.
fn refused(w: &Web, status: u16, needle: &str, send: impl FnOnce() -> Answer) {
    let before = stored(w);
    let a = send();
    assert_eq!(a.status, status, "{needle}: {}", a.text);
    assert!(a.error().contains(needle), "want {needle:?}: {}", a.text);
    assert_eq!(stored(w), before, "{needle}: refused but wrote");
}

fn post_raw(w: &Web, path: &str, token: &str, body: Vec<u8>) -> Answer {
    w.send(|c| {
        c.post(w.url(path))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body)
    })
}

/// Matrix IDs no homeserver gives, each with a word of why.
fn hostile_matrix_ids() -> Vec<(String, &'static str)> {
    vec![
        ("".into(), "empty"),
        ("ann:example.org".into(), "neither @"),
        ("#room:example.org".into(), "neither @"),
        ("+ann:example.org".into(), "neither @"),
        ("@ann".into(), "no server"),
        ("@:example.org".into(), "local part is empty"),
        ("@ann:".into(), "Matrix ID"),
        ("@ann:example.org:99999".into(), "Matrix ID"),
        ("@ann:exa_mple..org".into(), "Matrix ID"),
        ("@ann\r\n:example.org".into(), "white space"),
        ("@ann:example.org\r\nX-Injected: 1".into(), "Matrix ID"),
        ("@ann\u{7}:example.org".into(), "control"),
        ("@ann\u{0}:example.org".into(), "control"),
        ("@ann:example.org\u{FFFF}".into(), "non-ASCII"),
        ("@\u{202E}ann:example.org".into(), "non-ASCII"),
        ("@änn:example.org".into(), "non-ASCII"),
        ("@ann :example.org".into(), "white space"),
        (format!("@{}:example.org", "a".repeat(250)), "255 bytes"),
    ]
}

#[test]
fn a_matrix_id_is_put_shown_and_changed_as_the_other_addresses_are() {
    common::web::each_backend(at(), |w| {
        let admin = w.token("admin", Scope::Admin);
        let read = w.token("reader", Scope::Read);
        let body = json!({"tz": "UTC", "email": "ann@example.com", "matrix": "@ann:example.org"});
        let a = w.put("/api/v1/users/ann", Some(&admin), body.to_string());
        assert_eq!(a.status, 201, "{}", a.text);
        let m = a.json()["contacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["channel"] == "matrix")
            .cloned()
            .expect("a matrix contact point");
        assert_eq!(m["address"], "@ann:example.org");
        assert_eq!(
            (m["verified"].as_bool(), m["disabled"].as_bool()),
            (Some(false), Some(false))
        );
        // A read token sees that there is one, not the ID.
        let a = w.get("/api/v1/users/ann", Some(&read));
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(!a.text.contains("@ann:example.org"), "{}", a.text);
        assert!(a.text.contains("\"matrix\""), "{}", a.text);
        // What an admin GET answers may be put back: the room stays.
        diesel::update(contact_points::table.filter(contact_points::channel.eq("matrix")))
            .set(contact_points::matrix_room.eq("!dm:example.org"))
            .execute(&mut w.db.conn())
            .unwrap();
        let got = w.get("/api/v1/users/ann", Some(&admin)).json();
        let a = w.put("/api/v1/users/ann", Some(&admin), got.to_string());
        assert_eq!(a.status, 200, "{}", a.text);
        let room = |w: &Web| point(w, "ann", "matrix").unwrap().2;
        assert_eq!(room(w).as_deref(), Some("!dm:example.org"));
        let a = w.put(
            "/api/v1/users/ann",
            Some(&admin),
            r#"{"matrix": "@ann:example.org"}"#,
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(room(w).as_deref(), Some("!dm:example.org"));
        // A new ID: a new direct room at the next delivery.
        let a = w.put(
            "/api/v1/users/ann",
            Some(&admin),
            r#"{"matrix": "!team:example.org"}"#,
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(point(w, "ann", "matrix").unwrap().0, "!team:example.org");
        assert_eq!(room(w), None);
        // The bulk form takes it too.
        let bulk = json!([{"name": "bo", "tz": "UTC", "matrix": "@bo:matrix.example.net:8448"},
            {"name": "cy", "tz": "UTC", "matrix": "!opaqueHashOnly"}]);
        let a = w.post("/api/v1/users", Some(&admin), bulk.to_string());
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            point(w, "bo", "matrix").unwrap().0,
            "@bo:matrix.example.net:8448"
        );
        assert_eq!(point(w, "cy", "matrix").unwrap().0, "!opaqueHashOnly");
    });
}

#[test]
fn hostile_matrix_ids_are_refused_with_nothing_written() {
    common::web::each_backend(at(), |w| {
        let admin = w.token("admin", Scope::Admin);
        let read = w.token("reader", Scope::Read);
        let body = json!({"tz": "UTC", "matrix": "@ann:example.org"});
        assert_eq!(
            w.put("/api/v1/users/ann", Some(&admin), body.to_string())
                .status,
            201
        );
        for (bad, why) in hostile_matrix_ids() {
            // A change, a new user, and a new user in a bulk put.
            let change = json!({"matrix": bad}).to_string();
            refused(w, 400, why, || {
                w.put("/api/v1/users/ann", Some(&admin), change)
            });
            let new = json!({"tz": "UTC", "matrix": bad}).to_string();
            refused(w, 400, why, || w.put("/api/v1/users/bo", Some(&admin), new));
            let bulk =
                json!([{"name": "cy", "tz": "UTC"}, {"name": "dee", "tz": "UTC", "matrix": bad}]);
            refused(w, 400, "line 2", || {
                w.post("/api/v1/users", Some(&admin), bulk.to_string())
            });
            let route = json!({"address": bad}).to_string();
            refused(w, 400, why, || {
                w.put("/api/v1/users/ann/contacts/matrix", Some(&admin), route)
            });
        }
        refused(w, 400, "invalid type", || {
            w.put(
                "/api/v1/users/ann",
                Some(&admin),
                r#"{"matrix": ["@ann:example.org"]}"#,
            )
        });
        refused(w, 400, "not valid UTF-8", || {
            let mut body = br#"{"matrix": "@ann"#.to_vec();
            body.extend_from_slice(&[0xff, 0xfe]);
            body.extend_from_slice(br#":example.org"}"#);
            w.put("/api/v1/users/ann", Some(&admin), body)
        });
        refused(w, 400, "not valid UTF-8", || {
            post_raw(
                w,
                "/api/v1/users",
                &admin,
                b"[{\"name\": \"bo\", \"tz\": \"UTC\", \"matrix\": \"@\xc3(:x\"}]".to_vec(),
            )
        });
        let huge = json!({"matrix": format!("@{}:example.org", "a".repeat(70_000))}).to_string();
        refused(w, 413, "larger than", || {
            w.put("/api/v1/users/ann", Some(&admin), huge)
        });
        refused(w, 403, "needs admin", || {
            w.put(
                "/api/v1/users/ann",
                Some(&read),
                r#"{"matrix": "@eve:evil.example"}"#,
            )
        });
        assert_eq!(point(w, "ann", "matrix").unwrap().0, "@ann:example.org");
    });
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
        let url = r#"{"address": "https://hooks.example.com/x"}"#;
        for (path, body, status, needle) in [
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
        ] {
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
