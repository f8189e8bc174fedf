//! A group's preferences on both back ends (issue 21, item 14): a group
//! in Tokyo gets its daily digest at its own local hour and its weekly one
//! in weeks that start on its own first day; `group set` moves the next
//! due time exactly as `user set` moves a user's; the digest is written in
//! the group's zone and locale; the groups that existed before the
//! preferences keep UTC, Monday and 08:00.

use crate::common;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::{group_prefs, parties as party_rows, subscriptions};
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::manage;
use digestd::parties::{self, NewGroup, NewUser, UserChanges};
use digestd::schedule::grid::{self, Bucket};
use digestd::schedule::tick::{tick, Discard};
use digestd::schedule::{preview_run, DueRun};
use digestd::subscriptions::SubscribeRequest;

fn group(c: &mut DbConn, name: &str, tz: &str, week_start: &str, daily_hour: i64) {
    let new = NewGroup {
        name: name.into(),
        prefs: UserChanges {
            timezone: Some(tz.into()),
            week_start: Some(week_start.into()),
            daily_hour: Some(daily_hour),
            ..Default::default()
        },
        ..Default::default()
    };
    parties::create_group_with(c, at("2026-11-01T00:00:00Z"), &new).unwrap();
}

/// Subscribes `party` to everything; hour and day left to its preferences
/// unless given.
fn sub(
    c: &mut DbConn,
    party: &str,
    freq: &str,
    day: Option<&str>,
    now: DateTime<Utc>,
) -> SubscriptionId {
    let req = SubscribeRequest {
        party: party.into(),
        frequency: freq.into(),
        kind: "modification".into(),
        day: day.map(str::to_string),
        ..Default::default()
    };
    manage::subscribe(c, now, &req).unwrap().id()
}

/// Ticks every hour on the hour in [from, to).
fn ticks(c: &mut DbConn, from: &str, to: &str) -> Vec<DueRun> {
    let (mut t, end) = (at(from), at(to));
    let mut runs = vec![];
    while t < end {
        runs.extend(tick(c, t, &mut Discard).unwrap());
        t += Duration::hours(1);
    }
    runs
}

fn of(runs: &[DueRun], id: SubscriptionId) -> Vec<(String, String, String)> {
    runs.iter()
        .filter(|r| r.subscription == id)
        .map(|r| {
            (
                r.period.key.clone(),
                r.period.scheduled_local(r.tz).to_rfc3339(),
                r.period.scheduled.to_rfc3339(),
            )
        })
        .collect()
}

fn next_due(c: &mut DbConn, id: SubscriptionId) -> NaiveDateTime {
    subscriptions::table
        .find(id.0)
        .select(subscriptions::next_due_at)
        .first::<Option<NaiveDateTime>>(c)
        .unwrap()
        .unwrap()
}

fn a_tokyo_group_is_due_at_its_local_hour_in_its_own_weeks(db: &TestDb) {
    let mut c = db.conn();
    group(&mut c, "tokyo", "Asia/Tokyo", "sun", 9);
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "plain", None).unwrap();
    let t0 = at("2026-11-19T00:00:00Z"); // a Thursday; 09:00 in Tokyo
    let daily = sub(&mut c, "tokyo", "daily", None, t0);
    let weekly = sub(&mut c, "tokyo", "weekly", None, t0);
    let wednesday = sub(&mut c, "tokyo", "weekly", Some("wed"), t0);
    let plain = sub(&mut c, "plain", "daily", None, t0);
    let stored: Vec<(Option<i32>, Option<i32>)> = subscriptions::table
        .order(subscriptions::id)
        .select((subscriptions::hour_of_day, subscriptions::day_of_week))
        .load(&mut c)
        .unwrap();
    assert_eq!(
        stored,
        [
            (Some(9), None),
            (Some(9), Some(6)), // the group's daily hour, on its first day
            (Some(9), Some(2)),
            (Some(8), None), // a group with the defaults: 08:00
        ]
    );
    // What a tick would do, before any: 09:00 Tokyo is midnight UTC.
    let p = preview_run(&mut c, daily, at("2026-11-20T00:30:00Z")).unwrap();
    assert_eq!(p.run.tz.name(), "Asia/Tokyo");
    assert_eq!(p.run.period.key, "2026-11-20");
    assert_eq!(p.run.period.scheduled, at("2026-11-20T00:00:00Z"));
    // The grid puts the group's subscriptions at 09:00 local, 00:00 UTC.
    let (local, server) = grid::build(&mut c, at("2026-11-23T12:00:00Z"), None).unwrap();
    let nine = |d| local.count(Bucket::new(d, 9).unwrap());
    let midnight = |d| server.count(Bucket::new(d, 0).unwrap());
    assert_eq!((nine(0), nine(2), nine(6)), (1, 2, 2), "Mon; Wed; Sun");
    assert_eq!((midnight(0), midnight(2), midnight(6)), (1, 2, 2));
    assert_eq!(
        server.count(Bucket::new(0, 8).unwrap()),
        1,
        "plain at 08:00Z"
    );

    let runs = ticks(&mut c, "2026-11-19T00:00:00Z", "2026-11-30T00:00:00Z");
    let d = of(&runs, daily);
    assert_eq!(d.len(), 11, "the 19th to the 29th, once each: {d:?}");
    assert_eq!(
        d[0],
        (
            "2026-11-19".into(),
            "2026-11-19T09:00:00+09:00".into(),
            "2026-11-19T00:00:00+00:00".into()
        )
    );
    assert!(d.iter().all(
        |(_, local, utc)| local.contains("T09:00:00+09:00") && utc.ends_with("T00:00:00+00:00")
    ));
    // Weeks start on Sunday: the weekly digests go out on Sundays 09:00
    // Tokyo, and Wednesday's belongs to the week that began the Sunday
    // before (with Monday weeks its key would be week-2026-11-23).
    assert_eq!(
        of(&runs, weekly),
        [
            (
                "week-2026-11-22".into(),
                "2026-11-22T09:00:00+09:00".into(),
                "2026-11-22T00:00:00+00:00".into()
            ),
            (
                "week-2026-11-29".into(),
                "2026-11-29T09:00:00+09:00".into(),
                "2026-11-29T00:00:00+00:00".into()
            ),
        ]
    );
    assert_eq!(
        of(&runs, wednesday),
        [(
            "week-2026-11-22".into(),
            "2026-11-25T09:00:00+09:00".into(),
            "2026-11-25T00:00:00+00:00".into()
        )]
    );
    let p = of(&runs, plain);
    assert_eq!(p.len(), 11);
    assert!(
        p.iter().all(|(_, l, _)| l.ends_with("T08:00:00+00:00")),
        "{p:?}"
    );
}

/// `group set --tz` reschedules as `user set --tz` does: a user and a group
/// in the same zone with the same subscription move to the same instants.
fn group_set_moves_the_next_due_time_as_user_set_does(db: &TestDb) {
    let mut c = db.conn();
    let t0 = at("2026-11-19T00:00:00Z");
    group(&mut c, "team", "Asia/Tokyo", "mon", 8);
    let new_user = NewUser {
        name: "ann".into(),
        timezone: "Asia/Tokyo".into(),
        email: Some("ann@example.com".into()),
        ..Default::default()
    };
    parties::create_user(&mut c, t0, &new_user).unwrap();
    let g = sub(&mut c, "team", "daily", None, t0);
    let u = sub(&mut c, "ann", "daily", None, t0);
    let mut runs = ticks(&mut c, "2026-11-19T00:00:00Z", "2026-11-21T15:00:00Z");
    assert_eq!(next_due(&mut c, g), next_due(&mut c, u));
    let before = next_due(&mut c, g);
    assert_eq!(before.to_string(), "2026-11-21 23:00:00", "Tokyo's 22nd");
    let to_ny = UserChanges {
        timezone: Some("America/New_York".into()),
        ..Default::default()
    };
    manage::update_group(&mut c, "team", &to_ny).unwrap();
    manage::update_user(&mut c, "ann", &to_ny).unwrap();
    let after = next_due(&mut c, g);
    assert_ne!(after, before, "the next due time moved");
    // New York's 21st 08:00 (13:00Z) has passed; its 22nd is next.
    assert_eq!(after.to_string(), "2026-11-22 13:00:00");
    assert_eq!(after, next_due(&mut c, u), "group set and user set agree");
    runs.extend(ticks(
        &mut c,
        "2026-11-21T15:00:00Z",
        "2026-11-25T00:00:00Z",
    ));
    let keys = |id| -> Vec<String> { of(&runs, id).into_iter().map(|r| r.0).collect() };
    // Tokyo's 19th (23:00Z on the 18th) came before the subscriptions did.
    let want: Vec<String> = (20..=24).map(|d| format!("2026-11-{d}")).collect();
    assert_eq!(keys(g), want, "no day lost or sent twice");
    assert_eq!(keys(u), want);
    let last = runs.iter().rfind(|r| r.subscription == g).unwrap();
    assert_eq!(last.tz.name(), "America/New_York");
    assert_eq!(
        last.period.scheduled_local(last.tz).to_rfc3339(),
        "2026-11-24T08:00:00-05:00"
    );
    // Hostile changes write nothing and move nothing.
    let due = next_due(&mut c, g);
    let prefs = parties::get_group(&mut c, "team").unwrap();
    for bad in [
        UserChanges {
            timezone: Some("Mars/Olympus".into()),
            ..Default::default()
        },
        UserChanges {
            timezone: Some("Asia/Tokyo\r\n".into()),
            ..Default::default()
        },
        UserChanges {
            timezone: Some("Asia/Tokyo".into()),
            daily_hour: Some(24),
            ..Default::default()
        },
        UserChanges {
            timezone: Some("Asia/Tokyo".into()),
            week_start: Some("someday".into()),
            ..Default::default()
        },
    ] {
        let e = manage::update_group(&mut c, "team", &bad).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
    }
    let to_tokyo = UserChanges {
        timezone: Some("Asia/Tokyo".into()),
        ..Default::default()
    };
    for name in ["ann", "nobody"] {
        let e = manage::update_group(&mut c, name, &to_tokyo).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
    }
    assert_eq!(next_due(&mut c, g), due);
    assert_eq!(next_due(&mut c, u), due, "ann was not touched");
    assert_eq!(parties::get_group(&mut c, "team").unwrap(), prefs);
}

/// The digest a group gets is written in its zone and locale: the event at
/// 21:00Z on the 24th is 6:00 AM on the 25th in Tokyo (en-US: 12-hour; a
/// group's default, en-GB, is 24-hour).
fn a_groups_digest_is_written_in_its_zone_and_locale(db: &TestDb) {
    let mut c = db.conn();
    parties::create_group_with(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        &NewGroup {
            name: "tokyo".into(),
            prefs: UserChanges {
                timezone: Some("Asia/Tokyo".into()),
                locale: Some("en-US".into()),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    parties::create_user(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: "ops".into(),
            timezone: "UTC".into(),
            ..Default::default()
        },
    )
    .unwrap();
    // 09:00 in Tokyo on the 23rd is midnight UTC.
    let text = common::one_change_digest(
        &mut c,
        "tokyo",
        "xmpp",
        9,
        "Night shift handover",
        "2026-11-23T00:00:00Z",
    );
    assert!(
        text.contains("starting Wed, Nov 25, 6:00 AM JST"),
        "Tokyo time, en-US: {text}"
    );
    assert!(text.contains("since Sunday 9:00 AM"), "{text}");
}

/// The groups that were there before the table get the defaults, which
/// are what groups had: UTC, weeks from Monday, 08:00, en-GB. (The
/// migration is run by its own files, as `tests/it/subscriptions_migration.rs`
/// does.)
fn groups_made_before_the_migration_keep_utc_monday_and_eight(db: &TestDb) {
    let mut c = db.conn();
    migration(&mut c, "down.sql");
    let now = at("2026-11-01T00:00:00Z").naive_utc();
    // Two groups, and a deleted one's tombstone (it gets no row; nor does
    // the system party, a 'group' row too).
    for name in ["old", "older", "gone (deleted #9)"] {
        diesel::insert_into(party_rows::table)
            .values((
                party_rows::kind.eq("group"),
                party_rows::name.eq(name),
                party_rows::created_at.eq(now),
            ))
            .execute(&mut c)
            .unwrap();
    }
    migration(&mut c, "up.sql");
    // The down dropped the table with the column a later migration added.
    diesel::connection::SimpleConnection::batch_execute(
        &mut c,
        "ALTER TABLE group_prefs ADD COLUMN quiet_hours TEXT NOT NULL DEFAULT ''",
    )
    .unwrap();
    let rows: Vec<(String, String, i32, i32, String)> = group_prefs::table
        .inner_join(party_rows::table)
        .order(party_rows::name)
        .select((
            party_rows::name,
            group_prefs::timezone,
            group_prefs::week_start,
            group_prefs::daily_hour,
            group_prefs::locale,
        ))
        .load(&mut c)
        .unwrap();
    let row = |n: &str| (n.to_string(), "UTC".to_string(), 0, 8, "en-GB".to_string());
    assert_eq!(
        rows,
        [row("old"), row("older")],
        "one row each, the rest none"
    );
    let t0 = at("2026-11-19T00:00:00Z");
    let weekly = sub(&mut c, "old", "weekly", None, t0);
    assert_eq!(next_due(&mut c, weekly).to_string(), "2026-11-23 08:00:00");
    // A party with no row at all (none should be left) is scheduled as
    // groups always were, not refused.
    diesel::delete(group_prefs::table).execute(&mut c).unwrap();
    let daily = sub(&mut c, "older", "daily", None, t0);
    assert_eq!(next_due(&mut c, daily).to_string(), "2026-11-19 08:00:00");
    let runs = ticks(&mut c, "2026-11-19T00:00:00Z", "2026-11-24T00:00:00Z");
    assert_eq!(of(&runs, weekly).len(), 1);
    assert_eq!(of(&runs, daily).len(), 5);
    assert!(runs.iter().all(|r| r.tz.name() == "UTC"));
}

fn migration(c: &mut DbConn, file: &str) {
    use diesel::connection::SimpleConnection;
    let backend = match c {
        DbConn::Sqlite(_) => "sqlite",
        DbConn::Postgres(_) => "postgres",
    };
    let path = format!(
        "{}/migrations/{backend}/2026-11-29-001400_group_prefs/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let sql = std::fs::read_to_string(path).unwrap();
    c.batch_execute(&format!("BEGIN;\n{sql}\nCOMMIT;")).unwrap();
}

backend_tests!(
    a_tokyo_group_is_due_at_its_local_hour_in_its_own_weeks,
    group_set_moves_the_next_due_time_as_user_set_does,
    a_groups_digest_is_written_in_its_zone_and_locale,
    groups_made_before_the_migration_keep_utc_monday_and_eight,
);
