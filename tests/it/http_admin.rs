//! The operator's sign-in (`/admin/login`) through the real server on each
//! back end: login with an admin token (good, bad, another scope,
//! revoked), the cookie's attributes, expiry by the injected clock,
//! logout; no session → 303 to login; a form without its token → 403 with
//! nothing done. What the pages show is in `http_admin_pages.rs`.

use crate::common;

use chrono::Duration;
use diesel::prelude::*;
use digestd::access::{self, Scope};
use digestd::db::schema::{admin_sessions, nt_requests};
use digestd::db::DbConn;
use digestd::ids::RequestId;

use common::pages::{csrf, snapshot, world, EVIL, NOW};
use common::web::{each_backend, Answer, Web};
use common::{at, TestDb};

pub(crate) fn login(web: &Web, token: &str) -> Answer {
    login_as(web, None, token)
}

/// A login as a browser makes it: the form fetched (for its token), then
/// posted; as `client` when given (a trusted proxy's `X-Forwarded-For`).
fn login_as(web: &Web, client: Option<&str>, token: &str) -> Answer {
    let with = |b: reqwest::blocking::RequestBuilder| match client {
        Some(ip) => b.header("x-forwarded-for", ip),
        None => b,
    };
    let page = web.send(|c| with(c.get(web.url("/admin/login"))));
    assert_eq!(page.status, 200, "{}", page.text);
    post_login(
        web,
        client,
        &[("csrf", &csrf(&page.text)), ("token", token)],
    )
}

fn post_login(web: &Web, client: Option<&str>, fields: &[(&str, &str)]) -> Answer {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    web.send(|c| {
        let b = c
            .post(web.url("/admin/login"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        match client {
            Some(ip) => b.header("x-forwarded-for", ip),
            None => b,
        }
    })
}

pub(crate) fn form(web: &Web, path: &str, cookie: Option<&str>, fields: &[(&str, &str)]) -> Answer {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    web.send(|c| {
        let b = c
            .post(web.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        match cookie {
            Some(k) => b.header("cookie", format!("digestd_admin={k}")),
            None => b,
        }
    })
}

pub(crate) fn get(web: &Web, path: &str, cookie: &str) -> Answer {
    web.send(|c| {
        c.get(web.url(path))
            .header("cookie", format!("other=1; digestd_admin={cookie}"))
    })
}

/// The session id a login's `Set-Cookie` carries.
pub(crate) fn sid(a: &Answer) -> String {
    let v = a.header("set-cookie").expect("a cookie");
    let v = v
        .strip_prefix("digestd_admin=")
        .expect("the session cookie");
    v[..v.find(';').unwrap()].to_string()
}

/// Logs in with a new admin token; the session id and the token's name.
pub(crate) fn signed_in(web: &Web) -> String {
    let secret = web.token("ops", Scope::Admin);
    let a = login(web, &secret);
    assert_eq!(a.status, 303, "{}", a.text);
    sid(&a)
}

pub(crate) fn sessions(c: &mut DbConn) -> i64 {
    admin_sessions::table.count().get_result(c).unwrap()
}

pub(crate) fn status_of(c: &mut DbConn, id: RequestId) -> String {
    nt_requests::table
        .find(id.0)
        .select(nt_requests::status)
        .first(c)
        .unwrap()
}

fn assert_login_redirect(a: &Answer, prefix: &str) {
    assert_eq!(a.status, 303, "{}", a.text);
    assert_eq!(
        a.header("location").as_deref(),
        Some(&*format!("{prefix}/admin/login"))
    );
}

#[test]
fn login_exchanges_an_admin_token_for_a_strict_cookie() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        // Without a session every page sends the operator to log in.
        for path in [
            "/admin",
            "/admin/requests",
            "/admin/requests/1000",
            "/admin/subscribers",
            "/admin/grid",
        ] {
            assert_login_redirect(&web.get(path, None), "");
            assert_login_redirect(&get(web, path, "dgs_forged"), "");
        }
        assert_login_redirect(&form(web, "/admin/requests/1000/cancel", None, &[]), "");
        let page = web.get("/admin/login", None);
        assert_eq!(page.status, 200);
        assert!(page.text.contains("name=\"token\""), "{}", page.text);
        let csp = page.header("content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'") && !csp.contains("script-src"));
        assert_eq!(page.header("cache-control").as_deref(), Some("no-store"));
        assert_eq!(page.header("x-frame-options").as_deref(), Some("DENY"));

        // Bad secrets: the form again, 401, no cookie, nothing written.
        let reader = web.token("reader", Scope::Read);
        let before = snapshot(&mut c);
        let long = "dgt_".to_string() + &"a".repeat(10_000);
        for bad in [
            "dgt_nope",
            "",
            reader.as_str(),
            "dgt_a\r\nSet-Cookie: x=y",
            long.as_str(),
            EVIL,
        ] {
            let a = login(web, bad);
            assert_eq!(a.status, 401, "{bad:?}: {}", a.text);
            assert!(a.text.contains("not a valid admin token"), "{}", a.text);
            assert!(a.header("set-cookie").is_none());
            assert!(!a.text.contains("<script>"));
        }
        assert_eq!(sessions(&mut c), 0);
        assert_eq!(snapshot(&mut c), before);

        let secret = web.token("ops", Scope::Admin);
        let a = login(web, &secret);
        assert_eq!(a.status, 303);
        assert_eq!(a.header("location").as_deref(), Some("/admin"));
        let cookie = a.header("set-cookie").unwrap();
        for part in [
            "; HttpOnly",
            "; SameSite=Strict",
            "; Path=/admin",
            "; Max-Age=43200",
        ] {
            assert!(cookie.contains(part), "{part} in {cookie}");
        }
        assert!(!cookie.contains("Secure"), "http base_url: {cookie}");
        let s = sid(&a);
        assert!(s.starts_with("dgs_") && s.len() == 68, "{s}");
        // Only a hash is stored.
        let stored: Vec<String> = admin_sessions::table
            .select(admin_sessions::session_hash)
            .load(&mut c)
            .unwrap();
        assert_eq!(stored, [access::hash_secret(&s)]);
        let home = get(web, "/admin", &s);
        assert_eq!(home.status, 200, "{}", home.text);
        assert!(home.text.contains("signed in with token ops"));

        // Logout needs the form token; then the session is gone.
        assert_eq!(form(web, "/admin/logout", Some(&s), &[]).status, 403);
        assert_eq!(
            form(
                web,
                "/admin/logout",
                Some(&s),
                &[("csrf", "0".repeat(32).as_str())]
            )
            .status,
            403
        );
        assert_eq!(get(web, "/admin", &s).status, 200);
        let out = form(
            web,
            "/admin/logout",
            Some(&s),
            &[("csrf", &csrf(&home.text))],
        );
        assert_login_redirect(&out, "");
        assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
        assert_login_redirect(&get(web, "/admin", &s), "");
        assert_eq!(sessions(&mut c), 0);
    });
}

#[test]
fn ten_failed_logins_from_one_address_wait_out_the_window() {
    each_backend(at(NOW), |web| {
        let secret = web.token("ops", Scope::Admin);
        let mut c = web.db.conn();
        for _ in 0..10 {
            assert_eq!(login(web, "dgt_guess").status, 401);
        }
        // Now even the right token is not looked at.
        let a = login(web, &secret);
        assert_eq!(a.status, 429, "{}", a.text);
        assert!(a.text.contains("Too many failed logins"), "{}", a.text);
        assert!(a.header("set-cookie").is_none());
        assert_eq!(sessions(&mut c), 0);
        web.clock.advance(Duration::minutes(15));
        assert_eq!(login(web, &secret).status, 303);
        // A success starts the count over.
        for _ in 0..9 {
            assert_eq!(login(web, "dgt_guess").status, 401);
        }
        assert_eq!(login(web, &secret).status, 303);
        for _ in 0..9 {
            assert_eq!(login(web, "dgt_guess").status, 401);
        }
        assert_eq!(login(web, &secret).status, 303);
    });
}

/// A server behind a trusted proxy on loopback: tests name their clients.
fn behind_proxy(f: impl Fn(&Web)) {
    let tune = |cfg: &mut digestd::config::Config| {
        cfg.http.trusted_proxies = "127.0.0.1, ::1".into();
    };
    f(&Web::start_with(TestDb::sqlite(), at(NOW), tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(NOW), tune));
    }
}

#[test]
fn failed_logins_count_per_slash_24_and_slash_64() {
    behind_proxy(|web| {
        let secret = web.token("ops", Scope::Admin);
        let mut c = web.db.conn();
        // Ten guesses spread over one /24: its next address is held back.
        for i in 1..=10 {
            let ip = format!("203.0.113.{i}");
            assert_eq!(login_as(web, Some(&ip), "dgt_guess").status, 401);
        }
        let a = login_as(web, Some("203.0.113.200"), &secret);
        assert_eq!(a.status, 429, "{}", a.text);
        assert_eq!(sessions(&mut c), 0);
        // Another network is not.
        assert_eq!(login_as(web, Some("198.51.100.1"), &secret).status, 303);
        // IPv6: one /64 is one client.
        for i in 1..=10 {
            let ip = format!("2001:db8:1:2::{i:x}");
            assert_eq!(login_as(web, Some(&ip), "dgt_guess").status, 401);
        }
        let a = login_as(web, Some("2001:db8:1:2:ffff::1"), &secret);
        assert_eq!(a.status, 429, "{}", a.text);
        assert_eq!(login_as(web, Some("2001:db8:1:3::1"), &secret).status, 303);
    });
}

#[test]
fn the_login_form_needs_its_own_token() {
    behind_proxy(|web| {
        let secret = web.token("ops", Scope::Admin);
        let mut c = web.db.conn();
        let page = web.send(|c| {
            c.get(web.url("/admin/login"))
                .header("x-forwarded-for", "203.0.113.5")
        });
        let mine = csrf(&page.text);
        let forged = format!("{}.{}", 7, mine.split_once('.').unwrap().1);
        let long = "9".repeat(5000);
        // The right admin token, with no form token, another network's,
        // another hour's, or garbage: 403, no session.
        let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
            ("203.0.113.5", vec![("token", &secret)]),
            ("198.51.100.5", vec![("csrf", &mine), ("token", &secret)]),
            ("203.0.113.5", vec![("csrf", &forged), ("token", &secret)]),
            ("203.0.113.5", vec![("csrf", "1.x\r\n"), ("token", &secret)]),
            ("203.0.113.5", vec![("csrf", &long), ("token", &secret)]),
        ];
        for (ip, fields) in &cases {
            let a = post_login(web, Some(ip), fields);
            assert_eq!(a.status, 403, "{ip} {fields:?}: {}", a.text);
            assert!(a.header("set-cookie").is_none());
            assert!(a.text.contains("name=\"csrf\""), "the form again");
        }
        assert_eq!(sessions(&mut c), 0);
        // From its own /24, within the hour and the next, it works.
        web.clock.set(at("2026-11-22T01:59:00Z"));
        let a = post_login(
            web,
            Some("203.0.113.77"),
            &[("csrf", &mine), ("token", &secret)],
        );
        assert_eq!(a.status, 303, "{}", a.text);
        web.clock.set(at("2026-11-22T02:00:00Z"));
        let a = post_login(
            web,
            Some("203.0.113.5"),
            &[("csrf", &mine), ("token", &secret)],
        );
        assert_eq!(a.status, 403, "two hours on");
        // Refusals count as failures: ten of them hold the block back.
        for _ in 0..10 {
            post_login(web, Some("192.0.2.1"), &[("token", &secret)]);
        }
        assert_eq!(login_as(web, Some("192.0.2.2"), &secret).status, 429);
    });
}

#[test]
fn the_cookie_is_secure_behind_https_and_follows_the_prefix_and_hours() {
    let run = |db: TestDb| {
        let web = Web::start_with(db, at(NOW), |cfg| {
            cfg.digest.base_url = "https://digest.example/digest".into();
            cfg.http.admin_session_hours = 2;
        });
        let secret = web.token("ops", Scope::Admin);
        let a = login(&web, &secret);
        assert_eq!(a.header("location").as_deref(), Some("/digest/admin"));
        let cookie = a.header("set-cookie").unwrap();
        for part in ["; Secure", "; Path=/digest/admin", "; Max-Age=7200"] {
            assert!(cookie.contains(part), "{part} in {cookie}");
        }
        assert_login_redirect(&web.get("/admin", None), "/digest");
    };
    run(TestDb::sqlite());
    if let Some(pg) = TestDb::postgres() {
        run(pg);
    }
}

#[test]
fn sessions_expire_by_the_clock_and_end_with_their_token() {
    each_backend(at(NOW), |web| {
        let s = signed_in(web);
        web.clock
            .advance(Duration::hours(12) - Duration::seconds(1));
        assert_eq!(get(web, "/admin", &s).status, 200);
        web.clock.advance(Duration::seconds(1));
        assert_login_redirect(&get(web, "/admin", &s), "");
        // Revoking the token ends its live sessions at once.
        let secret = web.token("ops2", Scope::Admin);
        let s2 = sid(&login(web, &secret));
        assert_eq!(get(web, "/admin/requests", &s2).status, 200);
        let mut c = web.db.conn();
        access::revoke_token(&mut c, "ops2").unwrap();
        assert_login_redirect(&get(web, "/admin/requests", &s2), "");
        assert_eq!(
            sessions(&mut c),
            0,
            "the expired one swept, the revoked one cascaded"
        );
        // A revoked token does not log in again.
        assert_eq!(login(web, &secret).status, 401);
    });
}
