//! The burst's timed work: the composer timed around its calls, the
//! compose-alone probe before the burst, the email transport that counts
//! what it hands over, and the ticks and queue passes themselves.

use std::io::Write;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::sink::Counting;
use super::world::{analyze, World};
use super::{timed, OWNER};
use crate::bench::rate;
use crate::config::{DigestConfig, EmailConfig};
use crate::db::{Db, DbConn};
use crate::deliver::queue::{self, Delivery};
use crate::digest::render::Parts;
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::ids::RequestId;
use crate::schedule::tick::Discard;
use crate::schedule::{self, DueRun, HandOff};

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

/// Compose + render alone, for information: the runs the probe composed
/// and the time they took.
pub(super) struct Probe {
    pub probed: usize,
    pub time: Duration,
}

/// The first tick's runs composed alone (rolled back), then the tables
/// analyzed, and the line that reports both.
pub(super) fn probe(
    c: &mut DbConn,
    world: &World,
    digest: &DigestConfig,
    email: &EmailConfig,
    out: &mut dyn Write,
) -> Result<Probe> {
    let first = *world.ticks.keys().next().expect("at least one zone");
    let ((probed, probe_t), alone) = timed(|| compose_alone(c, first, digest, email))?;
    let ((), analyze_t) = timed(|| analyze(c))?;
    writeln!(
        out,
        "compose + render alone, the first tick's {probed} runs (rolled back, for information): \
         {:.2} s, {:.0} digests/s ({:.1} s with the plan); then analyze {:.1} s",
        probe_t.as_secs_f64(),
        rate(probed, probe_t),
        alone.as_secs_f64(),
        analyze_t.as_secs_f64()
    )?;
    Ok(Probe {
        probed,
        time: probe_t,
    })
}

/// What the email transport saw accepted, and the bytes it handed over.
pub(super) struct Counted {
    pub accepted: Arc<AtomicU64>,
    pub bytes: Arc<AtomicU64>,
}

/// The queue's delivery for `email`, its email listener wrapped to count
/// what it hands to the SMTP sessions.
pub(super) fn counting_delivery(
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
) -> Result<(Delivery, Counted)> {
    let mut d = Delivery::new(email, rt)?;
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
    Ok((d, Counted { accepted, bytes }))
}

/// The largest anonymous (heap) and file-backed resident sizes seen:
/// VmHWM counts both, and SQLite's memory-mapped database is the second.
#[derive(Default)]
pub(super) struct Resident {
    pub anon: Option<f64>,
    pub file: Option<f64>,
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

/// What every tick of the burst runs with.
pub(super) struct Ticking<'a> {
    pub db: &'a Db,
    pub digest: &'a DigestConfig,
    pub email: &'a EmailConfig,
    pub workers: usize,
    pub chunk: u32,
    pub lease_for: chrono::Duration,
}

/// The burst's times, summed over its ticks, and what it sent.
pub(super) struct Ticks {
    pub tick: Duration,
    pub handoff: Duration,
    pub queue: Duration,
    pub sent: usize,
    pub resident: Resident,
}

impl Ticks {
    /// The burst: every tick and queue pass.
    pub fn burst(&self) -> Duration {
        self.tick + self.queue
    }
}

impl Ticking<'_> {
    /// Each tick of the world as `serve` runs it, then a queue pass, each
    /// timed, checked against what was due, and reported on a line.
    pub fn run(
        &self,
        c: &mut DbConn,
        d: &mut Delivery,
        world: &World,
        out: &mut dyn Write,
    ) -> Result<Ticks> {
        let mut all = Ticks {
            tick: Duration::ZERO,
            handoff: Duration::ZERO,
            queue: Duration::ZERO,
            sent: 0,
            resident: Resident::default(),
        };
        for (at, due) in &world.ticks {
            let mut composer = Composer::new(self.digest, self.email)?;
            composer.workers = self.workers;
            composer.read_through(self.db);
            let mut hand = Timed {
                inner: &mut composer,
                spent: Duration::ZERO,
            };
            // As `serve` ticks (`cycle::tick_and_deliver`).
            let (runs, td) = timed(|| {
                match schedule::share_tick(
                    c,
                    *at,
                    OWNER,
                    self.lease_for,
                    &mut hand,
                    self.chunk.into(),
                )? {
                    schedule::Shared::Led(runs) => Ok(runs),
                    _ => Err(Error::Storage("the tick's lease is held elsewhere".into())),
                }
            })?;
            let hd = hand.spent;
            all.resident.sample();
            let (report, qd) = timed(|| queue::run_queue(c, d, *at, OWNER, self.lease_for))?;
            all.resident.sample();
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
            all.tick += td;
            all.handoff += hd;
            all.queue += qd;
            all.sent += written;
        }
        Ok(all)
    }
}
