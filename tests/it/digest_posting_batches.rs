//! Digests posted in bulk, on each back end: a tick in chunks posts its
//! digests in batches, each run pointing at its own digest and the ids
//! taken in order; any number of compose workers posts the same digests as
//! one; a batch planned while the one before is finished names its own
//! actors. The rest of posting is `digest_posting.rs`; the shared helpers
//! are in `common/digest.rs`.

use crate::common;

use common::digest::{
    calendar_week, calendar_world, composer, daily, item, put, requests, subscribe, user,
};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{nt_requests, subscription_runs};
use digestd::db::{Db, DbConn};
use digestd::deliver::queue;
use digestd::items;

/// A notification to ann from gr24, posted at `t`.
fn notify(c: &mut DbConn, t: &str) -> i64 {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &queue::NewNotification {
            from: "gr24".into(),
            to: "ann".into(),
            subject: "Hello".into(),
            message: "A note".into(),
            ..Default::default()
        },
        at(t),
    )
    .unwrap()
    .0
}

fn a_chunk_posts_in_batches_and_each_run_points_at_its_own_digest(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    let quiet =
        digestd::items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Quiet", None)
            .unwrap()
            .uuid;
    // More subscribers than a batch of posts (500) and than a chunk here,
    // all due at 17:00Z; one in seven follows a collection with no changes,
    // so empty runs (no post) fall between the posts.
    const N: usize = 1_100;
    let mut empty = 0;
    for i in 0..N {
        let name = format!("u{i}");
        user(&mut c, &name, "America/Los_Angeles", "en-US", None);
        if i % 7 == 3 {
            empty += 1;
            subscribe(&mut c, daily(&name, &quiet));
        } else {
            subscribe(&mut c, daily(&name, &cal));
        }
    }
    calendar_week(&mut c, &cal);
    let before = notify(&mut c, "2026-11-22T16:30:00Z");
    let mut comp = composer();
    let runs =
        digestd::schedule::tick::tick_in_chunks(&mut c, at("2026-11-22T17:00:00Z"), &mut comp, 700)
            .unwrap();
    let posted = N - empty;
    assert_eq!((runs.len(), comp.posted, comp.empty), (N, posted, empty));
    // Every run names the request posted for its own subscription and period.
    type Linked = (i64, Option<i64>, Option<i64>, Option<String>, String);
    let linked: Vec<Linked> = subscription_runs::table
        .left_join(
            nt_requests::table.on(nt_requests::request_id
                .nullable()
                .eq(subscription_runs::request_id)),
        )
        .select((
            subscription_runs::subscription_id,
            subscription_runs::request_id,
            nt_requests::subscription_id.nullable(),
            nt_requests::period.nullable(),
            subscription_runs::period,
        ))
        .load(&mut c)
        .unwrap();
    assert_eq!(linked.len(), N);
    let mut ids = Vec::new();
    for (sub, req, req_sub, req_period, period) in linked {
        if (sub - 1) % 7 == 3 {
            assert_eq!(req, None, "the empty run of {sub} posted nothing");
            continue;
        }
        assert_eq!(req_sub, Some(sub), "run of {sub} points at request {req:?}");
        assert_eq!(req_period.as_deref(), Some(period.as_str()));
        ids.push(req.unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), posted);
    // Ids taken for the batch come after the notification before, and the
    // next notification's after them.
    assert!(ids[0] > before, "{} <= {before}", ids[0]);
    let after = notify(&mut c, "2026-11-22T17:30:00Z");
    assert!(after > ids[posted - 1], "{after} <= {}", ids[posted - 1]);
    let bodies: i64 = digestd::db::schema::nt_messages::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(bodies as usize, posted + 2);
    // Every digest is the same content in the same style: one rendering,
    // stored by the first chunk and used by the second after its commit.
    let shared: i64 = digestd::db::schema::nt_bodies::table
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(shared, 1);
}

/// What a tick on `workers` threads posted, in order of request id: each
/// request's subject, sender and period, and its bodies as read when sent.
type Posted = Vec<(String, i64, String, String, String, String, String, bool)>;

/// A tick in chunks of `chunk` runs on `workers` threads (25: several
/// chunks and batches, shared renderings stored by one chunk and used by
/// the next, windows read by one chunk and used by the next).
fn tick_on_workers(
    c: &mut DbConn,
    pool: &Db,
    workers: usize,
    chunk: i64,
) -> (usize, usize, Posted) {
    c.rolled_back(|c| {
        let mut comp = composer();
        comp.workers = workers;
        // The windows read on the pool's connections too.
        comp.read_through(pool);
        let runs = digestd::schedule::tick::tick_in_chunks(
            c,
            at("2026-11-22T17:00:00Z"),
            &mut comp,
            chunk,
        )?;
        let reqs = requests(c);
        let shared = common::digest::bodies(c).into_iter().map(|b| b.shared);
        let posted = reqs
            .into_iter()
            .zip(shared)
            .map(|(r, shared)| {
                (
                    r.subject, r.from, r.period, r.text, r.html, r.sms, r.chat, shared,
                )
            })
            .collect();
        Ok((runs.len(), comp.posted, posted))
    })
    .unwrap()
}

fn any_number_of_compose_workers_posts_the_same_digests(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    // Several collections, so a batch reads several windows, which are
    // collapsed on the workers while the tick's thread reads the next.
    let mut colls = vec![cal.clone()];
    for k in 0..5 {
        let name = format!("Rota {k}");
        let t = at("2026-11-01T00:00:00Z");
        colls.push(
            items::create_collection(&mut c, t, &name, None)
                .unwrap()
                .uuid,
        );
    }
    const N: usize = 90;
    let channels = [&["email"][..], &["email", "sms"], &["sms"]];
    for i in 0..N {
        let name = format!("w{i}");
        let locale = ["en-US", "en-GB", "fr-FR"][i % 3];
        let phone = format!("+1555{i:07}");
        user(&mut c, &name, "America/Los_Angeles", locale, Some(&phone));
        let mut r = daily(&name, &colls[i % colls.len()]);
        r.channels = channels[(i / 3) % 3]
            .iter()
            .map(|s| s.to_string())
            .collect();
        r.include_own = i % 5 == 0;
        subscribe(&mut c, r);
    }
    calendar_week(&mut c, &cal);
    // One in four edits the calendar in the window: their digests leave
    // their own change out (a collapse of their own, on a worker), unless
    // they include their own changes.
    for i in (0..N).step_by(4) {
        let title = format!("Shift {i}");
        let edit = item(
            1_000 + i as u128,
            &colls[i % colls.len()],
            &title,
            "2026-11-28T18:00:00Z",
            &format!("w{i}"),
            "2026-11-22T12:00:00Z",
        );
        put(&mut c, &edit);
    }
    // And one edit by someone else in each, so no window is empty.
    for (k, coll) in colls.iter().enumerate() {
        let title = format!("Handover {k}");
        let edit = item(
            2_000 + k as u128,
            coll,
            &title,
            "2026-11-28T20:00:00Z",
            "ann",
            "2026-11-22T13:00:00Z",
        );
        put(&mut c, &edit);
    }
    let pool = db.open();
    let (runs, posted, one) = tick_on_workers(&mut c, &pool, 1, 25);
    assert_eq!((runs, posted, one.len()), (N, N, N));
    let own = one.iter().filter(|p| !p.7).count();
    assert!(
        (N / 5..N).contains(&own),
        "{own} digests of their own, the rest shared"
    );
    for workers in [2, 3] {
        let (runs, posted, many) = tick_on_workers(&mut c, &pool, workers, 25);
        assert_eq!((runs, posted), (N, N), "{workers} workers");
        assert_eq!(many.len(), one.len());
        for (k, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!(a, b, "digest {k} on 1 and on {workers} workers");
        }
    }
    // In one chunk every window is read for all its readers at once; in
    // chunks of 25 a window read for one chunk keeps only what that
    // chunk's editors need, and a later chunk's editor has it read again.
    // The same text either way (which renderings are shared may differ).
    let (_, _, whole) = tick_on_workers(&mut c, &pool, 2, 1_000);
    assert_eq!(whole.len(), one.len());
    for (k, (a, b)) in one.iter().zip(&whole).enumerate() {
        let text = |p: &(String, i64, String, String, String, String, String, bool)| {
            (
                p.0.clone(),
                p.1,
                p.2.clone(),
                p.3.clone(),
                p.4.clone(),
                p.5.clone(),
                p.6.clone(),
            )
        };
        assert_eq!(text(a), text(b), "digest {k} in chunks of 25 and of 1,000");
    }
}

/// The tick's thread plans a chunk's next batch while the workers finish
/// the one before, loading the names the next batch shows as the workers
/// read the names they were handed: a digest of the second batch that a
/// worker renders (its content is read by no one else) names its actor.
fn a_batch_planned_while_the_one_before_is_finished_names_its_own_actors(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    let late = items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Late", None)
        .unwrap()
        .uuid;
    // More than a batch of posts (500) share the calendar's digest, then
    // one follows a collection only zed edits.
    for i in 0..520 {
        let name = format!("u{i}");
        user(&mut c, &name, "America/Los_Angeles", "en-US", None);
        subscribe(&mut c, daily(&name, &cal));
    }
    user(&mut c, "loner", "America/Los_Angeles", "en-US", None);
    subscribe(&mut c, daily("loner", &late));
    user(&mut c, "zed", "Europe/Paris", "fr-FR", None);
    calendar_week(&mut c, &cal);
    put(
        &mut c,
        &item(
            3_000,
            &late,
            "Night shift",
            "2026-11-28T22:00:00Z",
            "zed",
            "2026-11-22T12:00:00Z",
        ),
    );
    let pool = db.open();
    for workers in [1, 2, 3] {
        let texts: Vec<String> = c
            .rolled_back(|c| {
                let mut comp = composer();
                comp.workers = workers;
                comp.read_through(&pool);
                let runs = digestd::schedule::tick::tick_in_chunks(
                    c,
                    at("2026-11-22T17:00:00Z"),
                    &mut comp,
                    1_000,
                )?;
                assert_eq!((runs.len(), comp.posted), (521, 521));
                Ok(requests(c).into_iter().map(|r| r.text).collect())
            })
            .unwrap();
        let last = texts.last().unwrap();
        assert!(last.contains("Night shift"), "{workers} workers: {last}");
        assert!(last.contains("zed"), "{workers} workers: {last}");
        for t in &texts {
            assert!(!t.contains("party "), "{workers} workers: {t}");
        }
    }
}

backend_tests!(
    any_number_of_compose_workers_posts_the_same_digests,
    a_batch_planned_while_the_one_before_is_finished_names_its_own_actors,
    a_chunk_posts_in_batches_and_each_run_points_at_its_own_digest,
);
