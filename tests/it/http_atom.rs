//! The Atom projections over real HTTP on both back ends, every feed read
//! back with a third-party parser (feed-rs): what the feeds hold, bad
//! requests, and who may read them. The validators are in
//! `http_atom_cache.rs`; the shared world in `common/atom.rs`.

use crate::common;
use crate::common::atom;

use atom::*;
use chrono::{DateTime, Utc};
use common::at;
use digestd::access::{self, Scope};

#[test]
fn changed_holds_each_items_net_change_over_the_window() {
    each(|w, wo| {
        let a = w.get(&path(&wo.cal, "changed", WINDOW), Some(&wo.read));
        let f = feed(&a);
        assert_eq!(title(&f.title), "Calendar & <Friends>");
        assert!(f.updated.is_some());
        let me = f
            .links
            .iter()
            .find(|l| l.rel.as_deref() == Some("self"))
            .unwrap();
        assert!(me.href.starts_with(&format!(
            "https://digest.example.org/atom/collection/{}/changed?start=2026-11-16T09",
            wo.cal.uuid
        )));
        // B was edited back: nothing. X is another collection's.
        let items: Vec<String> = f.entries.iter().map(|e| title(&e.title)).collect();
        assert_eq!(
            items,
            [
                "New <script>alert(1)</script> Ünïcødé ✓",
                "Brand new",
                "Line one  Line two"
            ]
        );
        assert!(!a.text.contains("<script>"), "escaped: {}", a.text);
        let e = &f.entries[0];
        assert_eq!(e.updated, Some(at("2026-11-16T09:20:00Z")));
        let who: Vec<&str> = e.authors.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(who, ["alice", "bob"]);
        // An entry links to its item's own address, or nowhere.
        let links: Vec<&str> = e.links.iter().map(|l| l.href.as_str()).collect();
        assert_eq!(links, [A_LINK]);
        assert_eq!(e.links[0].rel.as_deref(), Some("alternate"));
        assert!(f.entries[1].links.is_empty(), "C has no URL");
        assert!(!a.text.contains("/items/"), "{}", a.text);
        let body = e.content.as_ref().unwrap().body.clone().unwrap();
        assert!(body.contains("edited by alice and bob"), "{body}");
        // Collapsed over the window: the first old value to the last new one.
        assert!(body.contains("Old</span> → <span"), "{body}");
        assert!(!body.contains("Mid"), "{body}");
        assert!(body.contains("Ünïcødé ✓"), "{body}");
        // The parser unescapes; the document itself holds no markup from users.
        assert!(a
            .text
            .contains("New &lt;script&gt;alert(1)&lt;/script&gt; Ünïcødé ✓"));
        assert!(
            body.contains("2026-11-16 10:20 CET"),
            "owner's zone: {body}"
        );
        let created = f.entries[1].content.as_ref().unwrap().body.clone().unwrap();
        assert!(created.contains("created by bob"), "{created}");
        // An instant value is written in the feed's zone.
        assert!(created.contains("2026-11-25 00:00 CET"), "{created}");
        // CR survives as a reference, markup as text.
        assert!(a.text.contains("a&#13;\nb &amp; &lt;c&gt;"), "{}", a.text);
        // Ids: stable across requests, one per entry.
        let again = feed(&w.get(&path(&wo.cal, "changed", WINDOW), Some(&wo.read)));
        assert_eq!(f.id, again.id);
        let ids: Vec<&String> = f.entries.iter().map(|e| &e.id).collect();
        assert_eq!(ids, again.entries.iter().map(|e| &e.id).collect::<Vec<_>>());
        assert_eq!(
            ids.iter().collect::<std::collections::BTreeSet<_>>().len(),
            3
        );
        // tz sets the zone of the content; a collection without an owner is UTC.
        let tokyo = w.get(
            &path(&wo.cal, "changed", &format!("{WINDOW}&tz=Asia/Tokyo")),
            Some(&wo.read),
        );
        assert!(feed(&tokyo).entries[0]
            .content
            .as_ref()
            .unwrap()
            .body
            .as_ref()
            .unwrap()
            .contains("JST"));
        let o = feed(&w.get(&path(&wo.other, "changed", WINDOW), Some(&wo.read)));
        assert_eq!(o.entries.len(), 1);
        assert!(o.entries[0]
            .content
            .as_ref()
            .unwrap()
            .body
            .as_ref()
            .unwrap()
            .contains("UTC"));
    });
}

#[test]
fn range_expands_recurring_events_linked_to_their_series() {
    each(|w, wo| {
        put_with(
            w,
            &wo.cal,
            A,
            "Stand-up",
            "alice",
            "2026-11-16T12:00:00Z",
            |i| {
                i.start = Some("2026-11-17T08:00:00Z".into());
                i.rrule = Some("FREQ=DAILY;COUNT=5".into());
                i.tz = Some("Europe/Paris".into());
                i.url = Some("https://calendar.example/standup".into());
            },
        );
        put_with(
            w,
            &wo.cal,
            C,
            "Dentist",
            "bob",
            "2026-11-16T12:00:00Z",
            |i| {
                i.start = Some("2026-11-18T10:00:00Z".into());
                i.reminder = Some("2026-11-18T09:45:00Z".into());
            },
        );
        let q = "start=2026-11-17T00:00:00Z&end=2026-11-20T00:00:00Z&tz=UTC";
        let f = feed(&w.get(&path(&wo.cal, "range", q), Some(&wo.read)));
        assert_eq!(title(&f.title), "Calendar & <Friends>");
        let got: Vec<(String, Option<DateTime<Utc>>)> = f
            .entries
            .iter()
            .map(|e| (title(&e.title), e.published))
            .collect();
        assert_eq!(got.len(), 5, "{got:?}");
        let standups: Vec<_> = f
            .entries
            .iter()
            .filter(|e| title(&e.title) == "Stand-up")
            .collect();
        assert_eq!(standups.len(), 3);
        // Each instance links to the series' own address; no URL, no link.
        for e in &standups {
            let links: Vec<&str> = e.links.iter().map(|l| l.href.as_str()).collect();
            assert_eq!(links, ["https://calendar.example/standup"]);
        }
        let body = standups[1].content.as_ref().unwrap().body.clone().unwrap();
        assert!(body.contains("2026-11-18 08:00 UTC"), "{body}");
        let dentist: Vec<String> = f
            .entries
            .iter()
            .filter(|e| title(&e.title) == "Dentist")
            .map(|e| e.content.as_ref().unwrap().body.clone().unwrap())
            .collect();
        assert!(f
            .entries
            .iter()
            .filter(|e| title(&e.title) == "Dentist")
            .all(|e| e.links.is_empty()));
        assert!(
            dentist[0].contains("Reminder") && dentist[0].contains("09:45"),
            "{dentist:?}"
        );
        assert!(
            dentist[1].contains("Starts") && dentist[1].contains("10:00"),
            "{dentist:?}"
        );
        // Nothing in the range: a valid feed with no entries.
        let empty = feed(&w.get(&path(&wo.other, "range", q), Some(&wo.read)));
        assert_eq!(
            (title(&empty.title).as_str(), empty.entries.len()),
            ("Other", 0)
        );
    });
}

#[test]
fn bad_requests_are_400_json() {
    each(|w, wo| {
        for (q, says) in [
            ("end=2026-11-17T00:00:00Z", "start is required"),
            ("start=2026-11-16T09:00:00Z", "end is required"),
            ("start=yesterday&end=2026-11-17T00:00:00Z", "invalid start"),
            ("start=2026-11-16T09:00:00Z&end=2026-11-17", "invalid end"),
            (
                "start=2026-11-17T00:00:00Z&end=2026-11-16T00:00:00Z",
                "end must be after start",
            ),
            (
                "start=2026-11-16T00:00:00Z&end=2027-11-18T00:00:00Z",
                "longer than 366 days",
            ),
            (&format!("{WINDOW}&tz=Mars/Olympus"), "timezone"),
            (&format!("{WINDOW}&start=2026-11-16T09:00:00Z"), "twice"),
        ] {
            for kind in ["changed", "range"] {
                let a = w.get(&path(&wo.cal, kind, q), Some(&wo.read));
                assert_eq!(a.status, 400, "{q}: {}", a.text);
                assert!(a.error().contains(says), "{q}: {}", a.text);
            }
        }
    });
}

#[test]
fn tickets_and_tokens_decide_who_reads() {
    each(|w, wo| {
        let mut c = w.db.conn();
        let (_, cal_ticket) = access::add_ticket(&mut c, now(), wo.cal.id).unwrap();
        let (_, other_ticket) = access::add_ticket(&mut c, now(), wo.other.id).unwrap();
        let cal = path(&wo.cal, "changed", WINDOW);
        let nobody = "/atom/collection/00000000-0000-4000-8000-000000000999/changed";
        let nobody = format!("{nobody}?{WINDOW}");
        // No credentials: 401, whether or not the collection exists.
        assert_eq!(w.get(&cal, None).status, 401);
        assert_eq!(w.get(&nobody, None).status, 401);
        assert_eq!(w.get(&format!("{cal}&start=x"), None).status, 401);
        let a = w.get(&format!("{cal}&ticket=dgk_nope"), None);
        assert_eq!((a.status, a.error()), (401, "unknown read ticket".into()));
        // A ticket opens its collection only; it cannot probe others.
        assert_eq!(
            feed(&w.get(&format!("{cal}&ticket={cal_ticket}"), None))
                .entries
                .len(),
            3
        );
        let a = w.get(&format!("{cal}&ticket={other_ticket}"), None);
        assert_eq!(a.status, 403);
        assert!(a.error().contains("another collection"));
        assert_eq!(
            w.get(&format!("{nobody}&ticket={cal_ticket}"), None).status,
            403
        );
        // Tokens: read and admin read; ingest does not.
        feed(&w.get(&cal, Some(&w.token("root", Scope::Admin))));
        let a = w.get(&cal, Some(&w.token("wiki", Scope::Ingest)));
        assert_eq!(a.status, 403, "{}", a.text);
        assert!(a.error().contains("needs read"));
        assert_eq!(w.get(&cal, Some("dgt_unknown")).status, 401);
        let a = w.get(&nobody, Some(&wo.read));
        assert_eq!(a.status, 404);
        assert!(a.error().contains("no collection"));
        assert_eq!(
            w.get(
                &format!("/atom/collection/x/range?{WINDOW}"),
                Some(&wo.read)
            )
            .status,
            400
        );
    });
}
