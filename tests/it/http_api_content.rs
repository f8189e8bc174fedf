//! The JSON API for content (`crates/http/src/http/ingest.rs`), over real HTTP on both
//! back ends: modifications (array and NDJSON), items, collections; token
//! scopes on every route of the API; hostile input refused with nothing
//! written. The nt queue and Idempotency-Key: `http_api_requests.rs`.

use crate::common;
use crate::http_api::support;

use common::web::{each_backend, Web};
use common::TestDb;
use serde_json::{json, Value};
use support::*;

// ------------------------------------------------------------ modifications

#[test]
fn modifications_as_an_array_or_ndjson_are_all_stored() {
    each_backend(at(), |w| {
        let wd = world(w);
        let body = json!([line(&wd.coll, "Standup"), line(&wd.coll, "Lunch")]).to_string();
        let a = w.post("/api/v1/modifications", Some(&wd.ingest), body);
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(a.json(), json!({"recorded": 2}));
        assert_eq!(rows(w)["modifications"], 2);
        let body = ndjson(&[
            line(&wd.coll, "A"),
            line(&wd.coll, "B"),
            line(&wd.coll, "C"),
        ]);
        let a = post_ndjson(w, &wd.admin, body);
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(a.json(), json!({"recorded": 3}));
        assert_eq!(rows(w)["modifications"], 5);
    });
}

#[test]
fn one_bad_element_among_good_ones_refuses_the_batch_and_lists_it() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let mut ghost = line(&wd.coll, "Ghost");
        ghost["actor"] = json!("nobody");
        let body = json!([
            line(&wd.coll, "A"),
            line(NO_SUCH, "B"),
            line(&wd.coll, "C"),
            ghost,
            5
        ]);
        let a = w.post("/api/v1/modifications", Some(&wd.ingest), body.to_string());
        refused(
            w,
            &before,
            &a,
            400,
            "3 of 5 lines are invalid, nothing was written; line 2: no collection",
        );
        let lines: Vec<u64> = a.json()["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["line"].as_u64().unwrap())
            .collect();
        assert_eq!(lines, [2, 4, 5]);
        assert!(a.json()["lines"][1]["error"]
            .as_str()
            .unwrap()
            .contains("no user or group named \"nobody\""));
        // NDJSON: line numbers count blank lines; a line of bad bytes is one bad line.
        let mut body = ndjson(&[line(&wd.coll, "A")]).into_bytes();
        body.extend_from_slice(b"{\"title\": \"\xff\xfe\"}\n");
        let a = post_ndjson(w, &wd.ingest, body);
        refused(w, &before, &a, 400, "line 3: not valid UTF-8");
        assert_eq!(
            a.json()["lines"],
            json!([{"line": 3, "error": "not valid UTF-8"}])
        );
    });
}

#[test]
fn hostile_modification_bodies_are_refused_and_write_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let post = |body: Vec<u8>| w.post("/api/v1/modifications", Some(&wd.ingest), body);
        let with = |field: &str, v: Value| {
            let mut l = line(&wd.coll, "Standup");
            l[field] = v;
            json!([l]).to_string().into_bytes()
        };
        let mut crlf_value = line(&wd.coll, "Standup");
        crlf_value["changes"][0]["new"] = json!("Room 2\r\nBcc: x@example.com");
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"[{".to_vec(), "request body: EOF while parsing"),
            (
                line(&wd.coll, "x").to_string().into_bytes(),
                "expected a JSON array",
            ),
            (b"[1, 2".to_vec(), "request body"),
            (b"[\"\xff\"]".to_vec(), "request body is not valid UTF-8"),
            (with("title", json!(5)), "invalid type: integer `5`"),
            (with("title", json!("a\u{0}b")), "title"),
            (with("title", json!("Stand\u{FFFF}up")), "U+FFFF"),
            (with("kind", json!("a\r\nb")), "kind"),
            (json!([crlf_value]).to_string().into_bytes(), "new value"),
            (with("actor", json!("ali\u{0}ce")), "no user or group named"),
            (with("at", json!("yesterday")), "invalid at"),
            (with("action", json!("exploded")), "exploded"),
            (with("color", json!("red")), "unknown field `color`"),
            (with("url", json!("javascript:alert(1)")), "http or https"),
            (with("url", json!("https://u:p@x.example/")), "credentials"),
            (with("url", json!("https://x.example/a\r\nb")), "url"),
            (with("url", json!("https://x.example/\u{0}")), "url"),
            (with("url", json!("/items/relative")), "url"),
            (
                with(
                    "url",
                    json!(format!("https://x.example/{}", "a".repeat(2048))),
                ),
                "longer than 2048 bytes",
            ),
            (with("url", json!(5)), "invalid type: integer `5`"),
        ];
        for (body, needle) in cases {
            let a = post(body.clone());
            refused(w, &before, &a, 400, needle);
        }
        let a = post_ndjson(w, &wd.ingest, "{\"collection\": 1}\n");
        refused(w, &before, &a, 400, "line 1: bad JSON");
    });
}

#[test]
fn a_refusal_lists_at_most_100_bad_lines() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let body: Vec<Value> = (0..150).map(|_| line(NO_SUCH, "x")).collect();
        let a = w.post(
            "/api/v1/modifications",
            Some(&wd.ingest),
            json!(body).to_string(),
        );
        refused(w, &before, &a, 400, "150 of 150 lines are invalid");
        assert_eq!(a.json()["lines"].as_array().unwrap().len(), 100);
        assert_eq!(a.json()["lines"][99]["line"], 100);
    });
}

#[test]
fn a_body_over_max_body_bytes_is_413_and_writes_nothing() {
    let w = Web::start_with(TestDb::sqlite(), at(), |cfg| cfg.http.max_body_bytes = 4096);
    let wd = world(&w);
    let before = rows(&w);
    let big: Vec<Value> = (0..40).map(|_| line(&wd.coll, "Standup")).collect();
    let big = json!(big).to_string();
    assert!(big.len() > 4096);
    let a = w.post("/api/v1/modifications", Some(&wd.ingest), big.clone());
    refused(&w, &before, &a, 413, "larger than 4096 bytes");
    let a = post_ndjson(&w, &wd.ingest, big.clone());
    refused(&w, &before, &a, 413, "larger than 4096 bytes");
    let item = json!({"collection": wd.coll, "kind": "event", "title": "x".repeat(5000), "actor": "alice"});
    let a = w.put(
        &format!("/api/v1/items/{ITEM}"),
        Some(&wd.ingest),
        item.to_string(),
    );
    refused(&w, &before, &a, 413, "larger than 4096 bytes");
    let a = w.post(
        "/api/v1/requests",
        Some(&wd.admin),
        notify_body(&"s".repeat(5000)),
    );
    refused(&w, &before, &a, 413, "larger than 4096 bytes");
}

// --------------------------------------------------------------- scopes

#[test]
fn each_route_needs_a_token_with_its_scope() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let mods = json!([line(&wd.coll, "A")]).to_string();
        let a = w.post("/api/v1/modifications", None, mods.clone());
        refused(w, &before, &a, 401, "a valid token is required");
        let a = w.post("/api/v1/modifications", Some(&wd.read), mods);
        refused(w, &before, &a, 403, "needs ingest");
        let a = w.put(&format!("/api/v1/items/{ITEM}"), Some(&wd.read), "{}");
        refused(w, &before, &a, 403, "needs ingest");
        let a = w.post("/api/v1/collections", Some(&wd.ingest), r#"{"name":"X"}"#);
        refused(w, &before, &a, 403, "needs admin");
        let a = w.post("/api/v1/requests", Some(&wd.ingest), notify_body("S"));
        refused(w, &before, &a, 403, "needs admin");
        let a = w.post("/api/v1/requests/1/cancel", Some(&wd.read), "");
        refused(w, &before, &a, 403, "needs admin");
        for path in ["/api/v1/collections", "/api/v1/queue", "/api/v1/requests/1"] {
            assert_eq!(w.get(path, None).status, 401, "{path}");
            assert_eq!(w.get(path, Some(&wd.ingest)).status, 403, "{path}");
        }
        assert_eq!(w.get("/api/v1/collections", Some(&wd.read)).status, 200);
        assert_eq!(w.get("/api/v1/queue", Some(&wd.admin)).status, 200);
    });
}

// ------------------------------------------------------ items, collections

#[test]
fn item_put_says_created_updated_then_unchanged() {
    each_backend(at(), |w| {
        let wd = world(w);
        let path = format!("/api/v1/items/{ITEM}");
        let item = |title: &str| {
            json!({"collection": wd.coll, "kind": "event", "title": title,
            "start": "2026-12-01T12:00:00Z", "actor": "alice"})
        };
        let a = w.put(&path, Some(&wd.ingest), item("Lunch").to_string());
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(a.json()["result"], "created");
        assert_eq!(a.json()["uuid"], ITEM);
        assert_eq!(a.json()["actions"], json!(["created"]));
        let mut with_uuid = item("Team lunch");
        with_uuid["uuid"] = json!(ITEM.to_uppercase());
        let a = w.put(&path, Some(&wd.ingest), with_uuid.to_string());
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["result"], "updated");
        assert_eq!(
            a.json()["changes"],
            json!([{"attribute": "title", "old": "Lunch", "new": "Team lunch"}])
        );
        let a = w.put(&path, Some(&wd.ingest), item("Team lunch").to_string());
        assert_eq!(
            (a.status, a.json()["result"].clone()),
            (200, json!("unchanged"))
        );
        assert_eq!(rows(w)["items"], 1);
        assert_eq!(rows(w)["modifications"], 2);
    });
}

/// Puts to `path` of `item` changed to something refused: (path, body,
/// status, what the one-line error says).
fn hostile_item_puts<'a>(
    path: &'a str,
    item: &Value,
) -> Vec<(&'a str, Vec<u8>, u16, &'static str)> {
    let with = |field: &str, v: Value| {
        let mut i = item.clone();
        i[field] = v;
        i.to_string().into_bytes()
    };
    vec![
        (path, with("uuid", json!(NO_SUCH)), 400, "is not the path's"),
        (path, with("uuid", json!(5)), 400, "is not the path's"),
        (
            "/api/v1/items/not-a-uuid",
            item.to_string().into_bytes(),
            400,
            "invalid item UUID",
        ),
        (
            path,
            with("collection", json!(NO_SUCH)),
            404,
            "no collection",
        ),
        (path, with("actor", json!("nobody")), 404, "nobody"),
        (path, with("title", json!("a\u{0}b")), 400, "title"),
        (path, with("title", json!("a\r\nb")), 400, "title"),
        (path, with("kind", json!("\u{FFFF}")), 400, "U+FFFF"),
        (path, with("title", json!(["x"])), 400, "invalid type"),
        (
            path,
            with("url", json!("ftp://x.example/f")),
            400,
            "http or https",
        ),
        (
            path,
            with("url", json!("https://a@x.example/")),
            400,
            "credentials",
        ),
        (
            path,
            with("url", json!("https://x.example/\r\n")),
            400,
            "url",
        ),
        (
            path,
            with("url", json!("https://x.example/\u{202E}")),
            400,
            "url",
        ),
        (
            path,
            with("url", json!("https://x.example/a b")),
            400,
            "a space",
        ),
        (
            path,
            with(
                "url",
                json!(format!("https://x.example/{}", "é".repeat(700))),
            ),
            400,
            "once encoded",
        ),
        (
            path,
            with("url", json!(["https://x.example/"])),
            400,
            "invalid type",
        ),
        (
            path,
            with("deleted", json!(true)),
            404,
            "cannot delete unknown item",
        ),
        (path, b"[1]".to_vec(), 400, "expected a JSON object"),
        (
            path,
            b"{\"title\": \"\xff\"}".to_vec(),
            400,
            "not valid UTF-8",
        ),
        (path, b"{".to_vec(), 400, "request body"),
    ]
}

#[test]
fn hostile_item_puts_are_refused_and_write_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let path = format!("/api/v1/items/{ITEM}");
        let item =
            json!({"collection": wd.coll, "kind": "event", "title": "Lunch", "actor": "alice"});
        let cases = hostile_item_puts(&path, &item);
        for (p, body, status, needle) in cases {
            let a = w.put(p, Some(&wd.ingest), body);
            refused(w, &before, &a, status, needle);
        }
    });
}

#[test]
fn collections_are_added_and_listed() {
    each_backend(at(), |w| {
        let wd = world(w);
        let a = w.post(
            "/api/v1/collections",
            Some(&wd.admin),
            r#"{"name":"Équipe 東京"}"#,
        );
        assert_eq!(a.status, 201, "{}", a.text);
        let uuid = a.json()["uuid"].as_str().unwrap().to_string();
        assert_eq!(a.json(), json!({"uuid": uuid, "name": "Équipe 東京"}));
        let a = w.get("/api/v1/collections", Some(&wd.read));
        assert_eq!(
            a.json(),
            json!([{"uuid": wd.coll, "name": "Calendar"}, {"uuid": uuid, "name": "Équipe 東京"}])
        );
        let before = rows(w);
        for (body, needle) in [
            (r#"{"name":"a\r\nb"}"#, "collection name"),
            (r#"{"name":"a\u0000b"}"#, "collection name"),
            (r#"{"name":"\uffff"}"#, "U+FFFF"),
            (r#"{"name":5}"#, "invalid type"),
            (r#"{"name":"x","owner":1}"#, "unknown field"),
            ("{}", "missing field `name`"),
            ("name=x", "request body"),
        ] {
            let a = w.post("/api/v1/collections", Some(&wd.admin), body);
            refused(w, &before, &a, 400, needle);
        }
        let a = w.post(
            "/api/v1/collections",
            Some(&wd.admin),
            &b"{\"name\":\"\xff\"}"[..],
        );
        refused(w, &before, &a, 400, "not valid UTF-8");
    });
}

#[test]
fn the_openapi_document_lists_the_content_routes() {
    let w = Web::start(TestDb::sqlite(), at());
    let doc = w.get("/api/v1/openapi.json", None).json();
    for (path, method) in [
        ("/api/v1/modifications", "post"),
        ("/api/v1/items/{uuid}", "put"),
        ("/api/v1/collections", "post"),
        ("/api/v1/collections", "get"),
        ("/api/v1/requests", "post"),
        ("/api/v1/requests/{id}", "get"),
        ("/api/v1/requests/{id}/cancel", "post"),
        ("/api/v1/queue", "get"),
    ] {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} missing"
        );
    }
    assert!(doc["components"]["schemas"]["NewRequest"].is_object());
}
