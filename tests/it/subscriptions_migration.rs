//! The migration that makes one subscription per digest, on a database
//! that already holds twins (as the old code let a second `subscribe`
//! store), on SQLite and (with DIGESTD_TEST_DATABASE_URL) on PostgreSQL:
//! twins fold into the oldest active one, which takes its active twins'
//! channels (when all are paused, into the oldest, which takes them all);
//! their digests stay in the history, unowned; then the index holds. The
//! helpers are `subscriptions.rs`'s.

use crate::common;

use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::{nt_requests, subscriptions as subs};
use digestd::db::DbConn;
use digestd::ids::SubscriptionId;
use digestd::subscriptions::{self, SubscribeRequest};

use crate::subscriptions::{
    assert_twin, created, daily, stored, subscribe, tick_and_deliver, world,
};

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

backend_tests!(the_migration_folds_twins_a_database_already_holds);
