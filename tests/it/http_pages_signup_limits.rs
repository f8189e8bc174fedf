//! Sign-up limits that cannot be sidestepped, through the real server on
//! each back end: an address counts as its mailbox (`Bomb@`, `bOmb@` and
//! `bomb+1@` are one), a client as its IPv4 /24 or IPv6 /64, and all
//! sign-ups together against an hourly cap; a refusal is a 429 that says
//! when to try again, in words and in `Retry-After`, with nothing written.
//! The form's token works only from the client's own block and for about
//! an hour. And `serve` sends the verification at once, not at its next
//! queue pass.

use crate::common;

use std::time::{Duration, Instant};

use common::at;
use common::pages::{post_form, NOW};
use common::signup::{
    counts, daily, form_token_as, post_via, setup, sign_up, sign_up_via, token_in_mail,
};
use common::web::{Answer, Web};
use common::TestDb;
use diesel::prelude::*;
use digestd::config::Config;
use digestd::db::schema::nt_requests;

/// Runs `f` on a server of each back end with the limits `tune` sets, a
/// trusted proxy on loopback (so tests name their clients by
/// `X-Forwarded-For`) and the other limits out of the way.
fn with(tune: impl Fn(&mut Config) + Copy, f: impl Fn(&Web)) {
    let cfg = move |cfg: &mut Config| {
        cfg.signup.per_client_per_hour = 1000;
        cfg.signup.per_address_per_day = 1000;
        cfg.signup.mail_per_hour = 1000;
        cfg.http.trusted_proxies = "127.0.0.1, ::1".into();
        tune(cfg);
    };
    f(&Web::start_with(TestDb::sqlite(), at(NOW), cfg));
    if let Some(pg) = TestDb::postgres() {
        f(&Web::start_with(pg, at(NOW), cfg));
    }
}

/// A 429 that says when, and the same instant in `Retry-After`.
fn assert_limited(a: &Answer, now: &str, until: &str) {
    assert_eq!(a.status, 429, "{}", a.text);
    let secs = (at(until) - at(now)).num_seconds();
    assert_eq!(a.header("retry-after"), Some(secs.to_string()), "{until}");
    let when = at(until).format("%Y-%m-%d %H:%M UTC").to_string();
    assert!(a.text.contains(&when), "{when}: {}", a.text);
    assert!(!a.text.contains("Check your mail"));
}

#[test]
fn one_mailbox_however_it_is_written_counts_once() {
    with(
        |cfg| cfg.signup.per_address_per_day = 2,
        |web| {
            let mut c = web.db.conn();
            let (cal, _) = setup(&mut c);
            assert_eq!(sign_up(web, &daily("Bomb@example.org", &cal)).status, 200);
            web.clock.set(at("2026-11-22T02:00:00Z"));
            assert_eq!(sign_up(web, &daily("bOmb@EXAMPLE.org", &cal)).status, 200);
            let before = counts(&mut c);
            for other in [
                "bomb@example.org",
                "bomb+1@example.org",
                "BOMB+x+y@Example.Org",
            ] {
                let a = sign_up(web, &daily(other, &cal));
                // Free again when the first leaves its day.
                assert_limited(&a, "2026-11-22T02:00:00Z", "2026-11-23T00:30:00Z");
            }
            assert_eq!(counts(&mut c), before, "nothing written");
            // Another mailbox is not held back.
            assert_eq!(sign_up(web, &daily("bomb.x@example.org", &cal)).status, 200);
            web.clock.set(at("2026-11-23T00:30:01Z"));
            assert_eq!(sign_up(web, &daily("bomb+2@example.org", &cal)).status, 200);
        },
    );
}

#[test]
fn a_client_counts_as_its_slash_24_or_slash_64() {
    with(
        |cfg| cfg.signup.per_client_per_hour = 2,
        |web| {
            let mut c = web.db.conn();
            let (cal, _) = setup(&mut c);
            let ok = |ip: &str, n: u32| {
                let a = sign_up_via(web, ip, &format!("p{n}@example.net"), &cal);
                assert_eq!(a.status, 200, "{ip}: {}", a.text);
            };
            ok("203.0.113.1", 1);
            ok("203.0.113.2", 2);
            let before = counts(&mut c);
            for (n, ip) in ["203.0.113.77", "203.0.113.1", "::ffff:203.0.113.9"]
                .iter()
                .enumerate()
            {
                let a = sign_up_via(web, ip, &format!("q{n}@example.net"), &cal);
                assert_limited(&a, NOW, "2026-11-22T01:30:00Z");
            }
            assert_eq!(counts(&mut c), before);
            ok("203.0.114.1", 3);
            // IPv6: the /64 is one client.
            ok("2001:db8:1:2::1", 4);
            ok("2001:db8:1:2:ffff:ffff:ffff:fffe", 5);
            let a = sign_up_via(web, "2001:db8:1:2:abcd::9", "r@example.net", &cal);
            assert_limited(&a, NOW, "2026-11-22T01:30:00Z");
            ok("2001:db8:1:3::1", 6);
            web.clock.set(at("2026-11-22T01:30:01Z"));
            ok("203.0.113.200", 7);
        },
    );
}

#[test]
fn an_hourly_cap_holds_for_everyone_together() {
    with(
        |cfg| cfg.signup.mail_per_hour = 3,
        |web| {
            let mut c = web.db.conn();
            let (cal, _) = setup(&mut c);
            for (i, t) in ["00:30", "00:40", "00:50"].iter().enumerate() {
                web.clock.set(at(&format!("2026-11-22T{t}:00Z")));
                let ip = format!("198.51.{i}.1");
                let a = sign_up_via(web, &ip, &format!("m{i}@example.net"), &cal);
                assert_eq!(a.status, 200, "{}", a.text);
            }
            let before = counts(&mut c);
            // Another network, another address: the cap still holds until
            // the first of the three is an hour old.
            let a = sign_up_via(web, "192.0.2.1", "late@example.org", &cal);
            assert_limited(&a, "2026-11-22T00:50:00Z", "2026-11-22T01:30:00Z");
            web.clock.set(at("2026-11-22T01:29:59Z"));
            let a = sign_up_via(web, "2001:db8::1", "later@example.org", &cal);
            assert_limited(&a, "2026-11-22T01:29:59Z", "2026-11-22T01:30:00Z");
            assert_eq!(counts(&mut c), before);
            web.clock.set(at("2026-11-22T01:30:00Z"));
            let a = sign_up_via(web, "192.0.2.1", "late@example.org", &cal);
            assert_eq!(a.status, 200, "{}", a.text);
        },
    );
}

#[test]
fn a_form_token_works_from_its_own_network_for_about_an_hour() {
    with(
        |_| {},
        |web| {
            let mut c = web.db.conn();
            let (cal, _) = setup(&mut c);
            let mine = form_token_as(web, Some("203.0.113.5"));
            let before = counts(&mut c);
            // Another network cannot use it.
            for other in ["198.51.100.5", "203.0.114.5", "2001:db8::5"] {
                let a = post_via(web, other, &mine, &daily("x@example.net", &cal));
                assert_eq!(a.status, 403, "{other}");
            }
            // Nor a token that says another hour, nor garbage.
            let forged = format!("{}.{}", 99, mine.split_once('.').unwrap().1);
            for bad in [forged.as_str(), "", "1.abc", "\r\n", "x.y.z"] {
                let a = post_via(web, "203.0.113.5", bad, &daily("x@example.net", &cal));
                assert_eq!(a.status, 403, "{bad:?}");
            }
            // A token without a client (no proxy header) is the proxy's.
            assert_eq!(
                post_form(web, "/subscribe", &daily("x@example.net", &cal)).status,
                403
            );
            assert_eq!(counts(&mut c), before, "nothing written");
            // Its own /24 may, within the hour it was served and the next.
            web.clock.set(at("2026-11-22T01:59:00Z"));
            let a = post_via(web, "203.0.113.99", &mine, &daily("x@example.net", &cal));
            assert_eq!(a.status, 200, "{}", a.text);
            web.clock.set(at("2026-11-22T02:00:00Z"));
            let a = post_via(web, "203.0.113.5", &mine, &daily("y@example.net", &cal));
            assert_eq!(a.status, 403, "two hours on");
        },
    );
}

/// `serve` with a queue pass due only in an hour: the sign-up's
/// verification is in the `dir` outbox within seconds all the same,
/// because the sign-up rings the queue.
fn serve_sends_at_once(db: TestDb) {
    let mut c = db.conn();
    let (cal, _) = setup(&mut c);
    let out = tempfile::tempdir().unwrap();
    let port = common::smtp::free_port();
    let mut cfg = Config::default();
    cfg.database.url = db.url.clone();
    cfg.http.enabled = true;
    cfg.http.listen = format!("127.0.0.1:{port}");
    cfg.email.dir = out.path().display().to_string();
    cfg.schedule.queue_seconds = 3600;
    let clock: std::sync::Arc<dyn digestd::clock::Clock> =
        std::sync::Arc::new(digestd::clock::FixedClock::new(at(NOW)));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let daemon = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(digestd::serve::serve(&cfg, clock, async {
            let _ = stop_rx.await;
        }))
    });
    let client = reqwest::blocking::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let form = loop {
        match client.get(format!("{base}/subscribe")).send() {
            Ok(r) => break r.text().unwrap(),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let eml = common::pages::mails_in;
    // The start-up pass has run (nothing to send) before the sign-up.
    std::thread::sleep(Duration::from_millis(500));
    assert!(eml(out.path()).is_empty());
    let token = common::pages::csrf(&form);
    let mut f: Vec<(&str, &str)> = vec![("csrf", &token)];
    f.extend_from_slice(&daily("now@example.net", &cal));
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&f)
        .finish();
    let r = client
        .post(format!("{base}/subscribe"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // Not a measure of speed: the next scheduled pass is an hour away,
    // so the message is there only if the sign-up woke the queue.
    let deadline = Instant::now() + Duration::from_secs(60);
    while eml(out.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = eml(out.path());
    let _ = stop_tx.send(());
    daemon.join().unwrap().unwrap();
    assert_eq!(
        sent.len(),
        1,
        "the verification went out before the next pass"
    );
    let text = String::from_utf8_lossy(&sent[0]);
    assert!(text.contains("now@example.net"));
    // And what is stored no longer holds the link.
    let (stored, _) = common::signup::stored_mail(&mut c);
    assert!(!stored.contains("/subscribe/confirm/"), "{stored}");
}

#[test]
fn serve_sends_the_verification_at_once_sqlite() {
    serve_sends_at_once(TestDb::sqlite());
}

#[test]
fn serve_sends_the_verification_at_once_postgres() {
    match TestDb::postgres() {
        Some(db) => serve_sends_at_once(db),
        None => eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set"),
    }
}

/// The stored message keeps no usable link once the queue is done with
/// it, even when it was given up rather than sent.
#[test]
fn a_given_up_verification_is_scrubbed_too() {
    with(
        |_| {},
        |web| {
            let mut c = web.db.conn();
            let (cal, _) = setup(&mut c);
            assert_eq!(sign_up(web, &daily("gone@example.net", &cal)).status, 200);
            let token = token_in_mail(&mut c);
            // The test server refuses `gone@` for good (550).
            let smtp = common::smtp::FaultSmtp::start();
            let mut d = common::delivery::smtp(&smtp.url());
            digestd::deliver::queue::run_pass(&mut c, &mut d, at(NOW)).unwrap();
            assert!(smtp.received().is_empty());
            let failed: i64 = nt_requests::table
                .filter(nt_requests::status.eq("failed"))
                .count()
                .get_result(&mut c)
                .unwrap();
            assert_eq!(failed, 1, "given up at once");
            let (text, html) = common::signup::stored_mail(&mut c);
            assert!(!text.contains(&token), "{text}");
            assert_eq!(html, None);
        },
    );
}
