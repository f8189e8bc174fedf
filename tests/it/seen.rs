//! Seen marks: `POST /api/v1/seen` and `digestd seen` record when a person
//! viewed an item, all or nothing; a modification digest to them leaves
//! out an item whose changes in its window they saw, and says how many;
//! a change made after the mark is still sent; `digestd purge` drops old
//! marks. On both back ends.

use crate::common;

use chrono::{DateTime, Duration, Utc};
use common::digest::{bodies, composer, user};
use common::seen::{change, hourly, mark, three_changes, uuid};
use common::web::{each_backend, Web};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::access::Scope;
use digestd::db::schema::{nt_requests, parties, seen};
use digestd::db::DbConn;
use digestd::manage;
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;
use serde_json::json;

/// amy, ben and bob; Docs, which amy and ben follow hourly from 08:30.
fn world(c: &mut DbConn) -> String {
    for name in ["amy", "ben", "bob"] {
        user(c, name, "UTC", "en-GB", None);
    }
    let docs = digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), "Docs", None)
        .unwrap()
        .uuid;
    for who in ["amy", "ben"] {
        manage::subscribe(c, at("2026-11-23T08:30:00Z"), &hourly(who, &docs)).unwrap();
    }
    docs
}

/// Each digest posted since request `after`: recipient, text, HTML.
pub(crate) fn digests(c: &mut DbConn, after: i64) -> Vec<(String, String, String)> {
    let to: Vec<(i64, String)> = nt_requests::table
        .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
        .select((nt_requests::request_id, parties::name))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let all = bodies(c);
    assert_eq!(to.len(), all.len());
    to.into_iter()
        .zip(all)
        .filter(|((id, _), _)| *id > after)
        .map(|((_, n), b)| (n, b.text, b.html.unwrap_or_default()))
        .collect()
}

fn last_request(c: &mut DbConn) -> i64 {
    nt_requests::table
        .select(diesel::dsl::max(nt_requests::request_id))
        .first::<Option<i64>>(c)
        .unwrap()
        .unwrap_or(0)
}

/// The tick at `t`; how many queries it made for seen marks.
fn tick_at(c: &mut DbConn, t: &str) -> usize {
    let mut composer = composer();
    tick(c, at(t), &mut composer).unwrap();
    composer.seen_queries()
}

pub(crate) fn of<'a>(
    all: &'a [(String, String, String)],
    who: &str,
) -> Vec<&'a (String, String, String)> {
    all.iter().filter(|d| d.0 == who).collect()
}

/// amy saw two of three changes after they were made: her digest leaves
/// them out and says so; ben's holds all three. A change made after her
/// mark is sent; a window she saw whole sends her nothing.
fn a_digest_leaves_out_what_its_recipient_saw(db: &TestDb) {
    let mut c = db.conn();
    let docs = world(&mut c);
    three_changes(&mut c, &docs);
    mark(&mut c, "amy", 1, "2026-11-23T08:50:00Z");
    mark(&mut c, "amy", 2, "2026-11-23T08:41:00Z");
    // Seen before its change: no help.
    mark(&mut c, "amy", 3, "2026-11-23T08:35:00Z");
    // One query for both recipients of the window.
    assert_eq!(tick_at(&mut c, "2026-11-23T09:00:00Z"), 1);
    let all = digests(&mut c, 0);
    let amy = of(&all, "amy");
    assert_eq!(amy.len(), 1, "{all:#?}");
    let (_, text, html) = amy[0];
    assert!(text.contains("Gamma"), "{text}");
    assert!(!text.contains("Alpha") && !text.contains("Beta"), "{text}");
    let said = "1 change in Docs since";
    assert!(text.starts_with(said), "{text}");
    let sentence = "(2 changes you have already seen are left out)";
    assert!(text.lines().next().unwrap().ends_with(sentence), "{text}");
    assert!(html.contains(sentence) && !html.contains("Alpha"), "{html}");
    let ben = of(&all, "ben");
    assert_eq!(ben.len(), 1);
    for t in ["Alpha", "Beta", "Gamma"] {
        assert!(ben[0].1.contains(t), "{}", ben[0].1);
    }
    assert!(!ben[0].1.contains("already seen"), "{}", ben[0].1);

    // An edit after her mark reaches her.
    let before = last_request(&mut c);
    change(
        &mut c,
        &docs,
        1,
        "edited",
        "Alpha 2",
        "2026-11-23T09:10:00Z",
    );
    tick_at(&mut c, "2026-11-23T10:00:00Z");
    let all = digests(&mut c, before);
    let amy = of(&all, "amy");
    assert_eq!(amy.len(), 1, "{all:#?}");
    assert!(amy[0].1.contains("Alpha 2"), "{}", amy[0].1);
    assert!(!amy[0].1.contains("already seen"), "{}", amy[0].1);

    // A window she saw whole: nothing for her, ben's as ever.
    let before = last_request(&mut c);
    change(&mut c, &docs, 2, "edited", "Beta 2", "2026-11-23T10:10:00Z");
    mark(&mut c, "amy", 2, "2026-11-23T10:20:00Z");
    // An earlier mark never moves it back.
    mark(&mut c, "amy", 2, "2026-11-23T10:05:00Z");
    tick_at(&mut c, "2026-11-23T11:00:00Z");
    let all = digests(&mut c, before);
    assert!(of(&all, "amy").is_empty(), "{all:#?}");
    assert_eq!(of(&all, "ben").len(), 1, "{all:#?}");
    // A window without items asks for no marks.
    assert_eq!(tick_at(&mut c, "2026-11-23T12:00:00Z"), 0);
}

/// Asked for empty digests, one left empty by marks is sent and says why.
fn a_digest_emptied_by_marks_follows_send_empty(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "cy", "UTC", "en-GB", None);
    user(&mut c, "bob", "UTC", "en-GB", None);
    let docs = digestd::items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Docs", None)
        .unwrap()
        .uuid;
    let r = SubscribeRequest {
        send_empty: true,
        ..hourly("cy", &docs)
    };
    manage::subscribe(&mut c, at("2026-11-23T08:30:00Z"), &r).unwrap();
    change(&mut c, &docs, 1, "created", "Alpha", "2026-11-23T08:40:00Z");
    mark(&mut c, "cy", 1, "2026-11-23T08:45:00Z");
    tick_at(&mut c, "2026-11-23T09:00:00Z");
    let all = digests(&mut c, 0);
    assert_eq!(all.len(), 1, "{all:#?}");
    let first = all[0].1.lines().next().unwrap();
    assert!(
        first.starts_with("No changes in Docs since")
            && first.ends_with("(1 change you have already seen is left out)"),
        "{first}"
    );
}

fn count(c: &mut DbConn) -> i64 {
    seen::table.count().get_result(c).unwrap()
}

fn seen_at(c: &mut DbConn, item: u128) -> DateTime<Utc> {
    seen::table
        .filter(seen::item_uuid.eq(uuid(item)))
        .select(seen::seen_at)
        .first::<chrono::NaiveDateTime>(c)
        .unwrap()
        .and_utc()
}

const NOW: &str = "2026-11-23T12:00:00Z";

/// amy and bob (users), team (a group), Docs with items 1 and 2 in its
/// log.
fn log_world(c: &mut DbConn) {
    for name in ["amy", "bob"] {
        user(c, name, "UTC", "en-GB", None);
    }
    digestd::parties::create_group(c, at(NOW), "team", None).unwrap();
    let docs = digestd::items::create_collection(c, at(NOW), "Docs", None)
        .unwrap()
        .uuid;
    change(c, &docs, 1, "created", "Alpha", "2026-11-23T11:00:00Z");
    change(c, &docs, 2, "created", "Beta", "2026-11-23T11:00:00Z");
}

/// [`log_world`] behind the server, whose clock is at [`NOW`].
fn web_world(w: &Web) {
    log_world(&mut w.db.conn());
}

fn one(party: &str, item: &str, when: &str) -> serde_json::Value {
    json!({"party": party, "item": item, "at": when})
}

/// Batches refused whole, each after the good mark `ok`: (body, status,
/// the entry the error names, what it says).
fn refused_batches(ok: &serde_json::Value) -> Vec<(serde_json::Value, u16, usize, &'static str)> {
    let future = (at(NOW) + Duration::hours(1)).to_rfc3339();
    vec![
        (
            json!([ok, one("nobody", &uuid(1), NOW)]),
            404,
            1,
            "no user named",
        ),
        (json!([ok, one("amy", &uuid(99), NOW)]), 404, 1, "no item"),
        (
            json!([ok, one("team", &uuid(1), NOW)]),
            400,
            1,
            "is a group",
        ),
        (
            json!([ok, one("amy", &uuid(1), "yesterday")]),
            400,
            1,
            "RFC 3339",
        ),
        (
            json!([ok, one("amy", &uuid(1), &future)]),
            400,
            1,
            "ahead of the clock",
        ),
        (
            json!([ok, one("amy\r\nX-Evil: 1", &uuid(1), NOW)]),
            400,
            1,
            "invalid user name",
        ),
        (
            json!([ok, one("amy", "x\ny", NOW)]),
            400,
            1,
            "invalid item UUID",
        ),
        (json!([ok, {"party": "amy"}]), 400, 1, "bad mark"),
        (
            json!([ok, {"party": "amy", "item": uuid(1), "at": NOW, "x": 1}]),
            400,
            1,
            "bad mark",
        ),
        (json!(vec![ok.clone(); 1001]), 400, 1000, "at most 1000"),
        (json!([]), 400, 0, "no marks"),
    ]
}

#[test]
fn the_api_records_marks_all_or_nothing() {
    each_backend(at(NOW), |w| {
        web_world(w);
        let token = w.token("feeder", Scope::Ingest);
        let t = Some(token.as_str());
        let post = |body: String| w.post("/api/v1/seen", t, body);
        let a = post(one("amy", &uuid(1), "2026-11-23T11:30:00Z").to_string());
        assert_eq!(
            (a.status, a.json()["recorded"].clone()),
            (200, json!(1)),
            "{}",
            a.text
        );
        let batch = json!([
            one("amy", &uuid(1), "2026-11-23T11:40:00+01:00"),
            one("amy", &uuid(2), "2026-11-23T11:45:00Z"),
        ]);
        for _ in 0..2 {
            let a = post(batch.to_string());
            assert_eq!(
                (a.status, a.json()["recorded"].clone()),
                (200, json!(2)),
                "{}",
                a.text
            );
        }
        let mut c = w.db.conn();
        assert_eq!(count(&mut c), 2);
        // 10:40Z is before the first mark's 11:30Z: it stays.
        assert_eq!(seen_at(&mut c, 1), at("2026-11-23T11:30:00Z"));
        assert_eq!(seen_at(&mut c, 2), at("2026-11-23T11:45:00Z"));

        let ok = one("amy", &uuid(2), "2026-11-23T11:50:00Z");
        let refused = refused_batches(&ok);
        for (body, status, entry, needle) in refused {
            let a = post(body.to_string());
            assert_eq!(a.status, status, "{body}: {}", a.text);
            assert!(a.error().contains(needle), "{needle}: {}", a.text);
            assert_eq!(a.json()["entry"], json!(entry), "{}", a.text);
            assert!(!a.error().contains('\r'), "{}", a.text);
        }
        for body in [&b"\xff\xfe[]"[..], b"not json", b"42"] {
            let a = w.post("/api/v1/seen", t, body.to_vec());
            assert_eq!(a.status, 400, "{}", a.text);
        }
        // Nothing of any refused batch was written.
        assert_eq!(seen_at(&mut c, 2), at("2026-11-23T11:45:00Z"));
        assert_eq!(count(&mut c), 2);

        let read = w.token("reader", Scope::Read);
        let body = json!([ok]).to_string();
        assert_eq!(w.post("/api/v1/seen", None, body.clone()).status, 401);
        assert_eq!(
            w.post("/api/v1/seen", Some(&read), body.clone()).status,
            403
        );
        assert_eq!(count(&mut c), 2);
    });
}

#[test]
fn an_oversized_body_is_refused_before_it_is_read() {
    let w = Web::start_with(TestDb::sqlite(), at(NOW), |c| c.http.max_body_bytes = 4096);
    web_world(&w);
    let token = w.token("feeder", Scope::Ingest);
    let marks: Vec<_> = (0..100)
        .map(|_| one("amy", &uuid(1), "2026-11-23T11:30:00Z"))
        .collect();
    let a = w.post("/api/v1/seen", Some(&token), json!(marks).to_string());
    assert_eq!(a.status, 413, "{}", a.text);
    assert_eq!(count(&mut w.db.conn()), 0);
}

/// Runs the binary on `db` at [`NOW`]: exit code, stdout, stderr.
fn cli(db: &TestDb, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut all = vec!["--now", NOW];
    all.extend_from_slice(args);
    common::digestd_run(&db.url, &all, stdin)
}

fn the_cli_records_marks_and_purge_drops_old_ones(db: &TestDb) {
    let mut c = db.conn();
    log_world(&mut c);
    let (code, out, err) = cli(db, &["seen", "amy", &uuid(1)], b"");
    assert_eq!((code, out.trim()), (0, "recorded 1 seen mark"), "{err}");
    assert_eq!(seen_at(&mut c, 1), at(NOW));
    let lines = format!(
        "{}\n\n{}\n",
        one("amy", &uuid(2), "2026-11-20T11:00:00Z"),
        one("bob", &uuid(2), "2026-11-23T11:00:00Z")
    );
    let (code, out, err) = cli(db, &["seen", "--file", "-"], lines.as_bytes());
    assert_eq!((code, out.trim()), (0, "recorded 2 seen marks"), "{err}");
    assert_eq!(count(&mut c), 3);

    let bad: Vec<(Vec<&str>, Vec<u8>, &str)> = vec![
        (
            vec!["seen", "nobody", "00000000-0000-0000-0000-000000000001"],
            vec![],
            "no user named",
        ),
        (
            vec!["seen", "amy", "00000000-0000-0000-0000-000000000063"],
            vec![],
            "no item",
        ),
        (
            vec!["seen", "amy", "not-a-uuid"],
            vec![],
            "invalid item UUID",
        ),
        (
            vec![
                "seen",
                "amy",
                "00000000-0000-0000-0000-000000000001",
                "--at",
                "+2h",
            ],
            vec![],
            "ahead of the clock",
        ),
        (
            vec!["seen", "--file", "-"],
            b"{\"party\":\"amy\"}\n".to_vec(),
            "line 1",
        ),
        (vec!["seen", "--file", "-"], b"\xff\n".to_vec(), "UTF-8"),
        (
            vec!["seen", "--file", "-"],
            format!(
                "{}\n{}\n",
                one("amy", &uuid(1), NOW),
                one("a\rb", &uuid(1), NOW)
            )
            .into_bytes(),
            "entry 1",
        ),
    ];
    for (args, stdin, needle) in bad {
        let (code, out, err) = cli(db, &args, &stdin);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert_eq!(count(&mut c), 3);
    assert_eq!(seen_at(&mut c, 1), at(NOW));

    // amy's mark of 20 Nov is older than two days; the others are not.
    let (code, out, err) = cli(db, &["purge", "--older-than", "2d"], b"");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" and 1 seen marks older than"), "{out}");
    assert_eq!(count(&mut c), 2);
}

/// `digestd preview` goes through the same composer: its chat and SMS
/// texts say what was left out too.
fn every_channel_says_what_was_left_out(db: &TestDb) {
    let mut c = db.conn();
    let docs = world(&mut c);
    change(&mut c, &docs, 1, "created", "Alpha", "2026-11-23T08:40:00Z");
    change(&mut c, &docs, 2, "created", "Beta", "2026-11-23T08:41:00Z");
    mark(&mut c, "amy", 1, "2026-11-23T08:50:00Z");
    let amy = digestd::subscriptions::list(&mut c).unwrap()[0]
        .id
        .0
        .to_string();
    for flag in ["--chat", "--sms", "--html", "--webhook"] {
        let (code, out, err) = cli(
            db,
            &["preview", &amy, "--at", "2026-11-23T09:00:00Z", flag],
            b"",
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("1 change you have already seen is left out"),
            "{flag}: {out}"
        );
        assert!(
            out.contains("Beta") && !out.contains("Alpha"),
            "{flag}: {out}"
        );
    }
}

crate::backend_tests!(
    a_digest_leaves_out_what_its_recipient_saw,
    a_digest_emptied_by_marks_follows_send_empty,
    the_cli_records_marks_and_purge_drops_old_ones,
    every_channel_says_what_was_left_out,
);
