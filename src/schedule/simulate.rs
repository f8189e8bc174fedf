//! `digestd simulate`: the real tick at every instant of a range, without
//! changing the database.
//!
//! - **SQLite**: all the ticks run inside one transaction that is rolled
//!   back. It holds the write lock while it runs (a year over 3,100
//!   subscriptions: about 20 s).
//! - **PostgreSQL**: the same would keep every superseded version of every
//!   subscription row alive to the end (a year over 3,100 subscriptions
//!   had not finished after nine minutes). Instead the ticks run against
//!   temporary copies of the tables a tick writes (`subscriptions`,
//!   `subscription_runs`, `nt_job`): a temporary table is looked up before
//!   the real one of the same name, so the tick's own queries run
//!   unchanged, each tick commits there, and a `VACUUM` now and then
//!   clears the dead rows (autovacuum never visits temporary tables). The
//!   copies are dropped at the end, and only this connection ever sees them.

use chrono::{DateTime, Utc};
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};

use super::{run_tick, tick::Discard, DueRun};
use crate::db::DbConn;
use crate::error::{Error, Result};

/// Runs the real tick at every instant from `from` (inclusive) to `to`
/// (exclusive), `step` apart, handing nothing on; `each` sees every run in
/// order. The database is unchanged afterwards; the count of runs is
/// returned.
pub fn simulate(
    conn: &mut DbConn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    step: chrono::Duration,
    owner: &str,
    lease_for: chrono::Duration,
    each: &mut dyn FnMut(&DueRun) -> Result<()>,
) -> Result<usize> {
    let mut ticks = |c: &mut DbConn, vacuum_every: Option<usize>| -> Result<usize> {
        let (mut t, mut n, mut since_vacuum) = (from, 0, 0);
        while t < to {
            let runs = run_tick(c, t, owner, lease_for, &mut Discard)?.ok_or_else(|| {
                Error::conflict(format!("another process holds the tick lease at {t}"))
            })?;
            for r in &runs {
                each(r)?;
            }
            n += runs.len();
            since_vacuum += runs.len();
            if let (Some(every), DbConn::Postgres(pg)) = (vacuum_every, &mut *c) {
                if since_vacuum >= every {
                    pg.batch_execute("VACUUM pg_temp.subscriptions")?;
                    since_vacuum = 0;
                }
            }
            t += step;
        }
        Ok(n)
    };
    match conn {
        DbConn::Sqlite(_) => conn.rolled_back(|c| ticks(c, None)),
        DbConn::Postgres(pg) => {
            // A connection must never be left with the copies in place:
            // its next real tick would write into them.
            let subs = match shadow(pg) {
                Ok(n) => n,
                Err(e) => {
                    let _ = unshadow(pg);
                    return Err(e);
                }
            };
            // Each run rewrote one subscription row: vacuum once about
            // half the table is dead rows.
            let out = ticks(conn, Some((subs / 2).max(1_000)));
            let dropped = match conn {
                DbConn::Postgres(pg) => unshadow(pg),
                DbConn::Sqlite(_) => unreachable!("matched PostgreSQL above"),
            };
            let n = out?;
            dropped?;
            Ok(n)
        }
    }
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Shadowed {
    #[diesel(sql_type = Bool)]
    ok: bool,
    #[diesel(sql_type = BigInt)]
    subs: i64,
}

/// Makes the temporary copies (runs empty: the tick reads only the latest
/// run of each subscription, which is on the subscription row; the lease
/// free) and checks that they do shadow the real tables. Returns the
/// number of subscriptions.
fn shadow(pg: &mut PgConnection) -> Result<usize> {
    let schema: Vec<Name> = diesel::sql_query("SELECT current_schema() AS name").load(pg)?;
    let schema = schema
        .into_iter()
        .next()
        .map(|s| s.name.replace('"', "\"\""))
        .ok_or_else(|| Error::Storage("simulate: no current schema".into()))?;
    // DISCARD PLANS: statements prepared earlier on this connection named
    // the real tables; they must look the names up again.
    pg.batch_execute(&format!(
        "CREATE TEMP TABLE subscriptions (LIKE \"{schema}\".subscriptions INCLUDING ALL); \
         CREATE TEMP TABLE subscription_runs (LIKE \"{schema}\".subscription_runs INCLUDING ALL); \
         CREATE TEMP TABLE nt_job (LIKE \"{schema}\".nt_job INCLUDING ALL); \
         INSERT INTO pg_temp.subscriptions SELECT * FROM \"{schema}\".subscriptions; \
         INSERT INTO pg_temp.nt_job SELECT * FROM \"{schema}\".nt_job; \
         UPDATE pg_temp.nt_job SET owner = NULL, lease_expires_at = NULL; \
         ANALYZE pg_temp.subscriptions; \
         DISCARD PLANS;"
    ))?;
    let check: Shadowed = diesel::sql_query(
        "SELECT to_regclass('subscriptions') = to_regclass('pg_temp.subscriptions') \
             AND to_regclass('subscription_runs') = to_regclass('pg_temp.subscription_runs') \
             AND to_regclass('nt_job') = to_regclass('pg_temp.nt_job') AS ok, \
             (SELECT count(*) FROM pg_temp.subscriptions) AS subs",
    )
    .get_result(pg)?;
    if !check.ok {
        unshadow(pg)?;
        return Err(Error::Storage(
            "simulate: the temporary tables do not shadow the real ones".into(),
        ));
    }
    Ok(check.subs as usize)
}

fn unshadow(pg: &mut PgConnection) -> Result<()> {
    pg.batch_execute(
        "DROP TABLE IF EXISTS pg_temp.subscription_runs, pg_temp.subscriptions, pg_temp.nt_job; \
         DISCARD PLANS;",
    )?;
    Ok(())
}
