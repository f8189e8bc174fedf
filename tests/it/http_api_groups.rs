//! `/api/v1/groups`, `/api/v1/subscriptions` and a user's code over real
//! HTTP on both back ends, as `http_api_people.rs` does for users: each
//! route's success, hostile input (nothing written), token scopes, and
//! the OpenAPI document listing these routes.

use crate::common;
use crate::http_api_people::{at, counts, next_due, patch, refused, subscribe, tokens};

use diesel::prelude::*;
use digestd::db::schema;
use digestd::deliver::queue::{self, NewNotification};
use digestd::{config, items, manage, parties};
use serde_json::{json, Value};

use common::web::{each_backend, Web};

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
        // No channel at all is refused; leaving channels out means email.
        refused(w, 400, "at least one channel", || {
            w.post(
                "/api/v1/subscriptions",
                Some(&admin),
                r#"{"party":"ann","frequency":"daily","kind":"modification","all":true,"channels":[]}"#,
            )
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

/// Patches to subscription `path` and new subscriptions (`body` makes one
/// from its extra fields) that are refused, each with nothing written; and
/// listing without a token or for nobody.
fn bad_changes_are_refused(
    w: &Web,
    admin: &str,
    read: &str,
    path: &str,
    body: &dyn Fn(Value) -> String,
) {
    for (b, status, needle) in [
        (r#"{"day": "mon"}"#, 400, "daily subscription takes hour"),
        (r#"{"hour": 24}"#, 400, "hour"),
        (r#"{"channels": ["xmpp"]}"#, 400, "no xmpp address"),
        (r#"{"channels": ["pigeon"]}"#, 400, "unknown channel"),
        (r#"{"channels": []}"#, 400, "at least one channel"),
        (r#"{"paused": "yes"}"#, 400, "invalid type"),
        (r#"{"colour": 1}"#, 400, "unknown field"),
    ] {
        refused(w, status, needle, || patch(w, path, admin, b));
    }
    refused(w, 404, "no subscription 999999", || {
        patch(w, "/api/v1/subscriptions/999999", admin, "{}")
    });
    refused(w, 400, "not a positive integer", || {
        patch(w, "/api/v1/subscriptions/x", admin, "{}")
    });
    refused(w, 403, "needs admin", || patch(w, path, read, "{}"));
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
            w.post("/api/v1/subscriptions", Some(admin), body(b))
        });
    }
    refused(w, 401, "a valid token", || {
        w.get("/api/v1/subscriptions", None)
    });
    refused(w, 404, "no user or group", || {
        w.get("/api/v1/subscriptions?party=nobody", Some(read))
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
        bad_changes_are_refused(w, &admin, &read, &path, &body);
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
