//! The manage page a digest links to (`/s/{code}`), through the real server
//! on each back end: what it shows (in the person's zone and clock,
//! addresses masked, hostile names escaped), each form doing what the CLI's
//! library call does, and every refusal writing nothing: a bad or missing
//! form token (403), hostile input (400, the page again), an unknown code
//! or another person's subscription (404).
//! Unsubscribe and one-click are in `http_pages_unsubscribe.rs`.

use crate::common;

use common::pages::{code, csrf, paused, post_form, schedule, snapshot, world, World, EVIL, NOW};
use common::web::{each_backend, Web};
use common::{at, TestDb};
use digestd::manage;
use digestd::parties::UserChanges;
use digestd::subscriptions::Retime;

fn page(web: &Web, code: &str) -> String {
    let a = web.get(&format!("/s/{code}"), None);
    assert_eq!(a.status, 200, "{}", a.text);
    a.text
}

#[test]
fn the_manage_page_shows_a_person_their_digests_in_their_own_words() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let a = web.get(&format!("/s/{asha}"), None);
        assert_eq!(a.status, 200);
        assert_eq!(
            a.header("content-type").unwrap(),
            "text/html; charset=utf-8"
        );
        let csp = a.header("content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("form-action 'self'"));
        assert!(!csp.contains("script-src"), "{csp}");
        assert_eq!(a.header("cache-control").as_deref(), Some("no-store"));
        assert_eq!(a.header("referrer-policy").as_deref(), Some("no-referrer"));
        assert_eq!(a.header("x-frame-options").as_deref(), Some("DENY"));
        let t = a.text;
        for want in [
            "Your digests, asha",
            "Europe/Madrid (CET)",
            "24-hour clock",
            "<strong>Calendar</strong>: changes",
            "Daily at 09:00",
            "<strong>all collections</strong>: upcoming items",
            "Weekly on Monday at 08:00",
            "Daily at 18:00",
            "email: a***@example.com · verified",
            "sms: +34 *** ** 22 · not verified",
            "<option value=\"Europe/Madrid\" selected>",
            "<option value=\"8\" selected>08:00</option>",
            "value=\"en-GB\"",
        ] {
            assert!(t.contains(want), "{want:?} in {t}");
        }
        // Addresses never appear whole; a hostile collection name is text.
        assert!(!t.contains("asha@example.com") && !t.contains("600111222"));
        assert!(!t.contains(EVIL), "{t}");
        assert!(
            t.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{t}"
        );
        // No script of any kind, and nothing of bo's.
        assert!(!t.contains("<script"));
        assert!(!t.contains("bo@") && !t.contains(&format!("sub-{}", w.bo_daily)));
        // bo reads the 12-hour clock.
        let bo = code(&mut c, w.bo);
        let t = page(web, &bo);
        assert!(t.contains("Daily at 7:00 AM"), "{t}");
        assert!(t.contains("America/New_York (EST)") && t.contains("b***@example.org"));
    });
}

#[test]
fn an_unknown_or_malformed_code_is_the_same_404_page() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let unknown = web.get(&format!("/s/{}", "ab".repeat(32)), None);
        let malformed = web.get("/s/nope", None);
        for a in [&unknown, &malformed] {
            assert_eq!(a.status, 404);
            assert!(a.header("content-type").unwrap().starts_with("text/html"));
            assert!(a.text.contains("This link is not valid"), "{}", a.text);
        }
        assert_eq!(unknown.text, malformed.text);
        let before = snapshot(&mut c);
        let a = post_form(
            web,
            &format!("/s/{}", "ab".repeat(32)),
            &[("action", "stop")],
        );
        assert_eq!(a.status, 404);
        assert_eq!(snapshot(&mut c), before);
    });
}

/// A second world on a fresh SQLite database, for what the library call
/// alone does to it.
fn twin() -> (TestDb, World) {
    let db = TestDb::sqlite();
    let w = world(&mut db.conn());
    (db, w)
}

#[test]
fn preferences_change_and_reschedule_exactly_as_user_set_does() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let token = csrf(&page(web, &asha));
        let a = post_form(
            web,
            &format!("/s/{asha}"),
            &[
                ("csrf", &token),
                ("action", "prefs"),
                ("timezone", "America/New_York"),
                ("daily_hour", "7"),
                ("week_start", "sun"),
                ("locale", "en-US"),
            ],
        );
        assert_eq!(a.status, 303, "{}", a.text);
        assert_eq!(
            a.header("location").unwrap(),
            format!("/s/{asha}?done=prefs")
        );
        let t = page(web, &format!("{asha}?done=prefs"));
        assert!(t.contains("class=\"notice\""), "{t}");
        assert!(t.contains("America/New_York (EST)") && t.contains("12-hour clock"));
        // The same change through the library, on a twin.
        let (db2, _) = twin();
        let mut c2 = db2.conn();
        manage::update_user(
            &mut c2,
            "asha",
            &UserChanges {
                timezone: Some("America/New_York".into()),
                week_start: Some("sun".into()),
                daily_hour: Some(7),
                locale: Some("en-US".into()),
                quiet_hours: None,
            },
        )
        .unwrap();
        assert_eq!(schedule(&mut c), schedule(&mut c2));
        assert_eq!(
            digestd::parties::list_users(&mut c).unwrap(),
            digestd::parties::list_users(&mut c2).unwrap()
        );
        assert_ne!(schedule(&mut c), schedule(&mut twin().0.conn()));
    });
}

#[test]
fn pause_resume_end_and_stop_do_what_the_library_does() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let token = csrf(&page(web, &asha));
        let path = format!("/s/{asha}");
        let id = w.asha_daily.0.to_string();
        let go = |action: &str, extra: &[(&str, &str)]| {
            let mut f = vec![
                ("csrf", token.as_str()),
                ("action", action),
                ("subscription", &id),
            ];
            f.extend_from_slice(extra);
            post_form(web, &path, &f)
        };
        assert_eq!(go("pause", &[]).status, 303);
        assert!(paused(&mut c, w.asha_daily));
        assert!(page(web, &asha).contains("paused"));
        web.clock.set(at("2026-11-25T10:30:00Z"));
        assert_eq!(go("resume", &[]).status, 303);
        let (db2, w2) = twin();
        let mut c2 = db2.conn();
        let none = Retime::default();
        manage::change_subscription(&mut c2, at(NOW), w2.asha_daily, Some(true), &none).unwrap();
        let later = at("2026-11-25T10:30:00Z");
        manage::change_subscription(&mut c2, later, w2.asha_daily, Some(false), &none).unwrap();
        assert_eq!(schedule(&mut c), schedule(&mut c2));
        // Ending for good asks for the box to be ticked.
        let before = snapshot(&mut c);
        let a = go("end", &[]);
        assert_eq!(a.status, 400);
        assert!(a.text.contains("class=\"error\"") && a.text.contains("tick the box"));
        assert_eq!(snapshot(&mut c), before);
        assert_eq!(go("end", &[("confirm", "yes")]).status, 303);
        let left: Vec<_> = digestd::subscriptions::ids_of_party(&mut c, w.asha).unwrap();
        assert_eq!(left, vec![w.asha_weekly, w.asha_evil]);
        // Stop everything: each of asha's is paused, bo's is not.
        assert_eq!(go("stop", &[]).status, 303);
        assert!(paused(&mut c, w.asha_weekly) && paused(&mut c, w.asha_evil));
        assert!(!paused(&mut c, w.bo_daily));
    });
}

#[test]
fn a_missing_or_wrong_form_token_is_403_and_writes_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let (asha, bo) = (code(&mut c, w.asha), code(&mut c, w.bo));
        let bo_token = csrf(&page(web, &bo));
        let before = snapshot(&mut c);
        let id = w.asha_daily.0.to_string();
        for token in [
            None,
            Some(""),
            Some("0123456789abcdef0123456789abcdef"),
            Some(&*bo_token),
        ] {
            for action in ["pause", "stop", "prefs"] {
                let mut f = vec![
                    ("action", action),
                    ("subscription", &id),
                    ("daily_hour", "3"),
                ];
                if let Some(t) = token {
                    f.push(("csrf", t));
                }
                let a = post_form(web, &format!("/s/{asha}"), &f);
                assert_eq!(a.status, 403, "{token:?} {action}");
                assert!(a.text.contains("nothing was changed"), "{}", a.text);
            }
        }
        assert_eq!(snapshot(&mut c), before);
    });
}

#[test]
fn hostile_input_shows_the_page_again_with_400_and_writes_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let token = csrf(&page(web, &asha));
        let path = format!("/s/{asha}");
        let before = snapshot(&mut c);
        let long = "x".repeat(10_000);
        let bad: &[(&str, &str)] = &[
            ("timezone", "Mars/Olympus"),
            ("timezone", "Europe/Madrid\r\nX-Evil: 1"),
            ("timezone", &long),
            ("daily_hour", "25"),
            ("daily_hour", "-1"),
            ("daily_hour", "nine"),
            ("week_start", "someday"),
            ("locale", EVIL),
            ("locale", &long),
        ];
        for (field, value) in bad {
            let a = post_form(
                web,
                &path,
                &[("csrf", &token), ("action", "prefs"), (field, value)],
            );
            assert_eq!(a.status, 400, "{field}={value:.40}");
            assert!(a.text.contains("class=\"error\""), "{}", a.text);
            assert!(a.text.contains("Your digests, asha"));
            assert!(!a.text.contains(EVIL) && !a.text.contains("\r\nX-Evil"));
        }
        let a = post_form(web, &path, &[("csrf", &token), ("action", "explode")]);
        assert_eq!(a.status, 400);
        // Another person's subscription under my code: the bad-link page.
        let bo = w.bo_daily.0.to_string();
        for action in ["pause", "end"] {
            let f = [
                ("csrf", token.as_str()),
                ("action", action),
                ("subscription", &bo),
                ("confirm", "yes"),
            ];
            let a = post_form(web, &path, &f);
            assert_eq!(a.status, 404, "{action}");
        }
        assert_eq!(snapshot(&mut c), before);
    });
}
