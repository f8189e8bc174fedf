//! `digestd bench soak`: sustained mixed load on server processes of
//! this binary, with the clock driven by the bench.
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
//!    into a local `smtp-sink` run in the servers. Each accelerated hour
//!    prints the servers' resident memory and open descriptors,
//!    requests/s and p50/p99 per route (outside the tick, and during it),
//!    the digests delivered, the real seconds the tick and pass took and
//!    what SQLite then held. The servers' memory is read every second:
//!    each whole minute's peak, and the peak while a tick ran.
//! 3. An idle `--idle-seconds` with the servers up, then resident memory
//!    again; and the check that every due digest went out exactly once
//!    (one run per subscription and period, every digest request sent,
//!    the sink's count equal to the messages sent).
//!
//! The server is `--servers` processes of this binary on one address
//! ([`server`]): `serve`'s HTTP server, tick and queue pass, with the
//! bench's clock. Memory and descriptors are theirs, read from `/proc`;
//! the bench's clients are counted apart.

mod hours;
mod load;
mod memory;
mod server;
mod world;

pub use server::{soak_server, SoakServerArgs};

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;

use super::burst::sink::SinkCount;
use super::smtp::{find, start_sink_with};
use super::{free_port, open_empty};
use crate::clock::FixedClock;
use crate::config::Config;
use crate::db::Db;
use crate::error::{Error, Result};
use load::{quantile_ms, Shared, Target};
use server::{Servers, Usage};

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
    /// Server processes sharing the address and the database.
    #[arg(long, default_value_t = 1)]
    pub servers: usize,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-soak.db";
const FEED_ROUTE: &str = "GET changed feed";
const POLL_ROUTE: &str = "GET changed feed, If-None-Match";
const API_ROUTE: &str = "GET /api/v1/queue";
const POST_ROUTE: &str = "POST modifications";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 0, 0, 30).unwrap()
}

/// The servers' memory and descriptors, summed, and as a line: the sum,
/// each server's when there are several, and the bench's own.
fn resident(servers: &Servers) -> (Usage, String) {
    let each = servers.usage();
    let sum = Usage {
        rss_mib: each.iter().map(|u| u.rss_mib).sum(),
        fds: each.iter().map(|u| u.fds).sum(),
        cpu_secs: each.iter().map(|u| u.cpu_secs).sum(),
    };
    let mut line = format!("resident {:.0} MiB, {} descriptors", sum.rss_mib, sum.fds);
    if each.len() > 1 {
        let rss: Vec<String> = each.iter().map(|u| format!("{:.0}", u.rss_mib)).collect();
        let cpu: Vec<String> = each.iter().map(|u| format!("{:.0}", u.cpu_secs)).collect();
        line += &format!(
            " ({} MiB each; CPU so far {} s each)",
            rss.join(" + "),
            cpu.join(" + ")
        );
    }
    let me = super::status_mib(None, "VmRSS:").unwrap_or(0.0);
    line += &format!("; the bench's clients {me:.0} MiB");
    (sum, line)
}

fn check(a: &SoakArgs) -> Result<()> {
    if a.users == 0 || a.collections == 0 || a.readers == 0 || a.batch == 0 {
        return Err(Error::invalid(
            "bench soak: --users, --collections, --readers and --batch must be at least 1",
        ));
    }
    if !(1..=8).contains(&a.servers) {
        return Err(Error::invalid("bench soak: --servers must be from 1 to 8"));
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
    let sink_port = free_port()?;
    let _sink = start_sink_with(
        sink_port,
        &["-c"],
        Stdio::from(std::fs::File::create(&count.0)?),
    )?;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let w = world::build(&mut *db.conn()?, t0(), args.users, args.collections)?;
    let port = free_port()?;
    let url = url.unwrap_or(DEFAULT_BENCH_DB);
    let smtp_url = format!("smtp://127.0.0.1:{sink_port}");
    let result = Servers::start(args.servers, url, port, &smtp_url, &scratch).and_then(|mut servers| {
        writeln!(
            out,
            "bench soak on {:?}: {} users in 5 zones, hourly digests of {} collections; {} feed readers; \
             batches of {}; an hour every {} s; {} server process(es) on one address, each with a pool of {}",
            db.backend(),
            w.users,
            args.collections,
            args.readers,
            args.batch,
            args.hour_seconds,
            args.servers,
            Config::default().database.pool_size
        )?;
        writeln!(out, "start: {}", resident(&servers).1)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let target = Target {
            base: format!("http://127.0.0.1:{port}"),
            auth: format!("Bearer {}", w.token),
            collections: Arc::new(w.collections.clone()),
            clock: Arc::new(FixedClock::new(t0())),
            batch: args.batch,
        };
        rt.block_on(run(args, &target, &db, &mut servers, &count, out))
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
    servers: &mut Servers,
    count: &SinkCount,
    out: &mut dyn Write,
) -> Result<()> {
    // Not before the first run: analyzed empty, the log looks empty to the
    // planner until the next analysis, and the posts' own reads of it
    // then scan it (20 posts/s instead of 240).
    let analyze =
        || tokio::task::block_in_place(|| world::stand_in_for_autovacuum(&mut *db.conn()?));
    if tokio::task::block_in_place(|| db.conn()?.autovacuum_off())? {
        writeln!(
            out,
            "PostgreSQL's autovacuum is off: the bench analyzes the log after each run and each \
             hour, as autovacuum would"
        )?;
    }
    if a.compare_seconds > 0 {
        let secs = a.compare_seconds;
        let (alone1, mut r1) = phase(t, 2, 0, secs).await;
        analyze()?;
        let (mixed, mut r2) = phase(t, 2, a.readers, secs).await;
        analyze()?;
        let (alone2, mut r3) = phase(t, 2, 0, secs).await;
        analyze()?;
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
    hours::soak_hours(a, t, db, servers, count, out).await
}
