//! One subscription per digest: the same party, collection (or all), kind,
//! frequency, hour and day twice would send every digest twice, so a twin
//! is refused (naming the one that exists) or, when it only adds channels,
//! merged into it. On SQLite and (with DIGESTD_TEST_DATABASE_URL) on
//! PostgreSQL, concurrent subscribes included. The migration that folds the
//! twins a database already holds is `subscriptions_migration.rs`.

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
pub(crate) fn world(c: &mut DbConn) -> String {
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

pub(crate) fn daily(coll: &str, channels: &[&str]) -> SubscribeRequest {
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

pub(crate) fn subscribe(c: &mut DbConn, r: &SubscribeRequest) -> digestd::Result<Subscribed> {
    manage::subscribe(c, at(CREATED), r)
}

/// Subscribes, requiring a new subscription.
pub(crate) fn created(c: &mut DbConn, r: &SubscribeRequest) -> SubscriptionId {
    match subscribe(c, r) {
        Ok(Subscribed::Created(id)) => id,
        other => panic!("{r:?}: want a new subscription, got {other:?}"),
    }
}

/// Every stored subscription, whole, to show a refusal changed nothing.
pub(crate) fn stored(c: &mut DbConn) -> Vec<subscriptions::Subscription> {
    subscriptions::list(c).unwrap()
}

/// Refused as bad input, on one line naming `id` and holding `needle`.
pub(crate) fn assert_twin(r: digestd::Result<Subscribed>, id: SubscriptionId, needle: &str) {
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
pub(crate) fn tick_and_deliver(
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

backend_tests!(
    an_identical_subscription_is_refused_naming_the_first,
    a_paused_twin_is_named_with_how_to_resume_it,
    other_channels_merge_into_the_existing_subscription,
    a_refused_twin_leaves_one_digest_per_tick,
    another_hour_kind_frequency_or_collection_is_a_new_subscription,
    concurrent_twins_make_one_subscription,
);
