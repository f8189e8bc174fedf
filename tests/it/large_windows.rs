//! A window of the log too large to hold is streamed, one item at a time,
//! and gives what a window read whole gives: the same modifications in the
//! same order (with those recorded before the window but dated in it), and
//! the same digests, counted in full though only their first changes are
//! kept. On both back ends; the composer streams above a threshold that
//! tests set low.

use crate::common;

use chrono::{DateTime, Duration, Utc};
use common::digest::{bodies, user};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig, RecordConfig};
use digestd::db::schema::nt_requests;
use digestd::db::DbConn;
use digestd::digest::{self, Composer};
use digestd::ids::CollectionId;
use digestd::ingest;
use digestd::manage;
use digestd::modlog::{self, Modification, Span};
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;

fn uuid(n: u128) -> String {
    uuid::Uuid::from_u128(n).to_string()
}

/// Records `lines` (JSON objects) at `now`.
fn record(c: &mut DbConn, now: DateTime<Utc>, lines: &[serde_json::Value]) {
    let bounds = RecordConfig::default().at_bounds(now);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mods = ingest::parse_all(c, text.as_bytes(), &bounds).unwrap();
    ingest::write_batched(c, &mods, 100, &mut |_| {}).unwrap();
}

/// A busy hour in two collections: items edited by one or two people
/// (some edits undone), made and removed, one item in both collections,
/// attributes with several values.
fn busy_hour(docs: &str, notes: &str, start: DateTime<Utc>) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for i in 0..40u32 {
        let coll = if i % 5 == 4 { notes } else { docs };
        let when =
            |k: u32| (start + Duration::seconds(i64::from((i * 37 + k * 11) % 3_000))).to_rfc3339();
        let who = ["bob", "cy", "amy"][i as usize % 3];
        out.push(serde_json::json!({
            "collection": coll, "item": uuid(u128::from(i) + 1), "actor": who, "action": "edited",
            "at": when(0), "title": format!("Item {i}"), "kind": "note",
            "changes": [
                {"attribute": "status", "old": "open", "new": format!("step {i}")},
                {"attribute": "owner", "old": "nobody", "new": who},
            ],
        }));
        if i % 4 == 0 {
            // Undone by someone else: only the owner's change is left.
            out.push(serde_json::json!({
                "collection": coll, "item": uuid(u128::from(i) + 1), "actor": "cy", "action": "edited",
                "at": when(1), "title": format!("Item {i}"), "kind": "note",
                "changes": [{"attribute": "status", "old": format!("step {i}"), "new": "open"}],
            }));
        }
        if i % 7 == 0 {
            out.push(serde_json::json!({
                "collection": coll, "item": uuid(u128::from(i) + 1000), "actor": "ben", "action": "created",
                "at": when(2), "title": format!("Draft {i}"), "kind": "note",
            }));
            out.push(serde_json::json!({
                "collection": coll, "item": uuid(u128::from(i) + 1000), "actor": "ben", "action": "deleted",
                "at": when(3), "title": format!("Draft {i}"), "kind": "note",
            }));
        }
    }
    // One item in both collections.
    for coll in [docs, notes] {
        out.push(serde_json::json!({
            "collection": coll, "item": uuid(5_000), "actor": "bob", "action": "edited",
            "at": (start + Duration::minutes(20)).to_rfc3339(), "title": "Shared", "kind": "note",
            "changes": [{"attribute": "status", "old": "a", "new": "b"}],
        }));
    }
    out
}

fn world(c: &mut DbConn) -> (String, String) {
    for name in ["amy", "ben", "bob", "cy"] {
        user(c, name, "UTC", "en-GB", None);
    }
    let coll = |c: &mut DbConn, name| {
        digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), name, None)
            .unwrap()
            .uuid
    };
    (coll(c, "Docs"), coll(c, "Notes"))
}

fn ids(c: &mut DbConn, uuids: &[&str]) -> Vec<CollectionId> {
    let by = digestd::items::collection_ids(c, uuids).unwrap();
    uuids.iter().map(|u| by[*u]).collect()
}

/// Every modification `span` streams, and how many were counted.
fn streamed(c: &mut DbConn, colls: Option<&[CollectionId]>, span: &Span) -> Vec<Modification> {
    let mut out: Vec<Modification> = Vec::new();
    let mut items = Vec::new();
    let n = modlog::stream_span(c, colls, span, &mut |item| {
        assert!(!item.is_empty());
        assert!(item.iter().all(|m| m.item_uuid == item[0].item_uuid));
        items.push(item[0].item_uuid.clone());
        out.extend(item);
        Ok(())
    })
    .unwrap();
    assert_eq!(n, out.len());
    let mut sorted = items.clone();
    sorted.dedup();
    assert_eq!(sorted, items, "each item comes once");
    out
}

/// The streamed read and the whole read agree, for one collection, two,
/// and all, by time and by log position, with what was recorded before
/// the window but dated in it merged in its place.
fn a_streamed_window_reads_what_a_whole_read_reads(db: &TestDb) {
    let mut c = db.conn();
    let (docs, notes) = world(&mut c);
    let start = at("2026-11-23T09:00:00Z");
    // Recorded before the window, dated in it.
    let ahead = serde_json::json!({
        "collection": docs, "item": uuid(3), "actor": "amy", "action": "edited",
        "at": (start + Duration::minutes(30)).to_rfc3339(), "title": "Item 2", "kind": "note",
        "changes": [{"attribute": "place", "old": null, "new": "Room 4"}],
    });
    record(&mut c, start + Duration::minutes(29), &[ahead]);
    let from = modlog::cut(&mut c).unwrap();
    record(
        &mut c,
        start + Duration::minutes(59),
        &busy_hour(&docs, &notes, start),
    );
    let to = modlog::cut(&mut c).unwrap();
    let end = start + Duration::hours(1);
    let by_log = Span {
        start,
        end,
        log: Some((from, to)),
    };
    let by_time = Span::by_time(start, end);
    let both = ids(&mut c, &[&docs, &notes]);
    for span in [&by_log, &by_time] {
        for colls in [Some(&both[..1]), Some(&both[..]), None] {
            let whole = modlog::find_in_span(&mut c, colls, span).unwrap();
            assert!(whole.len() > 50, "{}", whole.len());
            let changes: usize = whole.iter().map(|m| m.changes.len()).sum();
            assert!(changes > whole.len(), "values read: {changes}");
            assert_eq!(streamed(&mut c, colls, span), whole, "{colls:?} {span:?}");
        }
    }
    let whole = modlog::find_in_span(&mut c, Some(&both[..1]), &by_log).unwrap();
    assert!(
        whole
            .iter()
            .any(|m| m.changes.iter().any(|v| v.new.as_deref() == Some("Room 4"))),
        "the change recorded ahead is in the window"
    );
}

fn sub(party: &str, coll: Option<&str>, include_own: bool) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: "hourly".into(),
        kind: "modification".into(),
        collection: coll.map(String::from),
        include_own,
        ..Default::default()
    }
}

/// Digests of windows too large to read whole (here: more than seven
/// modifications) are the digests a whole read gives, each counted in full
/// ("and N more") though a window keeps only its first changes: for a
/// subscriber of one collection, of all of them, and one who made some of
/// the changes and leaves their own out.
fn a_digest_of_a_streamed_window_is_the_digest_of_a_whole_one(db: &TestDb) {
    let mut c = db.conn();
    let (docs, notes) = world(&mut c);
    let subscribed = at("2026-11-23T08:30:00Z");
    for s in [
        sub("amy", Some(&docs), true),
        sub("ben", None, false),
        sub("bob", Some(&docs), false),
        sub("cy", Some(&notes), false),
    ] {
        manage::subscribe(&mut c, subscribed, &s).unwrap();
    }
    let start = at("2026-11-23T09:00:00Z");
    tick(&mut c, start, &mut common::digest::composer()).unwrap();
    record(
        &mut c,
        start + Duration::minutes(59),
        &busy_hour(&docs, &notes, start),
    );
    let ten = start + Duration::hours(1);
    let cfg = DigestConfig {
        max_items: 5,
        ..DigestConfig::default()
    };
    let email = EmailConfig::default();
    // What a whole read gives, without posting.
    let mut want = Vec::new();
    for s in digestd::subscriptions::list(&mut c).unwrap() {
        let p = digest::preview(&mut c, &cfg, &email, s.id, ten).unwrap();
        want.push((p.rendered.subject, p.rendered.text.unwrap()));
    }
    let mut composer = Composer::new(&cfg, &email).unwrap();
    composer.read_whole = 7;
    tick(&mut c, ten, &mut composer).unwrap();
    assert!(composer.streamed >= 3, "streamed {}", composer.streamed);
    let subjects: Vec<String> = nt_requests::table
        .order(nt_requests::request_id.asc())
        .select(nt_requests::subject)
        .load(&mut c)
        .unwrap();
    let texts = bodies(&mut c).into_iter().map(|b| b.text);
    let got: Vec<(String, String)> = subjects.into_iter().zip(texts).collect();
    assert_eq!(got, want);
    for (subject, text) in &got {
        assert!(subject.contains(" digest: "), "{subject}");
        // The first line says how many changes.
        let n: usize = text.split(' ').next().unwrap().parse().unwrap();
        assert!(n > 5, "{text}");
        assert!(text.contains(&format!("and {} more", n - 5)), "{text}");
    }
}

/// A window shared by chunks is read at most once per chunk, however many
/// of the chunk's recipients leave their own changes out of it: each
/// chunk's are read for together.
fn a_window_is_read_once_a_chunk_for_its_editors(db: &TestDb) {
    let mut c = db.conn();
    let (docs, _) = world(&mut c);
    let names: Vec<String> = (0..12).map(|i| format!("ed{i}")).collect();
    for n in &names {
        user(&mut c, n, "UTC", "en-GB", None);
        let s = sub(n, Some(&docs), false);
        manage::subscribe(&mut c, at("2026-11-23T08:30:00Z"), &s).unwrap();
    }
    let start = at("2026-11-23T09:00:00Z");
    tick(&mut c, start, &mut common::digest::composer()).unwrap();
    let lines: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            serde_json::json!({
                "collection": docs, "item": uuid(i as u128 + 1), "actor": n, "action": "edited",
                "at": (start + Duration::minutes(i as i64)).to_rfc3339(), "title": format!("Item {i}"),
                "kind": "note", "changes": [{"attribute": "status", "old": "a", "new": "b"}],
            })
        })
        .collect();
    record(&mut c, start + Duration::minutes(59), &lines);
    let mut composer = common::digest::composer();
    let chunk = 4;
    digestd::schedule::tick::tick_in_chunks(
        &mut c,
        start + Duration::hours(1),
        &mut composer,
        chunk,
    )
    .unwrap();
    let chunks = names.len().div_ceil(chunk as usize);
    assert!(
        composer.window_reads <= chunks,
        "{} reads of one window in {chunks} chunks",
        composer.window_reads
    );
    let texts: Vec<String> = bodies(&mut c).into_iter().map(|b| b.text).collect();
    assert_eq!(texts.len(), names.len(), "one digest each");
    assert!(texts.iter().all(|t| t.contains("11 changes")), "{texts:#?}");
}

backend_tests!(
    a_streamed_window_reads_what_a_whole_read_reads,
    a_digest_of_a_streamed_window_is_the_digest_of_a_whole_one,
    a_window_is_read_once_a_chunk_for_its_editors,
);
