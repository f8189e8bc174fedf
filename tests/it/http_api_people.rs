//! `/api/v1/users` over real HTTP on both back ends: each route's success,
//! hostile input (every refusal checked with row counts: nothing
//! written), token scopes, and a new timezone rescheduling exactly as
//! `digestd user set` does. Groups, subscriptions and codes are in
//! `http_api_groups.rs`.

use crate::common;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use common::web::{each_backend, Answer, Web};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema;
use digestd::subscriptions::SubscribeRequest;
use digestd::{manage, parties};
use serde_json::json;

pub(crate) fn at() -> DateTime<Utc> {
    "2026-11-23T08:30:00Z".parse().unwrap()
}

/// Row counts of every table these routes could write.
pub(crate) fn counts(w: &Web) -> BTreeMap<&'static str, i64> {
    use schema::*;
    let c = &mut w.db.conn();
    let n = |r: QueryResult<i64>| r.unwrap();
    BTreeMap::from([
        ("parties", n(parties::table.count().get_result(c))),
        ("users", n(users::table.count().get_result(c))),
        ("group_prefs", n(group_prefs::table.count().get_result(c))),
        (
            "contact_points",
            n(contact_points::table.count().get_result(c)),
        ),
        ("memberships", n(memberships::table.count().get_result(c))),
        (
            "subscriptions",
            n(subscriptions::table.count().get_result(c)),
        ),
        ("runs", n(subscription_runs::table.count().get_result(c))),
        ("nt_requests", n(nt_requests::table.count().get_result(c))),
        ("nt_queue", n(nt_queue::table.count().get_result(c))),
    ])
}

/// Sends, and requires `status`, an error of one line (for a 4xx) and no
/// row written.
pub(crate) fn refused(w: &Web, status: u16, needle: &str, send: impl FnOnce() -> Answer) {
    let before = counts(w);
    let a = send();
    assert_eq!(a.status, status, "{needle}: {}", a.text);
    assert!(a.error().contains(needle), "want {needle:?}: {}", a.text);
    assert_eq!(counts(w), before, "{needle}: refused but wrote rows");
}

pub(crate) fn tokens(w: &Web) -> (String, String) {
    (
        w.token("admin", Scope::Admin),
        w.token("reader", Scope::Read),
    )
}

pub(crate) fn patch(w: &Web, path: &str, token: &str, body: &str) -> Answer {
    w.send(|c| {
        c.patch(w.url(path))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
    })
}

pub(crate) fn next_due(w: &Web, id: i64) -> Option<NaiveDateTime> {
    schema::subscriptions::table
        .find(id)
        .select(schema::subscriptions::next_due_at)
        .first(&mut w.db.conn())
        .unwrap()
}

pub(crate) fn subscribe(w: &Web, party: &str) -> i64 {
    let req = SubscribeRequest {
        party: party.into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        ..Default::default()
    };
    manage::subscribe(&mut w.db.conn(), at(), &req)
        .unwrap()
        .id()
        .0
}

#[test]
fn users_are_put_read_and_deleted() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        let body = json!({"tz": "Europe/Paris", "email": "Ann@Example.COM", "xmpp": "ann@localhost",
            "phone": "+14155550123", "week_start": "sun", "daily_hour": 7, "locale": "fr_FR"});
        let a = w.put("/api/v1/users/ann", Some(&admin), body.to_string());
        assert_eq!(a.status, 201, "{}", a.text);
        let u = a.json();
        assert_eq!(u["name"], "ann");
        assert_eq!(u["tz"], "Europe/Paris");
        assert_eq!(u["week_start"], "sun");
        assert_eq!(u["locale"], "fr-FR");
        assert_eq!(u["contacts"].as_array().unwrap().len(), 3);
        assert_eq!(u["contacts"][0]["address"], "Ann@example.com");
        // Verified stays verified when the same address is put again.
        parties::change_contact(
            &mut w.db.conn(),
            at(),
            "ann",
            parties::Channel::Email,
            &parties::ContactChange::Verify,
        )
        .unwrap();
        let a = w.put(
            "/api/v1/users/ann",
            Some(&admin),
            r#"{"daily_hour": 9, "email": "Ann@example.com"}"#,
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["daily_hour"], 9);
        let a = w.get("/api/v1/users/ann", Some(&read));
        assert_eq!(a.status, 200, "{}", a.text);
        let email = &a.json()["contacts"][0];
        assert_eq!(
            (email["channel"].as_str(), email["verified"].as_bool()),
            (Some("email"), Some(true))
        );
        assert_eq!(email["disabled"], false);
        // A read token sees the contact points, not their addresses.
        assert_eq!(a.json()["contacts"].as_array().unwrap().len(), 3);
        for hidden in [
            "Ann@example.com",
            "ann@localhost",
            "+14155550123",
            "address",
        ] {
            assert!(
                !a.text.contains(hidden),
                "{hidden} shown to read: {}",
                a.text
            );
        }
        let a = w.get("/api/v1/users/ann", Some(&admin));
        assert_eq!(a.json()["contacts"][0]["address"], "Ann@example.com");
        let a = w.delete("/api/v1/users/ann", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["contact_points_removed"], 3);
        assert_eq!(w.get("/api/v1/users/ann", Some(&read)).status, 404);
        assert_eq!(counts(w)["users"], 0);
    });
}

/// Every resource reads and writes its fields under one name: what a GET
/// (or a PUT) answers may be PUT back unchanged, and changes nothing.
/// `id` and `name` must then be the resource's own.
#[test]
fn what_is_answered_can_be_put_back_unchanged() {
    each_backend(at(), |w| {
        let (admin, _) = tokens(w);
        let body = json!({"tz": "Europe/Paris", "email": "ann@example.com", "xmpp": "ann@localhost",
            "phone": "+14155550123", "week_start": "sun", "daily_hour": 7, "locale": "fr-FR"});
        assert_eq!(
            w.put("/api/v1/users/ann", Some(&admin), body.to_string())
                .status,
            201
        );
        let got = w.get("/api/v1/users/ann", Some(&admin));
        assert_eq!(got.status, 200, "{}", got.text);
        let doc = got.json();
        let before = counts(w);
        let again = w.put("/api/v1/users/ann", Some(&admin), doc.to_string());
        assert_eq!(again.status, 200, "{}", again.text);
        assert_eq!(again.json(), doc, "a user put back as read");
        assert_eq!(w.get("/api/v1/users/ann", Some(&admin)).json(), doc);
        assert_eq!(counts(w), before);
        let put_group =
            |name: &str, body: String| w.put(&format!("/api/v1/groups/{name}"), Some(&admin), body);
        let g = put_group(
            "tokyo",
            json!({"tz": "Asia/Tokyo", "daily_hour": 9}).to_string(),
        );
        assert_eq!(g.status, 201, "{}", g.text);
        let gdoc = g.json();
        let again = put_group("tokyo", gdoc.to_string());
        assert_eq!(again.status, 200, "{}", again.text);
        assert_eq!(again.json(), gdoc, "a group put back as answered");
        // Another resource's id or name is refused, and writes nothing.
        let before = counts(w);
        let mut other = doc.clone();
        other["name"] = json!("bob");
        refused(w, 400, "another user than the path", || {
            w.put("/api/v1/users/ann", Some(&admin), other.to_string())
        });
        let mut wrong_id = doc.clone();
        wrong_id["id"] = json!(gdoc["id"]);
        wrong_id["tz"] = json!("UTC");
        refused(w, 400, "is not ann's id", || {
            w.put("/api/v1/users/ann", Some(&admin), wrong_id.to_string())
        });
        refused(w, 400, "is not cy's id", || {
            w.put(
                "/api/v1/users/cy",
                Some(&admin),
                json!({"id": 1, "tz": "UTC"}).to_string(),
            )
        });
        let mut gother = gdoc.clone();
        gother["id"] = json!(doc["id"]);
        refused(w, 400, "is not tokyo's id", || {
            put_group("tokyo", gother.to_string())
        });
        assert_eq!(counts(w), before);
        assert_eq!(
            w.get("/api/v1/users/ann", Some(&admin)).json()["tz"],
            "Europe/Paris"
        );
    });
}

#[test]
fn a_new_timezone_reschedules_as_user_set_does() {
    each_backend(at(), |w| {
        let (admin, _) = tokens(w);
        for name in ["ann", "bob"] {
            w.put(
                &format!("/api/v1/users/{name}"),
                Some(&admin),
                r#"{"tz": "Europe/Paris", "email": "x@example.com"}"#,
            );
        }
        let (a, b) = (subscribe(w, "ann"), subscribe(w, "bob"));
        assert_eq!(next_due(w, a), next_due(w, b));
        let before = next_due(w, a);
        let r = w.put(
            "/api/v1/users/ann",
            Some(&admin),
            r#"{"tz": "Asia/Tokyo", "daily_hour": 21}"#,
        );
        assert_eq!(r.status, 200, "{}", r.text);
        let changes = parties::UserChanges {
            timezone: Some("Asia/Tokyo".into()),
            daily_hour: Some(21),
            ..Default::default()
        };
        manage::update_user(&mut w.db.conn(), "bob", &changes).unwrap();
        assert_ne!(next_due(w, a), before);
        assert_eq!(next_due(w, a), next_due(w, b), "the API and user set agree");
    });
}

#[test]
fn hostile_user_input_is_refused_and_writes_nothing() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        w.put("/api/v1/users/ann", Some(&admin), r#"{"tz": "UTC"}"#);
        w.put("/api/v1/groups/team", Some(&admin), "");
        let put = |name: &str, body: &str| {
            w.put(
                &format!("/api/v1/users/{name}"),
                Some(&admin),
                body.to_string(),
            )
        };
        for (name, body, status, needle) in [
            ("bob", "{", 400, "request body"),
            ("bob", "[]", 400, "request body"),
            (
                "bob",
                r#"{"tz": "UTC", "daily_hour": "8"}"#,
                400,
                "invalid type",
            ),
            (
                "bob",
                r#"{"tz": "UTC", "admin": true}"#,
                400,
                "unknown field",
            ),
            ("bob", r#"{"tz": "Mars/Olympus"}"#, 400, "Mars/Olympus"),
            (
                "bob",
                r#"{"tz": "UTC", "email": "not an address"}"#,
                400,
                "email",
            ),
            ("bob", r#"{"tz": "UTC", "xmpp": "a@b@c"}"#, 400, "JID"),
            ("bob", r#"{"tz": "UTC", "phone": "12345"}"#, 400, "phone"),
            ("bob", r#"{"tz": "UTC", "daily_hour": 24}"#, 400, "hour"),
            (
                "bob",
                r#"{"email": "b@example.com"}"#,
                400,
                "needs a timezone",
            ),
            ("a%0D%0Ab", r#"{"tz": "UTC"}"#, 400, "invalid user name"),
            ("a%00b", r#"{"tz": "UTC"}"#, 400, "invalid user name"),
            ("a%EF%BF%BFb", r#"{"tz": "UTC"}"#, 400, "invalid user name"),
            ("digestd", r#"{"tz": "UTC"}"#, 400, "reserved"),
            ("team", r#"{"tz": "UTC"}"#, 409, "is a group, not a user"),
            ("ann", r#"{"tz": "Mars/Olympus"}"#, 400, "Mars/Olympus"),
            ("ann", "{\"locale\": \"en\u{FFFF}\"}", 400, "locale"),
        ] {
            refused(w, status, needle, || put(name, body));
        }
        refused(w, 400, "not valid UTF-8", || {
            w.put("/api/v1/users/bob", Some(&admin), vec![b'{', 0xff, b'}'])
        });
        refused(w, 401, "a valid token", || {
            w.put("/api/v1/users/bob", None, r#"{"tz": "UTC"}"#)
        });
        refused(w, 403, "needs admin", || {
            w.put("/api/v1/users/bob", Some(&read), r#"{"tz": "UTC"}"#)
        });
        refused(w, 403, "needs admin", || {
            w.delete("/api/v1/users/ann", Some(&read))
        });
        refused(w, 401, "a valid token", || w.get("/api/v1/users/ann", None));
        refused(w, 404, "no user named", || {
            w.get("/api/v1/users/nobody", Some(&read))
        });
        refused(w, 404, "no user named", || {
            w.get("/api/v1/users/a%0Ab", Some(&read))
        });
        refused(w, 400, "is a group", || {
            w.get("/api/v1/users/team", Some(&read))
        });
        refused(w, 404, "no user named", || {
            w.delete("/api/v1/users/nobody", Some(&admin))
        });
    });
}

#[test]
fn a_bulk_put_is_all_or_nothing_with_every_bad_element_listed() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        w.put("/api/v1/groups/team", Some(&admin), "");
        let bad = json!([
            {"name": "ann", "tz": "UTC"},
            {"name": "bob", "tz": "Mars/Olympus"},
            {"name": "cy", "tz": "UTC", "email": "cy@example.com"},
            {"name": "dee", "tz": "UTC", "daily_hour": "eight"},
            {"name": "team", "tz": "UTC"},
            {"name": "ann", "tz": "UTC"},
            "not an object",
        ]);
        let before = counts(w);
        let a = w.post("/api/v1/users", Some(&admin), bad.to_string());
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(
            a.error().starts_with("2 bad line(s); line 4: "),
            "{}",
            a.text
        );
        let lines: Vec<u64> = a.json()["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["line"].as_u64().unwrap())
            .collect();
        // Wrong types are found first (nothing else is looked at then).
        assert_eq!(lines, [4, 7]);
        assert_eq!(counts(w), before);
        let bad = json!([{"name": "ann", "tz": "UTC"}, {"name": "bob", "tz": "Mars/Olympus"},
            {"name": "team", "tz": "UTC"}, {"name": "ann", "tz": "UTC"}, {"name": "b\nc", "tz": "UTC"}]);
        let a = w.post("/api/v1/users", Some(&admin), bad.to_string());
        assert_eq!(a.status, 400, "{}", a.text);
        let j = a.json();
        let lines: Vec<(u64, &str)> = j["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["line"].as_u64().unwrap(), l["error"].as_str().unwrap()))
            .collect();
        assert_eq!(
            lines.iter().map(|l| l.0).collect::<Vec<_>>(),
            [2, 3, 4, 5],
            "{j}"
        );
        assert!(lines[0].1.contains("Mars/Olympus") && lines[1].1.contains("is a group"));
        assert!(lines[2].1.contains("also element 1"));
        assert_eq!(counts(w), before);
        refused(w, 403, "needs admin", || {
            w.post("/api/v1/users", Some(&read), "[]")
        });
        refused(w, 400, "request body", || {
            w.post("/api/v1/users", Some(&admin), r#"{"name": "x"}"#)
        });
        let good = json!([{"name": "ann", "tz": "UTC", "email": "ann@example.com"},
            {"name": "bob", "tz": "Europe/Paris"}]);
        let a = w.post("/api/v1/users", Some(&admin), good.to_string());
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            (a.json()["created"].as_u64(), a.json()["updated"].as_u64()),
            (Some(2), Some(0))
        );
        let a = w.post(
            "/api/v1/users",
            Some(&admin),
            r#"[{"name": "bob", "daily_hour": 6}]"#,
        );
        assert_eq!(a.json()["updated"], 1, "{}", a.text);
        assert_eq!(counts(w)["users"], 2);
    });
}
