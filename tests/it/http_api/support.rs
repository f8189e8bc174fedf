//! Shared by `http_api_content.rs` and `http_api_requests.rs`: a world of
//! two users, a collection and a token of each scope; row counts of every
//! table the content and queue routes write; request bodies; the refusal
//! assertion (4xx, one-line JSON error, nothing written).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema as t;
use digestd::{items, parties};
use serde_json::{json, Value};

use crate::common::storage::user;
use crate::common::web::{with_token, Answer, Web};

pub const ITEM: &str = "11111111-1111-4111-8111-111111111111";
pub const NO_SUCH: &str = "99999999-9999-4999-8999-999999999999";

pub fn at() -> DateTime<Utc> {
    "2026-11-25T09:00:00Z".parse().unwrap()
}

/// Users alice and bob, a collection, and one token of each scope.
pub struct World {
    pub coll: String,
    pub admin: String,
    pub ingest: String,
    pub read: String,
}

pub fn world(w: &Web) -> World {
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
pub fn rows(w: &Web) -> BTreeMap<&'static str, i64> {
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

pub fn line(coll: &str, title: &str) -> Value {
    json!({"collection": coll, "item": ITEM, "actor": "alice", "action": "edited",
           "at": "2026-11-24T09:00:00Z", "title": title, "kind": "event",
           "changes": [{"attribute": "location", "old": "Room 1", "new": "Room 2"}]})
}

pub fn ndjson(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\r\n\n")).collect()
}

pub fn post_ndjson(w: &Web, token: &str, body: impl Into<reqwest::blocking::Body>) -> Answer {
    w.send(|c| {
        with_token(c.post(w.url("/api/v1/modifications")), Some(token))
            .header("content-type", "application/x-ndjson")
            .body(body)
    })
}

pub fn post_keyed(w: &Web, path: &str, token: &str, key: &str, body: &str) -> Answer {
    w.send(|c| {
        with_token(c.post(w.url(path)), Some(token))
            .header("content-type", "application/json")
            .header("idempotency-key", key)
            .body(body.to_string())
    })
}

/// Asserts a 4xx with a one-line JSON error containing `needle`, and no row written.
pub fn refused(w: &Web, before: &BTreeMap<&str, i64>, a: &Answer, status: u16, needle: &str) {
    assert_eq!(a.status, status, "{}", a.text);
    assert!(a.error().contains(needle), "{needle:?} not in {}", a.text);
    assert_eq!(&rows(w), before, "a refused request wrote nothing");
}

pub fn notify_body(subject: &str) -> String {
    json!({"from": "alice", "to": "bob", "subject": subject, "message": "Line 1\n\tLine 2",
           "channels": ["email"], "expand_group": false, "max_retries": 3})
    .to_string()
}
