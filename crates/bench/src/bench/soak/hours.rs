//! The soak itself: the clients under steady load, an accelerated hour at
//! a time with the tick and queue pass in the servers, then the memory
//! lines, an idle spell and the exactly-once check.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Timelike, Utc};
use tokio::task::JoinHandle;

use super::load::{self, Shared, Target};
use super::memory::{minutes, peaks_by_tick, plateau_line, sample_rss};
use super::server::Servers;
use super::world::{self, Counts};
use super::{feed_url, resident, route_lines, t0, SoakArgs, API_ROUTE, FEED_ROUTE, POLL_ROUTE};
use crate::bench::burst::sink::SinkCount;
use crate::db::Db;
use crate::error::{Error, Result};

/// Runs `f` on the database from the runtime's thread (the bench's
/// clients go on meanwhile on the others).
fn blocking<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    tokio::task::block_in_place(f)
}

/// The soak's clients: the paced ingest, the readers (half polling with
/// `If-None-Match`, half not) and one reading `/api/v1/queue`.
fn start_clients(a: &SoakArgs, t: &Target, s: &Arc<Shared>) -> Vec<JoinHandle<()>> {
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
    tasks
}

/// What every accelerated hour shares: the arguments, the target, the
/// database, the clients' shared state and when the soak started.
struct Soak<'a> {
    a: &'a SoakArgs,
    t: &'a Target,
    db: &'a Db,
    s: Arc<Shared>,
    started: Instant,
}

/// What the accelerated hours leave for the lines after them.
struct Hours {
    /// The counts after the last hour's tick.
    last: Counts,
    /// The servers' resident memory before each tick: the most, and the
    /// third hour's.
    peak: f64,
    third: Option<f64>,
    /// When each tick ran, in seconds since the soak started: (from, to).
    ticks: Vec<(f64, f64)>,
}

impl Soak<'_> {
    /// Hour `h`: waits for its end, reads the servers' memory, moves the
    /// clock to the top of the hour, ticks and reports the hour.
    async fn hour(
        &self,
        h: u64,
        hours: &mut Hours,
        servers: &mut Servers,
        out: &mut dyn Write,
    ) -> Result<()> {
        let (a, s, started) = (self.a, &self.s, self.started);
        let due = started + Duration::from_secs(h * a.hour_seconds);
        tokio::time::sleep_until(due.into()).await;
        let mut interval = s.take();
        let (usage, line) = resident(servers);
        hours.peak = hours.peak.max(usage.rss_mib);
        if h == 3 {
            hours.third = Some(usage.rss_mib);
        }
        let at = top_of_hour(h);
        self.t.clock.set(at);
        s.bursting.store(true, Ordering::Relaxed);
        let from = started.elapsed().as_secs_f64();
        let (took, sqlite) = blocking(|| servers.tick(at))?;
        hours.ticks.push((from, started.elapsed().as_secs_f64()));
        s.bursting.store(false, Ordering::Relaxed);
        let now = blocking(|| world::counts(&mut *self.db.conn()?))?;
        blocking(|| world::stand_in_for_autovacuum(&mut *self.db.conn()?))?;
        writeln!(
            out,
            "hour to {}: {line}; tick + queue pass: {} runs, {} messages sent, \
             {:.2} s after the top of the hour; SQLite then held {:.0} MiB",
            at.format("%H:%MZ"),
            now.runs - hours.last.runs,
            now.sent - hours.last.sent,
            took.as_secs_f64(),
            sqlite as f64 / 1_048_576.0
        )?;
        hours.last = now;
        route_lines(out, &mut interval, a.hour_seconds as f64)
    }
}

/// The top of the `h`th hour after the soak's start, on the bench clock.
fn top_of_hour(h: u64) -> DateTime<Utc> {
    (t0() + chrono::Duration::hours(h as i64))
        .with_minute(0)
        .and_then(|t| t.with_second(0))
        .expect("a top of the hour")
}

pub(super) async fn soak_hours(
    a: &SoakArgs,
    t: &Target,
    db: &Db,
    servers: &mut Servers,
    count: &SinkCount,
    out: &mut dyn Write,
) -> Result<()> {
    let s = Arc::new(Shared::default());
    let tasks = start_clients(a, t, &s);
    let started = Instant::now();
    let sampler = tokio::spawn(sample_rss(servers.pids(), s.clone(), started));
    let soak = Soak {
        a,
        t,
        db,
        s: s.clone(),
        started,
    };
    let hours = a.seconds / a.hour_seconds;
    let sink_before = count.read()?;
    let before = blocking(|| world::counts(&mut *db.conn()?))?;
    let mut soaked = Hours {
        last: before,
        peak: 0f64,
        third: None,
        ticks: Vec::new(),
    };
    for h in 1..=hours {
        soak.hour(h, &mut soaked, servers, out).await?;
    }
    s.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let samples = sampler.await.unwrap_or_default();
    writeln!(out, "{}", plateau_line(&minutes(&samples)))?;
    let (in_ticks, outside) = peaks_by_tick(&samples, &soaked.ticks);
    writeln!(
        out,
        "resident, peak while a tick ran (and a second after) {in_ticks:.0} MiB, \
         at other times {outside:.0} MiB"
    )?;
    let (end, _) = resident(servers);
    tokio::time::sleep(Duration::from_secs(a.idle_seconds)).await;
    let (idle, _) = resident(servers);
    writeln!(
        out,
        "resident before each tick: at most {:.0} MiB (third hour {:.0}); at the end {:.0} MiB, \
         after {} s idle {:.0} MiB; descriptors {} at the end, {} idle",
        soaked.peak,
        soaked.third.unwrap_or(0.0),
        end.rss_mib,
        a.idle_seconds,
        idle.rss_mib,
        end.fds,
        idle.fds
    )?;
    let sent = (soaked.last.sent - before.sent) as u64;
    check_once(a, hours, db, count, sink_before, sent, out)
}

/// Every due digest went out exactly once: one run per subscription and
/// period, every digest request sent, the sink's count equal to the
/// messages sent, and a run for each subscription each hour.
fn check_once(
    a: &SoakArgs,
    hours: u64,
    db: &Db,
    count: &SinkCount,
    sink_before: u64,
    sent: u64,
    out: &mut dyn Write,
) -> Result<()> {
    let once = blocking(|| world::exactly_once(&mut *db.conn()?))?;
    let got = count.settle(sink_before + sent)? - sink_before;
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
    if once.runs != once.periods || once.digests != once.sent || got != sent {
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
