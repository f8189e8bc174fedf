//! Paged Atom feeds (RFC 5005) over real HTTP on both back ends: a window
//! holding more entries than `[http] max_feed_entries` comes in pages,
//! each document at most the cap, and following `next` to the end gives
//! every entry once, in the order the unpaged reads (`collapse` over the
//! whole window, `items_in_range`) give; a cursor that is garbage, edited,
//! or another feed's is 400 JSON.

use crate::common;
use crate::common::atom;

use atom::*;
use common::at;
use digestd::digest::compose::{self, When};
use digestd::items::Collection;
use digestd::modlog::{self, Action, Change, NewModification};

const CAP: usize = 7;
const WIN: &str = "start=2026-11-10T00:00:00Z&end=2026-11-20T00:00:00Z";
const TAG: &str = "tag:digestd,2026:";

fn item(i: u128) -> String {
    uuid::Uuid::from_u128(0x5000 + i).to_string()
}

/// 40 items changed in the window, several sharing their first instant
/// (ties are broken by UUID), one created and deleted again (no entry),
/// one changed twice; 30 items starting or reminding, ties among them
/// too, and a daily series.
fn fill(w: &common::web::Web, cal: &Collection) {
    let mut c = w.db.conn();
    let mut mods = Vec::new();
    for i in 0..40u128 {
        let minute = (i / 3) as u32; // three items a minute
        let when = at(&format!("2026-11-12T10:{minute:02}:00Z"));
        let m = |action: Action, at, changes| NewModification {
            tx_id: format!("p{i}"),
            occurred_at: at,
            collection: cal.id,
            item_uuid: item(i),
            actor: None,
            action,
            item_kind: "page".into(),
            item_title: format!("Page {i}"),
            item_url: (i % 2 == 0).then(|| format!("https://wiki.example/p/{i}")),
            changes,
        };
        let edit = |old: &str, new: &str| {
            vec![Change {
                attribute: "body".into(),
                old: Some(old.into()),
                new: Some(new.into()),
            }]
        };
        mods.push(m(Action::Edited, when, edit("a", "b")));
        if i == 5 {
            mods.push(m(
                Action::Edited,
                when + chrono::Duration::hours(30),
                edit("b", "c"),
            ));
        }
        if i == 8 {
            mods.pop();
            mods.push(m(Action::Created, when, vec![]));
            mods.push(m(
                Action::Deleted,
                when + chrono::Duration::hours(1),
                vec![],
            ));
        }
    }
    modlog::record(&mut c, &mods).unwrap();
    for i in 0..30u128 {
        put_with(
            w,
            cal,
            &item(100 + i),
            &format!("Event {i}"),
            "alice",
            "2026-11-16T11:00:00Z",
            |e| {
                let day = 11 + (i / 4) as u32;
                e.start = Some(format!("2026-11-{day}T09:00:00Z"));
                if i % 3 == 0 {
                    e.reminder = Some(format!("2026-11-{day}T09:00:00Z"));
                }
                if i == 29 {
                    e.rrule = Some("FREQ=DAILY;COUNT=12".into());
                    e.start = Some("2026-11-08T09:00:00Z".into());
                }
            },
        );
    }
}

/// Every page of `first`, following `next`; checks each page's size and
/// links, and returns every entry's id in order.
fn follow(w: &common::web::Web, token: &str, first: &str) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    let mut next = Some(first.to_string());
    let mut pages = 0;
    while let Some(p) = next.take() {
        pages += 1;
        assert!(pages < 100, "no end to the pages");
        let a = w.get(&p, Some(token));
        let f = feed(&a);
        assert!(f.entries.len() <= CAP, "{} entries", f.entries.len());
        let link = |rel: &str| {
            f.links
                .iter()
                .find(|l| l.rel.as_deref() == Some(rel))
                .map(|l| l.href.clone())
        };
        // Every link of the document is the server's own, and answers.
        let me = link("self").unwrap();
        let me = me.strip_prefix(BASE.trim_end_matches('/')).unwrap();
        assert_eq!(me.split('?').next(), p.split('?').next());
        if let Some(n) = link("next") {
            // An item created and deleted in the window is read for its
            // page and shows nothing: a page may hold fewer than the cap.
            assert!(f.entries.len() >= CAP - 1, "{}", f.entries.len());
            assert!(link("first").is_some());
            next = Some(n.strip_prefix(BASE.trim_end_matches('/')).unwrap().into());
        }
        ids.extend(f.entries.iter().map(|e| e.id.clone()));
    }
    (ids, pages)
}

fn rfc(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

#[test]
fn following_next_gives_every_entry_once_in_order() {
    each_capped(|w, wo| {
        let (start, end) = (at("2026-11-10T00:00:00Z"), at("2026-11-20T00:00:00Z"));
        let mut c = w.db.conn();
        // What the unpaged reads give, in the feed's order: by first
        // change, then UUID (the page key; a digest breaks ties by the
        // order recorded instead).
        let mods = modlog::find_in_window(&mut c, Some(&[wo.cal.id]), start, end).unwrap();
        let mut all = compose::collapse(&mods, None).unwrap();
        all.sort_by(|a, b| (a.first_at, &a.item_uuid).cmp(&(b.first_at, &b.item_uuid)));
        let want: Vec<String> = all
            .iter()
            .map(|ch| {
                format!(
                    "{TAG}{}/changed/{}/{}/{}",
                    wo.cal.uuid,
                    ch.item_uuid,
                    rfc(start),
                    rfc(end)
                )
            })
            .collect();
        assert!(want.len() > 5 * CAP, "{}", want.len());
        let (got, pages) = follow(w, &wo.read, &path(&wo.cal, "changed", WIN));
        assert_eq!(got, want);
        assert!(pages >= want.len().div_ceil(CAP), "{pages}");
        let upcoming = compose::items_in_range(&mut c, Some(&[wo.cal.id]), start, end).unwrap();
        let want: Vec<String> = upcoming
            .iter()
            .map(|u| {
                let what = if u.what == When::Starts {
                    "starts"
                } else {
                    "reminder"
                };
                format!("{TAG}{}/{}/{what}/{}", wo.cal.uuid, u.item_uuid, rfc(u.at))
            })
            .collect();
        assert!(want.len() > 5 * CAP, "{}", want.len());
        let (got, _) = follow(w, &wo.read, &path(&wo.cal, "range", WIN));
        assert_eq!(got, want);
        // A window that fits is one page without next or first.
        let f = feed(&w.get(&path(&wo.other, "changed", WINDOW), Some(&wo.read)));
        assert_eq!(f.entries.len(), 1);
        assert!(f.links.iter().all(|l| l.rel.as_deref() == Some("self")));
    });
}

#[test]
fn a_page_keeps_its_place_when_entries_are_recorded_before_it() {
    each_capped(|w, wo| {
        let first = path(&wo.cal, "changed", WIN);
        let a = feed(&w.get(&first, Some(&wo.read)));
        let next = next_link(&a);
        let next = next.strip_prefix(BASE.trim_end_matches('/')).unwrap();
        let before = feed(&w.get(next, Some(&wo.read)));
        // A new item whose first change sorts before every entry.
        let mut c = w.db.conn();
        modlog::record(
            &mut c,
            &[NewModification {
                tx_id: "early".into(),
                occurred_at: at("2026-11-10T00:00:01Z"),
                collection: wo.cal.id,
                item_uuid: item(999),
                actor: None,
                action: Action::Now,
                item_kind: "page".into(),
                item_title: "Early".into(),
                item_url: None,
                changes: vec![],
            }],
        )
        .unwrap();
        let after = feed(&w.get(next, Some(&wo.read)));
        let ids = |f: &feed_rs::model::Feed| -> Vec<String> {
            f.entries.iter().map(|e| e.id.clone()).collect()
        };
        assert_eq!(ids(&before), ids(&after));
        assert!(!before.entries.is_empty());
    });
}

/// A feed's `next` link.
fn next_link(f: &feed_rs::model::Feed) -> String {
    f.links
        .iter()
        .find(|l| l.rel.as_deref() == Some("next"))
        .expect("a next link")
        .href
        .clone()
}

fn each_capped(f: impl Fn(&common::web::Web, &World)) {
    let run = |db| {
        let w = common::web::Web::start_with(db, now(), |cfg| {
            cfg.digest.base_url = BASE.into();
            cfg.http.max_feed_entries = CAP;
        });
        let wo = world(&w);
        fill(&w, &wo.cal);
        f(&w, &wo);
    };
    run(common::TestDb::sqlite());
    if let Some(pg) = common::TestDb::postgres() {
        run(pg);
    }
}

#[test]
fn hostile_cursors_are_400_json() {
    each_capped(|w, wo| {
        let next_of = |kind: &str, coll: &Collection| {
            let href = next_link(&feed(&w.get(&path(coll, kind, WIN), Some(&wo.read))));
            let q = href.split_once('?').unwrap().1;
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "after")
                .unwrap()
                .1
                .into_owned()
        };
        let changed = next_of("changed", &wo.cal);
        let range = next_of("range", &wo.cal);
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        // The good ones work.
        for (kind, cur) in [("changed", &changed), ("range", &range)] {
            let p = path(&wo.cal, kind, &format!("{WIN}&after={}", enc(cur)));
            feed(&w.get(&p, Some(&wo.read)));
        }
        let tampered = {
            let mut parts: Vec<String> = changed.split('~').map(String::from).collect();
            parts[1] = (parts[1].parse::<i64>().unwrap() + 60).to_string();
            parts.join("~")
        };
        let other_item = changed.replace(&changed.split('~').nth(3).unwrap().to_string(), &item(0));
        let hostile: Vec<(&str, String)> = vec![
            ("changed", "garbage".into()),
            ("changed", String::new()),
            ("changed", tampered),
            ("changed", other_item),
            ("changed", format!("{changed}x")),
            ("changed", changed[..changed.len() - 2].to_string()),
            ("changed", range.clone()),
            ("range", changed.clone()),
            ("changed", format!("{changed}\r\nX: y")),
            ("changed", "a".repeat(5000)),
            ("changed", "c~1~0~x~0123".into()),
        ];
        for (kind, cur) in &hostile {
            let p = path(&wo.cal, kind, &format!("{WIN}&after={}", enc(cur)));
            let a = w.get(&p, Some(&wo.read));
            assert_eq!(a.status, 400, "{cur:?}: {}", a.text);
            assert!(a.error().contains("after"), "{}", a.text);
            assert!(!a.error().contains('\n'));
        }
        // Not UTF-8, raw; and a cursor of another window or collection.
        let p = path(&wo.cal, "changed", &format!("{WIN}&after=%FF%FE"));
        assert_eq!(w.get(&p, Some(&wo.read)).status, 400);
        let other_window = "start=2026-11-10T00:00:00Z&end=2026-11-21T00:00:00Z";
        let p = path(
            &wo.cal,
            "changed",
            &format!("{other_window}&after={}", enc(&changed)),
        );
        assert_eq!(w.get(&p, Some(&wo.read)).status, 400);
        let p = path(
            &wo.other,
            "changed",
            &format!("{WIN}&after={}", enc(&changed)),
        );
        assert_eq!(w.get(&p, Some(&wo.read)).status, 400);
        // Given twice.
        let p = path(
            &wo.cal,
            "changed",
            &format!("{WIN}&after={0}&after={0}", enc(&changed)),
        );
        assert_eq!(w.get(&p, Some(&wo.read)).status, 400);
        // Without credentials a cursor says nothing: 401 first.
        assert_eq!(w.get(&p, None).status, 401);
    });
}
