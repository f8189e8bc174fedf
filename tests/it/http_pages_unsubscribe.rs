//! The unsubscribe link every email digest carries, through the real
//! server on each back end: `GET` shows and writes nothing (link scanners
//! fetch it), the form `POST` stops and offers undo, the RFC 8058
//! one-click `POST` works with no token and no cookie and is idempotent,
//! and a real digest written by the `dir` transport carries the headers
//! whose URL, POSTed exactly as a mail provider does, stops it — one URL
//! for every digest of a batched email.

use crate::common;

use common::pages::{
    code, csrf, paused, post_form, post_raw, schedule, snapshot, world, CREATED, NOW,
};
use common::web::each_backend;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::nt_requests;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::SubscriptionId;
use digestd::subscriptions::SubscribeRequest;
use digestd::{manage, remove};

const ONE_CLICK: &str = "List-Unsubscribe=One-Click";
const FORM: &str = "application/x-www-form-urlencoded";

#[test]
fn get_shows_what_stops_and_writes_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let before = snapshot(&mut c);
        let a = web.get(&format!("/s/{asha}/unsubscribe/{}", w.asha_daily), None);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.header("cache-control").as_deref(), Some("no-store"));
        assert!(a.text.contains("Unsubscribe?") && a.text.contains("<strong>Calendar</strong>"));
        assert!(a.text.contains("Daily at 09:00") && a.text.contains("name=\"csrf\""));
        assert!(!a.text.contains("Weekly"), "only the linked subscription");
        // A link of two shows both.
        let two = format!("/s/{asha}/unsubscribe/{},{}", w.asha_daily, w.asha_weekly);
        let a = web.get(&two, None);
        assert_eq!(a.status, 200);
        assert!(a.text.contains("Weekly on Monday at 08:00"));
        // Someone else's subscription, bad ids, an unknown code: 404.
        let unknown = "cd".repeat(32);
        for path in [
            format!("/s/{asha}/unsubscribe/{}", w.bo_daily),
            format!("/s/{asha}/unsubscribe/{},{}", w.asha_daily, w.bo_daily),
            format!("/s/{asha}/unsubscribe/abc"),
            format!("/s/{asha}/unsubscribe/0"),
            format!("/s/{unknown}/unsubscribe/{}", w.asha_daily),
        ] {
            let a = web.get(&path, None);
            assert_eq!(a.status, 404, "{path}");
            assert!(a.text.contains("This link is not valid"));
        }
        assert_eq!(snapshot(&mut c), before);
    });
}

#[test]
fn the_button_stops_it_and_undo_brings_it_back_as_resume_does() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}/unsubscribe/{}", w.asha_daily);
        let token = csrf(&web.get(&path, None).text);
        // No token, a wrong one: 403, nothing written.
        let before = snapshot(&mut c);
        for f in [vec![], vec![("csrf", "0".repeat(32))]] {
            let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
            assert_eq!(post_form(web, &path, &f).status, 403);
            assert_eq!(post_form(web, &format!("{path}/undo"), &f).status, 403);
        }
        assert_eq!(snapshot(&mut c), before);
        let a = post_form(web, &path, &[("csrf", &token)]);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("Unsubscribed") && a.text.contains(&format!("{path}/undo")));
        assert!(paused(&mut c, w.asha_daily) && !paused(&mut c, w.asha_weekly));
        web.clock.set(at("2026-11-24T12:00:00Z"));
        let a = post_form(web, &format!("{path}/undo"), &[("csrf", &token)]);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("Subscribed again"));
        assert!(!paused(&mut c, w.asha_daily));
        // The library, on a twin: unsubscribe, then resume at the same instant.
        let db2 = TestDb::sqlite();
        let mut c2 = db2.conn();
        let w2 = world(&mut c2);
        remove::unsubscribe(&mut c2, at(NOW), &[w2.asha_daily], remove::Via::Page).unwrap();
        manage::resume(&mut c2, w2.asha_daily, at("2026-11-24T12:00:00Z")).unwrap();
        assert_eq!(schedule(&mut c), schedule(&mut c2));
    });
}

#[test]
fn one_click_needs_no_token_answers_200_twice_and_refuses_other_bodies() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let asha = code(&mut c, w.asha);
        let path = format!("/s/{asha}/unsubscribe/{}", w.asha_daily);
        let before = snapshot(&mut c);
        for (ct, body) in [
            (FORM, "List-Unsubscribe=Yes"),
            (FORM, "List-Unsubscribe=One-Click&csrf=x"),
            ("application/json", ONE_CLICK),
            ("text/plain", ONE_CLICK),
        ] {
            let a = post_raw(web, &path, ct, body.into());
            assert_eq!(a.status, 400, "{ct} {body}");
            assert!(a.text.contains("Nothing was changed"));
        }
        // Another person's subscription under my code.
        let theirs = format!("/s/{asha}/unsubscribe/{}", w.bo_daily);
        assert_eq!(post_raw(web, &theirs, FORM, ONE_CLICK.into()).status, 404);
        assert_eq!(snapshot(&mut c), before);
        let a = post_raw(web, &path, FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("You are unsubscribed"));
        assert!(paused(&mut c, w.asha_daily));
        let once = snapshot(&mut c);
        let a = post_raw(web, &path, FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200);
        assert_eq!(snapshot(&mut c), once, "a second one-click writes nothing");
        // The multipart form of the same body.
        let weekly = format!("/s/{asha}/unsubscribe/{}", w.asha_weekly);
        let body = "--b0und\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--b0und--\r\n";
        let a = post_raw(
            web,
            &weekly,
            "multipart/form-data; boundary=b0und",
            body.into(),
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(paused(&mut c, w.asha_weekly));
        assert!(!paused(&mut c, w.bo_daily));
    });
}

/// The `List-Unsubscribe` URL of each `.eml` in `dir`, by recipient.
fn unsubscribe_headers(dir: &std::path::Path) -> Vec<(String, Option<String>, bool)> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    paths.sort();
    for p in paths {
        let raw = std::fs::read(&p).unwrap();
        let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
        let to = m
            .to()
            .unwrap()
            .first()
            .unwrap()
            .address()
            .unwrap()
            .to_string();
        let url = m.header_raw("List-Unsubscribe").map(|v| {
            let v: String = v.split_whitespace().collect();
            v.trim_start_matches('<').trim_end_matches('>').to_string()
        });
        let post = m.header_raw("List-Unsubscribe-Post").map(str::trim) == Some(ONE_CLICK);
        out.push((to, url, post));
    }
    out
}

fn statuses(c: &mut digestd::db::DbConn) -> Vec<(Option<i64>, String)> {
    nt_requests::table
        .select((nt_requests::subscription_id, nt_requests::status))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap()
}

/// A second daily digest for asha at her 09:00 (so both go in one email),
/// and ops, who edits the calendar.
fn a_second_daily_and_ops(c: &mut digestd::db::DbConn) -> SubscriptionId {
    let all = match manage::subscribe(
        c,
        at(CREATED),
        &SubscribeRequest {
            party: "asha".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            hour: Some(9),
            ..Default::default()
        },
    )
    .unwrap()
    {
        digestd::subscriptions::Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    };
    let t0 = at("2026-11-01T00:00:00Z");
    let ops = digestd::parties::NewUser {
        name: "ops".into(),
        timezone: "UTC".into(),
        ..Default::default()
    };
    digestd::parties::create_user(c, t0, &ops).unwrap();
    all
}

/// ops changes standup `n` of the calendar `cal` at `when`.
fn edit(c: &mut digestd::db::DbConn, cal: &str, n: u128, when: &str) {
    common::pages::ops_puts(c, cal, n, &format!("Standup {n}"), when);
}

#[test]
fn a_real_digest_carries_one_click_headers_whose_url_stops_it() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let all = a_second_daily_and_ops(&mut c);
        edit(&mut c, &w.cal, 1, "2026-11-22T10:00:00Z");
        let dir = tempfile::tempdir().unwrap();
        let email = EmailConfig {
            dir: dir.path().display().to_string(),
            ..EmailConfig::default()
        };
        let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
        let mut comp = digestd::digest::Composer::new(
            &digestd::config::DigestConfig::default(),
            &EmailConfig::default(),
        )
        .unwrap();
        // bo's 07:00 New York is 12:00Z; asha's 09:00 Madrid is 08:00Z.
        for t in ["2026-11-22T12:00:00Z", "2026-11-23T08:00:00Z"] {
            digestd::schedule::tick::tick(&mut c, at(t), &mut comp).unwrap();
            queue::run_pass(&mut c, &mut ob, at(t)).unwrap();
        }
        let got = unsubscribe_headers(dir.path());
        // asha's two digests from ops in one email (her weekly one, from
        // digestd itself, in another), bo's one digest alone.
        let asha_mail: Vec<_> = got
            .iter()
            .filter(|g| g.0 == "asha@example.com" && g.1.as_ref().is_some_and(|u| u.contains(',')))
            .collect();
        let bo_mail: Vec<_> = got.iter().filter(|g| g.0 == "bo@example.org").collect();
        assert_eq!((asha_mail.len(), bo_mail.len()), (1, 1), "{got:?}");
        assert!(got.iter().all(|g| g.1.is_some() && g.2), "{got:?}");
        let base = "http://localhost:8080";
        let (asha, bo) = (code(&mut c, w.asha), code(&mut c, w.bo));
        let url = asha_mail[0].1.clone().expect("List-Unsubscribe");
        assert!(asha_mail[0].2, "List-Unsubscribe-Post");
        let ids: Vec<&str> = url
            .strip_prefix(&format!("{base}/s/{asha}/unsubscribe/"))
            .unwrap_or_else(|| panic!("{url}"))
            .split(',')
            .collect();
        assert!(
            ids.contains(&&*w.asha_daily.to_string()) && ids.contains(&&*all.to_string()),
            "{url}"
        );
        assert_eq!(
            bo_mail[0].1.as_deref(),
            Some(&*format!("{base}/s/{bo}/unsubscribe/{}", w.bo_daily))
        );
        // The next day's digests are posted but not sent yet; a GET of the
        // link leaves them pending, the one-click POST cancels them.
        edit(&mut c, &w.cal, 2, "2026-11-23T09:00:00Z");
        digestd::schedule::tick::tick(&mut c, at("2026-11-24T08:00:00Z"), &mut comp).unwrap();
        let pending = |c: &mut digestd::db::DbConn| {
            statuses(c)
                .into_iter()
                .filter(|(s, st)| *s != Some(w.bo_daily.0) && (st == "pending" || st == "sending"))
                .count()
        };
        assert!(pending(&mut c) > 0);
        let path = url.strip_prefix(base).unwrap();
        let before = snapshot(&mut c);
        assert_eq!(web.get(path, None).status, 200);
        assert_eq!(snapshot(&mut c), before);
        let a = post_raw(web, path, FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200, "{}", a.text);
        for id in ids {
            let id = SubscriptionId(id.parse().unwrap());
            assert!(paused(&mut c, id), "{id}");
        }
        assert!(!paused(&mut c, w.bo_daily));
        assert_eq!(pending(&mut c), 0, "{:?}", statuses(&mut c));
        let b = bo_mail[0]
            .1
            .as_deref()
            .unwrap()
            .strip_prefix(base)
            .unwrap()
            .to_string();
        assert_eq!(post_raw(web, &b, FORM, ONE_CLICK.into()).status, 200);
        assert!(paused(&mut c, w.bo_daily));
    });
}

/// "Send me a new link" on the manage page: a new code, mailed to the
/// person; the old link opens nothing any more, except that its
/// unsubscribe link (in mail sent before) still stops digests by one-click
/// — and only that way.
#[test]
fn a_new_link_ends_the_old_one_but_for_one_click_unsubscribe() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let old = code(&mut c, w.asha);
        let page = web.get(&format!("/s/{old}"), None);
        assert!(page.text.contains("Send me a new link"), "{}", page.text);
        let token = csrf(&page.text);
        // Without the form token: 403, nothing changed.
        let a = post_form(web, &format!("/s/{old}"), &[("action", "newlink")]);
        assert_eq!(a.status, 403);
        assert_eq!(code(&mut c, w.asha), old);
        let a = post_form(
            web,
            &format!("/s/{old}"),
            &[("csrf", &token), ("action", "newlink")],
        );
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("A new link is on its way"), "{}", a.text);
        let new = code(&mut c, w.asha);
        assert_ne!(new, old);
        assert!(!a.text.contains(&new), "the new link goes by mail only");
        // The mail holds the new link and goes to asha's address.
        let dir = tempfile::tempdir().unwrap();
        let email = EmailConfig {
            dir: dir.path().display().to_string(),
            ..EmailConfig::default()
        };
        queue::run_pass(
            &mut c,
            &mut Delivery::new(&email, crate::common::rt()).unwrap(),
            at(NOW),
        )
        .unwrap();
        let mails = common::pages::mails_in(dir.path());
        assert_eq!(mails.len(), 1);
        let m = mail_parser::MessageParser::default()
            .parse(&mails[0])
            .unwrap();
        let body = m.body_text(0).unwrap();
        assert!(body.contains(&format!("/s/{new}")), "{body}");
        let to = m.to().and_then(|a| a.first()).and_then(|a| a.address());
        assert_eq!(to, Some("asha@example.com"));
        // The old code: the manage page and its forms are the bad link.
        let before = snapshot(&mut c);
        assert_eq!(web.get(&format!("/s/{old}"), None).status, 404);
        let a = post_form(
            web,
            &format!("/s/{old}"),
            &[("csrf", &token), ("action", "stop")],
        );
        assert_eq!(a.status, 404);
        let unsub = format!("/s/{old}/unsubscribe/{}", w.asha_daily);
        let a = post_form(web, &unsub, &[("csrf", &token)]);
        assert_eq!(a.status, 404, "the form POST is not one-click");
        let a = post_form(web, &format!("{unsub}/undo"), &[("csrf", &token)]);
        assert_eq!(a.status, 404);
        // Its GET shows one button that sends the one-click body, and
        // nothing of what or whose.
        let g = web.get(&unsub, None);
        assert_eq!(g.status, 200, "{}", g.text);
        assert!(g
            .text
            .contains("name=\"List-Unsubscribe\" value=\"One-Click\""));
        assert!(!g.text.contains("Calendar") && !g.text.contains("csrf"));
        assert!(!g.text.contains(&format!("/s/{old}\"")), "no manage link");
        assert_eq!(snapshot(&mut c), before);
        // A malformed one-click body is still refused.
        assert_eq!(
            post_raw(web, &unsub, FORM, "List-Unsubscribe=Yes".into()).status,
            400
        );
        assert!(!paused(&mut c, w.asha_daily));
        // The one-click POST stops it.
        let a = post_raw(web, &unsub, FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(paused(&mut c, w.asha_daily));
        assert!(!paused(&mut c, w.asha_weekly));
        // An old link cannot be edited into another person's.
        let bo_sub = format!("/s/{old}/unsubscribe/{}", w.bo_daily);
        assert_eq!(post_raw(web, &bo_sub, FORM, ONE_CLICK.into()).status, 404);
        assert!(!paused(&mut c, w.bo_daily));
        // The new code opens everything.
        assert_eq!(web.get(&format!("/s/{new}"), None).status, 200);
        let g = web.get(&format!("/s/{new}/unsubscribe/{}", w.asha_weekly), None);
        assert!(g.text.contains("name=\"csrf\""));
    });
}

/// Someone with no email address gets no new link: refused, nothing
/// changed (the old link would end and the new one reach no one).
#[test]
fn no_new_link_without_an_email_address() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        world(&mut c);
        let id = digestd::parties::create_user(
            &mut c,
            at(NOW),
            &digestd::parties::NewUser {
                name: "cy".into(),
                timezone: "UTC".into(),
                phone: Some("+34600111333".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let old = code(&mut c, id);
        let token = csrf(&web.get(&format!("/s/{old}"), None).text);
        let before = snapshot(&mut c);
        let a = post_form(
            web,
            &format!("/s/{old}"),
            &[("csrf", &token), ("action", "newlink")],
        );
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(a.text.contains("no email address"), "{}", a.text);
        assert_eq!(code(&mut c, id), old);
        assert_eq!(snapshot(&mut c), before);
    });
}
