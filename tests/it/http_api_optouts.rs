//! The operator's view of members' opt-outs from a group subscription,
//! through the real server on each back end: `GET
//! /api/v1/subscriptions/{id}/optouts` lists them, `DELETE
//! /api/v1/subscriptions/{id}/optouts/{member}` clears one (admin tokens
//! only; bad input is a one-line JSON 4xx with nothing written); the
//! subscription's page in `/admin` shows them with a clear button whose
//! form needs its token. Both are in the OpenAPI document.

use crate::common;

use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema::subscription_optouts;
use digestd::db::DbConn;
use digestd::ids::{PartyId, SubscriptionId};
use digestd::parties::{self, NewUser};
use digestd::subscriptions::{SubscribeRequest, Subscribed};
use digestd::{manage, remove};
use serde_json::json;

use common::at;
use common::pages::{csrf, CREATED, NOW};
use common::web::{each_backend, Answer, Web};

/// team (ana, ben) with a daily digest of everything, which ana and ben
/// opted out of; zed is in no group. Returns the subscription.
fn world(c: &mut DbConn) -> SubscriptionId {
    let t0 = at("2026-11-01T00:00:00Z");
    for name in ["ana", "ben", "zed"] {
        let u = NewUser {
            name: name.into(),
            timezone: "UTC".into(),
            email: Some(format!("{name}@example.com")),
            ..Default::default()
        };
        parties::create_user(c, t0, &u).unwrap();
    }
    parties::create_group(c, t0, "team", None).unwrap();
    parties::add_member(c, "team", "ana").unwrap();
    parties::add_member(c, "team", "ben").unwrap();
    let req = SubscribeRequest {
        party: "team".into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        hour: Some(9),
        ..Default::default()
    };
    let sub = match manage::subscribe(c, at(CREATED), &req).unwrap() {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    };
    for name in ["ana", "ben"] {
        let p: PartyId = parties::find(c, name).unwrap().0;
        c.write_tx(|c| {
            remove::opt_out_in_tx(c, at("2026-11-22T10:00:00Z"), p, &[sub], remove::Via::Page)
        })
        .unwrap();
    }
    sub
}

fn optouts(c: &mut DbConn) -> Vec<(i64, i64)> {
    subscription_optouts::table
        .select((
            subscription_optouts::subscription_id,
            subscription_optouts::party_id,
        ))
        .order(subscription_optouts::party_id.asc())
        .load(c)
        .unwrap()
}

#[test]
fn the_api_lists_and_clears_optouts_and_refuses_bad_input() {
    each_backend(at(NOW), |w| {
        let mut c = w.db.conn();
        let sub = world(&mut c);
        let admin = w.token("admin", Scope::Admin);
        let read = w.token("reader", Scope::Read);
        let list = format!("/api/v1/subscriptions/{sub}/optouts");
        let a = w.get(&list, Some(&admin));
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            a.json(),
            json!([
                {"subscription": sub.0, "member": "ana", "created_at": "2026-11-22T10:00:00Z"},
                {"subscription": sub.0, "member": "ben", "created_at": "2026-11-22T10:00:00Z"},
            ])
        );
        let before = optouts(&mut c);
        let refused = |status: u16, needle: &str, a: Answer| {
            assert_eq!(a.status, status, "{needle}: {}", a.text);
            assert!(a.error().contains(needle), "want {needle:?}: {}", a.text);
            assert_eq!(a.text.trim().lines().count(), 1, "{}", a.text);
        };
        let other = sub.0 + 100;
        refused(403, "needs admin", w.get(&list, Some(&read)));
        refused(401, "a valid token", w.get(&list, None));
        refused(
            404,
            &format!("no subscription {other}"),
            w.get(
                &format!("/api/v1/subscriptions/{other}/optouts"),
                Some(&admin),
            ),
        );
        refused(
            400,
            "not a positive integer",
            w.get("/api/v1/subscriptions/x/optouts", Some(&admin)),
        );
        let del = |path: &str, token: &str| w.delete(path, Some(token));
        refused(403, "needs admin", del(&format!("{list}/ben"), &read));
        refused(
            404,
            "no user or group named",
            del(&format!("{list}/nobody"), &admin),
        );
        refused(
            404,
            "no user or group named",
            del(&format!("{list}/a%0Ab"), &admin),
        );
        refused(
            404,
            "zed has not opted out",
            del(&format!("{list}/zed"), &admin),
        );
        refused(
            404,
            &format!("no subscription {other}"),
            del(
                &format!("/api/v1/subscriptions/{other}/optouts/ben"),
                &admin,
            ),
        );
        refused(
            400,
            "not a positive integer",
            del("/api/v1/subscriptions/-1/optouts/ben", &admin),
        );
        assert_eq!(optouts(&mut c), before, "refused, nothing written");
        let a = del(&format!("{list}/ben"), &admin);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.json()["member"], "ben");
        let left: Vec<String> = w
            .get(&list, Some(&admin))
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["member"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(left, ["ana"]);
        refused(
            404,
            "ben has not opted out",
            del(&format!("{list}/ben"), &admin),
        );
        assert!(!digestd::subscriptions::get(&mut c, sub).unwrap().paused);
    });
}

fn login(w: &Web) -> String {
    let secret = w.token("ops", Scope::Admin);
    // As a browser logs in: the form first, for its token.
    let page = w.get("/admin/login", None);
    assert_eq!(page.status, 200, "{}", page.text);
    let token = csrf(&page.text);
    let a = form(
        w,
        "/admin/login",
        None,
        &[("csrf", &token), ("token", &secret)],
    );
    assert_eq!(a.status, 303, "{}", a.text);
    let v = a.header("set-cookie").expect("a cookie");
    let v = v
        .strip_prefix("digestd_admin=")
        .expect("the session cookie");
    v[..v.find(';').unwrap()].to_string()
}

fn form(w: &Web, path: &str, cookie: Option<&str>, fields: &[(&str, &str)]) -> Answer {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    w.send(|c| {
        let b = c
            .post(w.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        match cookie {
            Some(k) => b.header("cookie", format!("digestd_admin={k}")),
            None => b,
        }
    })
}

fn get(w: &Web, path: &str, cookie: &str) -> Answer {
    w.send(|c| {
        c.get(w.url(path))
            .header("cookie", format!("digestd_admin={cookie}"))
    })
}

#[test]
fn the_admin_page_shows_optouts_and_clears_one_with_its_token() {
    each_backend(at(NOW), |w| {
        let mut c = w.db.conn();
        let sub = world(&mut c);
        let (ana, ben) = (
            parties::find(&mut c, "ana").unwrap().0,
            parties::find(&mut c, "ben").unwrap().0,
        );
        let k = login(w);
        let page = format!("/admin/subscriptions/{sub}");
        let a = get(w, &page, &k);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("Members who opted out"));
        assert!(
            a.text.contains("<td>ana</td>") && a.text.contains("<td>ben</td>"),
            "{}",
            a.text
        );
        assert!(a.text.contains("2026-11-22 10:00:00 UTC"));
        // The subscribers page links to it.
        let s = get(w, "/admin/subscribers", &k);
        assert!(
            s.text
                .contains(&format!("href=\"/admin/subscriptions/{sub}\"")),
            "{}",
            s.text
        );
        let token = csrf(&a.text);
        let clear = format!("{page}/optin");
        let before = optouts(&mut c);
        // No token, a wrong one: 403; no session: to the login page.
        assert_eq!(form(w, &clear, Some(&k), &[("member", "ben")]).status, 403);
        assert_eq!(
            form(w, &clear, Some(&k), &[("csrf", "0"), ("member", "ben")]).status,
            403
        );
        assert_eq!(
            form(w, &clear, None, &[("csrf", &token), ("member", "ben")]).status,
            303
        );
        // Bad input: the page says so, nothing is written.
        for (path, member, status) in [
            (clear.as_str(), "zed", 404),
            (clear.as_str(), "nobody", 404),
            (clear.as_str(), "", 404),
            ("/admin/subscriptions/999999/optin", "ben", 404),
            ("/admin/subscriptions/x/optin", "ben", 404),
        ] {
            let a = form(w, path, Some(&k), &[("csrf", &token), ("member", member)]);
            assert_eq!(a.status, status, "{path} {member}: {}", a.text);
        }
        assert_eq!(get(w, "/admin/subscriptions/x", &k).status, 404);
        assert_eq!(get(w, "/admin/subscriptions/999999", &k).status, 404);
        assert_eq!(optouts(&mut c), before);
        let a = form(w, &clear, Some(&k), &[("csrf", &token), ("member", "ben")]);
        assert_eq!(a.status, 303, "{}", a.text);
        assert_eq!(optouts(&mut c), [(sub.0, ana.0)]);
        let a = get(w, &format!("{page}?done=cleared"), &k);
        assert!(a.text.contains("Cleared") && !a.text.contains("<td>ben</td>"));
        let _ = ben;
    });
}

#[test]
fn the_openapi_document_lists_the_optout_routes() {
    let w = Web::start(common::TestDb::sqlite(), at(NOW));
    let doc = w.get("/api/v1/openapi.json", None).json();
    for (path, method) in [
        ("/api/v1/subscriptions/{id}/optouts", "get"),
        ("/api/v1/subscriptions/{id}/optouts/{member}", "delete"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{path} {method}");
    }
}
