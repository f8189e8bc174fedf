//! What the log says, captured at `trace` (everything any module logs, as
//! `RUST_LOG=trace` would show it) through the real server and a real
//! SMTP server, on each back end:
//!
//! - a whole visit (sign-up, confirm, manage page and form, unsubscribe,
//!   the full digest, API calls with tokens, an Atom feed by ticket) leaves
//!   one `info` line per request with method, route template and status,
//!   and none of the secrets it used: subscriber codes, confirm and form
//!   tokens, API tokens, the ticket, the full digest's MAC;
//! - a delivery the server refuses (550) leaves a `warn` with the reply's
//!   code and text and the address's domain, never the address.

use crate::common;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use common::pages::{code, csrf, post_form, world, NOW};
use common::web::{each_backend, Web};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::access::{self, Scope};
use digestd::db::schema::nt_messages;
use digestd::db::DbConn;

/// Everything logged by this process, from its first test on: each test
/// here runs alone in a process of its own (`common::alone`), so the
/// global subscriber it installs sees only that test.
fn captured() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let w = buf.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Capture(w.clone()))
            .init();
        buf
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_text() -> String {
    String::from_utf8_lossy(&captured().lock().unwrap()).into_owned()
}

/// The confirm token a verification message carries (the only one here).
fn confirm_token(c: &mut DbConn) -> String {
    let mark = "/subscribe/confirm/";
    let bodies: Vec<String> = nt_messages::table
        .select(nt_messages::message)
        .load(c)
        .unwrap();
    let text = bodies
        .iter()
        .find(|t| t.contains(mark))
        .expect("a verification message");
    let at = text.find(mark).unwrap() + mark.len();
    text[at..at + 64].to_string()
}

/// A visit through every kind of capability; returns each secret used.
fn visit(web: &Web) -> Vec<String> {
    let mut c = web.db.conn();
    let w = world(&mut c);
    digestd::items::set_public(&mut c, &w.cal, true).unwrap();
    let mut secrets = Vec::new();
    // Sign-up and confirm.
    let form = csrf(&web.get("/subscribe", None).text);
    let fields = [
        ("csrf", form.as_str()),
        ("email", "new.person@example.net"),
        ("collection", &w.cal),
        ("frequency", "daily"),
        ("hour", "9"),
        ("day", "mon"),
        ("timezone", "Europe/Berlin"),
    ];
    assert_eq!(post_form(web, "/subscribe", &fields).status, 200);
    let confirm = confirm_token(&mut c);
    let path = format!("/subscribe/confirm/{confirm}");
    let t = csrf(&web.get(&path, None).text);
    assert_eq!(post_form(web, &path, &[("csrf", &t)]).status, 200);
    secrets.extend([form, confirm, t]);
    // The manage page and its form, and an unsubscribe.
    let asha = code(&mut c, w.asha);
    let page = web.get(&format!("/s/{asha}"), None);
    assert_eq!(page.status, 200, "{}", page.text);
    let t = csrf(&page.text);
    let sub = w.asha_evil.0.to_string();
    let a = post_form(
        web,
        &format!("/s/{asha}"),
        &[("csrf", &t), ("action", "pause"), ("subscription", &sub)],
    );
    assert!(a.status < 500, "{}", a.text);
    let un = format!("/s/{asha}/unsubscribe/{}", w.asha_daily);
    let t2 = csrf(&web.get(&un, None).text);
    assert_eq!(post_form(web, &un, &[("csrf", &t2)]).status, 200);
    secrets.extend([asha.clone(), t, t2]);
    // The full digest by its signed link.
    let key = digestd::digest::link::LinkKey::load(&mut c).unwrap();
    let url = key.url("http://x", w.asha_daily, "2026-11-23");
    let d = url.strip_prefix("http://x").unwrap();
    web.get(d, None);
    secrets.push(d.rsplit('/').next().unwrap().to_string());
    // API calls with tokens of each scope; an Atom feed by ticket.
    let admin = web.token("ops", Scope::Admin);
    let read = web.token("reader", Scope::Read);
    let metrics = web.token("prom", Scope::Metrics);
    assert_eq!(web.get("/api/v1/users/asha", Some(&admin)).status, 200);
    assert_eq!(web.get("/api/v1/queue", Some(&read)).status, 200);
    assert_eq!(web.get("/metrics", Some(&metrics)).status, 200);
    assert_eq!(web.get("/api/v1/queue", Some(&metrics)).status, 403);
    let coll = digestd::items::find_collection(&mut c, &w.cal).unwrap();
    let (_, ticket) = access::add_ticket(&mut c, at(NOW), coll.id).unwrap();
    let feed = format!(
        "/atom/collection/{}/changed?start=2026-11-01T00:00:00Z&end=2026-11-22T00:00:00Z&ticket={ticket}",
        w.cal
    );
    assert_eq!(web.get(&feed, None).status, 200);
    secrets.extend([admin, read, metrics, ticket]);
    secrets
}

#[test]
fn no_capability_reaches_the_log_at_any_level() {
    if common::alone::elsewhere(module_path!(), "no_capability_reaches_the_log_at_any_level") {
        return;
    }
    captured();
    each_backend(at(NOW), |web| {
        let secrets = visit(web);
        let log = log_text();
        for s in &secrets {
            assert!(s.len() >= 16, "a secret: {s}");
            assert!(!log.contains(s.as_str()), "{s} is in the log");
        }
        // One info line per request: method, route template, status.
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(" INFO ") && l.contains("digestd::http: request"))
            .collect();
        for (method, route, status) in [
            ("GET", "/s/{code}", "200"),
            ("POST", "/s/{code}/unsubscribe/{ids}", "200"),
            ("POST", "/subscribe/confirm/{token}", "200"),
            ("GET", "/d/{subscription}/{period}/{mac}", ""),
            ("GET", "/atom/collection/{uuid}/changed", "200"),
            ("GET", "/api/v1/queue", "403"),
        ] {
            assert!(
                lines.iter().any(|l| l.contains(&format!("method={method}"))
                    && l.contains(route)
                    && l.contains(&format!("status={status}"))
                    && l.contains(" ms=")),
                "no request line for {method} {route} {status} in\n{}",
                lines.join("\n")
            );
        }
    });
}

#[test]
fn a_refused_delivery_warns_with_the_reply_and_only_the_domain() {
    if common::alone::elsewhere(
        module_path!(),
        "a_refused_delivery_warns_with_the_reply_and_only_the_domain",
    ) {
        return;
    }
    captured();
    let smtp = common::smtp::FaultSmtp::start();
    let run = |db: &TestDb, label: &str| {
        let mut c = db.conn();
        let who = format!("gone.{label}");
        let who = who.as_str();
        let domain = format!("@refusing-{label}.example");
        let address = format!("{who}{domain}");
        common::delivery::user(&mut c, "sender", "sender@example.com");
        common::delivery::user(&mut c, who, &address);
        common::delivery::notify(&mut c, "sender", who, "Hello");
        let mut d = common::delivery::smtp(&smtp.url());
        digestd::deliver::queue::run_pass(&mut c, &mut d, at(common::delivery::T0)).unwrap();
        let log = log_text();
        let warned: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(" WARN ") && l.contains("delivery failed"))
            .filter(|l| l.contains(&domain))
            .collect();
        assert!(!warned.is_empty(), "no warning in\n{log}");
        let w = warned[0];
        assert!(w.contains("code=550"), "{w}");
        assert!(w.contains("no such user here"), "{w}");
        assert!(
            w.contains("channel=\"email\"") || w.contains("channel=email"),
            "{w}"
        );
        assert!(w.contains("permanent"), "{w}");
        assert!(!log.contains(&address), "the whole address is in the log");
    };
    run(&TestDb::sqlite(), "sqlite");
    if let Some(pg) = TestDb::postgres() {
        run(&pg, "postgres");
    }
}
