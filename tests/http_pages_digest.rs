//! The whole-digest page (`/d/{subscription}/{period}/{mac}`), through the
//! real server on each back end: the link a real digest carries opens the
//! digest with every item (past the `max_items` cap), in the recipient's
//! zone and clock; a group's one link opens for its members; and an
//! edited, unsigned, unknown or other-period link is the same 404 page as
//! a bad code, so the pages cannot be enumerated. The page writes nothing.

mod common;

use common::at;
use common::pages::{snapshot, world, NOW};
use common::web::{each_backend, Web};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::nt_requests;
use digestd::db::DbConn;
use digestd::digest::link::LinkKey;
use digestd::ids::SubscriptionId;
use digestd::subscriptions::SubscribeRequest;

const BASE: &str = "http://localhost:8080";

/// `n` new events in collection `cal`, edited by ops on the 22nd.
fn events(c: &mut DbConn, cal: &str, n: u128) {
    let ops = digestd::parties::NewUser {
        name: "ops".into(),
        timezone: "UTC".into(),
        ..Default::default()
    };
    digestd::parties::create_user(c, at("2026-11-01T00:00:00Z"), &ops).unwrap();
    for i in 1..=n {
        let when = "2026-11-22T10:00:00Z";
        let item = digestd::items::ItemInput {
            uuid: uuid::Uuid::from_u128(900 + i).to_string(),
            collection: Some(cal.into()),
            kind: "event".into(),
            title: format!("Standup {i}"),
            start: Some("2026-11-27T09:00:00Z".into()),
            actor: "ops".into(),
            at: Some(when.into()),
            ..Default::default()
        };
        digestd::items::put_item(c, at(when), &item).unwrap();
    }
}

/// Ticks at `t` with digests capped at 3 items.
fn tick(c: &mut DbConn, t: &str) {
    let cfg = DigestConfig {
        max_items: 3,
        ..DigestConfig::default()
    };
    let mut comp = digestd::digest::Composer::new(&cfg, &EmailConfig::default()).unwrap();
    digestd::schedule::tick::tick(c, at(t), &mut comp).unwrap();
}

/// The whole-digest path in subscription `id`'s posted digest text.
fn link_in_digest(c: &mut DbConn, id: SubscriptionId) -> String {
    let request: i64 = nt_requests::table
        .filter(nt_requests::subscription_id.eq(id.0))
        .select(nt_requests::request_id)
        .first(c)
        .unwrap();
    // As its recipient reads it: a shared rendering filled with its links.
    let text = common::digest::bodies(c)
        .into_iter()
        .find(|b| b.request_id == request)
        .unwrap()
        .text;
    let start = text
        .find(&format!("{BASE}/d/"))
        .unwrap_or_else(|| panic!("no link in {text}"));
    let url: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    url.strip_prefix(BASE).unwrap().to_string()
}

fn bad_link_page(web: &Web) -> String {
    let a = web.get(&format!("/s/{}", "cd".repeat(32)), None);
    assert_eq!(a.status, 404);
    a.text
}

#[test]
fn the_link_a_digest_carries_shows_every_item() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        events(&mut c, &w.cal, 5);
        // asha's 09:00 Madrid is 08:00Z.
        tick(&mut c, "2026-11-23T08:00:00Z");
        web.clock.set(at("2026-11-23T09:00:00Z"));
        let path = link_in_digest(&mut c, w.asha_daily);
        let key = LinkKey::load(&mut c).unwrap();
        assert_eq!(
            format!("{BASE}{path}"),
            key.url(BASE, w.asha_daily, "2026-11-23"),
            "the digest carries the signed link"
        );
        let before = snapshot(&mut c);
        let a = web.get(&path, None);
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.header("cache-control").as_deref(), Some("no-store"));
        for i in 1..=5 {
            assert!(
                a.text.contains(&format!("<strong>Standup {i}</strong>")),
                "{i}: {}",
                a.text
            );
        }
        assert!(a.text.contains("All 5 items"), "{}", a.text);
        assert!(a.text.contains("5 changes in Calendar"), "{}", a.text);
        assert!(a.text.contains("Europe/Madrid"), "asha's zone: {}", a.text);
        // Madrid, 24-hour: the events start at 10:00 local on Friday.
        assert!(a.text.contains("10:00"), "{}", a.text);
        assert!(
            !a.text.contains("AM") && !a.text.contains("PM"),
            "{}",
            a.text
        );
        // The subscriber code is not handed out.
        let code = common::pages::code(&mut c, w.asha);
        assert!(!a.text.contains(&code));
        assert_eq!(snapshot(&mut c), before, "the page writes nothing");
    });
}

#[test]
fn edited_unsigned_and_unknown_links_are_the_bad_link_page() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        events(&mut c, &w.cal, 4);
        tick(&mut c, "2026-11-23T08:00:00Z");
        web.clock.set(at("2026-11-23T09:00:00Z"));
        let path = link_in_digest(&mut c, w.asha_daily);
        assert_eq!(web.get(&path, None).status, 200);
        let key = LinkKey::load(&mut c).unwrap();
        let mac = key.mac(w.asha_daily, "2026-11-23");
        let mut flipped = mac.clone();
        let last = if mac.ends_with('0') { "1" } else { "0" };
        flipped.replace_range(mac.len() - 1.., last);
        let (a, b) = (w.asha_daily, w.bo_daily);
        let signed_never_ran = key.url("", a, "2026-10-01");
        let refused = [
            // The same MAC on another subscription, another period.
            format!("/d/{b}/2026-11-23/{mac}"),
            format!("/d/{a}/2026-11-24/{mac}"),
            format!("/d/{a}/2026-11-23/{flipped}"),
            format!("/d/{a}/2026-11-23/{}", mac.to_uppercase()),
            format!("/d/{a}/2026-11-23/{}", &mac[..20]),
            // The old unsigned link, by every id: no enumeration.
            format!("/d/{a}/2026-11-23"),
            format!("/d/{b}/2026-11-23"),
            "/d/999/2026-11-23".to_string(),
            // Signed, but a period the subscription never had.
            signed_never_ran,
            // Signed, for a subscription that does not exist.
            key.url("", SubscriptionId(999), "2026-11-23"),
            format!("/d/0/2026-11-23/{mac}"),
            format!("/d/abc/2026-11-23/{mac}"),
            format!("/d/{a}/%3Cscript%3E/{mac}"),
        ];
        let page = bad_link_page(web);
        for p in refused {
            let r = web.get(&p, None);
            assert_eq!(r.status, 404, "{p}");
            assert_eq!(r.text, page, "{p}: the same page as a bad code");
        }
    });
}

#[test]
fn a_groups_digest_opens_for_its_members() {
    each_backend(at(NOW), |web| {
        let mut c = web.db.conn();
        let w = world(&mut c);
        let t0 = at("2026-11-01T00:00:00Z");
        digestd::parties::create_group(&mut c, t0, "team", None).unwrap();
        digestd::parties::add_member(&mut c, "team", "asha").unwrap();
        digestd::parties::add_member(&mut c, "team", "bo").unwrap();
        let team = match digestd::manage::subscribe(
            &mut c,
            at("2026-11-22T00:00:00Z"),
            &SubscribeRequest {
                party: "team".into(),
                frequency: "daily".into(),
                kind: "modification".into(),
                collection: Some(w.cal.clone()),
                hour: Some(6),
                ..Default::default()
            },
        )
        .unwrap()
        {
            digestd::subscriptions::Subscribed::Created(id) => id,
            other => panic!("{other:?}"),
        };
        events(&mut c, &w.cal, 4);
        // A group's digest is in UTC: 06:00Z.
        tick(&mut c, "2026-11-23T06:00:00Z");
        let expanded: bool = nt_requests::table
            .filter(nt_requests::subscription_id.eq(team.0))
            .select(nt_requests::expand_group)
            .first(&mut c)
            .unwrap();
        assert!(expanded, "one digest, expanded to each member");
        web.clock.set(at("2026-11-23T07:00:00Z"));
        let path = link_in_digest(&mut c, team);
        let a = web.get(&path, None);
        assert_eq!(a.status, 200, "{}", a.text);
        for i in 1..=4 {
            assert!(
                a.text.contains(&format!("<strong>Standup {i}</strong>")),
                "{i}"
            );
        }
        assert!(a.text.contains("UTC"), "{}", a.text);
        // Its MAC does not open a member's own subscription.
        let mac = path.rsplit('/').next().unwrap();
        let a = web.get(&format!("/d/{}/2026-11-23/{mac}", w.asha_daily), None);
        assert_eq!(a.status, 404);
    });
}
