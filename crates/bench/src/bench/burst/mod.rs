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

pub(super) mod sink;
mod world;

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use clap::Args;
use diesel::prelude::*;

use super::cpu::per_message;
use super::smtp::{backend_pid, find, snapshot, source_run, spent, start_sink_with, Spent};
use super::{free_port, open_empty, peak_rss_mib, rate};
use crate::config::{DigestConfig, EmailConfig, ScheduleConfig, COMPOSE_WORKERS, TICK_CHUNKS};
use crate::db::schema::nt_requests;
use crate::db::DbConn;
use crate::deliver::queue::{self, Delivery};
use crate::digest::render::Parts;
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::ids::RequestId;
use crate::schedule::tick::Discard;
use crate::schedule::{self, DueRun, HandOff};
use sink::{source_length, Counting, SinkCount, SOURCE_HEADERS};
use world::{analyze, build_world, BUSY_CHANGES, BUSY_EVERY, HOUR, QUIET_CHANGES, ZONES};

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

/// The composer, with the time spent in it (compose, render, post).
struct Timed<'a> {
    inner: &'a mut Composer,
    spent: Duration,
}

impl HandOff for Timed<'_> {
    fn prepare(&mut self, c: &mut DbConn, runs: &[DueRun]) -> Result<()> {
        let t = Instant::now();
        let r = self.inner.prepare(c, runs);
        self.spent += t.elapsed();
        r
    }

    fn hand_off(&mut self, c: &mut DbConn, run: &DueRun) -> Result<Option<RequestId>> {
        let t = Instant::now();
        let r = self.inner.hand_off(c, run);
        self.spent += t.elapsed();
        r
    }

    // Forwarded, not left to the trait's defaults: the tick calls these,
    // and the default `hand_off_all` would post one digest at a time, which
    // is not the path `serve` takes.
    fn hand_off_all(&mut self, c: &mut DbConn, runs: &[DueRun]) -> Result<Vec<Option<RequestId>>> {
        let t = Instant::now();
        let r = self.inner.hand_off_all(c, runs);
        self.spent += t.elapsed();
        r
    }

    fn committed(&mut self) {
        self.inner.committed()
    }
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

pub fn burst(args: &BurstArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
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
    writeln!(
        out,
        "world: {} collections ({} busy with {BUSY_CHANGES} changes, the rest {QUIET_CHANGES}), \
         {} modifications; {} digests ({:.1}%) list {BUSY_CHANGES} changes",
        world.collections,
        world.collections.div_ceil(BUSY_EVERY),
        world.mods,
        world.busy_digests,
        100.0 * world.busy_digests as f64 / n as f64
    )?;
    let email = EmailConfig {
        transport: crate::config::EmailTransport::Smtp,
        smtp_url: format!("smtp://127.0.0.1:{port}"),
        pool_size: args.sessions,
        dir: scratch.0.join("outbox").to_string_lossy().into_owned(),
        ..EmailConfig::default()
    };
    let digest = DigestConfig::default();
    let first = *world.ticks.keys().next().expect("at least one zone");
    let ((probed, probe_t), alone) = timed(|| compose_alone(&mut c, first, &digest, &email))?;
    let ((), analyze_t) = timed(|| analyze(&mut c))?;
    writeln!(
        out,
        "compose + render alone, the first tick's {probed} runs (rolled back, for information): \
         {:.2} s, {:.0} digests/s ({:.1} s with the plan); then analyze {:.1} s",
        probe_t.as_secs_f64(),
        rate(probed, probe_t),
        alone.as_secs_f64(),
        analyze_t.as_secs_f64()
    )?;
    let setup_peak = peak_rss_mib();
    let reset = reset_peak_rss();
    let lease_for = ScheduleConfig::default().lease_for();
    let mut d = Delivery::new(&email)?;
    let (accepted, bytes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let k = d
        .listeners
        .iter()
        .position(|l| l.key() == crate::parties::Channel::Email)
        .expect("Delivery::new gives email a listener");
    let inner = d.listeners.remove(k);
    d.listeners.push(Box::new(Counting {
        inner,
        accepted: accepted.clone(),
        bytes: bytes.clone(),
    }));

    let sink_pid = sink.0.id().to_string();
    let backend = backend_pid(&mut c);
    let snap = || snapshot(&sink_pid, backend.as_deref());
    let sink_before = count.read()?;
    let (mut tick_t, mut handoff_t, mut queue_t) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut sent = 0usize;
    let mut resident = Resident::default();
    let s0 = snap();
    for (at, due) in &world.ticks {
        let mut composer = Composer::new(&digest, &email)?;
        composer.workers = workers;
        composer.read_through(&db);
        let mut hand = Timed {
            inner: &mut composer,
            spent: Duration::ZERO,
        };
        // As `serve` ticks (`serve::tick_and_deliver`).
        let (runs, td) = timed(|| {
            match schedule::share_tick(&mut c, *at, OWNER, lease_for, &mut hand, chunk.into())? {
                schedule::Shared::Led(runs) => Ok(runs),
                _ => Err(Error::Storage("the tick's lease is held elsewhere".into())),
            }
        })?;
        let hd = hand.spent;
        resident.sample();
        let (report, qd) = timed(|| queue::run_queue(&mut c, &mut d, *at, OWNER, lease_for))?;
        resident.sample();
        let written = report.written.get("email").copied().unwrap_or(0);
        if runs.len() != *due
            || composer.posted != *due
            || written != *due
            || report.finished != *due
        {
            return Err(Error::Storage(format!(
                "tick at {at}: {} runs, {} digests posted of {due} due; queue: {report}",
                runs.len(),
                composer.posted
            )));
        }
        writeln!(
            out,
            "tick {}: {due} digests; tick {:.2} s (find + claim {:.2} s, compose + render + post {:.2} s), \
             queue pass {:.2} s",
            at.format("%Y-%m-%d %H:%MZ"),
            td.as_secs_f64(),
            td.saturating_sub(hd).as_secs_f64(),
            hd.as_secs_f64(),
            qd.as_secs_f64()
        )?;
        tick_t += td;
        handoff_t += hd;
        queue_t += qd;
        sent += written;
    }
    let burst_cpu = spent(s0, snap(), false);
    d.shutdown();
    let burst_t = tick_t + queue_t;

    // Exactly once: the sink took as many messages as were sent, the
    // transport saw each accepted, and every digest is sent, one each.
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
    let mean = (bytes.load(Ordering::Relaxed) / acc.max(1)) as usize;
    let length = source_length(mean);

    let mut floors = Vec::new();
    let mut floor_cpu = Spent::default();
    for _ in 0..2 {
        let before = count.read()?;
        let s0 = snap();
        floors.push(source_run(port, args.sessions, n, length)?);
        floor_cpu.add(spent(s0, snap(), true));
        let got = count.settle(before + n as u64)? - before;
        if got != n as u64 {
            return Err(Error::Storage(format!(
                "smtp-source sent {n} messages but smtp-sink counted {got}"
            )));
        }
    }
    let floor = floors.iter().min().copied().unwrap_or_default();

    let secs = |d: Duration| d.as_secs_f64();
    let share = |d: Duration| 100.0 * secs(d) / secs(burst_t);
    writeln!(
        out,
        "mean message size {mean} bytes (what the transport handed to the SMTP sessions, headers and body, \
         over the {acc} accepted); smtp-source -l {length} (the payload with its CRLFs; its own headers add ~{SOURCE_HEADERS} bytes)"
    )?;
    writeln!(
        out,
        "{:<62} {:>8.2} s {:>9.0} messages/s",
        "burst: ticks + queue passes",
        secs(burst_t),
        rate(n, burst_t)
    )?;
    writeln!(
        out,
        "  tick {:.2} s ({:.0}%): find + claim {:.2} s ({:.0}%), compose + render + post {:.2} s ({:.0}%)",
        secs(tick_t),
        share(tick_t),
        secs(tick_t.saturating_sub(handoff_t)),
        share(tick_t.saturating_sub(handoff_t)),
        secs(handoff_t),
        share(handoff_t)
    )?;
    if probed > 0 {
        // The hand-off split at the rate compose + render ran alone.
        let composing = probe_t.mul_f64(n as f64 / probed as f64).min(handoff_t);
        let posting = handoff_t.saturating_sub(composing);
        writeln!(
            out,
            "    of which, at the rate measured alone: compose + render ~{:.2} s ({:.0}%), \
             posting ~{:.2} s ({:.0}%)",
            secs(composing),
            share(composing),
            secs(posting),
            share(posting)
        )?;
    }
    writeln!(
        out,
        "  queue passes {:.2} s ({:.0}%)",
        secs(queue_t),
        share(queue_t)
    )?;
    writeln!(
        out,
        "{:<62} {:>8.2} s {:>9.0} messages/s",
        format!(
            "floor: smtp-source -s {} -m {n} -l {length} -d (fastest of {})",
            args.sessions,
            floors.len()
        ),
        secs(floor),
        rate(n, floor)
    )?;
    writeln!(
        out,
        "floor runs (s): {}",
        floors
            .iter()
            .map(|d| format!("{:.2}", secs(*d)))
            .collect::<Vec<_>>()
            .join(" ")
    )?;
    let us = |d: Duration, runs: usize| per_message(d, n * runs);
    let server = burst_cpu
        .backend
        .map(|b| format!(", PostgreSQL backend {:.0} µs", us(b, 1)))
        .unwrap_or_default();
    writeln!(
        out,
        "cpu per message, burst: digestd {:.0} µs{server}, smtp-sink {:.0} µs",
        us(burst_cpu.client, 1),
        us(burst_cpu.sink, 1)
    )?;
    writeln!(
        out,
        "cpu per message, floor: smtp-source {:.0} µs, smtp-sink {:.0} µs",
        us(floor_cpu.client, floors.len()),
        us(floor_cpu.sink, floors.len())
    )?;
    let ratio = secs(floor) / secs(burst_t);
    writeln!(
        out,
        "ratio burst/floor (floor time / burst time): {ratio:.2} (goal >= 0.60: {})",
        if ratio >= 0.6 { "met" } else { "not met" }
    )?;
    rss_lines(out, setup_peak, reset.then(peak_rss_mib).flatten())?;
    if let (Some(anon), Some(file)) = (resident.anon, resident.file) {
        writeln!(
            out,
            "resident after each tick and pass, at most: {anon:.0} MiB anonymous (heap), \
             {file:.0} MiB file-backed (the program and its libraries)"
        )?;
    }
    Ok(())
}

/// Every run due at `at` composed and rendered as the hand-off would
/// (caches cold, one composer), posted nowhere; the tick that found them
/// rolled back too: how much of the hand-off is composing and rendering,
/// the rest being the posting writes.
fn compose_alone(
    c: &mut DbConn,
    at: DateTime<Utc>,
    digest: &DigestConfig,
    email: &EmailConfig,
) -> Result<(usize, Duration)> {
    c.rolled_back(|c| {
        let runs = schedule::tick(c, at, &mut Discard)?;
        let mut composer = Composer::new(digest, email)?;
        let t = Instant::now();
        composer.prepare(c, &runs)?;
        for r in &runs {
            composer.compose(c, r, Parts::for_channels(&r.channels))?;
        }
        Ok((runs.len(), t.elapsed()))
    })
}

/// The largest anonymous (heap) and file-backed resident sizes seen:
/// VmHWM counts both, and SQLite's memory-mapped database is the second.
#[derive(Default)]
struct Resident {
    anon: Option<f64>,
    file: Option<f64>,
}

impl Resident {
    fn sample(&mut self) {
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
            return;
        };
        let mib = |key: &str| {
            let line = status.lines().find(|l| l.starts_with(key))?;
            let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb / 1024.0)
        };
        let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.anon = max(self.anon, mib("RssAnon:"));
        self.file = max(self.file, mib("RssFile:"));
    }
}

/// Peak memory: the whole run's, and the burst's own when VmHWM could be
/// reset after the setup (smtp-sink and smtp-source are other processes).
fn rss_lines(out: &mut dyn Write, setup: Option<f64>, burst: Option<f64>) -> Result<()> {
    let whole = match burst {
        Some(b) => Some(setup.map_or(b, |a| a.max(b))),
        None => peak_rss_mib(),
    };
    let Some(whole) = whole else {
        return Ok(writeln!(out, "peak memory: VmHWM not available")?);
    };
    let burst_part = burst
        .map(|b| format!("; in the burst and floor {b:.0} MiB (VmHWM reset after the setup)"))
        .unwrap_or_default();
    let judged = burst.unwrap_or(whole);
    writeln!(
        out,
        "peak memory {whole:.0} MiB over the whole run (setup {:.0} MiB){burst_part}; goal <= 300 MiB in the burst: {}",
        setup.unwrap_or(f64::NAN),
        if judged <= 300.0 { "met" } else { "not met" }
    )?;
    Ok(())
}
