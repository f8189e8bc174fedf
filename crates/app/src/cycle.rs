//! One cycle of the daemon, as `serve`, the demo and the soak benchmark
//! run it: a tick (the due digests composed and posted) and a queue pass
//! (delivered), each under its own lease and counted in the [`Metrics`];
//! after a tick the lease holder posts the operator's daily report when it
//! is due.

use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::db::{Db, DbConn};
use crate::deliver::queue::{self, Delivery};
use crate::digest::Composer;
use crate::error::Result;
use crate::metrics::{Metrics, Tick};
use crate::schedule::Shared;
use crate::{report, schedule};

/// The daemon's log target: a cycle's lines are `serve`'s, as operators
/// filter them (`[log] level = "warn,digestd::serve=info"`).
const SERVE: &str = "digestd::serve";

/// One tick (digests composed and posted) and one queue pass (delivered),
/// each under its own lease, both counted in `metrics`.
pub fn tick_and_deliver(
    db: &Db,
    cfg: &Config,
    delivery: &mut Delivery,
    owner: &str,
    at: DateTime<Utc>,
    metrics: &Metrics,
) -> Result<()> {
    let lease_for = cfg.schedule.lease_for();
    let mut composer = Composer::new(&cfg.digest, &cfg.email)?;
    composer.workers = cfg.schedule.compose_workers;
    composer.read_through(db);
    let t = Instant::now();
    let chunk = i64::from(cfg.schedule.tick_chunk);
    let ticked = db.conn().and_then(|mut conn| {
        let r = schedule::share_tick(&mut conn, at, owner, lease_for, &mut composer, chunk);
        r.map(|runs| (conn, runs))
    });
    let (mut conn, ran) = match ticked {
        Ok((conn, Shared::Led(runs))) => (conn, Some((runs, true))),
        Ok((conn, Shared::Helped(runs))) => (conn, Some((runs, false))),
        Ok((conn, Shared::Skipped)) => (conn, None),
        Err(e) => {
            metrics.tick(t.elapsed(), Tick::Failed);
            return Err(e);
        }
    };
    match ran {
        Some((runs, led)) => {
            let what = match led {
                true => "tick",
                false => "tick helped: another process holds the lease",
            };
            tracing::info!(
                target: SERVE,
                %at,
                runs = runs.len(),
                posted = composer.posted,
                empty = composer.empty,
                "{what}"
            );
            metrics.tick(
                t.elapsed(),
                Tick::Ran {
                    runs: &runs,
                    posted: &composer.posted_channels,
                    empty: composer.empty,
                    led,
                },
            );
            // What follows a tick is the lease holder's.
            if led {
                post_report(&mut conn, cfg, at);
            }
        }
        None => {
            tracing::info!(target: SERVE, %at, "tick skipped: another process holds the lease");
            metrics.tick(t.elapsed(), Tick::Skipped);
        }
    }
    deliver(&mut conn, cfg, delivery, owner, at, metrics)
}

/// The operator's daily report, when due (`report`), posted for the
/// queue pass that follows. A failure is logged, not fatal: the digests
/// still go out, and the report is tried again at the next tick.
fn post_report(conn: &mut DbConn, cfg: &Config, at: DateTime<Utc>) {
    match report::post_if_due(conn, cfg, at) {
        Ok(Some(id)) => tracing::info!(target: SERVE, %at, request = %id, "daily report posted"),
        Ok(None) => {}
        Err(e) => tracing::error!(target: SERVE, %at, error = %e, "daily report not posted"),
    }
}

/// One queue pass under the queue lease, counted in `metrics`.
pub fn deliver(
    conn: &mut DbConn,
    cfg: &Config,
    delivery: &mut Delivery,
    owner: &str,
    at: DateTime<Utc>,
    metrics: &Metrics,
) -> Result<()> {
    let lease_for = cfg.schedule.lease_for();
    let t = Instant::now();
    let report = queue::run_queue(conn, delivery, at, owner, lease_for);
    metrics.queue_pass(t.elapsed(), report.as_ref().ok());
    let report = report?;
    tracing::info!(target: SERVE, %at, "queue: {report}");
    Ok(())
}
