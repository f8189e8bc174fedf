//! The Atom projections over real HTTP on both back ends, every feed read
//! back with a third-party parser (feed-rs): what the feeds hold, who may
//! read them, bad requests, and the validators (ETag, Last-Modified, 304
//! answered without the log).

mod common;

use chrono::{DateTime, Utc};
use common::at;
use common::web::{each_backend, Answer, Web};
use common::TestDb;
use diesel::connection::SimpleConnection;
use digestd::access::{self, Scope};
use digestd::items::{self, Collection, ItemInput};
use digestd::modlog::{self, Action, Change, NewModification};
use digestd::parties::{self, NewUser};

const BASE: &str = "https://digest.example.org/";
const WINDOW: &str = "start=2026-11-16T09:00:00Z&end=2026-11-17T00:00:00Z";

fn now() -> DateTime<Utc> {
    at("2026-11-16T12:00:00Z")
}

struct World {
    cal: Collection,
    other: Collection,
    read: String,
}

fn user(c: &mut digestd::db::DbConn, name: &str, tz: &str) -> digestd::ids::PartyId {
    let new = NewUser {
        name: name.into(),
        timezone: tz.into(),
        email: Some(format!("{name}@example.com")),
        ..Default::default()
    };
    parties::create_user(c, at("2026-11-01T00:00:00Z"), &new).unwrap()
}

fn put(w: &Web, coll: &Collection, uuid: &str, title: &str, actor: &str, when: &str) {
    put_with(w, coll, uuid, title, actor, when, |_| {});
}

fn put_with(
    w: &Web,
    coll: &Collection,
    uuid: &str,
    title: &str,
    actor: &str,
    when: &str,
    f: impl FnOnce(&mut ItemInput),
) {
    let mut i = ItemInput {
        uuid: uuid.into(),
        collection: Some(coll.uuid.clone()),
        kind: "event".into(),
        title: title.into(),
        start: Some("2026-11-24T23:00:00Z".into()),
        actor: actor.into(),
        at: Some(when.into()),
        ..Default::default()
    };
    f(&mut i);
    items::put_item(&mut w.db.conn(), now(), &i).unwrap();
}

const A: &str = "00000000-0000-4000-8000-00000000000a";
const B: &str = "00000000-0000-4000-8000-00000000000b";
const C: &str = "00000000-0000-4000-8000-00000000000c";
const D: &str = "00000000-0000-4000-8000-00000000000d";
const X: &str = "00000000-0000-4000-8000-0000000000ee";

/// Calendar (owned by alice, Paris): A edited twice in the window (title
/// Old → Mid → a hostile new title), B edited and edited back, C created,
/// D written to the log directly with CR/LF; X in Other.
fn world(w: &Web) -> World {
    let mut c = w.db.conn();
    let alice = user(&mut c, "alice", "Europe/Paris");
    user(&mut c, "bob", "America/New_York");
    let t0 = at("2026-11-01T00:00:00Z");
    let cal = items::create_collection(&mut c, t0, "Calendar & <Friends>", Some(alice)).unwrap();
    let other = items::create_collection(&mut c, t0, "Other", None).unwrap();
    put(w, &cal, A, "Old", "alice", "2026-11-16T08:00:00Z");
    put(w, &cal, A, "Mid", "alice", "2026-11-16T09:10:00Z");
    put(
        w,
        &cal,
        A,
        "New <script>alert(1)</script> Ünïcødé ✓",
        "bob",
        "2026-11-16T09:20:00Z",
    );
    put(w, &cal, B, "Stays", "alice", "2026-11-15T08:00:00Z");
    put(w, &cal, B, "Moved", "alice", "2026-11-16T10:00:00Z");
    put(w, &cal, B, "Stays", "bob", "2026-11-16T10:05:00Z");
    put(w, &cal, C, "Brand new", "bob", "2026-11-16T11:00:00Z");
    modlog::record(
        &mut c,
        &[NewModification {
            tx_id: "raw".into(),
            occurred_at: at("2026-11-16T11:30:00Z"),
            collection: cal.id,
            item_uuid: D.into(),
            actor: Some(alice),
            action: Action::Edited,
            item_kind: "note".into(),
            item_title: "Line one\r\nLine two".into(),
            changes: vec![Change {
                attribute: "body".into(),
                old: Some("a\r\nb & <c>".into()),
                new: Some("d".into()),
            }],
        }],
    )
    .unwrap();
    put(w, &other, X, "Elsewhere", "bob", "2026-11-16T10:00:00Z");
    World {
        cal,
        other,
        read: w.token("widget", Scope::Read),
    }
}

fn web(db: TestDb) -> Web {
    Web::start_with(db, now(), |cfg| cfg.digest.base_url = BASE.into())
}

fn each(f: impl Fn(&Web, &World)) {
    let run = |w: Web| {
        let world = world(&w);
        f(&w, &world);
    };
    run(web(TestDb::sqlite()));
    if let Some(pg) = TestDb::postgres() {
        run(web(pg));
    }
}

fn feed(a: &Answer) -> feed_rs::model::Feed {
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.header("content-type").as_deref(),
        Some("application/atom+xml; charset=utf-8")
    );
    feed_rs::parser::parse(a.text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {}", a.text))
}

fn title(t: &Option<feed_rs::model::Text>) -> String {
    t.as_ref().unwrap().content.clone()
}

fn path(coll: &Collection, kind: &str, query: &str) -> String {
    format!("/atom/collection/{}/{kind}?{query}", coll.uuid)
}

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
        assert_eq!(
            e.links[0].href,
            format!("https://digest.example.org/items/{A}")
        );
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
fn range_expands_recurring_events_with_a_link_to_their_master() {
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
        for e in &standups {
            let master = e
                .links
                .iter()
                .find(|l| l.rel.as_deref() == Some("related"))
                .unwrap();
            assert_eq!(master.href, format!("https://digest.example.org/items/{A}"));
        }
        let body = standups[1].content.as_ref().unwrap().body.clone().unwrap();
        assert!(body.contains("2026-11-18 08:00 UTC"), "{body}");
        let dentist: Vec<String> = f
            .entries
            .iter()
            .filter(|e| title(&e.title) == "Dentist")
            .map(|e| e.content.as_ref().unwrap().body.clone().unwrap())
            .collect();
        assert!(
            dentist[0].contains("Reminder") && dentist[0].contains("09:45"),
            "{dentist:?}"
        );
        assert!(
            dentist[1].contains("Starts") && dentist[1].contains("10:00"),
            "{dentist:?}"
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

fn conditional(w: &Web, p: &str, token: &str, name: &str, value: &str) -> Answer {
    w.send(|c| c.get(w.url(p)).bearer_auth(token).header(name, value))
}

#[test]
fn validators_answer_304_until_the_collections_log_moves() {
    each(|w, wo| {
        let p = path(&wo.cal, "changed", WINDOW);
        let a = w.get(&p, Some(&wo.read));
        let etag = a.header("etag").expect("an ETag");
        assert!(
            etag.starts_with('"') && !etag.starts_with("W/"),
            "strong: {etag}"
        );
        let modified = a.header("last-modified").expect("a Last-Modified");
        assert!(modified.ends_with(" GMT"), "{modified}");
        let same = conditional(w, &p, &wo.read, "if-none-match", &etag);
        assert_eq!((same.status, same.text.as_str()), (304, ""));
        assert_eq!(same.header("etag").as_deref(), Some(etag.as_str()));
        let same = conditional(w, &p, &wo.read, "if-modified-since", &modified);
        assert_eq!((same.status, same.text.as_str()), (304, ""));
        // The query is part of the tag; so is the projection.
        let tz = w.get(&format!("{p}&tz=UTC"), Some(&wo.read));
        assert_ne!(tz.header("etag"), Some(etag.clone()));
        let range = w.get(&path(&wo.cal, "range", WINDOW), Some(&wo.read));
        assert_ne!(range.header("etag"), Some(etag.clone()));
        // Still 304 without a token? No: credentials come first.
        let anon = w.send(|c| c.get(w.url(&p)).header("if-none-match", &etag));
        assert_eq!(anon.status, 401);
        // Another collection's change leaves this tag alone.
        put(
            w,
            &wo.other,
            X,
            "Elsewhere again",
            "bob",
            "2026-11-16T13:00:00Z",
        );
        assert_eq!(
            conditional(w, &p, &wo.read, "if-none-match", &etag).status,
            304
        );
        // A change to this collection: the old tag gets the new feed.
        put(
            w,
            &wo.cal,
            B,
            "Finally moved",
            "bob",
            "2026-11-16T13:00:00Z",
        );
        let fresh = conditional(w, &p, &wo.read, "if-none-match", &etag);
        let f = feed(&fresh);
        assert!(f.entries.iter().any(|e| title(&e.title) == "Finally moved"));
        assert_ne!(fresh.header("etag"), Some(etag.clone()));
        // A purge also moves it (the window's log changed).
        let etag = fresh.header("etag").unwrap();
        modlog::purge(&mut w.db.conn(), at("2026-11-16T09:15:00Z")).unwrap();
        assert_eq!(
            conditional(w, &p, &wo.read, "if-none-match", &etag).status,
            200
        );
    });
}

#[test]
fn the_304_path_never_reads_the_log() {
    each(|w, wo| {
        let p = path(&wo.cal, "changed", WINDOW);
        let etag = w.get(&p, Some(&wo.read)).header("etag").unwrap();
        // Without the log's table, only a request that needs the log fails.
        w.db.conn()
            .batch_execute("ALTER TABLE modifications RENAME TO modifications_away")
            .unwrap();
        let same = conditional(w, &p, &wo.read, "if-none-match", &etag);
        assert_eq!(same.status, 304, "{}", same.text);
        let full = w.get(&p, Some(&wo.read));
        assert_eq!((full.status, full.error()), (500, "internal error".into()));
        w.db.conn()
            .batch_execute("ALTER TABLE modifications_away RENAME TO modifications")
            .unwrap();
        assert_eq!(w.get(&p, Some(&wo.read)).status, 200);
    });
}

#[test]
fn the_openapi_document_lists_the_feeds() {
    each_backend(now(), |w| {
        let doc = w.get("/api/v1/openapi.json", None).json();
        for kind in ["changed", "range"] {
            assert!(doc["paths"][format!("/atom/collection/{{uuid}}/{kind}")]["get"].is_object());
        }
    });
}
