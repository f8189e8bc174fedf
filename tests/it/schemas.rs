//! The JSON Schemas of docs/schema/ (draft 2020-12, checked with `boon`):
//! every example in docs/input.md and docs/http.md is valid against its
//! schema, and the schemas agree with digestd itself, over real HTTP on
//! each back end: examples the schema accepts are accepted by the routes
//! (2xx), hostile and invalid ones are refused by both (4xx, nothing
//! written). What a schema cannot say (a collection that does not exist, a
//! zone chrono-tz does not know, byte lengths, an attribute named twice)
//! is listed in `beyond_the_schema` and must be refused by digestd alone.

use crate::common;

use std::collections::BTreeMap;

use digestd::access::Scope;
use serde_json::{json, Value};

use common::web::{each_backend, Answer, Web};

const BASE: &str = "https://schemas.digestd.invalid/";
const SCHEMAS: [&str; 12] = [
    "common",
    "record-line",
    "modifications",
    "item",
    "user",
    "users",
    "group",
    "subscription",
    "subscription-patch",
    "user-import",
    "subscription-import",
    "group-import",
];
/// The collection the docs' examples name.
const DOC_COLLECTION: &str = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a001";
const ITEM: &str = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003";

fn docs(path: &str) -> String {
    std::fs::read_to_string(format!("{}/docs/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("docs/{path}: {e}"))
}

/// Every schema, compiled, by name.
struct Schemas {
    set: boon::Schemas,
    index: BTreeMap<&'static str, boon::SchemaIndex>,
}

impl Schemas {
    fn load() -> Schemas {
        let mut compiler = boon::Compiler::new();
        compiler.enable_format_assertions();
        for name in SCHEMAS {
            let text = docs(&format!("schema/{name}.schema.json"));
            let v: Value = serde_json::from_str(&text).expect("a schema is JSON");
            assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
            assert_eq!(v["$id"], format!("{BASE}{name}.schema.json"));
            compiler
                .add_resource(&format!("{BASE}{name}.schema.json"), v)
                .unwrap();
        }
        let mut set = boon::Schemas::new();
        let index = SCHEMAS
            .iter()
            .map(|name| {
                let idx = compiler
                    .compile(&format!("{BASE}{name}.schema.json"), &mut set)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                (*name, idx)
            })
            .collect();
        Schemas { set, index }
    }

    fn check(&self, schema: &str, v: &Value) -> Result<(), String> {
        self.set
            .validate(v, self.index[schema])
            .map_err(|e| format!("{e:#}"))
    }
}

/// The examples of docs/input.md: every line of a ```json block, with the
/// schema its section's heading names.
fn input_examples() -> Vec<(&'static str, Value)> {
    let text = docs("input.md");
    let mut out = Vec::new();
    let mut section = "";
    let mut in_json = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.contains("`digestd record`") {
                "record-line"
            } else if h.contains("`digestd item put`") {
                "item"
            } else {
                ""
            };
        } else if let Some(rest) = line.strip_prefix("- `") {
            // The import section: each bullet names its format.
            for (name, schema) in [
                ("user import`", "user-import"),
                ("subscription import`", "subscription-import"),
                ("group import`", "group-import"),
            ] {
                if rest.starts_with(name) {
                    section = schema;
                }
            }
        } else if line == "```json" {
            in_json = true;
        } else if line.starts_with("```") {
            in_json = false;
        } else if in_json && !line.trim().is_empty() {
            assert!(!section.is_empty(), "a JSON example with no schema: {line}");
            out.push((section, serde_json::from_str(line).expect(line)));
        }
    }
    out
}

/// The request bodies of docs/http.md's curl lines (`--data '…'` or
/// `-d '…'`), with the schema their method and path name; routes without
/// a schema are left out.
fn http_examples() -> Vec<(&'static str, Value)> {
    let text = docs("http.md").replace("\\\n", " ");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.contains("curl ")) {
        let body = ["--data '", "-d '"]
            .iter()
            .find_map(|flag| line.split_once(flag))
            .and_then(|(_, rest)| rest.split_once('\''))
            .map(|(body, _)| body);
        let Some(body) = body else { continue };
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .expect("a curl line has a URL");
        let path = url.split_once("/api/v1/").map_or("", |(_, p)| p);
        let method = if line.contains("-X PUT") {
            "PUT"
        } else if line.contains("-X PATCH") {
            "PATCH"
        } else {
            "POST"
        };
        let mut v: Value = serde_json::from_str(body).expect(body);
        let schema = match (method, path.split('/').collect::<Vec<_>>().as_slice()) {
            ("POST", ["modifications"]) => "modifications",
            ("PUT", ["items", uuid]) => {
                v["uuid"] = json!(uuid);
                "item"
            }
            ("PUT", ["users", _]) => "user",
            ("POST", ["users"]) => "users",
            ("PUT", ["groups", _]) => "group",
            ("POST", ["subscriptions"]) => "subscription",
            ("PATCH", ["subscriptions", _]) => "subscription-patch",
            _ => continue,
        };
        out.push((schema, v));
    }
    out
}

#[test]
fn every_example_in_the_docs_is_valid_against_its_schema() {
    let s = Schemas::load();
    let input = input_examples();
    assert!(input.iter().any(|(k, _)| *k == "record-line"), "{input:?}");
    assert!(input.iter().any(|(k, _)| *k == "item"), "{input:?}");
    for kind in ["user-import", "subscription-import", "group-import"] {
        assert!(input.iter().any(|(k, _)| *k == kind), "{kind}: {input:?}");
    }
    let http = http_examples();
    for kind in [
        "modifications",
        "item",
        "user",
        "users",
        "group",
        "subscription",
        "subscription-patch",
    ] {
        assert!(http.iter().any(|(k, _)| *k == kind), "{kind}: {http:?}");
    }
    for (schema, v) in input.iter().chain(&http) {
        if let Err(e) = s.check(schema, v) {
            panic!("{schema}: {v}\n{e}");
        }
    }
}

#[test]
fn docs_input_md_links_every_schema() {
    let input = docs("input.md");
    for name in SCHEMAS {
        assert!(
            input.contains(&format!("schema/{name}.schema.json")),
            "docs/input.md links {name}"
        );
    }
}

/// docs/input.md's import lines, which their schemas accept, are imported
/// by the commands' library calls, in the docs' order, on a database with
/// nothing in it.
#[test]
fn the_import_examples_import() {
    let examples: Vec<(&str, Value)> = input_examples()
        .into_iter()
        .filter(|(k, _)| k.ends_with("-import"))
        .collect();
    assert_eq!(examples.len(), 3, "{examples:?}");
    each_backend(common::at("2026-11-25T09:00:00Z"), |w| {
        let mut c = w.db.conn();
        let at = w.clock_now();
        for (schema, v) in &examples {
            let line = v.to_string();
            let done = match *schema {
                "user-import" => digestd::import::users::check(&mut c, line.as_bytes())
                    .and_then(|ok| digestd::import::users::write(&mut c, at, &ok, &mut |_| {}))
                    .map(|d| d.created),
                "subscription-import" => {
                    digestd::import::subs::import(&mut c, at, line.as_bytes(), false, &mut |_| {})
                        .map(|ids| ids.len())
                }
                "group-import" => {
                    digestd::import::groups::import(&mut c, at, line.as_bytes(), &mut |_| {})
                }
                other => panic!("no import for {other}"),
            };
            assert_eq!(done.unwrap_or_else(|e| panic!("{schema}: {line}: {e}")), 1);
        }
    });
}

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

trait Now {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc>;
}
impl Now for Web {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use digestd::clock::Clock;
        self.clock.now()
    }
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
    let mut v = vec![
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
    ];
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
