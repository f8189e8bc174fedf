//! One subscription per digest: the same party, collection (or all), kind,
//! frequency, hour and day twice would send every digest twice, so a twin
//! is refused (naming the one that exists) or, when it only adds channels,
//! merged into it. On SQLite and (with DIGESTD_TEST_DATABASE_URL) on
//! PostgreSQL, concurrent subscribes included.

use crate::common;

use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::{nt_queue, nt_requests, subscriptions as subs};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::digest::Composer;
use digestd::ids::SubscriptionId;
use digestd::items::{self, ItemInput};
use digestd::manage;
use digestd::parties::{self, Channel, NewUser};
use digestd::subscriptions::{self, SubscribeRequest, Subscribed};

const CREATED: &str = "2026-11-22T00:00:00Z";

/// ann (UTC, daily hour 8, every channel) follows `Rota`, which ops edits.
fn world(c: &mut DbConn) -> String {
    for (name, phone) in [("ann", Some("+33612345678")), ("ops", None)] {
        parties::create_user(
            c,
            at("2026-11-01T00:00:00Z"),
            &NewUser {
                name: name.into(),
                timezone: "UTC".into(),
                email: Some(format!("{name}@example.com")),
                xmpp: Some(format!("{name}@localhost")),
                phone: phone.map(String::from),
                daily_hour: Some(8),
                ..Default::default()
            },
        )
        .unwrap();
    }
    items::create_collection(c, at("2026-11-01T00:00:00Z"), "Rota", None)
        .unwrap()
        .uuid
}

fn daily(coll: &str, channels: &[&str]) -> SubscribeRequest {
    SubscribeRequest {
        party: "ann".into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        collection: Some(coll.into()),
        hour: Some(9),
        channels: channels.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn subscribe(c: &mut DbConn, r: &SubscribeRequest) -> digestd::Result<Subscribed> {
    manage::subscribe(c, at(CREATED), r)
}

/// Subscribes, requiring a new subscription.
fn created(c: &mut DbConn, r: &SubscribeRequest) -> SubscriptionId {
    match subscribe(c, r) {
        Ok(Subscribed::Created(id)) => id,
        other => panic!("{r:?}: want a new subscription, got {other:?}"),
    }
}

/// Every stored subscription, whole, to show a refusal changed nothing.
fn stored(c: &mut DbConn) -> Vec<subscriptions::Subscription> {
    subscriptions::list(c).unwrap()
}

/// Refused as bad input, on one line naming `id` and holding `needle`.
fn assert_twin(r: digestd::Result<Subscribed>, id: SubscriptionId, needle: &str) {
    match r {
        Err(e) if e.is_bad_input() => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg}");
            assert!(msg.contains(&format!("subscription {id}")), "{msg}");
            assert!(msg.contains(needle), "{needle:?} in {msg}");
        }
        other => panic!("expected a refusal naming subscription {id}, got {other:?}"),
    }
}

/// ops edits Rota after the subscriptions start, so ann's digest has one
/// change; then the tick at ann's 09:00 and one queue pass into `dir`.
/// Returns (runs, requests, delivered rows per channel).
fn tick_and_deliver(
    c: &mut DbConn,
    coll: &str,
    dir: &std::path::Path,
) -> (usize, i64, Vec<(String, i64)>) {
    let when = "2026-11-22T15:00:00Z";
    items::put_item(
        c,
        at(when),
        &ItemInput {
            uuid: uuid::Uuid::from_u128(7).to_string(),
            collection: Some(coll.into()),
            kind: "event".into(),
            title: "Night shift".into(),
            start: Some("2026-11-24T21:00:00Z".into()),
            actor: "ops".into(),
            at: Some(when.into()),
            ..Default::default()
        },
    )
    .unwrap();
    let mut comp = Composer::new(&DigestConfig::default(), &EmailConfig::default()).unwrap();
    let t = at("2026-11-23T09:00:00Z");
    let runs = digestd::schedule::tick::tick(c, t, &mut comp).unwrap();
    let email = EmailConfig {
        dir: dir.display().to_string(),
        ..EmailConfig::default()
    };
    let mut d = Delivery::new(&email, crate::common::rt()).unwrap();
    queue::run_pass(c, &mut d, t).unwrap();
    let requests: i64 = nt_requests::table.count().get_result(c).unwrap();
    let delivered: Vec<(String, i64)> = nt_queue::table
        .filter(nt_queue::is_successful.eq(true))
        .group_by(nt_queue::channel)
        .select((nt_queue::channel, diesel::dsl::count_star()))
        .order(nt_queue::channel.asc())
        .load(c)
        .unwrap();
    (runs.len(), requests, delivered)
}

fn an_identical_subscription_is_refused_naming_the_first(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let first = created(&mut c, &daily(&coll, &["email", "sms"]));
    let before = stored(&mut c);
    // Each of these is the same digest as `first`.
    let twins = [
        ("identical", daily(&coll, &["email", "sms"])),
        ("channels in another order", daily(&coll, &["sms", "email"])),
        ("fewer channels", daily(&coll, &["sms"])),
        (
            "send-empty differs",
            SubscribeRequest {
                send_empty: true,
                ..daily(&coll, &["email", "sms"])
            },
        ),
        (
            "include-own differs",
            SubscribeRequest {
                include_own: true,
                ..daily(&coll, &["email"])
            },
        ),
        (
            "include-own differs, a channel added",
            SubscribeRequest {
                include_own: true,
                ..daily(&coll, &["xmpp"])
            },
        ),
    ];
    for (what, r) in &twins {
        assert_twin(subscribe(&mut c, r), first, "already has");
        assert_eq!(stored(&mut c), before, "{what} wrote something");
    }
    // The user's defaults name the same hour and day as explicit values.
    let weekly = |hour, day: Option<&str>| SubscribeRequest {
        frequency: "weekly".into(),
        kind: "forward".into(),
        collection: None,
        hour,
        day: day.map(String::from),
        ..daily(&coll, &[])
    };
    let w = created(&mut c, &weekly(None, None));
    assert_twin(
        subscribe(&mut c, &weekly(Some(8), Some("mon"))),
        w,
        "already has",
    );
    let hourly = SubscribeRequest {
        frequency: "hourly".into(),
        hour: None,
        collection: None,
        ..daily(&coll, &[])
    };
    let h = created(&mut c, &hourly);
    assert_twin(subscribe(&mut c, &hourly), h, "already has");
    assert_eq!(stored(&mut c).len(), 3);
}

fn a_paused_twin_is_named_with_how_to_resume_it(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let first = created(&mut c, &daily(&coll, &["email"]));
    subscriptions::pause(&mut c, at("2026-11-23T09:00:00Z"), first).unwrap();
    let before = stored(&mut c);
    for channels in [&["email"][..], &["sms"], &["email", "xmpp"]] {
        assert_twin(subscribe(&mut c, &daily(&coll, channels)), first, "paused");
        assert_eq!(stored(&mut c), before, "{channels:?} wrote something");
    }
    let msg = subscribe(&mut c, &daily(&coll, &["sms"]))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!("subscription resume {first}")),
        "{msg}"
    );
}

fn other_channels_merge_into_the_existing_subscription(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let first = created(&mut c, &daily(&coll, &["email"]));
    let merged = subscribe(&mut c, &daily(&coll, &["sms", "email"])).unwrap();
    assert_eq!(
        merged,
        Subscribed::Merged {
            id: first,
            channels: vec![Channel::Email, Channel::Sms]
        }
    );
    let all = stored(&mut c);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].channels, ["email", "sms"]);
    // The merged subscription keeps its schedule: one digest, on both
    // channels, once each.
    let dir = tempfile::tempdir().unwrap();
    let (runs, requests, delivered) = tick_and_deliver(&mut c, &coll, dir.path());
    assert_eq!((runs, requests), (1, 1));
    assert_eq!(
        delivered,
        [("email".to_string(), 1), ("sms".to_string(), 1)]
    );
    let emls = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .count();
    assert_eq!(emls, 1);
    assert_eq!(
        std::fs::read_dir(dir.path().join("sms")).unwrap().count(),
        1
    );
}

fn a_refused_twin_leaves_one_digest_per_tick(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let first = created(&mut c, &daily(&coll, &["email"]));
    assert_twin(
        subscribe(&mut c, &daily(&coll, &["email"])),
        first,
        "already has",
    );
    let dir = tempfile::tempdir().unwrap();
    let (runs, requests, delivered) = tick_and_deliver(&mut c, &coll, dir.path());
    assert_eq!((runs, requests), (1, 1));
    assert_eq!(delivered, [("email".to_string(), 1)]);
}

fn another_hour_kind_frequency_or_collection_is_a_new_subscription(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let other = items::create_collection(&mut c, at("2026-11-01T00:00:00Z"), "Wiki", None)
        .unwrap()
        .uuid;
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "team", None).unwrap();
    let base = daily(&coll, &["email"]);
    let variants = [
        base.clone(),
        SubscribeRequest {
            hour: Some(10),
            ..base.clone()
        },
        SubscribeRequest {
            kind: "forward".into(),
            ..base.clone()
        },
        SubscribeRequest {
            frequency: "weekly".into(),
            ..base.clone()
        },
        SubscribeRequest {
            frequency: "weekly".into(),
            day: Some("fri".into()),
            ..base.clone()
        },
        SubscribeRequest {
            frequency: "hourly".into(),
            hour: None,
            ..base.clone()
        },
        SubscribeRequest {
            collection: Some(other),
            ..base.clone()
        },
        SubscribeRequest {
            collection: None,
            ..base.clone()
        },
        SubscribeRequest {
            party: "ops".into(),
            ..base.clone()
        },
        SubscribeRequest {
            party: "team".into(),
            ..base.clone()
        },
    ];
    let mut ids = Vec::new();
    for r in &variants {
        ids.push(created(&mut c, r));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), variants.len());
    assert_eq!(stored(&mut c).len(), variants.len());
}

/// Writers on their own connections, all at once: one subscription comes
/// out, holding every channel that was asked for.
fn concurrent_twins_make_one_subscription(db: &TestDb) {
    let pool = digestd::db::Db::open(&db.url, 8).unwrap();
    let coll = world(&mut pool.conn().unwrap());
    let asks: [&[&str]; 6] = [
        &["email"],
        &["sms"],
        &["xmpp"],
        &["email"],
        &["email", "sms"],
        &["xmpp"],
    ];
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(asks.len()));
    let threads: Vec<_> = asks
        .iter()
        .map(|channels| {
            let (pool, barrier) = (pool.clone(), barrier.clone());
            let r = daily(&coll, channels);
            std::thread::spawn(move || {
                let mut c = pool.conn().unwrap();
                barrier.wait();
                subscribe(&mut c, &r)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut c = pool.conn().unwrap();
    let all = stored(&mut c);
    assert_eq!(all.len(), 1, "{all:?} from {results:?}");
    assert_eq!(all[0].channels, ["email", "xmpp", "sms"], "{results:?}");
    for r in &results {
        match r {
            Ok(s) => assert_eq!(s.id(), all[0].id),
            Err(e) => assert!(
                e.is_bad_input() && e.to_string().contains("already has"),
                "{e}"
            ),
        }
    }
    let n: i64 = subs::table.count().get_result(&mut c).unwrap();
    assert_eq!(n, 1);
}

/// The database as it was before the index, by that migration's own
/// down.sql. (Reverting the migration through diesel would revert every
/// later one too, and today's code needs their columns.)
fn before_the_index(c: &mut DbConn) {
    index_migration(c, "down.sql");
}

/// The migration that folds twins and makes the index, by its own up.sql.
fn the_index_migration(c: &mut DbConn) {
    index_migration(c, "up.sql");
}

fn index_migration(c: &mut DbConn, file: &str) {
    use diesel::connection::SimpleConnection;
    let backend = match c {
        DbConn::Sqlite(_) => "sqlite",
        DbConn::Postgres(_) => "postgres",
    };
    let path = format!(
        "{}/migrations/{backend}/2026-11-26-000001_one_subscription_per_digest/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let sql = std::fs::read_to_string(path).unwrap();
    c.batch_execute(&format!("BEGIN;\n{sql}\nCOMMIT;")).unwrap();
}

/// A copy of subscription `id` with other channels and pause, as the old
/// code let a second `subscribe` store. Returns the copy's id.
fn twin(
    c: &mut DbConn,
    id: SubscriptionId,
    channels: &str,
    paused: bool,
) -> Result<SubscriptionId, diesel::result::Error> {
    diesel::sql_query(format!(
        "INSERT INTO subscriptions (party_id, collection_id, kind, frequency, day_of_week, \
         hour_of_day, channels, paused, include_own, send_empty, created_at, active_since, \
         next_due_at, last_scheduled_at, last_period, last_window_end) \
         SELECT party_id, collection_id, kind, frequency, day_of_week, hour_of_day, '{channels}', \
         {paused}, include_own, send_empty, created_at, active_since, next_due_at, \
         last_scheduled_at, last_period, last_window_end FROM subscriptions WHERE id = {id}"
    ))
    .execute(c)?;
    let last: Option<i64> = subs::table.select(diesel::dsl::max(subs::id)).first(c)?;
    Ok(SubscriptionId(last.unwrap()))
}

fn the_migration_folds_twins_a_database_already_holds(db: &TestDb) {
    let mut c = db.conn();
    let coll = world(&mut c);
    let hourly_all = SubscribeRequest {
        frequency: "hourly".into(),
        hour: None,
        collection: None,
        ..daily(&coll, &["email"])
    };
    let weekly = SubscribeRequest {
        frequency: "weekly".into(),
        ..daily(&coll, &["email"])
    };
    let a = created(&mut c, &daily(&coll, &["email"]));
    let b = created(&mut c, &hourly_all);
    let w = created(&mut c, &weekly);
    let solo = created(
        &mut c,
        &SubscribeRequest {
            hour: Some(10),
            ..daily(&coll, &["xmpp"])
        },
    );
    before_the_index(&mut c);
    // a: active, with an active and a paused twin.
    let a2 = twin(&mut c, a, "sms", false).unwrap();
    let a3 = twin(&mut c, a, "xmpp", true).unwrap();
    // b (NULL collection, hour and day): the oldest paused, a younger active.
    subscriptions::pause(&mut c, at("2026-11-23T09:00:00Z"), b).unwrap();
    let b2 = twin(&mut c, b, "sms", false).unwrap();
    let b3 = twin(&mut c, b, "xmpp", true).unwrap();
    // w: all paused.
    subscriptions::pause(&mut c, at("2026-11-23T09:00:00Z"), w).unwrap();
    let w2 = twin(&mut c, w, "xmpp,sms", true).unwrap();
    // Doubled digests, as such databases send them today.
    let dir = tempfile::tempdir().unwrap();
    let (_, requests, _) = tick_and_deliver(&mut c, &coll, dir.path());
    let posted_by = |c: &mut DbConn, id: SubscriptionId| -> i64 {
        nt_requests::table
            .filter(nt_requests::subscription_id.eq(id.0))
            .count()
            .get_result(c)
            .unwrap()
    };
    assert_eq!((posted_by(&mut c, a), posted_by(&mut c, a2)), (1, 1));

    the_index_migration(&mut c);
    let all: Vec<_> = stored(&mut c)
        .into_iter()
        .map(|s| (s.id, s.channels.join(","), s.paused))
        .collect();
    assert_eq!(
        all,
        [
            (a, "email,sms".to_string(), false),
            (w, "email,xmpp,sms".to_string(), true),
            (solo, "xmpp".to_string(), false),
            (b2, "sms".to_string(), false),
        ]
    );
    // The folded twins' digests stay in the history, unowned.
    let n: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!(n, requests);
    assert_eq!(posted_by(&mut c, a2), 0);
    let orphans: i64 = digestd::db::schema::subscription_runs::table
        .filter(
            digestd::db::schema::subscription_runs::subscription_id
                .eq_any([a2.0, a3.0, b.0, b3.0, w2.0]),
        )
        .count()
        .get_result(&mut c)
        .unwrap();
    assert_eq!(orphans, 0);
    // The index holds, NULL collection, hour and day included.
    for id in [a, b2, w] {
        let err = twin(&mut c, id, "email", false).unwrap_err().to_string();
        assert!(err.contains("subscriptions_digest"), "{err}");
    }
    let again = SubscribeRequest {
        channels: vec!["sms".into()],
        ..hourly_all
    };
    assert_twin(subscribe(&mut c, &again), b2, "already has");
}

backend_tests!(
    an_identical_subscription_is_refused_naming_the_first,
    a_paused_twin_is_named_with_how_to_resume_it,
    other_channels_merge_into_the_existing_subscription,
    a_refused_twin_leaves_one_digest_per_tick,
    another_hour_kind_frequency_or_collection_is_a_new_subscription,
    concurrent_twins_make_one_subscription,
    the_migration_folds_twins_a_database_already_holds,
);
