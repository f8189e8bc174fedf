//! A group's digest reaches each member with that member's own links, and
//! a member can stop it for themselves only, on each back end through the
//! real server, the real tick and queue and the `dir` transport: every
//! member's email has their own manage link (`/s/{code}`, which answers),
//! their own unsubscribe link and the RFC 8058 headers; one member's
//! one-click opts them out (no queue row for them, the others and the
//! group keep it), leaving and rejoining the group keeps the opt-out, a
//! member through a nested group opts out on the manage page, both undo
//! it; links edited to reach someone else are refused and write nothing.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::at;
use common::pages::{code, csrf, post_form, post_raw, snapshot, CREATED, NOW};
use common::web::{each_backend, Web};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::{nt_queue, nt_requests, subscription_optouts};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::{PartyId, SubscriptionId};
use digestd::parties::{self, NewUser};
use digestd::subscriptions::{SubscribeRequest, Subscribed};
use digestd::{items, manage};

const ONE_CLICK: &str = "List-Unsubscribe=One-Click";
const FORM: &str = "application/x-www-form-urlencoded";
const BASE: &str = "http://localhost:8080";

struct Team {
    /// ana and ben are in team; cai is in crew, which is in team; zed is
    /// in no group.
    ana: PartyId,
    ben: PartyId,
    cai: PartyId,
    zed: PartyId,
    cal: String,
    /// team's Calendar digest, daily at 09:00 UTC.
    sub: SubscriptionId,
}

fn user(c: &mut DbConn, name: &str) -> PartyId {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "UTC".into(),
            email: Some(format!("{name}@example.com")),
            ..Default::default()
        },
    )
    .unwrap()
}

fn team(c: &mut DbConn) -> Team {
    let t0 = at("2026-11-01T00:00:00Z");
    let (ana, ben, cai, zed) = (
        user(c, "ana"),
        user(c, "ben"),
        user(c, "cai"),
        user(c, "zed"),
    );
    user(c, "ops");
    parties::create_group(c, t0, "team", None).unwrap();
    parties::create_group(c, t0, "crew", None).unwrap();
    for (g, m) in [
        ("team", "ana"),
        ("team", "ben"),
        ("team", "crew"),
        ("crew", "cai"),
    ] {
        parties::add_member(c, g, m).unwrap();
    }
    let cal = items::create_collection(c, t0, "Calendar", None)
        .unwrap()
        .uuid;
    let req = SubscribeRequest {
        party: "team".into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        collection: Some(cal.clone()),
        hour: Some(9),
        ..Default::default()
    };
    let sub = match manage::subscribe(c, at(CREATED), &req).unwrap() {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    };
    Team {
        ana,
        ben,
        cai,
        zed,
        cal,
        sub,
    }
}

/// ops edits an item of the Calendar at `when`.
fn edit(c: &mut DbConn, t: &Team, n: u128, when: &str) {
    common::pages::ops_puts(c, &t.cal, n, &format!("Standup {n}"), when);
}

/// One email as a member reads it.
#[derive(Debug)]
struct Mail {
    text: String,
    html: String,
    unsubscribe: Option<String>,
    one_click: bool,
}

/// The tick at `t` and a queue pass into a fresh `dir` outbox: the emails
/// sent, by recipient address.
fn tick_and_send(c: &mut DbConn, t: &str) -> BTreeMap<String, Mail> {
    let mut comp =
        digestd::digest::Composer::new(&DigestConfig::default(), &EmailConfig::default()).unwrap();
    digestd::schedule::tick::tick(c, at(t), &mut comp).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let email = EmailConfig {
        dir: dir.path().display().to_string(),
        ..EmailConfig::default()
    };
    let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
    queue::run_pass(c, &mut ob, at(t)).unwrap();
    read_mails(dir.path())
}

fn read_mails(dir: &Path) -> BTreeMap<String, Mail> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "eml") {
            continue;
        }
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
        let unsubscribe = m.header_raw("List-Unsubscribe").map(|v| {
            let v: String = v.split_whitespace().collect();
            v.trim_start_matches('<').trim_end_matches('>').to_string()
        });
        let one_click = m.header_raw("List-Unsubscribe-Post").map(str::trim) == Some(ONE_CLICK);
        let mail = Mail {
            text: m.body_text(0).unwrap_or_default().to_string(),
            html: m.body_html(0).unwrap_or_default().to_string(),
            unsubscribe,
            one_click,
        };
        assert!(out.insert(to, mail).is_none(), "one email each");
    }
    out
}

/// The recipients of the queue rows of `sub`'s requests, by request.
fn queued(c: &mut DbConn, sub: SubscriptionId) -> Vec<(i64, Vec<i64>)> {
    let rows: Vec<(i64, i64)> = nt_queue::table
        .inner_join(nt_requests::table)
        .filter(nt_requests::subscription_id.eq(sub.0))
        .select((nt_queue::request_id, nt_queue::party_to))
        .order((nt_queue::request_id.asc(), nt_queue::party_to.asc()))
        .load(c)
        .unwrap();
    let mut out: Vec<(i64, Vec<i64>)> = Vec::new();
    for (r, p) in rows {
        match out.last_mut() {
            Some((last, ps)) if *last == r => ps.push(p),
            _ => out.push((r, vec![p])),
        }
    }
    out
}

fn optouts(c: &mut DbConn) -> Vec<(i64, i64)> {
    subscription_optouts::table
        .select((
            subscription_optouts::subscription_id,
            subscription_optouts::party_id,
        ))
        .order((
            subscription_optouts::subscription_id.asc(),
            subscription_optouts::party_id.asc(),
        ))
        .load(c)
        .unwrap()
}

/// Everything a page may write, the opt-outs too.
fn written(c: &mut DbConn) -> String {
    format!("{}\n{:?}", snapshot(c), optouts(c))
}

fn addr(name: &str) -> String {
    format!("{name}@example.com")
}

/// Every email's links are its recipient's own.
fn assert_own_links(web: &Web, c: &mut DbConn, t: &Team, mails: &BTreeMap<String, Mail>) {
    for (name, who) in [("ana", t.ana), ("ben", t.ben), ("cai", t.cai)] {
        let Some(m) = mails.get(&addr(name)) else {
            continue;
        };
        let code = code(c, who);
        let manage = format!("{BASE}/s/{code}");
        let unsub = format!("{manage}/unsubscribe/{}", t.sub);
        assert!(
            m.text
                .contains(&format!("Manage your subscriptions: {manage}")),
            "{name}: {}",
            m.text
        );
        assert!(m.text.contains(&unsub), "{name}: {}", m.text);
        assert!(
            m.html.contains(&format!("href=\"{manage}\"")),
            "{name}: {}",
            m.html
        );
        assert!(
            m.html.contains(&format!("href=\"{unsub}\"")),
            "{name}: {}",
            m.html
        );
        for body in [&m.text, &m.html] {
            assert!(
                !body.contains("/groups/") && !body.contains('\u{1}'),
                "{name}: {body}"
            );
        }
        assert_eq!(m.unsubscribe.as_deref(), Some(unsub.as_str()), "{name}");
        assert!(m.one_click, "{name}: List-Unsubscribe-Post");
        let page = web.get(manage.strip_prefix(BASE).unwrap(), None);
        assert_eq!(page.status, 200, "{name}: {}", page.text);
        assert!(page.text.contains("through group team"), "{name}");
    }
}

#[test]
fn each_member_gets_their_own_links_and_stops_the_group_digest_for_themselves_only() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let t = team(&mut c);
        edit(&mut c, &t, 1, "2026-11-22T10:00:00Z");
        let mails = tick_and_send(&mut c, "2026-11-23T09:00:00Z");
        let to: Vec<&str> = mails.keys().map(String::as_str).collect();
        assert_eq!(to, [addr("ana"), addr("ben"), addr("cai")], "{mails:?}");
        assert_own_links(web, &mut c, &t, &mails);

        // ben one-clicks, exactly as a mail provider does.
        let ben_link = mails[&addr("ben")].unsubscribe.clone().unwrap();
        let path = ben_link.strip_prefix(BASE).unwrap().to_string();
        let before = written(&mut c);
        assert_eq!(web.get(&path, None).status, 200, "a GET writes nothing");
        assert_eq!(written(&mut c), before);
        let a = post_raw(web, &path, FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(optouts(&mut c), [(t.sub.0, t.ben.0)]);
        let once = written(&mut c);
        assert_eq!(post_raw(web, &path, FORM, ONE_CLICK.into()).status, 200);
        assert_eq!(written(&mut c), once, "a second one-click writes nothing");
        let s = digestd::subscriptions::get(&mut c, t.sub).unwrap();
        assert!(!s.paused, "the group keeps its subscription");

        // cai, inside team through crew, stops it on the manage page.
        let cai = code(&mut c, t.cai);
        let page = web.get(&format!("/s/{cai}"), None);
        assert_eq!(page.status, 200);
        assert!(page.text.contains("Stop sending me this"), "{}", page.text);
        assert!(page.text.contains("through group team"));
        let token = csrf(&page.text);
        let sub = t.sub.to_string();
        let a = post_form(
            web,
            &format!("/s/{cai}"),
            &[
                ("csrf", &token),
                ("action", "optout"),
                ("subscription", &sub),
            ],
        );
        assert_eq!(a.status, 303, "{}", a.text);
        let page = web.get(&format!("/s/{cai}"), None);
        assert!(page.text.contains("stopped for you") && page.text.contains("Undo"));

        // ben leaves and rejoins: still opted out.
        parties::remove_member(&mut c, "team", "ben").unwrap();
        parties::add_member(&mut c, "team", "ben").unwrap();

        edit(&mut c, &t, 2, "2026-11-23T10:00:00Z");
        let mails = tick_and_send(&mut c, "2026-11-24T09:00:00Z");
        let to: Vec<&str> = mails.keys().map(String::as_str).collect();
        assert_eq!(to, [addr("ana")], "{mails:?}");
        assert_own_links(web, &mut c, &t, &mails);
        let q = queued(&mut c, t.sub);
        assert_eq!(q.len(), 2, "{q:?}");
        assert_eq!(q[1].1, [t.ana.0], "no queue row for who opted out");
        let status: String = nt_requests::table
            .filter(nt_requests::request_id.eq(q[1].0))
            .select(nt_requests::status)
            .first(&mut c)
            .unwrap();
        assert_eq!(status, "sent");

        // ben undoes on the unsubscribe page, cai on the manage page.
        let token = csrf(&web.get(&path, None).text);
        let a = post_form(web, &format!("{path}/undo"), &[("csrf", &token)]);
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(a.text.contains("Subscribed again"));
        let token = csrf(&web.get(&format!("/s/{cai}"), None).text);
        let a = post_form(
            web,
            &format!("/s/{cai}"),
            &[
                ("csrf", &token),
                ("action", "optin"),
                ("subscription", &sub),
            ],
        );
        assert_eq!(a.status, 303, "{}", a.text);
        assert!(optouts(&mut c).is_empty());

        edit(&mut c, &t, 3, "2026-11-24T10:00:00Z");
        let mails = tick_and_send(&mut c, "2026-11-25T09:00:00Z");
        let to: Vec<&str> = mails.keys().map(String::as_str).collect();
        assert_eq!(to, [addr("ana"), addr("ben"), addr("cai")], "{mails:?}");
        assert_own_links(web, &mut c, &t, &mails);
    });
}

#[test]
fn a_digest_every_member_opted_out_of_is_sent_to_no_one_and_finishes_sent() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let t = team(&mut c);
        for who in [t.ana, t.ben, t.cai] {
            let code = code(&mut c, who);
            let path = format!("/s/{code}/unsubscribe/{}", t.sub);
            assert_eq!(post_raw(web, &path, FORM, ONE_CLICK.into()).status, 200);
        }
        edit(&mut c, &t, 1, "2026-11-22T10:00:00Z");
        let mails = tick_and_send(&mut c, "2026-11-23T09:00:00Z");
        assert!(mails.is_empty(), "{mails:?}");
        let reqs: Vec<(String, bool)> = nt_requests::table
            .filter(nt_requests::subscription_id.eq(t.sub.0))
            .select((nt_requests::status, nt_requests::fulfill_date.is_not_null()))
            .load(&mut c)
            .unwrap();
        assert_eq!(reqs, [("sent".to_string(), true)]);
        assert!(queued(&mut c, t.sub).is_empty());
    });
}

#[test]
fn links_edited_to_reach_someone_else_are_refused_and_write_nothing() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let t = team(&mut c);
        let zed = code(&mut c, t.zed);
        let ana = code(&mut c, t.ana);
        let before = written(&mut c);
        let sub = t.sub.to_string();
        for path in [
            // zed is in no group that has it.
            format!("/s/{zed}/unsubscribe/{sub}"),
            format!("/s/{ana}/unsubscribe/abc"),
            format!("/s/{ana}/unsubscribe/{sub}x"),
            format!("/s/{ana}/unsubscribe/-{sub}"),
            format!("/s/{}/unsubscribe/{sub}", &ana[..63]),
            format!("/s/{ana}0/unsubscribe/{sub}"),
        ] {
            assert_eq!(web.get(&path, None).status, 404, "{path}");
            let a = post_raw(web, &path, FORM, ONE_CLICK.into());
            assert_eq!(a.status, 404, "{path}");
            assert_eq!(
                post_form(web, &format!("{path}/undo"), &[]).status,
                404,
                "{path}"
            );
        }
        // The manage page's forms, for a subscription that does not reach
        // zed, or one that is no number.
        let token = csrf(&web.get(&format!("/s/{zed}"), None).text);
        for s in [sub.as_str(), "x", "-1", ""] {
            for action in ["optout", "optin"] {
                let a = post_form(
                    web,
                    &format!("/s/{zed}"),
                    &[("csrf", &token), ("action", action), ("subscription", s)],
                );
                assert_eq!(a.status, 404, "{action} {s}");
            }
        }
        assert_eq!(written(&mut c), before);
        // zed's page lists no group subscription.
        assert!(!web
            .get(&format!("/s/{zed}"), None)
            .text
            .contains("Through your groups"));
    });
}

#[test]
fn a_batched_email_has_one_link_that_stops_both_the_own_and_the_group_digest() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let t = team(&mut c);
        // ana's own Calendar digest at the same 09:00: one email holds both.
        let req = SubscribeRequest {
            party: "ana".into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            collection: Some(t.cal.clone()),
            hour: Some(9),
            ..Default::default()
        };
        let own = manage::subscribe(&mut c, at(CREATED), &req).unwrap().id();
        edit(&mut c, &t, 1, "2026-11-22T10:00:00Z");
        let mails = tick_and_send(&mut c, "2026-11-23T09:00:00Z");
        let m = &mails[&addr("ana")];
        let ana = code(&mut c, t.ana);
        let ids = [own.0.min(t.sub.0), own.0.max(t.sub.0)];
        let link = format!("{BASE}/s/{ana}/unsubscribe/{},{}", ids[0], ids[1]);
        let swapped = format!("{BASE}/s/{ana}/unsubscribe/{},{}", ids[1], ids[0]);
        let got = m.unsubscribe.clone().unwrap();
        assert!(got == link || got == swapped, "{got}");
        assert!(m.one_click && !m.text.contains('\u{1}'), "{m:?}");
        let a = post_raw(web, got.strip_prefix(BASE).unwrap(), FORM, ONE_CLICK.into());
        assert_eq!(a.status, 200, "{}", a.text);
        assert!(digestd::subscriptions::get(&mut c, own).unwrap().paused);
        assert!(!digestd::subscriptions::get(&mut c, t.sub).unwrap().paused);
        assert_eq!(optouts(&mut c), [(t.sub.0, t.ana.0)]);
    });
}
