//! Sign-up with double opt-in in the browser: a visitor in Tokyo fills the
//! `/subscribe` form (the page's one hashed script preselects the
//! browser's zone), gets "check your mail"; the verification link comes
//! out of the real `.eml` the `dir` transport wrote after a queue run; its
//! GET shows a Confirm button and writes nothing; the press makes the user
//! and the subscription once; a second press (from a second tab still
//! showing the button) and a reload make nothing more; the next tick at
//! the chosen hour sends the new subscriber a digest.

use diesel::prelude::*;
use digestd::db::schema::{signups, subscriptions};
use digestd::db::DbConn;
use digestd::parties;

use super::common::at;
use super::common::browser::{Browser, Options};
use super::common::pages::snapshot;
use super::common::web::Web;
use super::{edit, in_browser, PostOffice};

const VISITOR: &str = "mika@example.jp";
const ZONE: &str = "Asia/Tokyo";

/// Sign-up rows, confirmed sign-up rows, subscriptions.
fn counts(c: &mut DbConn) -> (i64, i64, i64) {
    let all: i64 = signups::table.count().get_result(c).unwrap();
    let confirmed: i64 = signups::table
        .filter(signups::confirmed_at.is_not_null())
        .count()
        .get_result(c)
        .unwrap();
    let subs: i64 = subscriptions::table.count().get_result(c).unwrap();
    (all, confirmed, subs)
}

/// The users with `email`.
fn users_at(c: &mut DbConn, email: &str) -> Vec<parties::User> {
    parties::list_users(c)
        .unwrap()
        .into_iter()
        .filter(|u| u.email.as_deref() == Some(email))
        .collect()
}

/// The verification link of the one message a queue run wrote: to the
/// visitor, on the test's server.
fn verification_link(web: &Web, raw: &[u8]) -> String {
    let m = mail_parser::MessageParser::default()
        .parse(raw)
        .expect("a message");
    let to = m.to().and_then(|a| a.first()).and_then(|a| a.address());
    assert_eq!(to, Some(VISITOR));
    assert_eq!(m.subject(), Some("Confirm your digest subscription"));
    let text = m.body_text(0).expect("a text part").to_string();
    assert!(text.contains("Rota"), "{text}");
    assert!(!text.contains("Private"), "{text}");
    let start = format!("{}/subscribe/confirm/", web.base);
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no link to {start} in {text}"))
        .to_string()
}

/// The form lists the public collections only (not `private`), and its
/// script chose the browser's zone; the visitor fills it for a daily
/// digest of the Rota (`rota_uuid`) at 09:00.
fn fill_the_form(web: &Web, b: &Browser, rota_uuid: &str, private: &str) {
    b.open(&web.url("/subscribe"));
    assert_eq!(b.title(), "Subscribe · digestd");
    let t = b.text();
    assert!(t.contains("Rota") && !t.contains("Private"), "{t}");
    assert!(!b.source().contains(private));
    assert_eq!(
        b.value_of("#timezone"),
        ZONE,
        "the zone script ran under the CSP"
    );
    let rota = format!("input[name=collection][value='{rota_uuid}']");
    b.fill("#email", VISITOR);
    b.click(&rota);
    assert!(b.is_selected(&rota));
    b.choose("#frequency", "daily");
    b.choose("#hour", "9");
    b.shot("signup");
}

fn sign_up(web: &Web, b: &Browser) {
    let mut c = web.db.conn();
    let a = super::asha(&mut c);
    digestd::items::set_public(&mut c, &a.rota, true).unwrap();
    let private = digestd::items::create_collection(&mut c, at(super::NOW), "Private", None)
        .unwrap()
        .uuid;
    let mut po = PostOffice::new(web);

    fill_the_form(web, b, &a.rota, &private);
    let before = snapshot(&mut c);
    b.press("form button[type=submit]");
    assert_eq!(b.text_of("h1"), "Check your mail");
    b.shot("signup-sent");
    // One pending sign-up; no user, no subscription yet.
    assert_eq!(counts(&mut c), (1, 0, 1));
    assert!(users_at(&mut c, VISITOR).is_empty());

    // The queue delivers the one verification message.
    let mails = po.run_raw(&mut c, super::NOW);
    assert_eq!(mails.len(), 1, "one verification message");
    let link = verification_link(web, &mails[0]);

    // The link's GET: what will be confirmed and a button; nothing written.
    let requested = snapshot(&mut c);
    assert_ne!(requested, before, "the verification request is there");
    b.open(&link);
    let t = b.text();
    assert!(t.contains("Confirm your subscription"), "{t}");
    assert!(
        t.contains("Rota") && t.contains(&format!("Daily at 09:00 ({ZONE})")),
        "{t}"
    );
    b.shot("signup-confirm");
    assert_eq!(snapshot(&mut c), requested, "the GET wrote something");
    assert_eq!(counts(&mut c), (1, 0, 1));
    // A second tab on the same link, still showing its button.
    let first = b.new_tab();
    b.open(&link);
    assert_eq!(snapshot(&mut c), requested, "the GET wrote something");

    // The press: the user and the subscription, once.
    b.press("form button[type=submit]");
    assert_eq!(b.text_of("h1"), "Subscribed");
    b.shot("signup-done");
    let users = users_at(&mut c, VISITOR);
    assert_eq!(users.len(), 1, "{users:?}");
    let u = &users[0];
    assert_eq!(u.timezone, ZONE);
    let cps = parties::contact_points(&mut c, u.id).unwrap();
    assert!(cps.iter().all(|cp| cp.verified), "{cps:?}");
    let subs = digestd::subscriptions::list_for_party(&mut c, u.id).unwrap();
    assert_eq!(subs.len(), 1, "{subs:?}");
    assert_eq!(
        (subs[0].frequency.as_str(), subs[0].hour_of_day),
        ("daily", Some(9))
    );
    assert_eq!(counts(&mut c), (1, 1, 2));
    let done = snapshot(&mut c);
    // The page's manage link is the new subscriber's.
    b.press("a[href*='/s/']");
    let t = b.text();
    assert!(
        t.contains("Rota: changes") && t.contains("Daily at 9:00 AM"),
        "{t}"
    );
    assert!(t.contains(ZONE), "{t}");
    assert_eq!(snapshot(&mut c), done);

    // The first tab's button, pressed after: nothing more.
    b.close_tab(first);
    assert!(b.text().contains("Confirm your subscription"));
    b.press("form button[type=submit]");
    assert_eq!(b.text_of("h1"), "Confirmed already");
    assert_eq!(snapshot(&mut c), done, "a second press wrote something");
    assert_eq!(counts(&mut c), (1, 1, 2));
    // The link again: no button, nothing written.
    b.open(&link);
    assert_eq!(b.text_of("h1"), "Confirmed already");
    assert!(b.source().find("<form").is_none(), "no second button");
    assert_eq!(snapshot(&mut c), done, "a reload wrote something");

    // The next 09:00 in Tokyo (00:00Z) sends the new subscriber a digest.
    edit(&mut c, &a, 1, "2026-11-22T10:00:00Z");
    let digests: Vec<_> = po
        .run(&mut c, "2026-11-23T00:00:00Z")
        .into_iter()
        .filter(|m| m.to == VISITOR)
        .collect();
    assert_eq!(digests.len(), 1, "{digests:?}");
    assert!(digests[0].text.contains("Shift 1"), "{}", digests[0].text);
}

#[test]
fn sign_up_and_confirm_in_a_browser() {
    in_browser(
        Options {
            timezone: Some(ZONE),
            ..Options::default()
        },
        sign_up,
    );
}
