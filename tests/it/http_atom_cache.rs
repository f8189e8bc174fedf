//! The Atom feeds' validators over real HTTP on both back ends: a strong
//! ETag and Last-Modified, 304 until the collection's own log moves, the
//! 304 path answered without the log; and every writer of the log moving
//! the collection's feed version, concurrent writers included.

use crate::common;
use crate::common::atom;

use atom::*;
use common::at;
use common::web::{each_backend, Answer, Web};
use diesel::connection::SimpleConnection;
use digestd::modlog;

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
        // The feed rendered under this tag is kept: served without the log.
        let cached = w.get(&p, Some(&wo.read));
        assert_eq!(cached.status, 200, "{}", cached.text);
        assert_eq!(cached.header("etag").unwrap(), etag);
        // Another zone is another representation: it needs the log.
        let full = w.get(&format!("{p}&tz=Europe/Paris"), Some(&wo.read));
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

fn version(w: &Web, coll: &digestd::items::Collection) -> i64 {
    digestd::feeds::head(&mut w.db.conn(), &coll.uuid)
        .unwrap()
        .version
}

fn edit(coll: &digestd::items::Collection, item: &str, when: &str) -> modlog::NewModification {
    modlog::NewModification {
        tx_id: format!("t-{item}-{when}"),
        occurred_at: at(when),
        collection: coll.id,
        item_uuid: item.into(),
        actor: None,
        action: modlog::Action::Edited,
        item_kind: "event".into(),
        item_title: "Edited".into(),
        item_url: None,
        changes: vec![],
    }
}

#[test]
fn every_writer_of_the_log_moves_its_collections_version_only() {
    each(|w, wo| {
        let mut c = w.db.conn();
        let (cal, other) = (version(w, &wo.cal), version(w, &wo.other));
        assert!(cal > 0 && other > 0, "the world's writes moved them");
        modlog::record(&mut c, &[edit(&wo.cal, A, "2026-11-16T13:00:00Z")]).unwrap();
        assert_eq!(
            (version(w, &wo.cal), version(w, &wo.other)),
            (cal + 1, other)
        );
        let both = [
            edit(&wo.cal, A, "2026-11-16T13:01:00Z"),
            edit(&wo.other, X, "2026-11-16T13:01:00Z"),
            edit(&wo.cal, B, "2026-11-16T13:02:00Z"),
        ];
        digestd::ingest::write_batched(&mut c, &both, 1, &mut |_| {}).unwrap();
        let (cal, other) = (version(w, &wo.cal), version(w, &wo.other));
        assert!(cal >= 3 && other >= 2);
        put(w, &wo.other, X, "Renamed", "bob", "2026-11-16T13:03:00Z");
        assert_eq!(version(w, &wo.cal), cal);
        assert!(version(w, &wo.other) > other);
        // A purge that removes nothing moves nothing; one that removes a
        // collection's rows moves that collection only (Other's log starts
        // at 10:00).
        let other = version(w, &wo.other);
        modlog::purge(&mut c, at("2026-11-01T00:00:00Z")).unwrap();
        assert_eq!((version(w, &wo.cal), version(w, &wo.other)), (cal, other));
        modlog::purge(&mut c, at("2026-11-16T09:30:00Z")).unwrap();
        assert_eq!(version(w, &wo.other), other);
        assert!(version(w, &wo.cal) > cal);
    });
}

#[test]
fn concurrent_writers_of_one_collection_lose_no_version() {
    each(|w, wo| {
        let before = version(w, &wo.cal);
        std::thread::scope(|s| {
            for t in 0..4 {
                let cal = &wo.cal;
                s.spawn(move || {
                    for i in 0..5 {
                        let item = format!("00000000-0000-4000-8000-0000000001{t}{i}");
                        put(w, cal, &item, "Busy", "alice", "2026-11-16T14:00:00Z");
                    }
                });
            }
        });
        assert_eq!(version(w, &wo.cal), before + 20);
    });
}
