//! `/api/v1/users`, `/api/v1/groups` and `/api/v1/subscriptions` over real
//! HTTP on both back ends: each route's success, hostile input (every
//! refusal checked with row counts: nothing written), token scopes, and a
//! new timezone rescheduling exactly as `digestd user set` does.

use crate::common;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use common::web::{each_backend, Answer, Web};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema;
use digestd::deliver::queue::{self, NewNotification};
use digestd::subscriptions::SubscribeRequest;
use digestd::{config, items, manage, parties};
use serde_json::{json, Value};

fn at() -> DateTime<Utc> {
    "2026-11-23T08:30:00Z".parse().unwrap()
}

/// Row counts of every table these routes could write.
fn counts(w: &Web) -> BTreeMap<&'static str, i64> {
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
fn refused(w: &Web, status: u16, needle: &str, send: impl FnOnce() -> Answer) {
    let before = counts(w);
    let a = send();
    assert_eq!(a.status, status, "{needle}: {}", a.text);
    assert!(a.error().contains(needle), "want {needle:?}: {}", a.text);
    assert_eq!(counts(w), before, "{needle}: refused but wrote rows");
}

fn tokens(w: &Web) -> (String, String) {
    (
        w.token("admin", Scope::Admin),
        w.token("reader", Scope::Read),
    )
}

fn patch(w: &Web, path: &str, token: &str, body: &str) -> Answer {
    w.send(|c| {
        c.patch(w.url(path))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
    })
}

fn next_due(w: &Web, id: i64) -> Option<NaiveDateTime> {
    schema::subscriptions::table
        .find(id)
        .select(schema::subscriptions::next_due_at)
        .first(&mut w.db.conn())
        .unwrap()
}

fn subscribe(w: &Web, party: &str) -> i64 {
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

#[test]
fn groups_are_made_filled_expanded_and_deleted() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        for n in ["ann", "bob"] {
            w.put(
                &format!("/api/v1/users/{n}"),
                Some(&admin),
                r#"{"tz": "UTC"}"#,
            );
        }
        assert_eq!(w.put("/api/v1/groups/team", Some(&admin), "").status, 201);
        assert_eq!(w.put("/api/v1/groups/team", Some(&admin), "").status, 200);
        let a = w.put(
            "/api/v1/groups/ops",
            Some(&admin),
            r#"{"email": "ops@example.com"}"#,
        );
        assert_eq!(a.status, 201, "{}", a.text);
        for (g, m) in [("team", "ann"), ("ops", "bob"), ("team", "ops")] {
            let a = w.put(&format!("/api/v1/groups/{g}/members/{m}"), Some(&admin), "");
            assert_eq!(a.status, 200, "{}", a.text);
        }
        let a = w.get("/api/v1/groups/team/expand", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        let j = a.json();
        let names: Vec<&str> = j
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["ann", "bob"]);
        refused(w, 409, "cycle", || {
            w.put("/api/v1/groups/ops/members/team", Some(&admin), "")
        });
        refused(w, 409, "cannot contain itself", || {
            w.put("/api/v1/groups/ops/members/ops", Some(&admin), "")
        });
        refused(w, 409, "is a user", || {
            w.put("/api/v1/groups/ann", Some(&admin), "")
        });
        refused(w, 400, "email", || {
            w.put("/api/v1/groups/new", Some(&admin), r#"{"email": "x"}"#)
        });
        refused(w, 400, "invalid group name", || {
            w.put("/api/v1/groups/a%0Db", Some(&admin), "")
        });
        refused(w, 400, "invalid group name", || {
            w.put("/api/v1/groups/a%EF%BF%BF", Some(&admin), "")
        });
        refused(w, 400, "request body", || {
            w.put("/api/v1/groups/new", Some(&admin), "{")
        });
        refused(w, 400, "unknown field", || {
            w.put("/api/v1/groups/new", Some(&admin), r#"{"mail": "a@b.c"}"#)
        });
        refused(w, 400, "request body", || {
            w.post("/api/v1/subscriptions", Some(&admin), "{")
        });
        refused(w, 404, "no user or group", || {
            w.put("/api/v1/groups/nope/members/ann", Some(&admin), "")
        });
        refused(w, 404, "no user or group", || {
            w.put("/api/v1/groups/team/members/nope", Some(&admin), "")
        });
        refused(w, 404, "is not in", || {
            w.delete("/api/v1/groups/team/members/bob", Some(&admin))
        });
        refused(w, 403, "needs admin", || {
            w.put("/api/v1/groups/x", Some(&read), "")
        });
        refused(w, 404, "no group named", || {
            w.get("/api/v1/groups/nope/expand", Some(&admin))
        });
        let a = w.delete("/api/v1/groups/team/members/ops", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        let a = w.get("/api/v1/groups/team/expand", Some(&admin));
        assert_eq!(a.json().as_array().unwrap().len(), 1);
        let a = w.delete("/api/v1/groups/ops", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["memberships_removed"], 1);
        assert_eq!(a.json()["contact_points_removed"], 1);
        refused(w, 404, "no group named", || {
            w.delete("/api/v1/groups/ops", Some(&admin))
        });
        refused(w, 400, "is a user", || {
            w.delete("/api/v1/groups/ann", Some(&admin))
        });
    });
}

/// `PUT /api/v1/groups/{name}` takes a group's preferences (issue 21 item
/// 14): a new group gets them, an existing one's change reschedules its
/// subscriptions as `digestd group set` does; a bad field writes nothing.
#[test]
fn a_groups_preferences_are_put_and_reschedule_as_group_set_does() {
    each_backend(at(), |w| {
        let (admin, _) = tokens(w);
        let body = json!({"tz": "Asia/Tokyo", "week_start": "sun", "daily_hour": 9,
            "locale": "en_US", "email": "Tokyo@Example.org"});
        let a = w.put("/api/v1/groups/tokyo", Some(&admin), body.to_string());
        assert_eq!(a.status, 201, "{}", a.text);
        let mut g = a.json();
        g.as_object_mut().unwrap().remove("id");
        assert_eq!(
            g,
            json!({"name": "tokyo", "tz": "Asia/Tokyo", "week_start": "sun",
                "daily_hour": 9, "locale": "en-US", "quiet_hours": "",
                "email": "Tokyo@example.org"})
        );
        let a = w.put("/api/v1/groups/plain", Some(&admin), "");
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(
            (
                &a.json()["tz"],
                &a.json()["daily_hour"],
                &a.json()["locale"]
            ),
            (&json!("UTC"), &json!(8), &json!("en-GB"))
        );
        w.put("/api/v1/groups/twin", Some(&admin), body.to_string());
        let (t, u) = (subscribe(w, "tokyo"), subscribe(w, "twin"));
        // 09:00 in Tokyo, the group's daily hour, is midnight UTC.
        assert_eq!(next_due(w, t).unwrap().to_string(), "2026-11-24 00:00:00");
        let before = (counts(w), next_due(w, t));
        let put = |name: &str, body: &str| {
            w.put(
                &format!("/api/v1/groups/{name}"),
                Some(&admin),
                body.to_string(),
            )
        };
        for (body, needle) in [
            (r#"{"tz": "Mars/Olympus"}"#, "Mars/Olympus"),
            (r#"{"tz": "Asia/Tokyo\r\n"}"#, "invalid timezone"),
            (r#"{"tz": ""}"#, "invalid timezone"),
            (r#"{"daily_hour": 24}"#, "invalid hour"),
            (r#"{"daily_hour": -1}"#, "invalid hour"),
            (r#"{"daily_hour": "8"}"#, "invalid type"),
            (r#"{"week_start": "funday"}"#, "invalid day"),
            (r#"{"locale": "en-US\n"}"#, "invalid locale"),
            (r#"{"tz": "UTC", "timezone": "UTC"}"#, "unknown field"),
            (
                r#"{"tz": "America/New_York", "daily_hour": 99}"#,
                "invalid hour",
            ),
        ] {
            for name in ["tokyo", "new"] {
                refused(w, 400, needle, || put(name, body));
            }
        }
        assert_eq!((counts(w), next_due(w, t)), before);
        let a = put("tokyo", r#"{"tz": "America/New_York"}"#);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["tz"], "America/New_York");
        assert_eq!(a.json()["week_start"], "sun", "what is not given stays");
        assert_eq!(a.json()["email"], "Tokyo@example.org", "domain lower-cased");
        assert_ne!(next_due(w, t), before.1, "rescheduled");
        let ny = parties::UserChanges {
            timezone: Some("America/New_York".into()),
            ..Default::default()
        };
        manage::update_group(&mut w.db.conn(), "twin", &ny).unwrap();
        assert_eq!(
            next_due(w, t),
            next_due(w, u),
            "the API and group set agree"
        );
        // 09:00 in New York on the 23rd (14:00Z) is still to come.
        assert_eq!(next_due(w, t).unwrap().to_string(), "2026-11-23 14:00:00");
    });
}

#[test]
fn deleting_a_user_cancels_what_is_unsent_to_them_in_one_transaction() {
    each_backend(at(), |w| {
        let (admin, _) = tokens(w);
        for n in ["ann", "bob"] {
            w.put(
                &format!("/api/v1/users/{n}"),
                Some(&admin),
                json!({"tz": "UTC", "email": format!("{n}@example.com")}).to_string(),
            );
        }
        w.put("/api/v1/groups/team", Some(&admin), "");
        w.put("/api/v1/groups/team/members/ann", Some(&admin), "");
        w.put("/api/v1/groups/team/members/bob", Some(&admin), "");
        subscribe(w, "ann");
        let cfg = config::Config::default();
        let c = &mut w.db.conn();
        let post = |c: &mut digestd::db::DbConn, to: &str, expand_group: bool| {
            let n = NewNotification {
                from: "bob".into(),
                to: to.into(),
                expand_group,
                subject: "s".into(),
                message: "m".into(),
                max_retries: None,
                channels: vec![],
                urgent: false,
            };
            queue::post_request(c, &cfg.email, &n, at()).unwrap();
        };
        post(c, "team", true);
        queue::expand(c, at()).unwrap(); // team's request: a row for ann, one for bob
        post(c, "ann", false);
        let before = counts(w);
        let a = w.delete("/api/v1/users/ann", Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        let r = a.json();
        assert_eq!(
            (r["deleted"].as_str(), r["name"].as_str()),
            (Some("user"), Some("ann"))
        );
        assert_eq!(r["subscriptions_ended"], 1);
        assert_eq!(r["requests_cancelled"], 1);
        assert_eq!(r["messages_given_up"], 1);
        assert_eq!(r["memberships_removed"], 1);
        let after = counts(w);
        assert_eq!(after["nt_requests"], before["nt_requests"]);
        assert_eq!(after["nt_queue"], before["nt_queue"]);
        assert_eq!(after["subscriptions"], 0);
        let open: i64 = schema::nt_queue::table
            .filter(schema::nt_queue::gave_up.eq(false))
            .count()
            .get_result(c)
            .unwrap();
        assert_eq!(open, 1, "bob's row of the team request still goes");
    });
}

#[test]
fn subscriptions_are_made_listed_changed_and_ended() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        w.put(
            "/api/v1/users/ann",
            Some(&admin),
            r#"{"tz": "Europe/Paris", "email": "ann@example.com", "phone": "+14155550123"}"#,
        );
        let coll = items::create_collection(&mut w.db.conn(), at(), "Cal", None)
            .unwrap()
            .uuid;
        let body = |extra: Value| {
            let mut b = json!({"party": "ann", "frequency": "daily", "kind": "modification", "collection": coll});
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            b.to_string()
        };
        let a = w.post("/api/v1/subscriptions", Some(&admin), body(json!({})));
        assert_eq!(a.status, 201, "{}", a.text);
        let id = a.json()["id"].as_i64().unwrap();
        refused(w, 409, &format!("subscription {id}"), || {
            w.post("/api/v1/subscriptions", Some(&admin), body(json!({})))
        });
        let a = w.post(
            "/api/v1/subscriptions",
            Some(&admin),
            body(json!({"channels": ["sms"]})),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            a.json(),
            json!({"id": id, "merged": true, "channels": ["email", "sms"]})
        );
        let a = w.get("/api/v1/subscriptions?party=ann", Some(&read));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()[0]["collection"], coll.as_str());
        assert_eq!(a.json()[0]["hour"], 8);
        let path = format!("/api/v1/subscriptions/{id}");
        let a = patch(w, &path, &admin, r#"{"paused": true}"#);
        assert_eq!(a.json()["paused"], true, "{}", a.text);
        w.clock.advance(chrono::Duration::days(3));
        let a = patch(w, &path, &admin, r#"{"paused": false, "hour": 18}"#);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            (a.json()["paused"].as_bool(), a.json()["hour"].as_i64()),
            (Some(false), Some(18))
        );
        // Resumed from now: the first period is 18:00 Paris today (17:00 UTC).
        assert_eq!(next_due(w, id).unwrap().to_string(), "2026-11-26 17:00:00");
        let a = w.post(
            "/api/v1/subscriptions",
            Some(&admin),
            body(json!({"hour": 9})),
        );
        let other = a.json()["id"].as_i64().unwrap();
        refused(w, 409, &format!("subscription {other}"), || {
            patch(w, &path, &admin, r#"{"hour": 9}"#)
        });
        for (b, status, needle) in [
            (r#"{"day": "mon"}"#, 400, "daily subscription takes hour"),
            (r#"{"hour": 24}"#, 400, "hour"),
            (r#"{"channels": ["xmpp"]}"#, 400, "no xmpp address"),
            (r#"{"channels": ["pigeon"]}"#, 400, "unknown channel"),
            (r#"{"paused": "yes"}"#, 400, "invalid type"),
            (r#"{"colour": 1}"#, 400, "unknown field"),
        ] {
            refused(w, status, needle, || patch(w, &path, &admin, b));
        }
        refused(w, 404, "no subscription 999999", || {
            patch(w, "/api/v1/subscriptions/999999", &admin, "{}")
        });
        refused(w, 400, "not a positive integer", || {
            patch(w, "/api/v1/subscriptions/x", &admin, "{}")
        });
        refused(w, 403, "needs admin", || patch(w, &path, &read, "{}"));
        for (b, status, needle) in [
            (json!({"all": true}), 400, "exactly one of collection"),
            (json!({"frequency": "yearly"}), 400, "invalid frequency"),
            (json!({"party": "nobody"}), 404, "no user or group"),
            (
                json!({"collection": "99999999-9999-4999-8999-999999999999"}),
                404,
                "no collection",
            ),
            (json!({"collection": "a\r\nb"}), 400, "collection"),
            (json!({"hour": "8"}), 400, "invalid type"),
        ] {
            refused(w, status, needle, || {
                w.post("/api/v1/subscriptions", Some(&admin), body(b))
            });
        }
        refused(w, 401, "a valid token", || {
            w.get("/api/v1/subscriptions", None)
        });
        refused(w, 404, "no user or group", || {
            w.get("/api/v1/subscriptions?party=nobody", Some(&read))
        });
        let a = w.delete(&path, Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["subscriptions_ended"], 1);
        refused(w, 404, &format!("no subscription {id}"), || {
            w.delete(&path, Some(&admin))
        });
        assert_eq!(
            w.get("/api/v1/subscriptions", Some(&read))
                .json()
                .as_array()
                .unwrap()
                .len(),
            1
        );
    });
}

#[test]
fn the_openapi_document_lists_these_routes() {
    let w = Web::start(common::TestDb::sqlite(), at());
    let doc = w.get("/api/v1/openapi.json", None).json();
    for (path, method) in [
        ("/api/v1/users/{name}", "put"),
        ("/api/v1/users", "post"),
        ("/api/v1/groups/{name}/members/{member}", "delete"),
        ("/api/v1/subscriptions/{id}", "patch"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{path} {method}");
    }
}

/// A user's subscriber code as stored.
fn stored_code(w: &Web, name: &str) -> String {
    use schema::{parties, users};
    users::table
        .inner_join(parties::table.on(parties::id.eq(users::party_id)))
        .filter(parties::name.eq(name))
        .select(users::subscriber_code)
        .first(&mut w.db.conn())
        .unwrap()
}

/// `POST /api/v1/users/{name}/code` (admin scope) gives a new subscriber
/// code: the answer holds it and its manage link, the old code opens the
/// manage page no more; anything else is refused with nothing changed.
#[test]
fn a_users_code_is_rotated_by_an_admin_token() {
    each_backend(at(), |w| {
        let (admin, read) = tokens(w);
        let a = w.put("/api/v1/users/ann", Some(&admin), r#"{"tz": "UTC"}"#);
        assert_eq!(a.status, 201, "{}", a.text);
        w.put("/api/v1/groups/team", Some(&admin), "{}");
        let old = stored_code(w, "ann");
        assert_eq!(w.get(&format!("/s/{old}"), None).status, 200);
        // Refused: no token, a read token, a group, nobody, a bad name.
        assert_eq!(w.post("/api/v1/users/ann/code", None, "").status, 401);
        assert_eq!(
            w.post("/api/v1/users/ann/code", Some(&read), "").status,
            403
        );
        let a = w.post("/api/v1/users/team/code", Some(&admin), "");
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(a.error().contains("only users"));
        let a = w.post("/api/v1/users/nobody/code", Some(&admin), "");
        assert_eq!(a.status, 404, "{}", a.text);
        assert!(!a.error().is_empty());
        let a = w.post("/api/v1/users/a%0D%0Ab/code", Some(&admin), "");
        assert!(a.status == 404 || a.status == 400, "{}", a.text);
        assert_eq!(stored_code(w, "ann"), old);
        // Done.
        let a = w.post("/api/v1/users/ann/code", Some(&admin), "");
        assert_eq!(a.status, 200, "{}", a.text);
        let j = a.json();
        let new = stored_code(w, "ann");
        assert_ne!(new, old);
        assert_eq!(j["name"], "ann");
        assert_eq!(j["code"], new.as_str());
        assert!(j["manage_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/s/{new}")));
        assert_eq!(w.get(&format!("/s/{old}"), None).status, 404);
        assert_eq!(w.get(&format!("/s/{new}"), None).status, 200);
    });
}
