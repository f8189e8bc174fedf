//! `digestd bench burst`: the top of the hour as a site's users live it,
//! from the tick to the last `250` at the mail server, beside
//! `smtp-source` sending as many messages of the same mean size into the
//! same `smtp-sink`, in one process and the same run.
//!
//! The world goes in through the product's own paths: `--users` people
//! through `import::users` (an email address each, spread over `--zones`
//! zones with a locale of the zone), a daily modification digest of one
//! collection at 09:00 local each through `import::subs`, and a log of
//! one modification per two users through `modlog::record`. A collection
//! has about [`PER_COLLECTION`] followers; one in ten is busy
//! ([`BUSY_CHANGES`] changes in the window), the rest quiet
//! ([`QUIET_CHANGES`]), so about 10% of the digests list 20 or more
//! changes. Every change is made by someone who does not follow the
//! collection, so no digest is empty.
//!
//! The zones are UTC+0, +1 and +2 in November, so 09:00 local falls due
//! at three UTC ticks, 07:00, 08:00 and 09:00: each tick runs as `serve`
//! runs it (the tick under its lease with the real composer and hand-off,
//! then a queue pass under the queue lease with the SMTP transport into
//! the sink), and the burst is the sum of those ticks and passes. The
//! tick's time is split into its own work (find and claim) and the
//! hand-off (compose, render, post), timed around the composer's calls.
//!
//! The floor is `smtp-source -s P -m N -l L -d` into the same sink, after
//! the burst (the mean size is known only then), twice; the faster counts.
//! The sink runs with `-c` (a running count on its standard output, a
//! file here), for both, so the bench can check that it took exactly as
//! many messages as digestd meant to send.
mod report;
mod run;
pub(super) mod sink;
mod world;

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use diesel::prelude::*;

use super::cpu::Cpu;
use super::smtp::{backend_pid, find, snapshot, source_run, spent, start_sink_with, Sink, Spent};
use super::{free_port, open_empty, peak_rss_mib};
use crate::config::{DigestConfig, EmailConfig, ScheduleConfig, COMPOSE_WORKERS, TICK_CHUNKS};
use crate::db::schema::nt_requests;
use crate::db::DbConn;
use crate::error::{Error, Result};
use sink::{source_length, SinkCount};
use world::{build_world, HOUR, ZONES};

#[derive(Args, Debug, Clone)]
pub struct BurstArgs {
    /// Users, each with an email address and a daily digest at 09:00 local.
    #[arg(long, default_value_t = 100_000)]
    pub users: usize,
    /// Time zones the users spread over, 1 to 20 (UTC+0, +1 and +2 in
    /// November: the digests fall due at up to three hourly ticks).
    #[arg(long, default_value_t = 20)]
    pub zones: usize,
    /// SMTP sessions (`[email] pool_size`), for digestd and smtp-source alike.
    #[arg(long, default_value_t = 4)]
    pub sessions: u32,
    /// Threads each tick composes on (`[schedule] compose_workers`;
    /// default: as `serve`, the number of cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Subscriptions each tick transaction takes (`[schedule]
    /// tick_chunk`; default: as `serve`).
    #[arg(long)]
    pub chunk: Option<u32>,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-burst.db";

/// The lease holder's name for the tick and the queue.
const OWNER: &str = "bench-burst";

fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

/// A directory of the bench's own (the sink's count, the sent journal),
/// removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let p = std::env::temp_dir().join(format!("digestd-bench-burst-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p)?;
        Ok(Scratch(p))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Lets VmHWM start again from the current resident size (Linux).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The arguments' ranges, checked before anything starts.
fn check(args: &BurstArgs) -> Result<()> {
    if args.users == 0 {
        return Err(Error::invalid("bench burst: --users must be at least 1"));
    }
    if !(1..=ZONES.len()).contains(&args.zones) {
        return Err(Error::invalid(format!(
            "bench burst: --zones must be 1 to {}",
            ZONES.len()
        )));
    }
    if args.sessions == 0 {
        return Err(Error::invalid("bench burst: --sessions must be at least 1"));
    }
    if args.workers.is_some_and(|w| !COMPOSE_WORKERS.contains(&w)) {
        return Err(Error::invalid(format!(
            "bench burst: --workers must be {} to {}",
            COMPOSE_WORKERS.start(),
            COMPOSE_WORKERS.end()
        )));
    }
    if args.chunk.is_some_and(|c| !TICK_CHUNKS.contains(&c)) {
        return Err(Error::invalid(format!(
            "bench burst: --chunk must be {} to {}",
            TICK_CHUNKS.start(),
            TICK_CHUNKS.end()
        )));
    }
    Ok(())
}

/// The processes whose CPU a timed run counts: this one (or its reaped
/// children), the sink, and the PostgreSQL backend when it is local.
struct Cpus {
    sink: String,
    backend: Option<String>,
}

impl Cpus {
    fn new(sink: &Sink, c: &mut DbConn) -> Cpus {
        Cpus {
            sink: sink.0.id().to_string(),
            backend: backend_pid(c),
        }
    }

    fn snap(&self) -> (Cpu, Cpu, Option<Cpu>) {
        snapshot(&self.sink, self.backend.as_deref())
    }
}

pub fn burst(
    args: &BurstArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    check(args)?;
    find("smtp-sink")?;
    find("smtp-source")?;
    let scratch = Scratch::new()?;
    let count_file = scratch.0.join("sink-count");
    let port = free_port()?;
    let sink = start_sink_with(
        port,
        &["-c"],
        Stdio::from(std::fs::File::create(&count_file)?),
    )?;
    let count = SinkCount(count_file);
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let n = args.users;
    let workers = args
        .workers
        .unwrap_or(ScheduleConfig::default().compose_workers);
    let chunk = args.chunk.unwrap_or(ScheduleConfig::default().tick_chunk);
    writeln!(
        out,
        "bench burst on {:?}: {n} users over {} zones (UTC+0 to +2 in November), \
         each with a daily digest at {HOUR:02}:00 local; {} SMTP sessions into smtp-sink on 127.0.0.1:{port}; \
         {workers} compose workers, tick chunks of {chunk}",
        c.backend(),
        args.zones,
        args.sessions
    )?;
    let world = build_world(&mut c, args, out)?;
    report::world_line(out, &world, n)?;
    let email = EmailConfig {
        transport: crate::config::EmailTransport::Smtp,
        smtp_url: format!("smtp://127.0.0.1:{port}"),
        pool_size: args.sessions,
        dir: scratch.0.join("outbox").to_string_lossy().into_owned(),
        ..EmailConfig::default()
    };
    let digest = DigestConfig::default();
    let probe = run::probe(&mut c, &world, &digest, &email, out)?;
    let setup_peak = peak_rss_mib();
    let reset = reset_peak_rss();
    let ticking = run::Ticking {
        db: &db,
        digest: &digest,
        email: &email,
        workers,
        chunk,
        lease_for: ScheduleConfig::default().lease_for(),
    };
    let (mut d, counted) = run::counting_delivery(&email, rt)?;

    let cpus = Cpus::new(&sink, &mut c);
    let sink_before = count.read()?;
    let s0 = cpus.snap();
    let ticks = ticking.run(&mut c, &mut d, &world, out)?;
    let burst_cpu = spent(s0, cpus.snap(), false);
    d.shutdown();

    let acc = exactly_once(
        &mut c,
        n,
        ticks.sent,
        &count,
        sink_before,
        &counted.accepted,
        out,
    )?;
    let mean = (counted.bytes.load(Ordering::Relaxed) / acc.max(1)) as usize;
    let length = source_length(mean);
    let (floors, floor_cpu) = floor_runs(port, args.sessions, n, length, &count, &cpus)?;
    report::Report {
        n,
        sessions: args.sessions,
        mean,
        acc,
        length,
        probe,
        ticks,
        burst_cpu,
        floors,
        floor_cpu,
        setup_peak,
        reset,
    }
    .write(out)
}

/// Exactly once: the sink took as many messages as were sent, the
/// transport saw each accepted, and every digest is sent, one each.
/// Returns how many the transport saw accepted.
fn exactly_once(
    c: &mut DbConn,
    n: usize,
    sent: usize,
    count: &SinkCount,
    sink_before: u64,
    accepted: &AtomicU64,
    out: &mut dyn Write,
) -> Result<u64> {
    let sink_got = count.settle(sink_before + sent as u64)? - sink_before;
    let acc = accepted.load(Ordering::Relaxed);
    let (digests, recipients): (i64, i64) = nt_requests::table
        .filter(nt_requests::kind.eq("digest"))
        .filter(nt_requests::status.eq("sent"))
        .select((
            diesel::dsl::count_star(),
            diesel::dsl::count(nt_requests::party_to).aggregate_distinct(),
        ))
        .first(&mut *c)?;
    if sent != n
        || sink_got != n as u64
        || acc != n as u64
        || digests != n as i64
        || recipients != n as i64
    {
        return Err(Error::Storage(format!(
            "{n} digests due; {sent} sent, smtp-sink counted {sink_got}, the transport saw {acc} accepted, \
             {digests} digest requests sent to {recipients} recipients"
        )));
    }
    writeln!(
        out,
        "smtp-sink counted {sink_got} messages from digestd; {digests} digest requests sent, to {recipients} recipients"
    )?;
    Ok(acc)
}

/// The floor: `smtp-source` into the same sink, twice, each run checked
/// against the sink's count; the runs' times and their CPU together.
fn floor_runs(
    port: u16,
    sessions: u32,
    n: usize,
    length: usize,
    count: &SinkCount,
    cpus: &Cpus,
) -> Result<(Vec<Duration>, Spent)> {
    let mut floors = Vec::new();
    let mut floor_cpu = Spent::default();
    for _ in 0..2 {
        let before = count.read()?;
        let s0 = cpus.snap();
        floors.push(source_run(port, sessions, n, length)?);
        floor_cpu.add(spent(s0, cpus.snap(), true));
        let got = count.settle(before + n as u64)? - before;
        if got != n as u64 {
            return Err(Error::Storage(format!(
                "smtp-source sent {n} messages but smtp-sink counted {got}"
            )));
        }
    }
    Ok((floors, floor_cpu))
}
