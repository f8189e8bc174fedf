//! The JSON Schemas of docs/schema/ agree with digestd itself, over real
//! HTTP on each back end: bodies a schema accepts (the docs' examples and
//! each schema's edges) are accepted by the routes (2xx), hostile and
//! invalid ones are refused by both (4xx). What a schema cannot say (a
//! collection that does not exist, a zone chrono-tz does not know, byte
//! lengths, an attribute named twice) is listed in `beyond_the_schema` and
//! must be refused by digestd alone. The schemas and the docs' examples are
//! read by `schemas.rs`.

use crate::common;

use digestd::access::Scope;
use serde_json::{json, Value};

use crate::schemas::{http_examples, input_examples, Now, Schemas};
use common::web::{each_backend, Answer, Web};

/// The collection the docs' examples name.
const DOC_COLLECTION: &str = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a001";
const ITEM: &str = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003";

/// Where a body of `schema` goes, and how.
fn send(w: &Web, token: &str, schema: &str, v: &Value) -> Answer {
    let body = v.to_string();
    match schema {
        "record-line" => w.post("/api/v1/modifications", Some(token), format!("[{body}]")),
        "modifications" => w.post("/api/v1/modifications", Some(token), body),
        "item" => {
            let uuid = v["uuid"].as_str().unwrap_or(ITEM);
            w.put(&format!("/api/v1/items/{uuid}"), Some(token), body)
        }
        "user" => w.put("/api/v1/users/zoe", Some(token), body),
        "users" => w.post("/api/v1/users", Some(token), body),
        "group" => w.put("/api/v1/groups/crew", Some(token), body),
        "subscription" => w.post("/api/v1/subscriptions", Some(token), body),
        "subscription-patch" => w.send(|c| {
            c.patch(w.url("/api/v1/subscriptions/1"))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(body)
        }),
        other => panic!("no route for {other}"),
    }
}

/// A world the examples can name: users asha and ben, the docs'
/// collection (its UUID substituted for the one made here), subscription 1.
fn world(w: &Web) -> (String, String) {
    let mut c = w.db.conn();
    let at = w.clock_now();
    for name in ["asha", "ben"] {
        digestd::parties::create_user(&mut c, at, &common::storage::user(name, "UTC")).unwrap();
    }
    let coll = digestd::items::create_collection(&mut c, at, "Team", None)
        .unwrap()
        .uuid;
    digestd::manage::subscribe(
        &mut c,
        at,
        &digestd::subscriptions::SubscribeRequest {
            party: "ben".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            channels: vec![],
            ..Default::default()
        },
    )
    .unwrap();
    (coll, w.token("admin", Scope::Admin))
}

fn with_collection(v: &Value, coll: &str) -> Value {
    serde_json::from_str(&v.to_string().replace(DOC_COLLECTION, coll)).unwrap()
}

fn line() -> Value {
    json!({"collection": DOC_COLLECTION, "item": ITEM, "actor": "ben", "action": "edited",
           "at": "2026-11-24T09:00:00Z", "title": "Standup", "kind": "event",
           "changes": [{"attribute": "location", "old": "Room 1", "new": null}]})
}

fn item() -> Value {
    json!({"uuid": ITEM, "collection": DOC_COLLECTION, "kind": "event", "title": "Standup",
           "start": "2026-11-24T09:00:00Z", "actor": "ben"})
}

/// `base` with `key` set to `value` (`Value::Null` as a value; a missing
/// key is written by [`without`]).
fn with(base: Value, key: &str, value: Value) -> Value {
    let mut v = base;
    v[key] = value;
    v
}

fn without(base: Value, key: &str) -> Value {
    let mut v = base;
    v.as_object_mut().unwrap().remove(key);
    v
}

/// Valid bodies beyond the docs' own examples: each schema's edges.
fn valid() -> Vec<(&'static str, Value)> {
    vec![
        ("record-line", line()),
        ("record-line", without(line(), "changes")),
        (
            "record-line",
            with(line(), "at", json!("2026-11-24T09:00:00.123456+05:30")),
        ),
        ("record-line", with(line(), "action", json!("now"))),
        (
            "record-line",
            with(line(), "title", json!("Réunion ☕ 会議")),
        ),
        ("record-line", with(line(), "title", json!("  padded  "))),
        (
            "record-line",
            with(
                line(),
                "changes",
                json!([{"attribute": "a", "old": "", "new": "plain"}]),
            ),
        ),
        ("item", item()),
        (
            "item",
            with(
                without(item(), "collection"),
                "collections",
                json!([DOC_COLLECTION]),
            ),
        ),
        (
            "item",
            with(
                with(item(), "rrule", json!("FREQ=WEEKLY;BYDAY=MO")),
                "tz",
                json!("Europe/Paris"),
            ),
        ),
        ("item", with(item(), "at", json!("2026-11-24T08:00:00Z"))),
        (
            "user",
            json!({"tz": "Asia/Tokyo", "email": "zoe@example.com", "week_start": "sun", "daily_hour": 0, "locale": "en-GB"}),
        ),
        (
            "user",
            json!({"tz": "UTC", "xmpp": "zoe@chat.example.org", "phone": "+14155550123"}),
        ),
        (
            "users",
            json!([{"name": "cy", "tz": "UTC"}, {"name": "dee.k_2", "tz": "America/New_York", "daily_hour": 23}]),
        ),
        ("group", json!({})),
        (
            "group",
            json!({"tz": "Asia/Tokyo", "week_start": "sun", "daily_hour": 0, "locale": "en-US", "email": "crew@example.com"}),
        ),
        ("group", json!({"daily_hour": 23, "tz": null})),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification", "all": true, "hour": 6}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "weekly", "kind": "forward", "collection": DOC_COLLECTION, "day": "friday", "send_empty": true}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "hourly", "kind": "modification", "all": true, "include_own": true, "channels": ["email"]}),
        ),
        ("subscription-patch", json!({"paused": true})),
        (
            "subscription-patch",
            json!({"paused": false, "hour": 18, "channels": ["email"]}),
        ),
    ]
}

/// Refused by the schema and by digestd: wrong types, missing and unknown
/// fields, hostile characters, bad formats.
fn invalid() -> Vec<(&'static str, Value)> {
    let mut v = invalid_records();
    v.extend(invalid_items_and_parties());
    v.extend(invalid_subscriptions());
    v.extend(hostile_characters());
    v
}

/// Record lines and bodies of `POST /api/v1/modifications` both refuse.
fn invalid_records() -> Vec<(&'static str, Value)> {
    vec![
        ("record-line", json!("not an object")),
        ("record-line", json!({})),
        ("record-line", without(line(), "at")),
        ("record-line", without(line(), "actor")),
        ("record-line", with(line(), "extra", json!(1))),
        (
            "record-line",
            with(line(), "collection", json!("not-a-uuid")),
        ),
        ("record-line", with(line(), "item", json!(42))),
        ("record-line", with(line(), "action", json!("renamed"))),
        ("record-line", with(line(), "at", json!("2026-11-24 09:00"))),
        (
            "record-line",
            with(line(), "at", json!("2026-11-24T09:00:00")),
        ),
        (
            "record-line",
            with(line(), "at", json!("2026-02-30T09:00:00Z")),
        ),
        (
            "record-line",
            with(line(), "at", json!("2026-11-24T25:00:00Z")),
        ),
        ("record-line", with(line(), "title", json!(""))),
        ("record-line", with(line(), "title", json!("   "))),
        ("record-line", with(line(), "title", json!(null))),
        (
            "record-line",
            with(line(), "title", json!("x".repeat(1001))),
        ),
        ("record-line", with(line(), "actor", json!("-rf"))),
        (
            "record-line",
            with(line(), "changes", json!({"attribute": "a"})),
        ),
        (
            "record-line",
            with(line(), "changes", json!([{"attribute": "a", "old": 1}])),
        ),
        (
            "record-line",
            with(
                line(),
                "changes",
                json!([{"attribute": "a", "colour": "red"}]),
            ),
        ),
        (
            "record-line",
            with(line(), "changes", json!([{"attribute": "x".repeat(101)}])),
        ),
        ("modifications", json!({"lines": [line()]})),
        (
            "modifications",
            json!([line(), with(line(), "kind", json!(7))]),
        ),
    ]
}

/// Items, users, groups and bulk users both refuse.
fn invalid_items_and_parties() -> Vec<(&'static str, Value)> {
    vec![
        ("item", without(item(), "title")),
        ("item", without(item(), "collection")),
        ("item", with(item(), "collections", json!("not an array"))),
        ("item", with(item(), "deleted", json!("yes"))),
        ("item", with(item(), "rrule", json!(""))),
        (
            "item",
            with(without(item(), "start"), "rrule", json!("FREQ=DAILY")),
        ),
        ("item", with(item(), "tz", json!("Europe/Paris\nX"))),
        ("item", with(item(), "color", json!("red"))),
        ("user", json!({"tz": 5})),
        ("user", json!({"tz": "UTC", "daily_hour": 24})),
        ("user", json!({"tz": "UTC", "daily_hour": -1})),
        ("user", json!({"tz": "UTC", "week_start": "funday"})),
        ("user", json!({"tz": "UTC", "email": "no-at-sign"})),
        ("user", json!({"tz": "UTC", "phone": "0044 20 7946 0000"})),
        ("user", json!({"tz": "UTC", "locale": "english please"})),
        ("user", json!({"tz": "UTC", "nickname": "z"})),
        ("group", json!({"tz": 5})),
        ("group", json!({"daily_hour": 24})),
        ("group", json!({"daily_hour": -1})),
        ("group", json!({"daily_hour": "8"})),
        ("group", json!({"week_start": "funday"})),
        ("group", json!({"tz": "Asia/Tokyo\r\n"})),
        ("group", json!({"locale": "english please"})),
        ("group", json!({"email": "no-at-sign"})),
        ("group", json!({"timezone": "UTC"})),
        ("group", json!(["not an object"])),
        ("users", json!({"name": "cy", "tz": "UTC"})),
        ("users", json!([{"tz": "UTC"}])),
        ("users", json!([{"name": "has space", "tz": "UTC"}])),
    ]
}

/// Subscriptions and their patches both refuse.
fn invalid_subscriptions() -> Vec<(&'static str, Value)> {
    vec![
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification"}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification", "all": true, "collection": DOC_COLLECTION}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "monthly", "kind": "modification", "all": true}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "summary", "all": true}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "hourly", "kind": "modification", "all": true, "hour": 7}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification", "all": true, "day": "mon"}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification", "all": true, "channels": ["pigeon"]}),
        ),
        (
            "subscription",
            json!({"party": "asha", "frequency": "daily", "kind": "modification", "all": true, "hour": 7.5}),
        ),
        ("subscription-patch", json!({"paused": "yes"})),
        ("subscription-patch", json!({"hour": 99})),
        ("subscription-patch", json!({"day": "someday"})),
        ("subscription-patch", json!({"frequency": "fortnightly"})),
    ]
}

/// Text with a character digestd refuses, in a record line and an item.
fn hostile_characters() -> Vec<(&'static str, Value)> {
    let mut v = Vec::new();
    // Every character class digestd refuses in text, in a title.
    for c in [
        '\u{0}',
        '\u{7}',
        '\u{1b}',
        '\u{7f}',
        '\u{85}',
        '\u{9b}',
        '\u{200e}',
        '\u{202e}',
        '\u{2028}',
        '\u{2066}',
        '\u{fdd0}',
        '\u{fffe}',
        '\u{ffff}',
        '\u{1fffe}',
        '\u{10ffff}',
    ] {
        v.push((
            "record-line",
            with(line(), "title", json!(format!("Stand{c}up"))),
        ));
        v.push(("item", with(item(), "kind", json!(format!("ev{c}ent")))));
    }
    v.push((
        "record-line",
        with(
            line(),
            "changes",
            json!([{"attribute": "a", "new": "line\u{2029}break"}]),
        ),
    ));
    v
}

/// Accepted by the schemas, refused by digestd: what only digestd can
/// check (the database, chrono-tz, byte lengths, repeated attributes).
fn beyond_the_schema() -> Vec<(&'static str, Value)> {
    vec![
        (
            "record-line",
            with(
                line(),
                "collection",
                json!("99999999-9999-4999-8999-999999999999"),
            ),
        ),
        ("record-line", with(line(), "actor", json!("nobody"))),
        ("record-line", with(line(), "title", json!("€".repeat(400)))),
        (
            "record-line",
            with(
                line(),
                "changes",
                json!([{"attribute": "a"}, {"attribute": "a"}]),
            ),
        ),
        (
            "item",
            with(
                with(item(), "rrule", json!("FREQ=MINUTELY")),
                "tz",
                json!("UTC"),
            ),
        ),
        ("user", json!({"tz": "Mars/Olympus"})),
        ("user", json!({"tz": "UTC", "email": "a@b..c"})),
        ("group", json!({"tz": "Mars/Olympus"})),
        (
            "subscription",
            json!({"party": "nobody", "frequency": "daily", "kind": "modification", "all": true}),
        ),
    ]
}

#[test]
fn the_schemas_agree_with_digestd() {
    let s = Schemas::load();
    // The import lines have no route: the_import_examples_import.
    let mut docs_valid: Vec<_> = input_examples()
        .into_iter()
        .filter(|(k, _)| !k.ends_with("-import"))
        .collect();
    docs_valid.extend(
        http_examples()
            .into_iter()
            // http.md's bulk example fails on purpose (an unknown zone).
            .filter(|(k, v)| !(*k == "users" && v.to_string().contains("Mars/Olympus"))),
    );
    each_backend(common::at("2026-11-25T09:00:00Z"), |w| {
        let (coll, token) = world(w);
        for (schema, v) in valid().into_iter().chain(docs_valid.clone()) {
            if let Err(e) = s.check(schema, &v) {
                panic!("{schema} refuses {v}: {e}");
            }
            let v = with_collection(&v, &coll);
            let a = send(w, &token, schema, &v);
            assert!(
                (200..300).contains(&a.status),
                "{schema}: the schema accepts {v} but digestd answers {} {}",
                a.status,
                a.text
            );
        }
        for (schema, v) in invalid() {
            assert!(s.check(schema, &v).is_err(), "{schema} accepts {v}");
            let v = with_collection(&v, &coll);
            let a = send(w, &token, schema, &v);
            assert!(
                (400..500).contains(&a.status),
                "{schema}: both should refuse {v}; digestd answers {} {}",
                a.status,
                a.text
            );
        }
        for (schema, v) in beyond_the_schema() {
            assert!(s.check(schema, &v).is_ok(), "{schema}: {v}");
            let v = with_collection(&v, &coll);
            let a = send(w, &token, schema, &v);
            assert!(
                (400..500).contains(&a.status),
                "{schema}: digestd should refuse {v}; it answers {} {}",
                a.status,
                a.text
            );
        }
    });
}
