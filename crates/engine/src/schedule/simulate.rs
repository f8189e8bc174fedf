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

/// The most instants one simulation ticks at.
pub const MAX_TICKS: usize = 2_000_000;

/// The instants a simulation ticks at: every `step` from the start, or
/// the instants of a cron schedule (`[schedule] tick`, as `serve` does).
pub enum Ticks {
    Every(chrono::Duration),
    Schedule(Box<cron::Schedule>),
}

impl Ticks {
    /// Every instant in `[from, to)`, in order; more than [`MAX_TICKS`]
    /// is refused, and so is a step that is not positive.
    pub fn instants(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<DateTime<Utc>>> {
        let too_many = || {
            Error::invalid(
                "simulate: more than 2,000,000 ticks; use a larger --every or a shorter range",
            )
        };
        let within = |t: &DateTime<Utc>| *t < to;
        let out: Vec<_> = match self {
            Ticks::Every(step) if *step <= chrono::Duration::zero() => {
                return Err(Error::invalid("simulate: the interval must be positive"))
            }
            Ticks::Every(step) => {
                if (to - from).num_seconds().max(0) / step.num_seconds().max(1) > MAX_TICKS as i64 {
                    return Err(too_many());
                }
                std::iter::successors(Some(from), |t| Some(*t + *step))
                    .take_while(within)
                    .collect()
            }
            // `after` is strictly after: start a second early and drop
            // what falls before `from`.
            Ticks::Schedule(s) => s
                .after(&(from - chrono::Duration::seconds(1)))
                .skip_while(|t| *t < from)
                .take_while(within)
                .take(MAX_TICKS + 1)
                .collect(),
        };
        if out.len() > MAX_TICKS {
            return Err(too_many());
        }
        Ok(out)
    }
}

/// Runs the real tick at every instant of `ticks` (in order), handing
/// nothing on; `each` sees every run in order. The database is unchanged
/// afterwards; the count of runs is returned.
pub fn simulate(
    conn: &mut DbConn,
    ticks: &[DateTime<Utc>],
    owner: &str,
    lease_for: chrono::Duration,
    each: &mut dyn FnMut(&DueRun) -> Result<()>,
) -> Result<usize> {
    let mut run = |c: &mut DbConn, vacuum_every: Option<usize>| -> Result<usize> {
        let (mut n, mut since_vacuum) = (0, 0);
        for &t in ticks {
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
        }
        Ok(n)
    };
    match conn {
        DbConn::Sqlite(_) => conn.rolled_back(|c| run(c, None)),
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
            let out = run(conn, Some((subs / 2).max(1_000)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_schedule_ticks_from_its_first_instant_at_or_after_from_up_to_to() {
        let quarter = Ticks::Schedule(Box::new(
            cron::Schedule::from_str("0 */15 * * * *").unwrap(),
        ));
        let got = quarter
            .instants(t("2026-03-01T00:00:00Z"), t("2026-03-01T01:00:00Z"))
            .unwrap();
        let want: Vec<_> = ["00:00", "00:15", "00:30", "00:45"]
            .iter()
            .map(|hm| t(&format!("2026-03-01T{hm}:00Z")))
            .collect();
        assert_eq!(got, want, "from inclusive, to exclusive");
        // A start between two instants, even by less than a second.
        let got = quarter
            .instants(t("2026-03-01T00:15:00.5Z"), t("2026-03-01T00:45:00Z"))
            .unwrap();
        assert_eq!(got, vec![t("2026-03-01T00:30:00Z")]);
    }

    #[test]
    fn too_many_ticks_or_a_step_that_is_not_positive_are_refused() {
        let (from, to) = (t("2000-01-01T00:00:00Z"), t("2100-01-01T00:00:00Z"));
        let e = Ticks::Every(chrono::Duration::seconds(1))
            .instants(from, to)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 2,000,000 ticks"), "{e}");
        assert!(Ticks::Every(chrono::Duration::zero())
            .instants(from, to)
            .is_err());
        assert_eq!(
            Ticks::Every(chrono::Duration::hours(1))
                .instants(to, from)
                .unwrap(),
            Vec::<DateTime<Utc>>::new(),
            "an empty range"
        );
    }
}
