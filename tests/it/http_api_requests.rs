//! The nt queue over real HTTP on both back ends (`crates/http/src/http/requests.rs`):
//! requests posted, shown (the CLI's JSON), cancelled; the queue's status;
//! hostile input refused with nothing written. And Idempotency-Key
//! (`crates/http/src/http/idempotency.rs`) on both POSTs that write.

use crate::common;
use crate::http_api::support;

use chrono::Duration;
use common::cli::Env;
use common::web::{each_backend, with_token, Answer, Web};
use common::TestDb;
use digestd::access::Scope;
use digestd::items;
use serde_json::{json, Value};
use support::*;

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
    // A read token sees the same without the addresses.
    let read = w.token("reader", Scope::Read);
    let a = w.get(&format!("/api/v1/requests/{id}"), Some(&read));
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(!a.text.contains("bob@example.com"), "{}", a.text);
    let mut without = cli.clone();
    for r in without["recipients"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("address");
    }
    assert_eq!(a.json(), without);
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
            (with("channels", json!([])), 400, "at least one channel"),
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

/// A token's stored keys are bounded: past `idempotency_max_keys` a new
/// key is 429 with a JSON body and `Retry-After` saying when the oldest
/// expires; replays and requests without a key still go through, and
/// another token has its own quota.
#[test]
fn a_token_stores_at_most_its_quota_of_keys() {
    let start = |db| {
        Web::start_with(db, at(), |c| {
            c.http.idempotency_max_keys = 3;
        })
    };
    let run = |w: &Web| {
        let wd = world(w);
        let body = json!([line(&wd.coll, "A")]).to_string();
        for (i, k) in ["k1", "k2", "k3"].into_iter().enumerate() {
            w.clock.advance(Duration::hours(1));
            let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, k, &body);
            assert_eq!(a.status, 201, "{i}: {}", a.text);
        }
        let before = rows(w);
        // The oldest (k1) was stored 2 h ago: it expires in 22 h.
        let a = post_keyed(w, "/api/v1/requests", &wd.ingest, "k4", &notify_body("S"));
        assert_eq!(a.status, 403, "scope first: {}", a.text);
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "k4", &body);
        refused(w, &before, &a, 429, "idempotency_max_keys");
        assert_eq!(a.json()["retry_after_seconds"], 22 * 3600);
        assert_eq!(a.header("retry-after").as_deref(), Some("79200"));
        // A replay of a stored key, and a request without one, still work.
        let r = post_keyed(w, "/api/v1/modifications", &wd.ingest, "k2", &body);
        assert_eq!(r.header("idempotent-replayed").as_deref(), Some("true"));
        assert_eq!(
            w.post("/api/v1/modifications", Some(&wd.ingest), body.clone())
                .status,
            201
        );
        // Another token's quota is its own.
        let a = post_keyed(w, "/api/v1/requests", &wd.admin, "k4", &notify_body("S"));
        assert_eq!(a.status, 201, "{}", a.text);
        // When the oldest key expires, its place is free again.
        w.clock.advance(Duration::hours(22));
        let a = post_keyed(w, "/api/v1/modifications", &wd.ingest, "k4", &body);
        assert_eq!(a.status, 201, "{}", a.text);
        assert_eq!(rows(w)["idempotency_keys"], 4, "k2, k3, k4 and admin's k4");
    };
    run(&start(TestDb::sqlite()));
    if let Some(pg) = TestDb::postgres() {
        run(&start(pg));
    }
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
                .header("content-type", "application/json")
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

/// The race's losing side, made certain: a claim on a key stored since the
/// look-up rolls back its own write and answers from the stored row.
#[test]
fn a_claim_that_loses_the_race_answers_from_the_stored_row() {
    use axum::http::StatusCode;
    use digestd::http::idempotency::{once, IdemKey, Keep, Reply};
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
        let keep = Keep {
            hours: 24,
            max_keys: 10,
        };
        let write = |c: &mut digestd::db::DbConn| {
            items::create_collection(c, at(), "Written", None)?;
            Ok(Reply::new(StatusCode::CREATED, &json!({"n": 1})))
        };
        let first = once(c, Some(&key(b"a")), at(), keep, write)
            .unwrap()
            .unwrap();
        assert!(!first.replayed);
        let before = rows(w);
        let lost = once(c, Some(&key(b"a")), at(), keep, write)
            .unwrap()
            .unwrap();
        assert!(lost.replayed);
        assert_eq!((lost.status, lost.body), (first.status, first.body));
        let other = once(c, Some(&key(b"b")), at(), keep, write).unwrap();
        assert_eq!(other.unwrap_err().status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(rows(w), before, "the loser's write was rolled back");
    });
}
