//! Recording changes and the modification log, and concurrent writers in
//! storage, with their validation and their all-or-nothing writes, on
//! SQLite and (when DIGESTD_TEST_DATABASE_URL is set) PostgreSQL.
//! Subscriptions in storage are `storage_subscriptions.rs`; the shared
//! helpers are in `common/storage.rs`.

use crate::common;

use common::storage::{counts, world};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::modification_values;
use digestd::error::Error;
use digestd::ingest;
use digestd::modlog::{self, Action, Change, NewModification};
use digestd::parties;

fn record_is_all_or_nothing(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let line = |action: &str, at: &str| {
        format!(
            r#"{{"collection":"{}","item":"6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003","actor":"gr24","action":"{action}","at":"{at}","title":"Standup","kind":"event","changes":[{{"attribute":"location","old":"Room 1","new":null}}]}}"#,
            cal.uuid
        )
    };
    let good = line("edited", "2026-11-20T09:00:00Z");
    let input = [
        good.clone(),
        line("exploded", "2026-11-20T09:00:00Z"),
        good.clone(),
        line("edited", "yesterday"),
        good.clone(),
    ]
    .join("\n");
    let before = counts(&mut c);
    match ingest::parse_all(&mut c, input.as_bytes(), &ingest::AtBounds::ANY) {
        Err(Error::Invalid(msg)) => {
            assert!(msg.contains("line 2") && msg.contains("line 4"), "{msg}");
            assert!(
                !msg.contains("line 1:") && !msg.contains("line 3") && !msg.contains("line 5"),
                "{msg}"
            );
        }
        other => panic!("expected invalid input, got {other:?}"),
    }
    assert_eq!(counts(&mut c), before);

    // Names that do not resolve are bad lines too.
    let ghost = good.replace("gr24", "ghost");
    let nowhere = good.replace(&cal.uuid, "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0afff");
    let err = ingest::parse_all(
        &mut c,
        format!("{good}\n{ghost}\n\n{nowhere}\n").as_bytes(),
        &ingest::AtBounds::ANY,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("line 2") && err.to_string().contains("line 4"),
        "{err}"
    );
    let mut non_utf8 = good.clone().into_bytes();
    non_utf8.extend_from_slice(b"\n{\"collection\":\"\xff\xfe\"}\n");
    assert!(
        ingest::parse_all(&mut c, &non_utf8[..], &ingest::AtBounds::ANY)
            .unwrap_err()
            .to_string()
            .contains("line 2")
    );
    assert_eq!(counts(&mut c), before);

    // Good input: batched into transactions of 2, every row and value stored.
    let input = [good.clone(), good.clone(), good.clone()].join("\n");
    let mods = ingest::parse_all(&mut c, input.as_bytes(), &ingest::AtBounds::ANY).unwrap();
    let mut seen = vec![];
    assert_eq!(
        ingest::write_batched(&mut c, &mods, 2, &mut |n| seen.push(n)).unwrap(),
        3
    );
    assert_eq!(seen, [2, 3]);
    let stored = modlog::find_in_window(
        &mut c,
        Some(&[cal.id]),
        at("2026-11-20T00:00:00Z"),
        at("2026-11-21T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(stored.len(), 3);
    assert!(stored.iter().all(|m| m.changes
        == [Change {
            attribute: "location".into(),
            old: Some("Room 1".into()),
            new: None
        }]));
}

/// The audit's case: a PostgreSQL storage error in the last statement of a
/// long `record` used to leave the earlier batches behind. A NUL in a value
/// is now refused before anything is written, and a storage error inside
/// the write (here a value row that breaks its primary key, below the
/// validator) rolls back every batch.
fn record_leaves_nothing_after_a_late_error(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let line = |i: usize, new: &str| {
        format!(
            r#"{{"collection":"{}","item":"6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a003","actor":"gr24","action":"edited","at":"2026-11-20T09:00:00Z","title":"Standup {i}","kind":"event","changes":[{{"attribute":"location","old":"Room 1","new":"{new}"}}]}}"#,
            cal.uuid
        )
    };
    let before = counts(&mut c);
    let mut lines: Vec<String> = (0..10_000).map(|i| line(i, "Room 2")).collect();
    lines.push(line(10_000, "Room\\u0000 3"));
    let input = lines.join("\n");
    let err = ingest::parse_all(&mut c, input.as_bytes(), &ingest::AtBounds::ANY).unwrap_err();
    assert!(err.is_bad_input(), "{err:?}");
    assert!(
        err.to_string()
            .contains("line 10001: new value contains a control character"),
        "{err}"
    );
    // The same for the other hostile characters of a value, and for an actor.
    for bad in ["a\\r\\nb", "\\u001b[31m", "\\u202e", "\\u0007"] {
        let err =
            ingest::parse_all(&mut c, line(0, bad).as_bytes(), &ingest::AtBounds::ANY).unwrap_err();
        assert!(
            err.to_string().contains("line 1: new value contains"),
            "{bad}: {err}"
        );
    }
    let nul_actor = line(0, "x").replace("gr24", "gr24\\u0000");
    let err = ingest::parse_all(&mut c, nul_actor.as_bytes(), &ingest::AtBounds::ANY).unwrap_err();
    assert!(
        err.is_bad_input() && err.to_string().contains("no user or group"),
        "{err:?}"
    );
    assert_eq!(counts(&mut c), before);

    // A storage error in the last of five batches of 2,000.
    let mut mods = ingest::parse_all(
        &mut c,
        lines[..10_000].join("\n").as_bytes(),
        &ingest::AtBounds::ANY,
    )
    .unwrap();
    let last = mods.last_mut().unwrap();
    last.changes.push(last.changes[0].clone());
    let mut seen = vec![];
    ingest::write_batched(&mut c, &mods, 2_000, &mut |n| seen.push(n)).unwrap_err();
    assert_eq!(
        seen,
        [2_000, 4_000, 6_000, 8_000],
        "the batches before the bad one ran"
    );
    assert_eq!(counts(&mut c), before, "a failed record left rows behind");
}

fn windows_and_purge(db: &TestDb) {
    let mut c = db.conn();
    let (cal, other) = world(&mut c);
    let (actor, _) = parties::find(&mut c, "gr24").unwrap();
    let m = |coll, t: &str| NewModification {
        tx_id: format!("t{t}"),
        occurred_at: at(t),
        collection: coll,
        item_uuid: "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a004".into(),
        actor: Some(actor),
        action: Action::Edited,
        item_kind: "task".into(),
        item_title: "Fix the pipe".into(),
        item_url: None,
        changes: vec![Change {
            attribute: "status".into(),
            old: Some("open".into()),
            new: Some("done".into()),
        }],
    };
    modlog::record(
        &mut c,
        &[
            m(cal.id, "2026-08-01T00:00:00Z"),
            m(cal.id, "2026-11-20T08:59:59.999999Z"),
            m(cal.id, "2026-11-20T09:00:00Z"),
            m(other.id, "2026-11-20T09:30:00Z"),
            m(cal.id, "2026-11-20T10:00:00Z"),
        ],
    )
    .unwrap();
    // [start, end): the start is in, the end is out.
    let w = modlog::find_in_window(
        &mut c,
        Some(&[cal.id]),
        at("2026-11-20T09:00:00Z"),
        at("2026-11-20T10:00:00Z"),
    )
    .unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].occurred_at, at("2026-11-20T09:00:00Z"));
    let both = modlog::find_in_window(
        &mut c,
        Some(&[cal.id, other.id]),
        at("2026-11-20T08:00:00Z"),
        at("2026-11-20T11:00:00Z"),
    )
    .unwrap();
    assert_eq!(both.len(), 4);
    assert_eq!(
        both[0].occurred_at,
        at("2026-11-20T08:59:59.999999Z"),
        "microseconds survive the round trip"
    );

    let purged = modlog::purge(&mut c, at("2026-11-20T09:00:00Z")).unwrap();
    assert_eq!((purged.modifications, purged.values), (2, 2));
    assert_eq!(modlog::count(&mut c).unwrap(), 3);
    let values: i64 = modification_values::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(values, 3);
}

fn concurrent_writers_all_land(db: &TestDb) {
    let pool = db.open();
    let (cal, actor) = {
        let mut c = pool.conn().unwrap();
        let (cal, _) = world(&mut c);
        (cal, parties::find(&mut c, "gr24").unwrap().0)
    };
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let mut c = pool.conn().unwrap();
                for i in 0..25 {
                    let m = NewModification {
                        tx_id: format!("{t}:{i}"),
                        occurred_at: at("2026-11-20T09:00:00Z"),
                        collection: cal.id,
                        item_uuid: format!("00000000-0000-4000-8000-{:012}", t * 100 + i),
                        actor: Some(actor),
                        action: Action::Now,
                        item_kind: "task".into(),
                        item_title: "t".into(),
                        item_url: None,
                        changes: vec![Change {
                            attribute: "a".into(),
                            old: None,
                            new: Some(i.to_string()),
                        }],
                    };
                    modlog::record(&mut c, &[m.clone(), m]).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = pool.conn().unwrap();
    assert_eq!(modlog::count(&mut c).unwrap(), 200);
    let values: i64 = modification_values::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(values, 200);
}

/// The digest reads the log once per (collection, window), through a
/// statement diesel keeps prepared; PostgreSQL may then plan it once for
/// any parameters (a generic plan). With `collection_id = ANY($1)` that
/// plan walked the time index over every collection's changes in the
/// window and filtered them (`bench burst`: 34 ms a read among 50,000
/// changes, against 0.07 ms): a read of one collection must look up that
/// collection, whatever the plan.
fn a_window_read_fetches_its_collection_only(db: &TestDb) {
    use diesel::connection::SimpleConnection;
    let mut c = db.conn();
    // A site of many collections (the generic plan's guess for one of
    // them is a small share of the log), all busy but `cal`.
    let (cal, other) = world(&mut c);
    let mut busy = vec![other.id];
    for k in 0..98 {
        let now = at("2026-11-01T00:00:00Z");
        let name = format!("Busy {k}");
        busy.push(
            digestd::items::create_collection(&mut c, now, &name, None)
                .unwrap()
                .id,
        );
    }
    let (actor, _) = parties::find(&mut c, "gr24").unwrap();
    let m = |coll, i: usize| NewModification {
        tx_id: format!("w{i}"),
        occurred_at: at("2026-11-20T00:00:00Z") + chrono::Duration::seconds(i as i64),
        collection: coll,
        item_uuid: format!("00000000-0000-4000-8000-{i:012}"),
        actor: Some(actor),
        action: Action::Edited,
        item_kind: "event".into(),
        item_title: "Busy elsewhere".into(),
        item_url: None,
        changes: vec![],
    };
    let mods: Vec<NewModification> = (0..20_000)
        .map(|i| {
            m(
                if i % 5_000 == 0 {
                    cal.id
                } else {
                    busy[i % busy.len()]
                },
                i,
            )
        })
        .collect();
    modlog::record(&mut c, &mods).unwrap();
    c.batch_execute("ANALYZE").unwrap();
    let (w0, w1) = (at("2026-11-19T00:00:00Z"), at("2026-11-22T00:00:00Z"));
    let pg = matches!(c.backend(), digestd::db::Backend::Postgres);
    let (found, fetched) = c
        .rolled_back(|c| {
            if pg {
                c.batch_execute("SET LOCAL plan_cache_mode = force_generic_plan")?;
            }
            let mut found = 0;
            for _ in 0..3 {
                found = modlog::find_in_window(c, Some(&[cal.id]), w0, w1)?.len();
            }
            // Rows this transaction read from the log, by index or scan.
            let fetched = pg.then(|| {
                diesel::sql_query(
                    "SELECT (COALESCE(idx_tup_fetch, 0) + seq_tup_read)::bigint AS n \
                     FROM pg_stat_xact_user_tables WHERE relname = 'modifications'",
                )
                .get_result::<Rows>(c)
                .map(|r| r.n)
            });
            Ok((found, fetched.transpose()?))
        })
        .unwrap();
    assert_eq!(found, 4);
    if let Some(n) = fetched {
        assert!(
            n <= 3 * 4,
            "three reads of 4 changes fetched {n} rows of the log"
        );
    }
}

/// A bulk import's window: 700 items changed at one instant (100 of them
/// twice there), one of them changed earlier in the window too, walked in
/// pages of 100 across the scan's own batches of 256. Every item that is
/// first met at the instant is on exactly one page, in UUID order; the
/// one changed earlier stands at its earlier change.
fn changed_pages_through_one_instant(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = world(&mut c);
    let uuid = |i: u128| uuid::Uuid::from_u128(0xa000_0000 + i * 7919 % 1000).to_string();
    let m = |i: u128, t: &str| NewModification {
        tx_id: format!("b{i}"),
        occurred_at: at(t),
        collection: cal.id,
        item_uuid: uuid(i),
        actor: None,
        action: Action::Edited,
        item_kind: "page".into(),
        item_title: format!("Page {i}"),
        item_url: None,
        changes: vec![],
    };
    let instant = "2026-11-20T09:00:00Z";
    let mut mods: Vec<NewModification> = (0..700).map(|i| m(i, instant)).collect();
    mods.extend((0..100).map(|i| m(i * 7, instant)));
    mods.push(m(350, "2026-11-20T08:30:00Z"));
    modlog::record(&mut c, &mods).unwrap();
    let (start, end) = (at("2026-11-20T00:00:00Z"), at("2026-11-21T00:00:00Z"));
    let mut got = Vec::new();
    let mut after: Option<(chrono::DateTime<chrono::Utc>, String)> = None;
    for _ in 0..20 {
        let page = modlog::changed_items(
            &mut c,
            cal.id,
            start,
            end,
            after.as_ref().map(|(t, u)| (*t, u.as_str())),
            100,
        )
        .unwrap();
        assert!(page.len() <= 100);
        let Some(last) = page.last().cloned() else {
            break;
        };
        got.extend(page);
        after = Some((last.1, last.0));
    }
    let mut want: Vec<(String, chrono::DateTime<chrono::Utc>)> = (0..700)
        .filter(|i| *i != 350)
        .map(|i| (uuid(i), at(instant)))
        .collect();
    want.sort();
    want.insert(0, (uuid(350), at("2026-11-20T08:30:00Z")));
    assert_eq!(got.len(), want.len(), "every item once");
    assert_eq!(got, want);
}

#[derive(QueryableByName)]
struct Rows {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

backend_tests!(
    record_is_all_or_nothing,
    record_leaves_nothing_after_a_late_error,
    windows_and_purge,
    a_window_read_fetches_its_collection_only,
    changed_pages_through_one_instant,
    concurrent_writers_all_land,
);
