//! "Send it now" (`schedule::flush_in_tx`, `digestd subscription flush`,
//! `POST /api/v1/subscriptions/{id}/flush`) on each back end: what waits
//! is posted once, through the queue as a tick posts a digest; the next
//! tick holds only what came after; nothing waiting posts nothing and
//! writes nothing; a storm posts one digest; a flush racing a tick (and a
//! writer) delivers every change exactly once.

use std::sync::{Arc, Barrier};

use diesel::prelude::*;
use digestd::db::schema::{nt_bodies, nt_messages, nt_requests, subscription_runs, subscriptions};
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::items::{self, ItemInput};
use digestd::schedule::{self, Flushed};
use digestd::subscriptions::{SubscribeRequest, Subscribed};

use crate::common::digest::{composer, user};
use crate::common::{at, TestDb};

pub const T0: &str = "2026-11-22T00:00:00Z";

/// ann (UTC) follows the Rota at `frequency` (daily and weekly at 09:00,
/// weekly on Mondays); gr24 edits it. Returns the Rota's UUID and ann's
/// subscription.
pub fn world(c: &mut DbConn, frequency: &str, send_empty: bool) -> (String, SubscriptionId) {
    user(c, "ann", "UTC", "en-GB", Some("+34600111222"));
    user(c, "gr24", "Europe/Paris", "en-GB", None);
    let rota = items::create_collection(c, at("2026-11-01T00:00:00Z"), "Rota", None)
        .unwrap()
        .uuid;
    let id = subscribe(c, frequency, &rota, send_empty);
    (rota, id)
}

pub fn subscribe(c: &mut DbConn, frequency: &str, coll: &str, send_empty: bool) -> SubscriptionId {
    subscribe_kind(c, (frequency, "modification"), coll, send_empty)
}

fn subscribe_kind(
    c: &mut DbConn,
    (frequency, kind): (&str, &str),
    coll: &str,
    send_empty: bool,
) -> SubscriptionId {
    let timed = frequency != "hourly";
    let r = SubscribeRequest {
        party: "ann".into(),
        frequency: frequency.into(),
        kind: kind.into(),
        collection: Some(coll.into()),
        hour: timed.then_some(9),
        day: (frequency == "weekly").then(|| "mon".into()),
        send_empty,
        ..Default::default()
    };
    match digestd::manage::subscribe(c, at(T0), &r).unwrap() {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    }
}

/// gr24 creates item `n`, titled `title`, at `when` (recorded then).
pub fn change(c: &mut DbConn, coll: &str, n: u128, title: &str, when: &str) {
    let i = ItemInput {
        uuid: uuid::Uuid::from_u128(n).to_string(),
        collection: Some(coll.into()),
        kind: "event".into(),
        title: title.into(),
        start: Some("2026-12-24T21:00:00Z".into()),
        actor: "gr24".into(),
        at: Some(when.into()),
        ..Default::default()
    };
    items::put_item(c, at(when), &i).unwrap();
}

/// The binary on `db` at 04:00, as a process; its output, whatever it is.
pub fn cli(db: &TestDb, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_digestd"))
        .args(["--db", &db.url, "--now", "2026-11-22T04:00:00Z"])
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

/// One flush at `when`, in its own transaction.
pub fn flush(c: &mut DbConn, id: SubscriptionId, when: &str) -> Flushed {
    let mut comp = composer();
    c.write_tx(|c| schedule::flush_in_tx(c, id, at(when), &mut comp))
        .unwrap()
}

pub fn tick(c: &mut DbConn, when: &str) -> usize {
    schedule::tick::tick(c, at(when), &mut composer())
        .unwrap()
        .len()
}

/// Each digest posted: its subscription, period, status and email text
/// (filled as the queue sends it), by request id.
pub fn digests(c: &mut DbConn) -> Vec<(Option<i64>, String, String, String)> {
    let rows: Vec<(Option<i64>, Option<String>, String)> = nt_requests::table
        .select((
            nt_requests::subscription_id,
            nt_requests::period,
            nt_requests::status,
        ))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let bodies = crate::common::digest::bodies(c);
    assert_eq!(rows.len(), bodies.len());
    rows.into_iter()
        .zip(bodies)
        .map(|((s, p, st), b)| (s, p.unwrap_or_default(), st, b.text))
        .collect()
}

/// How many digests name `title`.
pub fn sent(c: &mut DbConn, title: &str) -> usize {
    digests(c)
        .iter()
        .filter(|d| d.3.contains(&format!("event {title},")))
        .count()
}

/// What a flush may write: requests and their bodies, runs, and the
/// subscriptions' scheduler columns.
pub fn written(c: &mut DbConn) -> String {
    let counts = (
        nt_requests::table.count().get_result::<i64>(c).unwrap(),
        nt_messages::table.count().get_result::<i64>(c).unwrap(),
        nt_bodies::table.count().get_result::<i64>(c).unwrap(),
        subscription_runs::table
            .count()
            .get_result::<i64>(c)
            .unwrap(),
    );
    type Row = (
        i64,
        Option<chrono::NaiveDateTime>,
        Option<chrono::NaiveDateTime>,
        Option<String>,
        Option<chrono::NaiveDateTime>,
        String,
        String,
        Option<i32>,
    );
    let subs: Vec<Row> = subscriptions::table
        .select((
            subscriptions::id,
            subscriptions::next_due_at,
            subscriptions::last_window_end,
            subscriptions::last_period,
            subscriptions::last_scheduled_at,
            subscriptions::last_log_cut,
            subscriptions::frequency,
            subscriptions::hour_of_day,
        ))
        .order(subscriptions::id.asc())
        .load(c)
        .unwrap();
    format!("{counts:?} {subs:?}")
}

fn next_due(c: &mut DbConn, id: SubscriptionId) -> Option<chrono::NaiveDateTime> {
    subscriptions::table
        .find(id.0)
        .select(subscriptions::next_due_at)
        .first(c)
        .unwrap()
}

fn sends_what_waits_once_and_the_next_tick_only_what_came_after(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    change(&mut c, &rota, 2, "Beta", "2026-11-22T03:00:00Z");
    let due = next_due(&mut c, id);
    let Flushed::Sent { request, run } = flush(&mut c, id, "2026-11-22T04:00:00Z") else {
        panic!("two changes wait");
    };
    assert_eq!(next_due(&mut c, id), due, "the schedule does not move");
    let d = digests(&mut c);
    assert_eq!(d.len(), 1);
    let (sub, period, status, text) = &d[0];
    assert_eq!((*sub, status.as_str()), (Some(id.0), "pending"));
    assert!(period.starts_with("flush-20261122T040000"), "{period}");
    assert!(text.contains("event Alpha,") && text.contains("event Beta,"));
    assert!(text.starts_with("2 changes in Rota since"), "{text}");
    // The request is the queue's, as a tick's digest is.
    let shown = digestd::deliver::queue::show(&mut c, request).unwrap();
    assert_eq!(serde_json::to_value(&shown).unwrap()["kind"], "digest");
    // Its whole-digest page opens from the run the flush recorded.
    let whole = digestd::digest::whole(
        &mut c,
        &Default::default(),
        &Default::default(),
        id,
        &run.period.key,
        at("2026-11-22T05:00:00Z"),
    )
    .unwrap()
    .expect("the flush's period has a page");
    assert_eq!(whole.items, 2);
    // Pressed again: nothing new waits.
    let before = written(&mut c);
    assert_eq!(flush(&mut c, id, "2026-11-22T04:00:00Z"), Flushed::Nothing);
    assert_eq!(written(&mut c), before);
    change(&mut c, &rota, 3, "Gamma", "2026-11-22T05:00:00Z");
    assert_eq!(tick(&mut c, "2026-11-22T09:00:00Z"), 1);
    let d = digests(&mut c);
    assert_eq!(d.len(), 2);
    assert!(d[1].3.contains("event Gamma,"), "{}", d[1].3);
    assert!(d[1].3.starts_with("1 change in Rota since"), "{}", d[1].3);
    for t in ["Alpha", "Beta", "Gamma"] {
        assert_eq!(sent(&mut c, t), 1, "{t}");
    }
    assert_eq!(d[1].1, "2026-11-22", "the regular digest keeps its period");
}

fn nothing_waiting_sends_nothing_even_with_send_empty(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", true);
    let before = written(&mut c);
    assert_eq!(flush(&mut c, id, "2026-11-22T04:00:00Z"), Flushed::Nothing);
    // ann's own change is not news to ann.
    let own = ItemInput {
        actor: "ann".into(),
        ..ItemInput {
            uuid: uuid::Uuid::from_u128(9).to_string(),
            collection: Some(rota.clone()),
            kind: "event".into(),
            title: "Mine".into(),
            start: Some("2026-12-24T21:00:00Z".into()),
            at: Some("2026-11-22T04:10:00Z".into()),
            ..Default::default()
        }
    };
    items::put_item(&mut c, at("2026-11-22T04:10:00Z"), &own).unwrap();
    assert_eq!(written(&mut c), before);
    assert_eq!(flush(&mut c, id, "2026-11-22T04:30:00Z"), Flushed::Nothing);
    assert_eq!(written(&mut c), before, "nothing written");
}

fn refuses_unknown_paused_and_forward(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    let fwd = subscribe_kind(&mut c, ("daily", "forward"), &rota, false);
    digestd::subscriptions::pause(&mut c, at(T0), id).unwrap();
    let before = written(&mut c);
    let mut comp = composer();
    for (sub, kind) in [
        (SubscriptionId(999_999), "not found"),
        (id, "paused"),
        (fwd, "coming up"),
    ] {
        let e = c
            .write_tx(|c| schedule::flush_in_tx(c, sub, at("2026-11-22T04:00:00Z"), &mut comp))
            .unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(kind) || msg.contains("no subscription"),
            "{msg}"
        );
    }
    assert_eq!(written(&mut c), before);
}

/// Twenty flushes at once, each on its own connection: one digest.
fn a_storm_posts_one_digest(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    let gate = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let (gate, url) = (gate.clone(), db.url.clone());
            std::thread::spawn(move || {
                let mut c = TestDb::existing(&url).conn();
                gate.wait();
                flush(&mut c, id, "2026-11-22T04:00:00Z")
            })
        })
        .collect();
    let done: Vec<Flushed> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let sent_n = done
        .iter()
        .filter(|f| matches!(f, Flushed::Sent { .. }))
        .count();
    assert_eq!(sent_n, 1, "{done:?}");
    assert_eq!(digests(&mut c).len(), 1);
    assert_eq!(sent(&mut c, "Alpha"), 1);
}

/// A writer records changes while a flusher and the hourly tick run at
/// once, each on its own connection, over twelve hours: every change is in
/// exactly one digest.
fn a_flush_racing_the_tick_delivers_each_change_once(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "hourly", false);
    let hours = 12u32;
    let per_hour = 6u32;
    let instant = |h: u32, m: u32| format!("2026-11-22T{h:02}:{m:02}:00Z");
    let gate = Arc::new(Barrier::new(3));
    let spawn = |role: u8| {
        let (gate, url, rota) = (gate.clone(), db.url.clone(), rota.clone());
        std::thread::spawn(move || {
            let mut c = TestDb::existing(&url).conn();
            for h in 1..=hours {
                gate.wait();
                match role {
                    0 => {
                        for k in 0..per_hour {
                            let n = u128::from(h * 100 + k);
                            change(&mut c, &rota, n, &format!("C{n}"), &instant(h - 1, 50 + k));
                        }
                    }
                    1 => {
                        for _ in 0..3 {
                            flush(&mut c, id, &instant(h - 1, 59));
                        }
                    }
                    _ => {
                        tick(&mut c, &instant(h, 0));
                    }
                }
            }
        })
    };
    let threads: Vec<_> = (0..3).map(spawn).collect();
    for t in threads {
        t.join().unwrap();
    }
    // Whatever is left goes out with the next tick.
    tick(&mut c, &instant(hours + 1, 0));
    let d = digests(&mut c);
    assert!(d.len() >= 2, "{} digests", d.len());
    for h in 1..=hours {
        for k in 0..per_hour {
            let n = h * 100 + k;
            assert_eq!(sent(&mut c, &format!("C{n}")), 1, "C{n} in {d:#?}");
        }
    }
    let flushed = d.iter().filter(|x| x.1.starts_with("flush-")).count();
    eprintln!("{} digests, {flushed} of them flushes", d.len());
}

/// `digestd subscription flush` as a process: the request id, then
/// "nothing waiting" (exit 0); an unknown id is exit 2 with one line.
fn the_command_line_flushes(db: &TestDb) {
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    let run = |args: &[&str]| cli(db, args);
    let sid = id.0.to_string();
    let out = run(&["subscription", "flush", &sid]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let req: i64 = stdout.lines().last().unwrap().parse().unwrap();
    let shown = String::from_utf8(run(&["request", "show", &req.to_string()]).stdout).unwrap();
    assert!(
        shown.contains("pending") && shown.contains("digest"),
        "{shown}"
    );
    let out = run(&["subscription", "flush", &sid]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "nothing waiting\n");
    let before = written(&mut c);
    // Clap's own usage errors (not a number) say more than one line.
    for bad in ["999999", "x", "-1", "1\r\n2"] {
        let out = run(&["subscription", "flush", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error:") || err.starts_with("digestd:"),
            "{err}"
        );
    }
    let err = String::from_utf8(run(&["subscription", "flush", "999999"]).stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(written(&mut c), before);
    assert_eq!(sent(&mut c, "Alpha"), 1);
}

crate::backend_tests!(
    sends_what_waits_once_and_the_next_tick_only_what_came_after,
    nothing_waiting_sends_nothing_even_with_send_empty,
    refuses_unknown_paused_and_forward,
    a_storm_posts_one_digest,
    a_flush_racing_the_tick_delivers_each_change_once,
    the_command_line_flushes,
);

/// The interleaving the chain must survive, made to happen on PostgreSQL:
/// the tick takes its cut, then waits for the subscription's row, which a
/// flush holds; a change is recorded meanwhile (after the tick's cut), the
/// flush sends it and a change dated before the flush's instant but after
/// the tick's, and commits. The tick must not go back to its own cut or
/// its own instant: the next digest holds neither change again.
#[test]
fn a_flush_between_the_ticks_cut_and_its_claim_is_not_sent_again() {
    let Some(db) = TestDb::postgres() else {
        eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set");
        return;
    };
    let mut c = db.conn();
    let (rota, id) = world(&mut c, "daily", false);
    change(&mut c, &rota, 1, "Alpha", "2026-11-22T02:00:00Z");
    let mut x = db.conn();
    let url = db.url.clone();
    let done = x
        .write_tx(|x| {
            x.lock_row_in_tx("subscriptions", id.0)?;
            let ticker = std::thread::spawn(move || {
                tick(&mut TestDb::existing(&url).conn(), "2026-11-22T09:00:00Z")
            });
            wait_for_a_lock_wait(&mut c);
            change(&mut c, &rota, 2, "Beta", "2026-11-22T08:20:00Z");
            change(&mut c, &rota, 3, "Gamma", "2026-11-22T09:05:00Z");
            let sent = schedule::flush_in_tx(x, id, at("2026-11-22T09:10:00Z"), &mut composer())?;
            Ok((ticker, sent))
        })
        .unwrap();
    let (ticker, sent_now) = done;
    assert!(matches!(sent_now, Flushed::Sent { .. }));
    assert_eq!(ticker.join().unwrap(), 1, "the tick ran its period");
    change(&mut c, &rota, 4, "Delta", "2026-11-22T10:00:00Z");
    assert_eq!(tick(&mut c, "2026-11-23T09:00:00Z"), 1);
    for t in ["Alpha", "Beta", "Gamma", "Delta"] {
        assert_eq!(sent(&mut c, t), 1, "{t}: {:#?}", digests(&mut c));
    }
}

/// Waits (30 s at most) until another session of this database waits for
/// a lock.
fn wait_for_a_lock_wait(c: &mut DbConn) {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let w: N = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .get_result(c)
        .unwrap();
        if w.n > 0 {
            return;
        }
        assert!(std::time::Instant::now() < until, "the tick never waited");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
