//! The whole-digest page (`/d/{subscription}/{period}/{mac}`), through the
//! real server on each back end: the link a real digest carries opens the
//! digest with every item (past the `max_items` cap), in the recipient's
//! zone and clock; a group's one link opens for its members; and an
//! edited, unsigned, unknown or other-period link is the same 404 page as
//! a bad code, so the pages cannot be enumerated. The page writes nothing.

use crate::common;

use common::at;
use common::pages::{snapshot, world, NOW};
use common::web::{each_backend, Web};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::nt_requests;
use digestd::db::DbConn;
use digestd::digest::link::LinkKey;
use digestd::ids::SubscriptionId;

pub(crate) const BASE: &str = "http://localhost:8080";

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
    tick_linked(c, t, BASE);
}

/// [`tick`], the digests' links under `base`.
pub(crate) fn tick_linked(c: &mut DbConn, t: &str, base: &str) {
    let mut comp = linked_composer(base);
    digestd::schedule::tick::tick(c, at(t), &mut comp).unwrap();
}

/// The composer of [`tick_linked`]: digests capped at 3 items, their
/// links under `base`.
pub(crate) fn linked_composer(base: &str) -> digestd::digest::Composer {
    let cfg = DigestConfig {
        max_items: 3,
        base_url: base.into(),
        ..DigestConfig::default()
    };
    digestd::digest::Composer::new(&cfg, &EmailConfig::default()).unwrap()
}

/// The whole-digest path in subscription `id`'s posted digest text.
pub(crate) fn link_in_digest(c: &mut DbConn, id: SubscriptionId) -> String {
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
        let team = common::pages::team(&mut c, &w.cal, &["asha", "bo"], 6);
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

/// The items' own addresses: two items have one (with characters HTML
/// escapes), two have none.
const ITEM_URLS: [Option<&str>; 4] = [
    Some("https://wiki.example/p/1?a=1&b='2'"),
    None,
    Some("http://cal.example:8080/e/3"),
    None,
];

/// The addresses as stored (normalised).
fn stored_urls() -> std::collections::BTreeSet<String> {
    ITEM_URLS
        .iter()
        .flatten()
        .map(|u| digestd::validate::item_url(u).unwrap())
        .collect()
}

/// Every `href` of an HTML or XML document, unescaped.
fn hrefs(doc: &str) -> Vec<String> {
    doc.split("href=\"")
        .skip(1)
        .map(|rest| {
            let raw = &rest[..rest.find('"').unwrap()];
            raw.replace("&#38;", "&")
                .replace("&amp;", "&")
                .replace("&#39;", "'")
                .replace("&#34;", "\"")
                .replace("&quot;", "\"")
        })
        .collect()
}

/// Every http(s) address written out in a text.
fn text_links(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| w.starts_with("http://") || w.starts_with("https://"))
        .map(String::from)
        .collect()
}

/// Follows `link`: one of the server's own must answer 200, 302 or 303
/// (its page is returned, to follow its links in turn); any other must be
/// the address of one of the items, http or https, without credentials.
fn check_link(web: &Web, link: &str, token: Option<&str>) -> Option<String> {
    if let Some(path) = link.strip_prefix(&web.base) {
        let a = web.get(path, token);
        assert!(
            [200, 302, 303].contains(&a.status),
            "{link}: {} {}",
            a.status,
            a.text
        );
        return Some(a.text);
    }
    let u = url::Url::parse(link).unwrap_or_else(|e| panic!("{link}: {e}"));
    assert!(["http", "https"].contains(&u.scheme()), "{link}");
    assert!(u.username().is_empty() && u.password().is_none(), "{link}");
    assert!(stored_urls().contains(link), "{link} is no item's address");
    None
}

/// Both feeds of `cal`, paged (two entries a page): every link of every
/// page, the entries' and the pages' own, answers.
fn every_feed_link_answers(web: &Web, cal: &str) {
    let token = web.token("feeds", digestd::access::Scope::Read);
    for (kind, q) in [
        (
            "changed",
            "start=2026-11-22T00:00:00Z&end=2026-11-23T00:00:00Z",
        ),
        (
            "range",
            "start=2026-11-23T00:00:00Z&end=2026-11-30T00:00:00Z",
        ),
    ] {
        let mut todo = vec![format!("{}/atom/collection/{}/{kind}?{q}", web.base, cal)];
        let mut seen = std::collections::BTreeSet::new();
        let mut entry_links = 0;
        while let Some(feed) = todo.pop() {
            if !seen.insert(feed.clone()) {
                continue;
            }
            let xml = check_link(web, &feed, Some(&token)).unwrap();
            let f = feed_rs::parser::parse(xml.as_bytes()).unwrap();
            for e in &f.entries {
                for l in &e.links {
                    entry_links += 1;
                    assert!(check_link(web, &l.href, Some(&token)).is_none());
                }
            }
            todo.extend(f.links.iter().map(|l| l.href.clone()));
        }
        assert!(seen.len() > 2, "{kind}: paged, {seen:?}");
        assert!(entry_links >= 2, "{kind}: {entry_links}");
    }
}

#[test]
fn every_link_in_digests_feeds_and_pages_answers() {
    let run = |db| {
        let web = Web::start_linked_with(db, at(NOW), |cfg| cfg.http.max_feed_entries = 2);
        let mut c = web.db.conn();
        let w = world(&mut c);
        events(&mut c, &w.cal, 4);
        // The same items again, two of them with their address.
        for (i, url) in ITEM_URLS.iter().enumerate() {
            let when = "2026-11-22T11:00:00Z";
            let item = digestd::items::ItemInput {
                uuid: uuid::Uuid::from_u128(901 + i as u128).to_string(),
                collection: Some(w.cal.clone()),
                kind: "event".into(),
                title: format!("Standup {}", i + 1),
                start: Some("2026-11-27T09:00:00Z".into()),
                url: url.map(String::from),
                actor: "ops".into(),
                at: Some(when.into()),
                ..Default::default()
            };
            digestd::items::put_item(&mut c, at(when), &item).unwrap();
        }
        // asha's daily change digest (capped at 3: it links the whole
        // digest) and her weekly one of what is coming up.
        tick_linked(&mut c, "2026-11-23T08:00:00Z", &web.base);
        web.clock.set(at("2026-11-23T09:00:00Z"));
        let mut pages = Vec::new();
        let digests = common::digest::bodies(&mut c);
        assert!(digests.len() >= 2, "{}", digests.len());
        for b in &digests {
            let html = b.html.clone().unwrap_or_default();
            let mut links = text_links(&b.text);
            links.extend(hrefs(&html));
            links.extend(b.chat.iter().flat_map(|t| text_links(t)));
            links.extend(b.sms.iter().flat_map(|t| text_links(t)));
            for u in stored_urls() {
                let shown = b.text.contains(&u) || b.text.contains("and 1 more");
                assert!(shown, "{u} not in {}", b.text);
            }
            assert!(!b.text.contains("/items/"), "{}", b.text);
            for l in &links {
                pages.extend(check_link(&web, l, None));
            }
        }
        // The pages the digests link to (manage, unsubscribe, the whole
        // digest), and their own links.
        assert!(pages.len() >= 3, "{}", pages.len());
        let whole = pages.iter().find(|p| p.contains("All 4 items")).unwrap();
        for u in stored_urls() {
            let esc = u.replace('&', "&#38;").replace('\'', "&#39;");
            assert!(whole.contains(&format!("href=\"{esc}\"")), "{u}: {whole}");
        }
        for page in &pages {
            for l in hrefs(page) {
                let l = if l.starts_with('/') {
                    format!("{}{l}", web.base)
                } else {
                    l
                };
                check_link(&web, &l, None);
            }
        }
        every_feed_link_answers(&web, &w.cal);
    };
    run(common::TestDb::sqlite());
    if let Some(pg) = common::TestDb::postgres() {
        run(pg);
    }
}
