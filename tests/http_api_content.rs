//! The JSON API for content and the nt queue (`src/http/{ingest,requests,
//! idempotency}.rs`), over real HTTP on both back ends: modifications
//! (array and NDJSON), items, collections, requests, the queue; token
//! scopes; hostile input refused with nothing written; Idempotency-Key.

mod common;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use common::cli::Env;
use common::storage::user;
use common::web::{each_backend, with_token, Answer, Web};
use common::TestDb;
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema as t;
use digestd::{items, parties};
use serde_json::{json, Value};

const ITEM: &str = "11111111-1111-4111-8111-111111111111";
const NO_SUCH: &str = "99999999-9999-4999-8999-999999999999";

fn at() -> DateTime<Utc> {
    "2026-11-25T09:00:00Z".parse().unwrap()
}

/// Users alice and bob, a collection, and one token of each scope.
struct World {
    coll: String,
    admin: String,
    ingest: String,
    read: String,
}

fn world(w: &Web) -> World {
    let mut c = w.db.conn();
    parties::create_user(&mut c, at(), &user("alice", "UTC")).unwrap();
    parties::create_user(&mut c, at(), &user("bob", "UTC")).unwrap();
    let coll = items::create_collection(&mut c, at(), "Calendar", None).unwrap();
    World {
        coll: coll.uuid,
        admin: w.token("admin", Scope::Admin),
        ingest: w.token("ingest", Scope::Ingest),
        read: w.token("read", Scope::Read),
    }
}

/// Row counts of every table these routes could write.
fn rows(w: &Web) -> BTreeMap<&'static str, i64> {
    let c = &mut w.db.conn();
    let n = |r: QueryResult<i64>| r.unwrap();
    BTreeMap::from([
        (
            "collections",
            n(t::collections::table.count().get_result(c)),
        ),
        ("items", n(t::items::table.count().get_result(c))),
        (
            "collection_items",
            n(t::collection_items::table.count().get_result(c)),
        ),
        (
            "modifications",
            n(t::modifications::table.count().get_result(c)),
        ),
        (
            "modification_values",
            n(t::modification_values::table.count().get_result(c)),
        ),
        (
            "nt_requests",
            n(t::nt_requests::table.count().get_result(c)),
        ),
        (
            "nt_messages",
            n(t::nt_messages::table.count().get_result(c)),
        ),
        (
            "idempotency_keys",
            n(t::idempotency_keys::table.count().get_result(c)),
        ),
    ])
}

fn line(coll: &str, title: &str) -> Value {
    json!({"collection": coll, "item": ITEM, "actor": "alice", "action": "edited",
           "at": "2026-11-24T09:00:00Z", "title": title, "kind": "event",
           "changes": [{"attribute": "location", "old": "Room 1", "new": "Room 2"}]})
}

fn ndjson(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\r\n\n")).collect()
}

fn post_ndjson(w: &Web, token: &str, body: impl Into<reqwest::blocking::Body>) -> Answer {
    w.send(|c| {
        with_token(c.post(w.url("/api/v1/modifications")), Some(token))
            .header("content-type", "application/x-ndjson")
            .body(body)
    })
}

fn post_keyed(w: &Web, path: &str, token: &str, key: &str, body: &str) -> Answer {
    w.send(|c| {
        with_token(c.post(w.url(path)), Some(token))
            .header("content-type", "application/json")
            .header("idempotency-key", key)
            .body(body.to_string())
    })
}

/// Asserts a 4xx with a one-line JSON error containing `needle`, and no row written.
fn refused(w: &Web, before: &BTreeMap<&str, i64>, a: &Answer, status: u16, needle: &str) {
    assert_eq!(a.status, status, "{}", a.text);
    assert!(a.error().contains(needle), "{needle:?} not in {}", a.text);
    assert_eq!(&rows(w), before, "a refused request wrote nothing");
}

fn notify_body(subject: &str) -> String {
    json!({"from": "alice", "to": "bob", "subject": subject, "message": "Line 1\n\tLine 2",
           "channels": ["email"], "expand_group": false, "max_retries": 3})
    .to_string()
}

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

#[test]
fn hostile_item_puts_are_refused_and_write_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let path = format!("/api/v1/items/{ITEM}");
        let item =
            json!({"collection": wd.coll, "kind": "event", "title": "Lunch", "actor": "alice"});
        let with = |field: &str, v: Value| {
            let mut i = item.clone();
            i[field] = v;
            i.to_string().into_bytes()
        };
        let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
            (
                &path,
                with("uuid", json!(NO_SUCH)),
                400,
                "is not the path's",
            ),
            (&path, with("uuid", json!(5)), 400, "is not the path's"),
            (
                "/api/v1/items/not-a-uuid",
                item.to_string().into_bytes(),
                400,
                "invalid item UUID",
            ),
            (
                &path,
                with("collection", json!(NO_SUCH)),
                404,
                "no collection",
            ),
            (&path, with("actor", json!("nobody")), 404, "nobody"),
            (&path, with("title", json!("a\u{0}b")), 400, "title"),
            (&path, with("title", json!("a\r\nb")), 400, "title"),
            (&path, with("kind", json!("\u{FFFF}")), 400, "U+FFFF"),
            (&path, with("title", json!(["x"])), 400, "invalid type"),
            (
                &path,
                with("deleted", json!(true)),
                404,
                "cannot delete unknown item",
            ),
            (&path, b"[1]".to_vec(), 400, "expected a JSON object"),
            (
                &path,
                b"{\"title\": \"\xff\"}".to_vec(),
                400,
                "not valid UTF-8",
            ),
            (&path, b"{".to_vec(), 400, "request body"),
        ];
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

// ------------------------------------------------------ requests, queue

#[test]
fn requests_are_posted_shown_cancelled_and_counted() {
    each_backend(at(), |w| {
        let wd = world(w);
        let a = w.post("/api/v1/requests", Some(&wd.admin), notify_body("Lunch"));
        assert_eq!(a.status, 201, "{}", a.text);
        let id = a.json()["id"].as_i64().unwrap();
        assert_eq!((rows(w)["nt_requests"], rows(w)["nt_messages"]), (1, 1));
        let a = w.get(&format!("/api/v1/requests/{id}"), Some(&wd.read));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["status"], "pending");
        assert_eq!(a.json()["subject"], "Lunch");
        let a = w.get("/api/v1/queue", Some(&wd.read));
        assert_eq!(a.json()["requests"], json!({"pending": 1}));
        let a = w.post(
            &format!("/api/v1/requests/{id}/cancel"),
            Some(&wd.admin),
            "",
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json(), json!({"id": id, "status": "cancelled"}));
        let before = rows(w);
        let a = w.post(
            &format!("/api/v1/requests/{id}/cancel"),
            Some(&wd.admin),
            "",
        );
        refused(w, &before, &a, 409, "already cancelled");
        let a = w.post("/api/v1/requests/424242/cancel", Some(&wd.admin), "");
        refused(w, &before, &a, 404, "no request 424242");
        assert_eq!(w.get("/api/v1/requests/424242", Some(&wd.read)).status, 404);
        let a = w.get("/api/v1/requests/abc", Some(&wd.read));
        refused(w, &before, &a, 400, "");
        let a = w.get("/api/v1/queue", Some(&wd.read));
        assert_eq!(a.json()["requests"], json!({"cancelled": 1}));
    });
}

#[test]
fn request_show_and_queue_status_answer_what_the_cli_prints() {
    let env = Env::init();
    env.add_user("alice", &["--email", "alice@example.com"]);
    env.add_user(
        "bob",
        &["--email", "bob@example.com", "--xmpp", "bob@example.com"],
    );
    let w = Web::start(TestDb::existing(&env.url), at());
    let admin = w.token("admin", Scope::Admin);
    let mut body: Value = serde_json::from_str(&notify_body("Lunch")).unwrap();
    body["channels"] = json!(["email", "xmpp"]);
    let a = w.post("/api/v1/requests", Some(&admin), body.to_string());
    assert_eq!(a.status, 201, "{}", a.text);
    let id = a.json()["id"].to_string();
    // Delivered to the dir transport: recipients with their states.
    env.ok(&["queue", "run", "--at", "2026-11-25T09:00:00Z"]);
    let pending = w
        .post("/api/v1/requests", Some(&admin), notify_body("Later"))
        .json()["id"]
        .to_string();
    env.ok(&["cancel", &pending]);
    let cli: Value = serde_json::from_str(&env.ok(&["request", "show", &id, "--json"])).unwrap();
    assert_eq!(cli["recipients"].as_array().unwrap().len(), 2, "{cli}");
    assert_eq!(
        w.get(&format!("/api/v1/requests/{id}"), Some(&admin))
            .json(),
        cli
    );
    let cli: Value = serde_json::from_str(&env.ok(&["queue", "status", "--json"])).unwrap();
    assert_eq!(w.get("/api/v1/queue", Some(&admin)).json(), cli);
}

#[test]
fn hostile_requests_are_refused_and_write_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let with = |field: &str, v: Value| {
            let mut b: Value = serde_json::from_str(&notify_body("S")).unwrap();
            b[field] = v;
            b.to_string().into_bytes()
        };
        let cases: Vec<(Vec<u8>, u16, &str)> = vec![
            (with("from", json!("nobody")), 404, "nobody"),
            (with("to", json!("bo\u{0}b")), 404, "bo"),
            (
                with("subject", json!("Hi\r\nBcc: x@example.com")),
                400,
                "subject",
            ),
            (with("subject", json!("a\u{0}b")), 400, "subject"),
            (with("message", json!("ok \u{FFFF}")), 400, "U+FFFF"),
            (
                with("message", json!("nul \u{0}")),
                400,
                "control character",
            ),
            (with("message", json!("  ")), 400, "message is empty"),
            (with("max_retries", json!(0)), 400, "use 1-100"),
            (with("max_retries", json!("3")), 400, "invalid type"),
            (with("channels", json!(["pigeon"])), 400, "pigeon"),
            (with("channels", json!("email")), 400, "invalid type"),
            (with("expand_group", json!(true)), 400, "is not a group"),
            (with("cc", json!("x")), 400, "unknown field `cc`"),
            (b"{\"from\":\"alice\"}".to_vec(), 400, "missing field"),
            (b"{\"subject\":\"\xff\"}".to_vec(), 400, "not valid UTF-8"),
            (b"nope".to_vec(), 400, "request body"),
        ];
        for (body, status, needle) in cases {
            let a = w.post("/api/v1/requests", Some(&wd.admin), body);
            refused(w, &before, &a, status, needle);
        }
    });
}

// -------------------------------------------------------- Idempotency-Key

#[test]
fn a_retry_with_the_same_key_gets_the_first_answer_and_writes_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let mods = json!([line(&wd.coll, "A"), line(&wd.coll, "B")]).to_string();
        for (path, token, body) in [
            ("/api/v1/modifications", &wd.ingest, mods),
            ("/api/v1/requests", &wd.admin, notify_body("Once")),
        ] {
            let first = post_keyed(w, path, token, "k-1", &body);
            assert_eq!(first.status, 201, "{}", first.text);
            assert_eq!(first.header("idempotent-replayed"), None);
            let after = rows(w);
            let again = post_keyed(w, path, token, "k-1", &body);
            assert_eq!((again.status, again.json()), (first.status, first.json()));
            assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
            assert_eq!(rows(w), after, "{path}: a replay writes nothing");
            let other = post_keyed(w, path, token, "k-1", &body.replace("\"alice\"", "\"bob\""));
            refused(w, &after, &other, 422, "different request body");
        }
        assert_eq!(rows(w)["modifications"], 2);
        assert_eq!(rows(w)["nt_requests"], 1);
        assert_eq!(rows(w)["idempotency_keys"], 2, "one key per route");
    });
}

#[test]
fn a_key_belongs_to_its_token_and_route() {
    each_backend(at(), |w| {
        let wd = world(w);
        let body = json!([line(&wd.coll, "A")]).to_string();
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "shared", &body);
        let b = post_keyed(w, "/api/v1/modifications", &wd.admin, "shared", &body);
        assert_eq!((a.status, b.status), (201, 201));
        assert_eq!(b.header("idempotent-replayed"), None);
        assert_eq!(
            rows(w)["modifications"],
            2,
            "another token's key is independent"
        );
        let c = post_keyed(
            w,
            "/api/v1/requests",
            &wd.admin,
            "shared",
            &notify_body("S"),
        );
        assert_eq!(
            c.status, 201,
            "another route's key is independent: {}",
            c.text
        );
    });
}

#[test]
fn a_key_expires_after_idempotency_hours_and_is_purged() {
    each_backend(at(), |w| {
        let wd = world(w);
        let body = json!([line(&wd.coll, "A")]).to_string();
        assert_eq!(
            post_keyed(w, "/api/v1/modifications", &wd.ingest, "old", &body).status,
            201
        );
        w.clock.advance(Duration::hours(24));
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "old", &body);
        assert_eq!(a.status, 201);
        assert_eq!(
            a.header("idempotent-replayed"),
            None,
            "an expired key is ignored"
        );
        assert_eq!(rows(w)["modifications"], 2);
        w.clock.advance(Duration::hours(25));
        post_keyed(w, "/api/v1/requests", &wd.admin, "new", &notify_body("S"));
        assert_eq!(
            rows(w)["idempotency_keys"],
            1,
            "expired keys are purged on insert"
        );
    });
}

#[test]
fn a_refused_request_keeps_no_key_and_may_be_retried_fixed() {
    each_backend(at(), |w| {
        let wd = world(w);
        let bad = json!([line(NO_SUCH, "A")]).to_string();
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "k", &bad);
        assert_eq!(a.status, 400);
        assert_eq!(rows(w)["idempotency_keys"], 0);
        let good = json!([line(&wd.coll, "A")]).to_string();
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "k", &good);
        assert_eq!(a.status, 201, "{}", a.text);
    });
}

#[test]
fn a_hostile_idempotency_key_is_400_and_writes_nothing() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = rows(w);
        let body = json!([line(&wd.coll, "A")]).to_string();
        let long = "k".repeat(256);
        for (key, needle) in [
            (long.as_str(), "1 to 255 bytes"),
            ("a\tb", "control character"),
        ] {
            let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, key, &body);
            refused(w, &before, &a, 400, needle);
        }
        let a = w.send(|c| {
            with_token(c.post(w.url("/api/v1/requests")), Some(&wd.admin))
                .header(
                    "idempotency-key",
                    reqwest::header::HeaderValue::from_bytes(b"k\xff").unwrap(),
                )
                .body(notify_body("S"))
        });
        refused(w, &before, &a, 400, "not valid UTF-8");
        let a = post_keyed(
            w,
            "/api/v1/modifications",
            &wd.ingest,
            &"k".repeat(255),
            &body,
        );
        assert_eq!(a.status, 201, "255 bytes is fine: {}", a.text);
    });
}

#[test]
fn concurrent_requests_with_one_key_write_once() {
    each_backend(at(), |w| {
        let wd = world(w);
        let body: Vec<Value> = (0..200).map(|i| line(&wd.coll, &format!("T{i}"))).collect();
        let body = json!(body).to_string();
        let answers: Vec<Answer> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| post_keyed(w, "/api/v1/modifications", &wd.ingest, "race", &body))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for a in &answers {
            assert_eq!(
                (a.status, a.json()),
                (201, json!({"recorded": 200})),
                "{}",
                a.text
            );
        }
        assert_eq!(rows(w)["modifications"], 200, "written once");
        assert_eq!(rows(w)["idempotency_keys"], 1);
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

/// The race's losing side, made certain: a claim on a key stored since the
/// look-up rolls back its own write and answers from the stored row.
#[test]
fn a_claim_that_loses_the_race_answers_from_the_stored_row() {
    use axum::http::StatusCode;
    use digestd::http::idempotency::{once, IdemKey, Reply};
    each_backend(at(), |w| {
        world(w);
        let token = digestd::access::list_tokens(&mut w.db.conn()).unwrap()[0].clone();
        let key = |body: &[u8]| IdemKey {
            token_id: token.id,
            route: "test",
            key: "k".into(),
            hash: digestd::http::idempotency::body_hash(body),
        };
        let c = &mut w.db.conn();
        let write = |c: &mut digestd::db::DbConn| {
            items::create_collection(c, at(), "Written", None)?;
            Ok(Reply::new(StatusCode::CREATED, &json!({"n": 1})))
        };
        let first = once(c, Some(&key(b"a")), at(), 24, write).unwrap().unwrap();
        assert!(!first.replayed);
        let before = rows(w);
        let lost = once(c, Some(&key(b"a")), at(), 24, write).unwrap().unwrap();
        assert!(lost.replayed);
        assert_eq!((lost.status, lost.body), (first.status, first.body));
        let other = once(c, Some(&key(b"b")), at(), 24, write).unwrap();
        assert_eq!(other.unwrap_err().status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(rows(w), before, "the loser's write was rolled back");
    });
}
