//! `digestd bench soak`: sustained mixed load on the HTTP server in this
//! process, with the clock driven by the bench.
//!
//! A world of `--users` people in five zones (whole-hour offsets), each
//! with an hourly modification digest of one of `--collections`. Then:
//!
//! 1. **Starvation**: ingest alone (two connections posting batches of
//!    `--batch` modifications back to back into one collection) for
//!    `--compare-seconds`, the same beside `--readers` connections reading
//!    that collection's `changed` feed (every post moves its version), and
//!    ingest alone again: the ratio of the mixed run's posts/s to the
//!    alone runs' mean (goal ≥ 0.5).
//! 2. **Soak** for `--seconds`: ingest at `--ingest-per-second` batches,
//!    half the readers polling with `If-None-Match`, half without, one
//!    client reading `/api/v1/queue`; every `--hour-seconds` the clock
//!    moves to the next top of the hour, and the tick and a queue pass
//!    into a local `smtp-sink` run as `serve` runs them. Each accelerated
//!    hour prints resident memory, open descriptors, requests/s and
//!    p50/p99 per route (outside the tick, and during it), the digests
//!    delivered and the real seconds the tick and pass took.
//! 3. An idle `--idle-seconds` with the server up, then resident memory
//!    again; and the check that every due digest went out exactly once
//!    (one run per subscription and period, every digest request sent,
//!    the sink's count equal to the messages sent).
//!
//! Memory and descriptors are this process's: the server and the bench's
//! clients together.

mod load;
mod world;

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Timelike, Utc};
use clap::Args;

use super::burst::sink::SinkCount;
use super::smtp::{find, start_sink_with};
use super::{free_port, open_empty};
use crate::clock::{Clock, FixedClock};
use crate::config::{Config, DigestConfig, EmailConfig, ScheduleConfig};
use crate::db::Db;
use crate::deliver::queue::{self, Delivery};
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::{http, schedule};
use load::{quantile_ms, Shared, Target};

#[derive(Args, Debug, Clone)]
pub struct SoakArgs {
    #[arg(long, default_value_t = 2_000)]
    pub users: usize,
    #[arg(long, default_value_t = 20)]
    pub collections: usize,
    /// Real seconds of the soak (after the starvation comparison).
    #[arg(long, default_value_t = 300)]
    pub seconds: u64,
    /// Real seconds per accelerated hour.
    #[arg(long, default_value_t = 30)]
    pub hour_seconds: u64,
    /// Feed readers (connections reading one `changed` feed).
    #[arg(long, default_value_t = 8)]
    pub readers: usize,
    /// Batches posted per second during the soak.
    #[arg(long, default_value_t = 10.0)]
    pub ingest_per_second: f64,
    /// Modifications per posted batch.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Real seconds of each run of the starvation comparison (0 skips it).
    #[arg(long, default_value_t = 20)]
    pub compare_seconds: u64,
    /// Real seconds idle after the load, before memory is read again.
    #[arg(long, default_value_t = 60)]
    pub idle_seconds: u64,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-soak.db";
const OWNER: &str = "bench-soak";
const FEED_ROUTE: &str = "GET changed feed";
const POLL_ROUTE: &str = "GET changed feed, If-None-Match";
const API_ROUTE: &str = "GET /api/v1/queue";
const POST_ROUTE: &str = "POST modifications";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 0, 0, 30).unwrap()
}

/// Resident memory (VmRSS) in MiB and open descriptors of this process.
fn resident() -> (f64, usize) {
    let rss = super::status_mib(None, "VmRSS:").unwrap_or(0.0);
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    (rss, fds)
}

fn check(a: &SoakArgs) -> Result<()> {
    if a.users == 0 || a.collections == 0 || a.readers == 0 || a.batch == 0 {
        return Err(Error::invalid(
            "bench soak: --users, --collections, --readers and --batch must be at least 1",
        ));
    }
    if a.hour_seconds == 0 || a.seconds < a.hour_seconds {
        return Err(Error::invalid(
            "bench soak: --hour-seconds must be at least 1 and at most --seconds",
        ));
    }
    if !(a.ingest_per_second > 0.0 && a.ingest_per_second <= 10_000.0) {
        return Err(Error::invalid(
            "bench soak: --ingest-per-second must be above 0 and at most 10000",
        ));
    }
    Ok(())
}

pub fn soak(args: &SoakArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    check(args)?;
    find("smtp-sink")?;
    let scratch = std::env::temp_dir().join(format!("digestd-bench-soak-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let count = SinkCount(scratch.join("sink-count"));
    let port = free_port()?;
    let _sink = start_sink_with(port, &["-c"], Stdio::from(std::fs::File::create(&count.0)?))?;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let w = world::build(&mut *db.conn()?, t0(), args.users, args.collections)?;
    let cfg = {
        let mut cfg = Config::default();
        cfg.http.listen = "127.0.0.1:0".into();
        cfg
    };
    writeln!(
        out,
        "bench soak on {:?}: {} users in 5 zones, hourly digests of {} collections; {} feed readers; \
         batches of {}; an hour every {} s; pool of {}",
        db.backend(),
        w.users,
        args.collections,
        args.readers,
        args.batch,
        args.hour_seconds,
        cfg.database.pool_size
    )?;
    let (rss0, fds0) = resident();
    writeln!(out, "start: resident {rss0:.0} MiB, {fds0} descriptors")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let clock = Arc::new(FixedClock::new(t0()));
    let email = EmailConfig {
        transport: crate::config::EmailTransport::Smtp,
        smtp_url: format!("smtp://127.0.0.1:{port}"),
        dir: scratch.join("outbox").to_string_lossy().into_owned(),
        ..EmailConfig::default()
    };
    let result = rt.block_on(async {
        let listener = http::bind(&cfg.http.listen).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let served = Db::open(url.unwrap_or(DEFAULT_BENCH_DB), cfg.database.pool_size)?;
        let shared_clock: Arc<dyn Clock> = clock.clone();
        let app = http::App::new(served, cfg.clone(), shared_clock);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(http::serve_on(listener, app, async {
            let _ = stopped.await;
        }));
        let target = Target {
            base,
            auth: format!("Bearer {}", w.token),
            collections: Arc::new(w.collections.clone()),
            clock: clock.clone(),
            batch: args.batch,
        };
        let r = run(args, &target, &db, &email, &count, out).await;
        let _ = stop.send(());
        let _ = server.await;
        r
    });
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// The feed the readers read: the day of the soak, whole.
fn feed_url(t: &Target) -> String {
    format!(
        "{}/atom/collection/{}/changed?start=2026-11-22T00:00:00Z&end=2026-11-25T00:00:00Z",
        t.base, t.collections[0]
    )
}

/// Starts `conns` unpaced ingest clients and `readers` feed readers for
/// `secs`; returns the posts/s and the routes' latencies.
/// The posts go to the feed's own collection: every one moves the version
/// the readers read (the worst case for them).
async fn phase(t: &Target, conns: usize, readers: usize, secs: u64) -> (f64, load::Routes) {
    let s = Arc::new(Shared::default());
    let t = &Target {
        collections: Arc::new(vec![t.collections[0].clone()]),
        ..t.clone()
    };
    let mut tasks = Vec::new();
    for _ in 0..conns {
        tasks.push(tokio::spawn(load::ingest(t.clone(), s.clone(), 0.0)));
    }
    for _ in 0..readers {
        let f = load::reader(feed_url(t), t.auth.clone(), s.clone(), false, FEED_ROUTE);
        tasks.push(tokio::spawn(f));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    s.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let routes = s.take();
    let posts = routes.get(POST_ROUTE).map_or(0, |r| r.calm.len());
    (posts as f64 / secs as f64, routes)
}

fn route_lines(out: &mut dyn Write, routes: &mut load::Routes, secs: f64) -> Result<()> {
    for (name, r) in routes.iter_mut() {
        let n = r.calm.len() + r.burst.len();
        write!(
            out,
            "  {name:<34} {:>8.1} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms",
            n as f64 / secs,
            quantile_ms(&mut r.calm, 0.5),
            quantile_ms(&mut r.calm, 0.99)
        )?;
        if !r.burst.is_empty() {
            write!(
                out,
                "  (during the tick: {} requests, p99 {:.2} ms)",
                r.burst.len(),
                quantile_ms(&mut r.burst, 0.99)
            )?;
        }
        if r.errors > 0 {
            write!(out, "  {} errors", r.errors)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

async fn run(
    a: &SoakArgs,
    t: &Target,
    db: &Db,
    email: &EmailConfig,
    count: &SinkCount,
    out: &mut dyn Write,
) -> Result<()> {
    if a.compare_seconds > 0 {
        let secs = a.compare_seconds;
        let (alone1, mut r1) = phase(t, 2, 0, secs).await;
        let (mixed, mut r2) = phase(t, 2, a.readers, secs).await;
        let (alone2, mut r3) = phase(t, 2, 0, secs).await;
        let ratio = mixed / ((alone1 + alone2) / 2.0);
        writeln!(out, "ingest alone, 2 connections, {secs} s:")?;
        route_lines(out, &mut r1, secs as f64)?;
        writeln!(out, "ingest beside {} feed readers, {secs} s:", a.readers)?;
        route_lines(out, &mut r2, secs as f64)?;
        writeln!(out, "ingest alone again, {secs} s:")?;
        route_lines(out, &mut r3, secs as f64)?;
        writeln!(
            out,
            "ingest beside readers: {mixed:.1} posts/s against {alone1:.1} and {alone2:.1} alone: \
             {ratio:.2}x (goal >= 0.5)"
        )?;
    }
    soak_hours(a, t, db, email, count, out).await
}

/// What one accelerated hour's tick and queue pass did.
struct Hour {
    at: DateTime<Utc>,
    runs: usize,
    sent: usize,
    took: Duration,
}

/// The tick and a queue pass at `at`, as `serve` runs them.
fn tick_and_pass(db: &Db, email: &EmailConfig, at: DateTime<Utc>) -> Result<Hour> {
    let started = Instant::now();
    let mut c = db.conn()?;
    let sched = ScheduleConfig::default();
    let lease_for = sched.lease_for();
    let mut composer = Composer::new(&DigestConfig::default(), email)?;
    composer.read_through(db);
    let runs = match schedule::share_tick(
        &mut c,
        at,
        OWNER,
        lease_for,
        &mut composer,
        sched.tick_chunk.into(),
    )? {
        schedule::Shared::Led(runs) => runs.len(),
        _ => return Err(Error::Storage("the tick's lease is held elsewhere".into())),
    };
    let mut d = Delivery::new(email)?;
    let report = queue::run_queue(&mut c, &mut d, at, OWNER, lease_for)?;
    d.shutdown();
    Ok(Hour {
        at,
        runs,
        sent: report.written.values().sum(),
        took: started.elapsed(),
    })
}

async fn soak_hours(
    a: &SoakArgs,
    t: &Target,
    db: &Db,
    email: &EmailConfig,
    count: &SinkCount,
    out: &mut dyn Write,
) -> Result<()> {
    let s = Arc::new(Shared::default());
    let mut tasks = vec![tokio::spawn(load::ingest(
        t.clone(),
        s.clone(),
        a.ingest_per_second,
    ))];
    for k in 0..a.readers {
        let (cond, route) = if k % 2 == 0 {
            (true, POLL_ROUTE)
        } else {
            (false, FEED_ROUTE)
        };
        let f = load::reader(feed_url(t), t.auth.clone(), s.clone(), cond, route);
        tasks.push(tokio::spawn(f));
    }
    let api = format!("{}/api/v1/queue", t.base);
    tasks.push(tokio::spawn(load::reader(
        api,
        t.auth.clone(),
        s.clone(),
        false,
        API_ROUTE,
    )));
    let hours = a.seconds / a.hour_seconds;
    let sink_before = count.read()?;
    let (mut sent, mut peak) = (0usize, 0f64);
    let mut third = None;
    let started = Instant::now();
    for h in 1..=hours {
        let due = started + Duration::from_secs(h * a.hour_seconds);
        tokio::time::sleep_until(due.into()).await;
        let interval = s.take();
        let (rss, fds) = resident();
        peak = peak.max(rss);
        if h == 3 {
            third = Some(rss);
        }
        let at = (t0() + chrono::Duration::hours(h as i64))
            .with_minute(0)
            .and_then(|t| t.with_second(0))
            .expect("a top of the hour");
        t.clock.set(at);
        s.bursting.store(true, Ordering::Relaxed);
        let (db2, email2) = (db.clone(), email.clone());
        let hour = tokio::task::spawn_blocking(move || tick_and_pass(&db2, &email2, at))
            .await
            .map_err(|e| Error::Storage(format!("bench soak: {e}")))??;
        s.bursting.store(false, Ordering::Relaxed);
        sent += hour.sent;
        let mut interval = interval;
        writeln!(
            out,
            "hour to {}: resident {rss:.0} MiB, {fds} descriptors; tick + queue pass: {} runs, \
             {} messages sent, {:.2} s after the top of the hour",
            hour.at.format("%H:%MZ"),
            hour.runs,
            hour.sent,
            hour.took.as_secs_f64()
        )?;
        route_lines(out, &mut interval, a.hour_seconds as f64)?;
    }
    s.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let (rss_end, fds_end) = resident();
    tokio::time::sleep(Duration::from_secs(a.idle_seconds)).await;
    let (rss_idle, fds_idle) = resident();
    writeln!(
        out,
        "resident: peak {peak:.0} MiB (third hour {:.0}), at the end {rss_end:.0} MiB, \
         after {} s idle {rss_idle:.0} MiB; descriptors {fds_end} at the end, {fds_idle} idle",
        third.unwrap_or(0.0),
        a.idle_seconds
    )?;
    let db2 = db.clone();
    let once = tokio::task::spawn_blocking(move || world::exactly_once(&mut *db2.conn()?))
        .await
        .map_err(|e| Error::Storage(format!("bench soak: {e}")))??;
    let got = count.settle(sink_before + sent as u64)? - sink_before;
    writeln!(
        out,
        "exactly once: {} runs over {} (subscription, period) pairs, latest {} s after its instant \
         (bench clock); {} digest requests, {} sent; {sent} messages sent, smtp-sink counted {got}",
        once.runs,
        once.periods,
        once.latest.num_seconds(),
        once.digests,
        once.sent
    )?;
    if once.digests == 0 {
        return Err(Error::Storage(
            "bench soak: no digest was posted (did the posts fail?)".into(),
        ));
    }
    if once.runs != once.periods || once.digests != once.sent || got != sent as u64 {
        return Err(Error::Storage(
            "bench soak: a digest went out other than exactly once".into(),
        ));
    }
    if once.runs != (a.users as u64 * hours) as usize {
        return Err(Error::Storage(format!(
            "bench soak: {} runs for {} subscriptions over {hours} hours",
            once.runs, a.users
        )));
    }
    Ok(())
}
