//! The world the Atom feed tests share (`http_atom*`, `http_feed_cache`):
//! two users, a collection owned by one of them with items
//! changed inside and around a window, another collection, a read token;
//! a server with a known `[digest] base_url`; feed-rs to read answers back.

use chrono::{DateTime, Utc};
use digestd::access::Scope;
use digestd::items::{self, Collection, ItemInput};
use digestd::modlog::{self, Action, Change, NewModification};
use digestd::parties::{self, NewUser};

use crate::common::web::{Answer, Web};
use crate::common::{at, TestDb};

pub const BASE: &str = "https://digest.example.org/";
pub const WINDOW: &str = "start=2026-11-16T09:00:00Z&end=2026-11-17T00:00:00Z";

pub fn now() -> DateTime<Utc> {
    at("2026-11-16T12:00:00Z")
}

pub struct World {
    pub cal: Collection,
    pub other: Collection,
    pub read: String,
}

pub fn user(c: &mut digestd::db::DbConn, name: &str, tz: &str) -> digestd::ids::PartyId {
    let new = NewUser {
        name: name.into(),
        timezone: tz.into(),
        email: Some(format!("{name}@example.com")),
        ..Default::default()
    };
    parties::create_user(c, at("2026-11-01T00:00:00Z"), &new).unwrap()
}

pub fn put(w: &Web, coll: &Collection, uuid: &str, title: &str, actor: &str, when: &str) {
    put_with(w, coll, uuid, title, actor, when, |_| {});
}

pub fn put_with(
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

pub const A: &str = "00000000-0000-4000-8000-00000000000a";
pub const B: &str = "00000000-0000-4000-8000-00000000000b";
pub const C: &str = "00000000-0000-4000-8000-00000000000c";
pub const D: &str = "00000000-0000-4000-8000-00000000000d";
pub const X: &str = "00000000-0000-4000-8000-0000000000ee";
/// A's address in its source system, as given (normalised: [`A_LINK`]).
pub const A_URL: &str = "https://Calendar.example/e/a?x=1&y=\"2\"";
pub const A_LINK: &str = "https://calendar.example/e/a?x=1&y=%222%22";

/// Calendar (owned by alice, Paris): A edited twice in the window (title
/// Old → Mid → a hostile new title, and given a URL), B edited and edited back, C created,
/// D written to the log directly with CR/LF; X in Other.
pub fn world(w: &Web) -> World {
    let mut c = w.db.conn();
    let alice = user(&mut c, "alice", "Europe/Paris");
    user(&mut c, "bob", "America/New_York");
    let t0 = at("2026-11-01T00:00:00Z");
    let cal = items::create_collection(&mut c, t0, "Calendar & <Friends>", Some(alice)).unwrap();
    let other = items::create_collection(&mut c, t0, "Other", None).unwrap();
    put(w, &cal, A, "Old", "alice", "2026-11-16T08:00:00Z");
    put(w, &cal, A, "Mid", "alice", "2026-11-16T09:10:00Z");
    put_with(
        w,
        &cal,
        A,
        "New <script>alert(1)</script> Ünïcødé ✓",
        "bob",
        "2026-11-16T09:20:00Z",
        |i| i.url = Some(A_URL.into()),
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
            item_url: None,
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

pub fn web(db: TestDb) -> Web {
    Web::start_with(db, now(), |cfg| cfg.digest.base_url = BASE.into())
}

pub fn each(f: impl Fn(&Web, &World)) {
    let run = |w: Web| {
        let world = world(&w);
        f(&w, &world);
    };
    run(web(TestDb::sqlite()));
    if let Some(pg) = TestDb::postgres() {
        run(web(pg));
    }
}

pub fn feed(a: &Answer) -> feed_rs::model::Feed {
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.header("content-type").as_deref(),
        Some("application/atom+xml; charset=utf-8")
    );
    feed_rs::parser::parse(a.text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {}", a.text))
}

pub fn title(t: &Option<feed_rs::model::Text>) -> String {
    t.as_ref().unwrap().content.clone()
}

pub fn path(coll: &Collection, kind: &str, query: &str) -> String {
    format!("/atom/collection/{}/{kind}?{query}", coll.uuid)
}
