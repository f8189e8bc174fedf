//! A user's Matrix ID through `PUT /api/v1/users/{name}` and its bulk
//! form, over real HTTP on both back ends; the admin-only contact point
//! routes are `http_api_contacts_routes.rs`. Every refusal is one line of
//! JSON with the stored contact points read back unchanged (addresses,
//! secrets, rooms, flags), not just counted.

use crate::common;

use chrono::{DateTime, Utc};
use common::web::{Answer, Web};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema::{contact_points, parties, users};
use serde_json::json;

pub(crate) fn at() -> DateTime<Utc> {
    "2026-11-24T10:00:00Z".parse().unwrap()
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
pub(crate) fn point(
    w: &Web,
    name: &str,
    channel: &str,
) -> Option<(String, Option<String>, Option<String>)> {
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
pub(crate) fn refused(w: &Web, status: u16, needle: &str, send: impl FnOnce() -> Answer) {
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
