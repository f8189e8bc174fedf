//! A change reported late is never lost: a modification digest's window is
//! what was recorded since the last one was cut in the log, so a change
//! that reaches digestd after its hour's tick is in the next digest, once,
//! however old its `at`; one recorded before a subscription existed never
//! reaches it. On both back ends, through the real composer; on PostgreSQL
//! also a `record` transaction held open across a tick.

use crate::common;

use chrono::{DateTime, Duration, Utc};
use common::digest::{bodies, composer, user};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::RecordConfig;
use digestd::db::schema::nt_requests;
use digestd::db::DbConn;
use digestd::ingest::{self, AtBounds};
use digestd::manage;
use digestd::modlog;
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;

fn uuid(n: u128) -> String {
    uuid::Uuid::from_u128(n).to_string()
}

fn line(coll: &str, item: u128, title: &str, when: &str) -> String {
    serde_json::json!({
        "collection": coll, "item": uuid(item), "actor": "bob", "action": "created",
        "at": when, "title": title, "kind": "note",
    })
    .to_string()
}

/// `digestd record` of one line at `now` (its `at` checked against the
/// default bounds).
fn record(c: &mut DbConn, now: &str, coll: &str, item: u128, title: &str, when: &str) {
    let bounds = RecordConfig::default().at_bounds(at(now));
    let mods = ingest::parse_all(c, line(coll, item, title, when).as_bytes(), &bounds).unwrap();
    ingest::write_batched(c, &mods, 100, &mut |_| {}).unwrap();
}

fn sub(party: &str, frequency: &str, coll: &str) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: frequency.into(),
        kind: "modification".into(),
        collection: Some(coll.into()),
        hour: (frequency != "hourly").then_some(9),
        day: (frequency == "weekly").then(|| "mon".into()),
        ..Default::default()
    }
}

fn world(c: &mut DbConn) -> String {
    for name in ["amy", "ben", "cy", "bob"] {
        user(c, name, "UTC", "en-GB", None);
    }
    digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), "Docs", None)
        .unwrap()
        .uuid
}

/// Each posted digest: its recipient's name and its text, in request order.
fn digests(c: &mut DbConn) -> Vec<(String, String)> {
    use digestd::db::schema::parties;
    let to: Vec<String> = nt_requests::table
        .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
        .select(parties::name)
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let texts = bodies(c);
    assert_eq!(to.len(), texts.len());
    to.into_iter()
        .zip(texts.into_iter().map(|b| b.text))
        .collect()
}

/// How many of `who`'s digests mention `title`.
fn times(all: &[(String, String)], who: &str, title: &str) -> usize {
    all.iter()
        .filter(|(to, text)| to == who && text.contains(title))
        .count()
}

/// The world, and amy subscribed hourly to Docs at 08:30.
fn amy_hourly(db: &TestDb) -> (DbConn, String) {
    let mut c = db.conn();
    let docs = world(&mut c);
    manage::subscribe(
        &mut c,
        at("2026-11-23T08:30:00Z"),
        &sub("amy", "hourly", &docs),
    )
    .unwrap();
    (c, docs)
}

fn tick_at(c: &mut DbConn, t: DateTime<Utc>) {
    tick(c, t, &mut composer()).unwrap();
}

/// The reported scenario: "Late arrival" happened at 08:59:58 and reached
/// digestd at 09:00:03, after the 09:00 tick: it is in amy's 10:00 digest,
/// marked as earlier, and nowhere else.
fn a_change_recorded_after_its_hours_tick_is_in_the_next_digest(db: &TestDb) {
    let (mut c, docs) = amy_hourly(db);
    let on_time = "2026-11-23T08:40:00Z";
    record(&mut c, on_time, &docs, 1, "On time", on_time);
    tick_at(&mut c, at("2026-11-23T09:00:00Z"));
    record(
        &mut c,
        "2026-11-23T09:00:03Z",
        &docs,
        2,
        "Late arrival",
        "2026-11-23T08:59:58Z",
    );
    let next = "2026-11-23T09:20:00Z";
    record(&mut c, next, &docs, 3, "Next hour", next);
    tick_at(&mut c, at("2026-11-23T10:00:00Z"));

    let all = digests(&mut c);
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all[0].1.contains("On time") && !all[0].1.contains("Late arrival"));
    let ten = &all[1].1;
    assert!(
        ten.contains("Late arrival") && ten.contains("Next hour"),
        "{ten}"
    );
    assert!(!ten.contains("On time"), "{ten}");
    assert!(
        ten.contains("Earlier, Mon 23 Nov, 08:59 UTC: bob created the note Late arrival"),
        "the late change says when it happened: {ten}"
    );
    assert!(
        !ten.contains("Earlier, Mon 23 Nov, 09:20"),
        "an on-time change is not marked: {ten}"
    );
    assert_eq!(times(&all, "amy", "Late arrival"), 1);
}

/// A change dated two days back, recorded now, reaches the hourly, daily
/// and weekly subscribers once each; one recorded (with the same old date)
/// before their subscriptions existed reaches none of them.
fn an_old_change_recorded_now_reaches_every_frequency_once(db: &TestDb) {
    let mut c = db.conn();
    let docs = world(&mut c);
    let two_days_ago = "2026-11-21T08:00:00Z";
    record(
        &mut c,
        "2026-11-23T08:29:00Z",
        &docs,
        1,
        "Before them",
        two_days_ago,
    );
    for (who, f) in [("amy", "hourly"), ("ben", "daily"), ("cy", "weekly")] {
        manage::subscribe(&mut c, at("2026-11-23T08:30:00Z"), &sub(who, f, &docs)).unwrap();
    }
    record(
        &mut c,
        "2026-11-23T10:15:00Z",
        &docs,
        2,
        "Old news",
        two_days_ago,
    );
    // Every hour for nine days: past cy's second Monday at 09:00.
    let mut t = at("2026-11-23T09:00:00Z");
    while t <= at("2026-12-01T12:00:00Z") {
        tick_at(&mut c, t);
        t += Duration::hours(1);
    }
    let all = digests(&mut c);
    for who in ["amy", "ben", "cy"] {
        assert_eq!(times(&all, who, "Old news"), 1, "{who}: {all:#?}");
        assert_eq!(times(&all, who, "Before them"), 0, "{who}: {all:#?}");
    }
    assert_eq!(all.len(), 3, "one digest each, nothing empty: {all:#?}");
}

/// A subscription paused and resumed keeps what was waiting: the changes
/// recorded before the pause, and those recorded while it was paused, are
/// in its first digest after it.
fn a_pause_and_resume_drop_nothing_that_was_waiting(db: &TestDb) {
    let (mut c, docs) = amy_hourly(db);
    let before = "2026-11-23T08:40:00Z";
    record(&mut c, before, &docs, 1, "Before the pause", before);
    let id = digestd::subscriptions::list(&mut c).unwrap()[0].id;
    digestd::subscriptions::pause(&mut c, at(before), id).unwrap();
    let during = "2026-11-23T09:10:00Z";
    tick_at(&mut c, at("2026-11-23T09:00:00Z"));
    record(&mut c, during, &docs, 2, "While paused", during);
    manage::resume(&mut c, id, at("2026-11-23T09:30:00Z")).unwrap();
    tick_at(&mut c, at("2026-11-23T10:00:00Z"));
    let all = digests(&mut c);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].1.contains("Before the pause"), "{}", all[0].1);
    assert!(all[0].1.contains("While paused"), "{}", all[0].1);
}

/// PostgreSQL: a `record` transaction that took its position before the
/// 10:00 tick and commits after it is in the 11:00 digest, once. (SQLite
/// has one writer: the tick waits for the transaction.)
fn a_transaction_held_open_across_a_tick_is_in_the_next_digest(db: &TestDb) {
    if db.url.starts_with("sqlite") {
        return;
    }
    let (mut c, docs) = amy_hourly(db);
    tick_at(&mut c, at("2026-11-23T09:00:00Z"));
    let slow = "2026-11-23T09:30:00Z";
    let bounds = RecordConfig::default().at_bounds(at(slow));
    let mods = ingest::parse_all(
        &mut c,
        line(&docs, 1, "Slow commit", slow).as_bytes(),
        &bounds,
    )
    .unwrap();
    let mut writer = db.conn();
    writer
        .write_tx(|w| {
            modlog::record_in_tx(w, &mods)?;
            // The tick runs on its own connection while this one is open.
            tick_at(&mut c, at("2026-11-23T10:00:00Z"));
            Ok(())
        })
        .unwrap();
    let quick = "2026-11-23T10:20:00Z";
    record(&mut c, quick, &docs, 2, "Quick commit", quick);
    assert!(digests(&mut c).is_empty(), "nothing was visible at 10:00");
    tick_at(&mut c, at("2026-11-23T11:00:00Z"));
    let all = digests(&mut c);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].1.contains("Slow commit") && all[0].1.contains("Quick commit"));
    tick_at(&mut c, at("2026-11-23T12:00:00Z"));
    assert_eq!(digests(&mut c).len(), 1, "and not again");
}

/// `at` is checked against the clock: ahead beyond the skew, older than
/// the horizon, not RFC 3339 are refused (one line each, nothing written);
/// an offset of +14:00 is an instant like any other.
fn at_is_bounded_by_the_clock(db: &TestDb) {
    let mut c = db.conn();
    let docs = world(&mut c);
    let now = at("2026-11-23T09:00:00Z");
    let bounds = RecordConfig::default().at_bounds(now);
    let parse = |c: &mut DbConn, when: &str| {
        ingest::parse_all(c, line(&docs, 1, "x", when).as_bytes(), &bounds)
    };
    for (when, why) in [
        ("2099-01-01T00:00:00Z", "ahead of the clock"),
        ("2026-11-23T09:05:01Z", "ahead of the clock"),
        ("2026-11-24T09:00:00+14:00", "ahead of the clock"),
        ("1969-12-31T23:59:59Z", "too old"),
        ("2026-10-24T08:59:59Z", "too old"),
        ("yesterday", "use RFC 3339"),
        ("2026-11-23 09:00:00", "use RFC 3339"),
        ("2026-11-23T09:00:00+24:00", "use RFC 3339"),
    ] {
        let e = parse(&mut c, when).unwrap_err().to_string();
        assert!(e.contains(why), "{when}: {e}");
        assert!(!e.contains('\n'), "{when}: {e}");
    }
    for (when, expected) in [
        ("2026-11-23T23:00:00+14:00", now),
        ("2026-11-23T09:05:00Z", now + Duration::minutes(5)),
        ("2026-10-24T09:00:00Z", now - Duration::days(30)),
    ] {
        let mods = parse(&mut c, when).unwrap();
        assert_eq!(mods[0].occurred_at, expected, "{when}");
    }
    // Without bounds (a benchmark's clock of its own) anything RFC 3339 goes.
    let far = ingest::parse_all(
        &mut c,
        line(&docs, 1, "x", "2099-01-01T00:00:00Z").as_bytes(),
        &AtBounds::ANY,
    );
    assert!(far.is_ok());
    assert_eq!(modlog::count(&mut c).unwrap(), 0, "nothing was written");
}

/// A purge keeps what a digest still owes: a change recorded late with an
/// `at` past the purge's cutoff stays until the digest that holds it.
fn a_purge_keeps_late_changes_until_they_are_sent(db: &TestDb) {
    let (mut c, docs) = amy_hourly(db);
    record(
        &mut c,
        "2026-11-23T08:40:00Z",
        &docs,
        1,
        "Old and late",
        "2026-11-01T08:00:00Z",
    );
    let p = modlog::purge(&mut c, at("2026-11-16T00:00:00Z")).unwrap();
    assert_eq!((p.modifications, p.waiting), (0, 1));
    tick_at(&mut c, at("2026-11-23T09:00:00Z"));
    assert_eq!(times(&digests(&mut c), "amy", "Old and late"), 1);
    let p = modlog::purge(&mut c, at("2026-11-16T00:00:00Z")).unwrap();
    assert_eq!((p.modifications, p.waiting), (1, 0));
}

backend_tests!(
    a_change_recorded_after_its_hours_tick_is_in_the_next_digest,
    an_old_change_recorded_now_reaches_every_frequency_once,
    a_pause_and_resume_drop_nothing_that_was_waiting,
    a_transaction_held_open_across_a_tick_is_in_the_next_digest,
    at_is_bounded_by_the_clock,
    a_purge_keeps_late_changes_until_they_are_sent,
    the_migration_sends_nothing_again_and_keeps_what_waits,
);

/// `digestd record` and `digestd item put` refuse an `at` outside the
/// bounds with exit 2 and one line, and write nothing; `--now` moves the
/// bounds with the clock.
#[test]
fn the_cli_refuses_an_at_outside_the_bounds() {
    use common::cli::{item_json, lines, mod_line, world, ITEM_A};
    let (env, coll) = world();
    let now = "2026-11-23T09:00:00Z";
    for (at, why) in [
        ("2099-01-01T00:00:00Z", "ahead of the clock"),
        ("1969-12-31T23:59:59Z", "too old"),
        ("not a time", "use RFC 3339"),
        ("2026-11-24T09:00:00+14:00", "ahead of the clock"),
    ] {
        let line = lines(&[mod_line(&coll, ITEM_A, "edited", at)]);
        env.refused(&["--now", now, "record"], &line, why);
        let mut item = item_json(&coll, "Lunch");
        item["at"] = at.into();
        env.refused(
            &["--now", now, "item", "put"],
            item.to_string().as_bytes(),
            why,
        );
    }
    let ok = lines(&[mod_line(
        &coll,
        ITEM_A,
        "edited",
        "2026-11-23T23:00:00+14:00",
    )]);
    assert_eq!(env.ok_in(&["--now", now, "record"], &ok).trim(), "1");
}

/// Every migration before the log's positions, on the raw connection.
fn migrate_to_before_log_positions(c: &mut DbConn) {
    use diesel::migration::{Migration, MigrationSource};
    use diesel_migrations::MigrationHarness;
    fn run<DB: diesel::backend::Backend, C: MigrationHarness<DB>, S: MigrationSource<DB>>(
        c: &mut C,
        src: impl Fn() -> S,
    ) {
        loop {
            let pending = c.pending_migrations(src()).unwrap();
            let Some(next) = pending.first() else { break };
            if next.name().to_string().starts_with("2026-12-03-000001") {
                break;
            }
            c.run_next_migration(src()).unwrap();
        }
    }
    match c {
        DbConn::Sqlite(s) => run(s, || digestd::db::SQLITE_MIGRATIONS),
        DbConn::Postgres(p) => run(p, || digestd::db::POSTGRES_MIGRATIONS),
    }
}

/// A database from before the log had positions: amy's hourly digest ran
/// at 09:00 with "Sent at nine" (08:50); "Due at ten" (09:10) is waiting.
/// After the migration the 10:00 digest holds "Due at ten" alone: nothing
/// delivered is sent again, nothing waiting is lost.
fn the_migration_sends_nothing_again_and_keeps_what_waits(db: &TestDb) {
    use diesel::connection::SimpleConnection;
    let mut c = digestd::db::DbUrl::parse(&db.url)
        .unwrap()
        .connect()
        .unwrap();
    migrate_to_before_log_positions(&mut c);
    let coll = "6f1b0a52-9d3e-4c1a-9f44-0c7de1c0a001";
    let m = |id: i64, at: &str, title: &str| {
        format!(
            "INSERT INTO modifications (id, tx_id, occurred_at, collection_id, item_uuid, \
             actor_id, action, item_kind, item_title) VALUES ({id}, 't{id}', '{at}', 1001, \
             '{}', 1002, 'created', 'note', '{title}');",
            uuid(id as u128)
        )
    };
    c.batch_execute(&format!(
        "INSERT INTO parties (id, kind, name, created_at) VALUES \
           (1001, 'user', 'amy', '2026-11-01 00:00:00'), (1002, 'user', 'bob', '2026-11-01 00:00:00');
         INSERT INTO users (party_id, timezone, subscriber_code) VALUES (1001, 'UTC', 'a'), (1002, 'UTC', 'b');
         INSERT INTO contact_points (party_id, channel, address, verified, disabled, bounce_count, created_at) \
           VALUES (1001, 'email', 'amy@example.com', true, false, 0, '2026-11-01 00:00:00');
         INSERT INTO collections (id, uuid, name, created_at) VALUES (1001, '{coll}', 'Docs', '2026-11-01 00:00:00');
         INSERT INTO subscriptions (id, party_id, collection_id, kind, frequency, channels, created_at, \
           active_since, next_due_at, last_scheduled_at, last_period, last_window_end) VALUES \
           (1001, 1001, 1001, 'modification', 'hourly', 'email', '2026-11-23 08:30:00', '2026-11-23 08:30:00', \
            '2026-11-23 10:00:00', '2026-11-23 09:00:00', '2026-11-23T09:00+00:00', '2026-11-23 09:00:00');
         INSERT INTO subscription_runs (subscription_id, period, scheduled_at, window_start, \
           window_end, ran_at) VALUES (1001, '2026-11-23T09:00+00:00', '2026-11-23 09:00:00', \
           '2026-11-23 08:30:00', '2026-11-23 09:00:00', '2026-11-23 09:00:00');
         {}{}",
        m(1001, "2026-11-23 08:50:00", "Sent at nine"),
        m(1002, "2026-11-23 09:10:00", "Due at ten"),
    ))
    .unwrap();
    c.migrate().unwrap();
    tick_at(&mut c, at("2026-11-23T10:00:00Z"));
    let all = digests(&mut c);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].1.contains("Due at ten"), "{}", all[0].1);
    assert!(!all[0].1.contains("Sent at nine"), "{}", all[0].1);
    // And what is recorded now, late, comes next.
    let late = "2026-11-23T10:00:05Z";
    record(&mut c, late, coll, 3, "Late again", "2026-11-23T09:59:00Z");
    tick_at(&mut c, at("2026-11-23T11:00:00Z"));
    let all = digests(&mut c);
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all[1].1.contains("Late again"), "{}", all[1].1);
}
