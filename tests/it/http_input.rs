//! What the API takes as a body, over real HTTP on both back ends: every
//! route that reads JSON answers 415 to a body of another media type
//! (NDJSON only where it is taken) and 400 to an object with a key twice,
//! writing nothing; the manage form answers 415 to a body that is not a
//! form; and a refused batch lists at most 100 bad elements however many
//! there are, saying how many more there were.

use crate::common;
use crate::http_api::support;

use common::pages::{code, snapshot, world as people, NOW};
use common::web::{each_backend, with_token, Answer, Web};
use digestd::http::guard::RULES;
use support::*;

/// Each route of the table that takes a body, with its parameters filled
/// in (names and ids that exist, so that only the body decides).
fn body_routes() -> Vec<(&'static str, String)> {
    RULES
        .iter()
        .filter(|r| ["POST", "PUT", "PATCH"].contains(&r.method))
        .map(|r| {
            let path = r
                .path
                .replace("/groups/{name}", "/groups/team")
                .replace("{uuid}", ITEM)
                .replace("{id}", "1")
                .replace("{name}", "alice")
                .replace("{member}", "bob");
            (r.method, path)
        })
        .collect()
}

/// Routes whose handler reads no body: the media type is still checked,
/// but there are no keys to be unique.
const NO_BODY: &[&str] = &[
    "/api/v1/requests/1/cancel",
    "/api/v1/groups/team/members/bob",
    "/api/v1/users/alice/code",
];

fn send(w: &Web, method: &str, path: &str, token: &str, ct: Option<&str>, body: &str) -> Answer {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    w.send(|c| {
        let b = with_token(c.request(m, w.url(path)), Some(token)).body(body.to_string());
        match ct {
            Some(ct) => b.header("content-type", ct),
            None => b,
        }
    })
}

fn everything(w: &Web) -> String {
    format!("{:?}\n{}", rows(w), snapshot(&mut w.db.conn()))
}

#[test]
fn json_routes_refuse_other_media_types_with_415() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = everything(w);
        for (method, path) in body_routes() {
            for ct in [
                Some("application/x-www-form-urlencoded"),
                Some("text/plain"),
                Some("application/json; charset=iso-8859-1"),
                Some("application/x-ndjson"),
                Some("multipart/form-data; boundary=x"),
                Some("application/json\r\nX: 1"),
                None,
            ] {
                if path == "/api/v1/modifications" && ct == Some("application/x-ndjson") {
                    continue;
                }
                let a = match ct {
                    // A header that cannot be sent as is goes as raw bytes.
                    Some(c) if c.contains('\r') => w.send(|cl| {
                        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
                        with_token(cl.request(m, w.url(&path)), Some(&wd.admin))
                            .header(
                                "content-type",
                                reqwest::header::HeaderValue::from_bytes(b"application/\xffjson")
                                    .unwrap(),
                            )
                            .body("{}")
                    }),
                    _ => send(w, method, &path, &wd.admin, ct, "{}"),
                };
                assert_eq!(a.status, 415, "{method} {path} {ct:?}: {}", a.text);
                assert!(a.error().contains("application/json"), "{}", a.text);
            }
        }
        assert_eq!(everything(w), before, "a 415 writes nothing");
        // The token is checked first: no token is 401, not 415.
        let a = send(w, "POST", "/api/v1/users", "nope", Some("text/plain"), "[]");
        assert_eq!(a.status, 401);
        // JSON with its charset, and NDJSON where it is taken, go through.
        let a = send(
            w,
            "PUT",
            "/api/v1/users/carol",
            &wd.admin,
            Some("application/json; charset=UTF-8"),
            r#"{"tz": "UTC"}"#,
        );
        assert_eq!(a.status, 201, "{}", a.text);
        let nd = ndjson(&[line(&wd.coll, "A")]);
        assert_eq!(post_ndjson(w, &wd.ingest, nd).status, 201);
        // A request without a body needs no Content-Type.
        let a = send(
            w,
            "POST",
            "/api/v1/requests/999/cancel",
            &wd.admin,
            None,
            "",
        );
        assert_eq!(a.status, 404, "{}", a.text);
    });
}

#[test]
fn a_key_twice_in_an_object_is_400_on_every_json_route() {
    each_backend(at(), |w| {
        let wd = world(w);
        let before = everything(w);
        let dup_object = r#"{"name": "x", "tz": "UTC", "name": "y"}"#;
        let dup_inside = r#"[{"name": "x", "tz": "UTC", "tz": "Europe/Paris"}]"#;
        for (method, path) in body_routes() {
            if NO_BODY.contains(&path.as_str()) {
                continue;
            }
            for body in [dup_object, dup_inside] {
                let a = send(w, method, &path, &wd.admin, Some("application/json"), body);
                assert_eq!(a.status, 400, "{method} {path} {body}: {}", a.text);
                assert!(a.error().contains("duplicate key"), "{path}: {}", a.text);
            }
        }
        // The bulk route's own shapes: a line with a key twice, as JSON
        // and as NDJSON (where the last used to win).
        let mut l = serde_json::to_string(&line(&wd.coll, "A")).unwrap();
        l.insert_str(1, r#""title": "Other", "#);
        let a = w.post("/api/v1/modifications", Some(&wd.ingest), format!("[{l}]"));
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(a.error().contains("duplicate key \"title\""), "{}", a.text);
        let a = post_ndjson(w, &wd.ingest, format!("{}\n{l}\n", line(&wd.coll, "B")));
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(a.error().contains("line 2"), "{}", a.text);
        assert_eq!(everything(w), before, "nothing written");
        // Equal keys in different objects are fine.
        let two = format!("[{}, {}]", line(&wd.coll, "A"), line(&wd.coll, "B"));
        assert_eq!(
            w.post("/api/v1/modifications", Some(&wd.ingest), two)
                .status,
            201
        );
    });
}

#[test]
fn the_manage_form_refuses_a_body_that_is_not_a_form() {
    each_backend(common::at(NOW), |web| {
        let mut c = web.db.conn();
        let w = people(&mut c);
        let asha = code(&mut c, w.asha);
        let page = web.get(&format!("/s/{asha}"), None);
        let t = common::pages::csrf(&page.text);
        let sub = w.asha_daily.0.to_string();
        let before = snapshot(&mut c);
        let form = format!("csrf={t}&action=pause&subscription={sub}");
        for ct in [
            "application/json",
            "text/plain",
            "multipart/form-data; boundary=b",
        ] {
            let a = common::pages::post_raw(web, &format!("/s/{asha}"), ct, form.clone());
            assert_eq!(a.status, 415, "{ct}: {}", a.text);
            assert!(a.text.contains("must be sent as a form"), "{}", a.text);
        }
        assert_eq!(snapshot(&mut c), before);
        let a = common::pages::post_form(
            web,
            &format!("/s/{asha}"),
            &[("csrf", &t), ("action", "pause"), ("subscription", &sub)],
        );
        assert_eq!(a.status, 303, "{}", a.text);
    });
}

/// A 16 MiB `[1,1,1,…]` to the bulk users route: 400 listing 100
/// elements and counting the rest, in an answer of a few KiB.
#[test]
fn a_refused_batch_lists_at_most_100_elements() {
    each_backend(at(), |w| {
        let wd = world(w);
        let n = 8_388_607;
        let mut body = String::with_capacity(2 * n + 1);
        body.push('[');
        for i in 0..n {
            body.push_str(if i + 1 < n { "1," } else { "1]" });
        }
        assert!(body.len() <= 16 * 1024 * 1024);
        let before = everything(w);
        let a = w.post("/api/v1/users", Some(&wd.admin), body);
        assert_eq!(a.status, 400, "{}", &a.text[..a.text.len().min(500)]);
        assert!(a.text.len() < 20_000, "{} bytes", a.text.len());
        let j = a.json();
        assert_eq!(j["lines"].as_array().unwrap().len(), 100);
        assert_eq!(j["lines"][99]["line"], 100);
        assert_eq!(j["lines_not_listed"], n - 100);
        assert!(
            a.error().starts_with(&format!("{n} bad line(s); line 1: ")),
            "{}",
            a.error()
        );
        // A few bad ones: all listed, no count of others.
        let a = w.post(
            "/api/v1/users",
            Some(&wd.admin),
            r#"[{"name": "ann", "tz": "UTC"}, 2, {"name": "bob", "tz": 3}]"#,
        );
        assert_eq!(a.status, 400);
        assert_eq!(a.json()["lines"].as_array().unwrap().len(), 2);
        assert!(a.json().get("lines_not_listed").is_none(), "{}", a.text);
        // Modifications: the same cap and count.
        let bad: Vec<String> = (0..250).map(|_| "{}".to_string()).collect();
        let a = w.post(
            "/api/v1/modifications",
            Some(&wd.ingest),
            format!("[{}]", bad.join(",")),
        );
        assert_eq!(a.status, 400);
        assert_eq!(a.json()["lines"].as_array().unwrap().len(), 100);
        assert_eq!(a.json()["lines_not_listed"], 150);
        assert_eq!(everything(w), before, "nothing written");
    });
}
