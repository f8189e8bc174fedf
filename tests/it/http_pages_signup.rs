//! The public sign-up page (`/subscribe`) with double opt-in, through the
//! real server on each back end: the form lists only public collections
//! and allows its one script by hash; a sign-up writes one pending row and
//! one verification message (delivered by the `dir` transport) and no
//! user; the link's GET writes nothing, its POST makes the user and the
//! subscription once, and the next tick sends that subscription a digest.
//! Expired and unknown tokens are the bad-link 404; a known address gets
//! the same answer; hostile fields are refused with nothing written; the
//! per-client and per-address limits answer 429 (and hold against many
//! sign-ups at once: `http_pages_signup_concurrent.rs`); a form without its
//! token is 403.

use crate::common;

use common::at;
use common::pages::{csrf, post_form, snapshot, NOW};
use common::signup::{counts, daily, setup, sign_up, sign_up_via, token_in_mail};
use common::web::{each_backend, Web};
use common::TestDb;
use diesel::prelude::*;
use digestd::config::{Config, EmailConfig};
use digestd::db::schema::{nt_requests, signups, subscriptions};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use sha2::{Digest, Sha256};

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                A[(n >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

#[test]
fn the_form_lists_public_collections_and_hashes_its_script() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let _ = setup(&mut c);
        let a = web.get("/subscribe", None);
        assert_eq!(a.status, 200);
        assert!(a.text.contains("Calendar") && !a.text.contains("Private"));
        assert!(a.text.contains("<option value=\"Europe/Berlin\""));
        let csp = a.header("content-security-policy").unwrap();
        let s = a.text.find("<script>").unwrap() + "<script>".len();
        let e = a.text.find("</script>").unwrap();
        let hash = base64(&Sha256::digest(&a.text.as_bytes()[s..e]));
        assert!(
            csp.contains(&format!("script-src 'sha256-{hash}'")),
            "{csp}"
        );
        let script_src = csp
            .split(';')
            .find(|d| d.trim().starts_with("script-src"))
            .unwrap();
        assert!(!script_src.contains("unsafe"), "{csp}");
        assert_eq!(a.header("cache-control").as_deref(), Some("no-store"));
    });
}

/// The queue sends the sign-up's message to its address (a plain address,
/// the link in both parts); once sent, nothing stored holds the link.
fn the_link_goes_out_once(c: &mut DbConn, token: &str) {
    // The message goes out through the queue to the address.
    let dir = tempfile::tempdir().unwrap();
    let email = EmailConfig {
        dir: dir.path().display().to_string(),
        ..EmailConfig::default()
    };
    let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
    queue::run_pass(c, &mut ob, at(NOW)).unwrap();
    let mails = common::pages::mails_in(dir.path());
    assert_eq!(mails.len(), 1);
    let m = mail_parser::MessageParser::default()
        .parse(&mails[0])
        .unwrap();
    let to = m.to().and_then(|a| a.first()).unwrap();
    assert_eq!(to.address(), Some("new@example.net"));
    // Addressed to the person, not to a made-up "party -N".
    assert_eq!(to.name(), None, "{to:?}");
    let raw = String::from_utf8_lossy(&mails[0]);
    assert!(!raw.contains("party -"), "{raw}");
    let body = m.body_text(0).unwrap();
    assert!(
        body.contains(&format!("/subscribe/confirm/{token}")),
        "{body}"
    );
    // The HTML part has the link as a real link (a button).
    let html = m.body_html(0).unwrap();
    assert!(
        html.contains(&format!(
            "href=\"http://localhost:8080/subscribe/confirm/{token}\""
        )),
        "{html}"
    );
    // Sent: nothing stored holds the link any more.
    let (text, html) = common::signup::stored_mail(c);
    assert!(
        !text.contains(token) && !text.contains("/subscribe/confirm/"),
        "{text}"
    );
    assert_eq!(html, None);
}

#[test]
fn sign_up_confirm_once_and_the_next_tick_sends_a_digest() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let before = counts(&mut c);
        let a = sign_up(web, &daily("new@example.net", &cal));
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("Check your mail"));
        // One pending row and one message; no user yet.
        assert_eq!(counts(&mut c), (before.0 + 1, before.1 + 1, before.2));
        let token = token_in_mail(&mut c);
        the_link_goes_out_once(&mut c, &token);
        // GET shows the button and writes nothing.
        let path = format!("/subscribe/confirm/{token}");
        let snap = snapshot(&mut c);
        let g = web.get(&path, None);
        assert_eq!(g.status, 200, "{}", g.text);
        assert!(g.text.contains("Calendar") && g.text.contains("Daily at 09:00 (Europe/Berlin)"));
        assert_eq!(snapshot(&mut c), snap);
        // Without the form token: 403, nothing.
        assert_eq!(post_form(web, &path, &[]).status, 403);
        assert_eq!(post_form(web, &path, &[("csrf", "x")]).status, 403);
        assert_eq!(snapshot(&mut c), snap);
        let t = csrf(&g.text);
        let p = post_form(web, &path, &[("csrf", &t)]);
        assert_eq!(p.status, 200, "{}", p.text);
        assert!(p.text.contains("Subscribed") && p.text.contains("/s/"));
        let users_ = digestd::parties::list_users(&mut c).unwrap();
        let u = users_
            .iter()
            .find(|u| u.email.as_deref() == Some("new@example.net"))
            .expect("the user");
        assert_eq!(u.timezone, "Europe/Berlin");
        let cps = digestd::parties::contact_points(&mut c, u.id).unwrap();
        assert!(cps.iter().all(|cp| cp.verified), "{cps:?}");
        let subs = digestd::subscriptions::list_for_party(&mut c, u.id).unwrap();
        assert_eq!(subs.len(), 1);
        assert_eq!(
            (subs[0].frequency.as_str(), subs[0].hour_of_day),
            ("daily", Some(9))
        );
        // Twice: harmless.
        let snap = snapshot(&mut c);
        let again = post_form(web, &path, &[("csrf", &t)]);
        assert_eq!(again.status, 200);
        assert!(again.text.contains("Confirmed already"));
        // A used link tells nothing: no manage link, no collections.
        let used = web.get(&path, None);
        assert_eq!(used.status, 200);
        for a in [&again, &used] {
            assert!(a.text.contains("Confirmed already"), "{}", a.text);
            assert!(!a.text.contains("/s/"), "{}", a.text);
            assert!(!a.text.contains("Calendar"), "{}", a.text);
            assert!(!a.text.contains("name=\"csrf\""), "{}", a.text);
        }
        assert_eq!(snapshot(&mut c), snap);
        // Something changes; the next 09:00 Berlin (08:00Z) sends a digest.
        common::pages::ops_adds_then_tick(
            &mut c,
            &cal,
            4242,
            "Sign-up party",
            "2026-11-23T08:00:00Z",
        );
        let posted: i64 = nt_requests::table
            .filter(nt_requests::subscription_id.eq(subs[0].id.0))
            .count()
            .get_result(&mut c)
            .unwrap();
        assert_eq!(posted, 1, "the new subscription got its digest");
    });
}

#[test]
fn expired_unknown_and_malformed_tokens_are_the_bad_link_page() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let bad = web.get(&format!("/s/{}", "cd".repeat(32)), None);
        assert_eq!(bad.status, 404);
        assert_eq!(sign_up(web, &daily("late@example.net", &cal)).status, 200);
        let token = token_in_mail(&mut c);
        let path = format!("/subscribe/confirm/{token}");
        let g = web.get(&path, None);
        assert_eq!(g.status, 200);
        let t = csrf(&g.text);
        // 48 hours later the link is dead.
        web.clock.set(at("2026-11-24T00:31:00Z"));
        let snap = snapshot(&mut c);
        for p in [
            path.clone(),
            format!("/subscribe/confirm/{}", "ab".repeat(32)),
            "/subscribe/confirm/abc".to_string(),
            format!("/subscribe/confirm/{}", token.to_uppercase()),
        ] {
            let a = web.get(&p, None);
            assert_eq!((a.status, &a.text), (404, &bad.text), "{p}");
        }
        let a = post_form(web, &path, &[("csrf", &t)]);
        assert_eq!((a.status, &a.text), (404, &bad.text));
        assert_eq!(snapshot(&mut c), snap);
    });
}

#[test]
fn a_known_address_gets_the_same_answer_and_its_user_the_subscription() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let rota = digestd::items::create_collection(&mut c, at(NOW), "Rota", None)
            .unwrap()
            .uuid;
        digestd::items::set_public(&mut c, &rota, true).unwrap();
        let fresh = sign_up(web, &daily("fresh@example.net", &cal));
        // asha has Calendar daily already: she keeps it and gains Rota.
        let mut f = daily("asha@example.com", &cal);
        f.push(("collection", &rota));
        let known = sign_up(web, &f);
        assert_eq!((fresh.status, &fresh.text), (known.status, &known.text));
        let users_before = counts(&mut c).2;
        let token = token_in_mail(&mut c);
        let path = format!("/subscribe/confirm/{token}");
        let t = csrf(&web.get(&path, None).text);
        assert_eq!(post_form(web, &path, &[("csrf", &t)]).status, 200);
        assert_eq!(counts(&mut c).2, users_before, "no second user");
        let asha = digestd::parties::find(&mut c, "asha").unwrap().0;
        let n = digestd::subscriptions::list_for_party(&mut c, asha)
            .unwrap()
            .len();
        assert_eq!(n, 4, "asha's three and the new one");
    });
}

#[test]
fn hostile_fields_are_refused_and_nothing_is_written() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let (cal, private) = setup(&mut c);
        let long = "x".repeat(10_000);
        let long_mail = format!("{long}@example.net");
        let unknown = uuid::Uuid::from_u128(77).to_string();
        let snap = snapshot(&mut c);
        let before = counts(&mut c);
        let cases: Vec<Vec<(&str, &str)>> = vec![
            vec![("email", "a@example.net\r\nBcc: b@example.net")],
            vec![("email", &long_mail)],
            vec![("email", "not an address")],
            vec![("timezone", "Mars/Olympus")],
            vec![("timezone", &long)],
            vec![("hour", "24")],
            vec![("hour", "-1")],
            vec![("hour", "9\r\n")],
            vec![("hour", &long)],
            vec![("frequency", "yearly")],
            vec![("frequency", "weekly"), ("day", "funday")],
            vec![("collection", &private)],
            vec![("collection", &unknown)],
            vec![("collection", &long)],
        ];
        for case in cases {
            let mut f = daily("ok@example.net", &cal);
            for (k, v) in &case {
                f.retain(|(fk, _)| fk != k);
                f.push((k, v));
            }
            let a = sign_up(web, &f);
            assert_eq!(
                a.status,
                422,
                "{case:?}: {}",
                &a.text[..a.text.len().min(300)]
            );
            assert!(a.text.contains("class=\"error\""), "{case:?}");
            assert!(
                a.text.len() < 200_000,
                "the form again, not the input echoed"
            );
        }
        // No collection at all.
        let mut f = daily("ok@example.net", &cal);
        f.retain(|(k, _)| *k != "collection");
        assert_eq!(sign_up(web, &f).status, 422);
        // No form token, a wrong one: 403.
        assert_eq!(
            post_form(web, "/subscribe", &daily("ok@example.net", &cal)).status,
            403
        );
        let mut f = daily("ok@example.net", &cal);
        f.push(("csrf", "1.abc"));
        assert_eq!(post_form(web, "/subscribe", &f).status, 403);
        assert_eq!(snapshot(&mut c), snap);
        assert_eq!(counts(&mut c), before);
    });
}

fn with_limits(f: impl Fn(&Web)) {
    let tune = |cfg: &mut Config| {
        cfg.signup.per_client_per_hour = 3;
        cfg.signup.per_address_per_day = 2;
    };
    f(&Web::start_with(TestDb::sqlite(), at(NOW), tune));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(NOW), tune));
    }
}

#[test]
fn limits_per_address_and_per_client_answer_429() {
    with_limits(|web| {
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        assert_eq!(sign_up(web, &daily("one@example.net", &cal)).status, 200);
        assert_eq!(sign_up(web, &daily("one@example.net", &cal)).status, 200);
        let before = counts(&mut c);
        // A third message to one address in a day: 429, nothing written.
        let a = sign_up(web, &daily("one@example.net", &cal));
        assert_eq!(a.status, 429, "{}", a.text);
        assert_eq!(counts(&mut c), before);
        // Another address from the same client: the third this hour.
        assert_eq!(sign_up(web, &daily("two@example.net", &cal)).status, 200);
        let before = counts(&mut c);
        assert_eq!(sign_up(web, &daily("three@example.net", &cal)).status, 429);
        assert_eq!(counts(&mut c), before);
        // An hour later the client may again; the address only a day later.
        web.clock.set(at("2026-11-22T01:31:00Z"));
        assert_eq!(sign_up(web, &daily("three@example.net", &cal)).status, 200);
        assert_eq!(sign_up(web, &daily("one@example.net", &cal)).status, 429);
        web.clock.set(at("2026-11-23T00:31:00Z"));
        assert_eq!(sign_up(web, &daily("one@example.net", &cal)).status, 200);
        let subs: i64 = subscriptions::table.count().get_result(&mut c).unwrap();
        assert_eq!(subs, 4, "nothing subscribed before a confirm");
    });
}

/// Behind a proxy named in `[http] trusted_proxies` (here the test's own
/// loopback address), each forwarded client has its own per-client limit;
/// with no proxy trusted, `X-Forwarded-For` is ignored and every request
/// from the proxy is one client.
#[test]
fn the_per_client_limit_follows_a_trusted_proxys_forwarded_for() {
    for trusted in ["127.0.0.1, ::1", ""] {
        let tune = |cfg: &mut Config| {
            cfg.signup.per_client_per_hour = 2;
            cfg.signup.per_address_per_day = 100;
            cfg.http.trusted_proxies = trusted.to_string();
        };
        let web = Web::start_with(TestDb::sqlite(), at(NOW), tune);
        let mut c = web.db.conn();
        let (cal, _) = setup(&mut c);
        let a = "203.0.113.1";
        let b = "198.51.100.2";
        assert_eq!(sign_up_via(&web, a, "a1@example.net", &cal).status, 200);
        assert_eq!(sign_up_via(&web, a, "a2@example.net", &cal).status, 200);
        let before = counts(&mut c);
        assert_eq!(
            sign_up_via(&web, a, "a3@example.net", &cal).status,
            429,
            "{trusted:?}"
        );
        assert_eq!(counts(&mut c), before);
        // Another client behind the same proxy, and one that names a
        // fake client left of the real one: only a trusted proxy's own
        // entry (the right-most) counts.
        let b_with_a_lie = format!("{a}, {b}");
        let expected = if trusted.is_empty() { 429 } else { 200 };
        assert_eq!(
            sign_up_via(&web, &b_with_a_lie, "b1@example.net", &cal).status,
            expected,
            "{trusted:?}"
        );
        let rows: Vec<String> = signups::table
            .select(signups::client)
            .order(signups::id)
            .load(&mut c)
            .unwrap();
        let want: Vec<&str> = if trusted.is_empty() {
            vec!["127.0.0.1", "127.0.0.1"]
        } else {
            vec![a, a, b]
        };
        assert_eq!(rows, want, "the client each sign-up was counted for");
    }
}
