//! `digestd serve`: the daemon. A plain loop — sleep until the next instant
//! of the `[schedule] tick` cron expression (UTC), tick, repeat — with a
//! shutdown future beside it: SIGTERM or ctrl-c lets the tick in flight
//! finish (it runs to completion on a blocking thread) and then exits.
//! On start it ticks once at once, so periods that came due while nothing
//! ran are delivered without waiting for the next scheduled instant.
//! Each tick composes and posts the due digests, then one queue pass
//! delivers what is pending, on a blocking thread of the runtime `serve`
//! runs on; the SMTP and XMPP listeners' sessions run on that runtime too.
//! Beside the loop, on the same runtime, the
//! HTTP server answers (`[http] enabled`); SIGTERM drains its requests too.
//! After a tick the operator's daily report is posted when it is due.
//! Each tick and queue pass is counted in the [`Metrics`] that `/metrics`
//! shows.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};

use crate::clock::Clock;
use crate::config::Config;
use crate::cycle::{deliver, tick_and_deliver};
use crate::db::Db;
use crate::deliver::queue::Delivery;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::{http, schedule};

/// Runs the daemon until SIGTERM or ctrl-c, on `rt`, the process's one
/// runtime (multi-threaded: its workers drive the sockets of the SMTP and
/// XMPP sessions that a pass blocks on).
pub fn run(cfg: &Config, clock: Arc<dyn Clock>, rt: &tokio::runtime::Runtime) -> Result<()> {
    rt.block_on(serve(cfg, clock, http::shutdown_signal()))
}

/// The daemon, with the shutdown future passed in (tests pass their own):
/// the tick loop and, when `[http] enabled`, the HTTP server beside it.
/// On shutdown the tick in flight finishes and the HTTP requests in flight
/// drain; then it returns. If either side fails, the other is stopped too.
pub async fn serve(
    cfg: &Config,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    // The database first: one that is not there stops the daemon before
    // the journal directory beside it is made. Then one Delivery for the
    // daemon's life (the XMPP session and the SMTP settings outlive a
    // pass), whose journal directory is checked before anything listens.
    let db = Db::open_existing(&cfg.database.url, cfg.database.pool_size)?;
    // The listeners' sessions run on this runtime, the one `serve` runs
    // on; each pass blocks on it from its blocking thread.
    let delivery = Delivery::from_config(cfg, &tokio::runtime::Handle::current())?;
    let listener = match cfg.http.enabled {
        true => Some(http::bind(&cfg.http.listen).await?),
        false => None,
    };
    let addr = match &listener {
        Some(l) => format!("http://{}", l.local_addr()?),
        None => "off".into(),
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        database = %crate::text::redact_url(&cfg.database.url),
        tick = %cfg.schedule.tick,
        email = %cfg.email.transport,
        xmpp = %cfg.xmpp.transport,
        sms = %cfg.sms.transport,
        http = %addr,
        "digestd serve started"
    );
    let metrics = Arc::new(Metrics::new());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let signal = async {
        tokio::select! {
            _ = shutdown => tracing::info!("shutting down"),
            _ = stopped(stop_rx.clone()) => {}
        }
        let _ = stop_tx.send(true);
    };
    let web = async {
        let Some(listener) = listener else {
            return Ok(());
        };
        let app = http::App::with_metrics(db.clone(), cfg.clone(), clock.clone(), metrics.clone());
        let r = http::serve_on(listener, app, stopped(stop_rx.clone())).await;
        let _ = stop_tx.send(true);
        r
    };
    let ticks = async {
        let r = tick_loop(
            cfg,
            &*clock,
            &db,
            &metrics,
            delivery,
            stopped(stop_rx.clone()),
        )
        .await;
        let _ = stop_tx.send(true);
        r
    };
    let ((), web, ticks) = tokio::join!(signal, web, ticks);
    ticks.and(web)
}

/// Ticks on the cron schedule; between ticks the queue runs every
/// `schedule.queue_seconds`, so retries go out when they are due, and at
/// once when something asks for it ([`Db::wake_queue`]).
async fn tick_loop(
    cfg: &Config,
    clock: &dyn Clock,
    db: &Db,
    metrics: &Arc<Metrics>,
    mut delivery: Delivery,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let schedule = cfg.schedule.cron()?;
    let owner = schedule::lease::owner_name();
    let every = chrono::Duration::seconds(i64::from(cfg.schedule.queue_seconds));
    tokio::pin!(shutdown);
    let mut at = clock.now();
    let mut is_tick = true;
    loop {
        // The tick and the queue pass run to completion even if shutdown
        // arrives meanwhile.
        let (db2, owner2, cfg2) = (db.clone(), owner.clone(), cfg.clone());
        let m = metrics.clone();
        // The pass borrows the Delivery on a blocking thread and hands it back.
        let mut d = delivery;
        let (d, done) = tokio::task::spawn_blocking(move || {
            let done = if is_tick {
                tick_and_deliver(&db2, &cfg2, &mut d, &owner2, at, &m)
            } else {
                let t = Instant::now();
                db2.conn()
                    .inspect_err(|_| m.queue_pass(t.elapsed(), None))
                    .and_then(|mut c| deliver(&mut c, &cfg2, &mut d, &owner2, at, &m))
            };
            (d, done)
        })
        .await
        .map_err(|e| Error::Storage(format!("tick task: {e}")))?;
        delivery = d;
        if let Err(e) = done {
            tracing::error!(%at, error = %e, "tick or queue pass failed; what it did not commit stays due");
        }
        let now = clock.now();
        let next_tick: DateTime<Utc> = schedule
            .after(&now)
            .next()
            .ok_or_else(|| Error::invalid("schedule.tick has no future instant"))?;
        let next_queue = now + every;
        (at, is_tick) = if next_tick <= next_queue {
            (next_tick, true)
        } else {
            (next_queue, false)
        };
        let wait = (at - clock.now()).to_std().unwrap_or_default();
        tokio::select! {
            _ = &mut shutdown => {
                tokio::task::spawn_blocking(move || delivery.shutdown()).await.ok();
                return Ok(());
            }
            _ = tokio::time::sleep(wait) => {}
            // A message that should not wait (a sign-up's verification):
            // a queue pass now; the tick keeps its own instant.
            _ = db.queue_woken() => (at, is_tick) = (clock.now(), false),
        }
    }
}
