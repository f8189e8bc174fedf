//! `digestd bench compose`: digests composed and rendered per second, on
//! one core (digestd composes on the tick's one thread), with 100,000
//! subscribers and a modification log of 10,000,000 rows.
//!
//! The world is generated inside the database engine (a recursive CTE on
//! SQLite, `generate_series` on PostgreSQL): the log spans `--days` days
//! before the tick, spread over `--collections` collections of `--items`
//! items each, every modification by a random user, one changed attribute
//! each. Every subscriber follows one collection daily, at the local hour
//! that falls on the same UTC tick in six zones (UTC, Paris, New York,
//! Kolkata at +5:30, Sydney, Tokyo), with locales of both clock
//! conventions; each window covers the last day.
//!
//! Measured in one run, each inside a transaction that is rolled back:
//! - **plan**: the tick with nothing handed on (find and claim the runs);
//! - **compose + render as posted**: the hand-off without its writes
//!   (`Composer::draft_all`): every digest composed and rendered as the
//!   tick posts it (shared renderings once, each recipient's links and
//!   SMS), caches cold — what the tick's figure is compared with;
//! - **compose + render each whole**: every digest rendered in full for its
//!   recipient, for the channels it uses (what `preview` does) — the
//!   per-core compose rate, as measured before shared renderings;
//! - **tick**: the whole tick with the real hand-off (plan, compose, render
//!   and post each digest as an nt request), then what the posted digests
//!   store, by column, and the time to fill their holes as the queue does;
//! - **window reads**, for information: the log of every collection's window
//!   read once, the least any composition must do.

mod report;
mod stored;
mod world;

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;

use super::{open_empty, AnonPeak};
use crate::config::{DigestConfig, EmailConfig};
use crate::db::{Db, DbConn};
use crate::digest::render::Parts;
use crate::digest::{Composer, Drafted};
use crate::error::Result;
use crate::ids::CollectionId;
use crate::parties::Channel;
use crate::schedule::tick::{tick, Discard};
use crate::schedule::{DueRun, HandOff};
use stored::{fill_all, stored, Stored};
use world::{build_world, write_floor};

#[derive(Args, Debug, Clone)]
pub struct ComposeArgs {
    /// Subscribers (one daily subscription each).
    #[arg(long, default_value_t = 100_000)]
    pub subs: usize,
    /// Rows in the modification log.
    #[arg(long, default_value_t = 10_000_000)]
    pub mods: usize,
    /// Collections the log and the subscriptions spread over.
    #[arg(long, default_value_t = 100)]
    pub collections: usize,
    /// Items per collection.
    #[arg(long, default_value_t = 500)]
    pub items: usize,
    /// Days the log spans.
    #[arg(long, default_value_t = 100)]
    pub days: usize,
    /// The channels every subscription uses (comma-separated): the goal
    /// for stored size is about email-only digests.
    #[arg(long, default_value = "email")]
    pub channels: String,
    /// Threads the hand-off composes and renders on (`[schedule]
    /// compose_workers`); above 1, the hand-off without its writes is also
    /// timed on one thread in the same run, shared and from scratch.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Pairs of runs on 1 and on `--workers` threads, each way round in
    /// turn; the ratio reported is the median pair's (these machines'
    /// speed moves within seconds).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// The share of subscribers (0 to 1) with seen marks on ten items of
    /// their window, seen after their changes, so their digests leave
    /// those out (`digest::seen`): the tick with them against without.
    #[arg(long, default_value_t = 0.0)]
    pub seen: f64,
    /// Every subscriber's locale (a BCP 47 tag: en, de-DE, ja): the cost
    /// of a digest in each language. Empty: each zone's own locale.
    #[arg(long, default_value = "")]
    pub locale: String,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-compose.db";

/// Times `f`, returning its value.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

/// One pair of the hand-off without its writes, on 1 and on `--workers`
/// threads: (1 worker's time, its first batch's plan, the same on N).
type Pair = (Duration, Duration, Duration, Duration);

/// What the runs inside the first rolled-back transaction measured.
struct Drafts {
    /// Runs the plan found, digests composed non-empty, bytes rendered.
    runs: usize,
    composed: usize,
    bytes: usize,
    plan: Duration,
    drafted: Drafted,
    draft: Duration,
    /// Each whole, shared as in production, and every body from scratch.
    comp: Duration,
    unshared: Duration,
    /// Above 1 worker: the pairs, as posted and from scratch.
    on_workers: Vec<(&'static str, Vec<Pair>)>,
}

/// The tick with the real hand-off, and what its digests store.
struct Ticked {
    runs: usize,
    posted: usize,
    kept: Stored,
    /// (digests filled, bytes out, time spent filling alone).
    filled: (usize, usize, Duration),
    full: Duration,
}

/// What every measured run shares: the arguments, the database the
/// composer reads through, the configuration and the tick's instant.
struct Measure<'a> {
    args: &'a ComposeArgs,
    db: &'a Db,
    digest: DigestConfig,
    email: EmailConfig,
    at: DateTime<Utc>,
}

impl Measure<'_> {
    /// Window reads: each collection's last day, once.
    fn window_reads(&self, c: &mut DbConn) -> Result<(usize, Duration)> {
        timed(|| {
            let mut rows = 0;
            for k in 1..=self.args.collections as i64 {
                rows += crate::modlog::find_in_window(
                    c,
                    Some(&[CollectionId(k)]),
                    self.at - chrono::Duration::days(1),
                    self.at,
                )?
                .len();
            }
            Ok(rows)
        })
    }

    /// Every run of the plan composed and rendered whole for its recipient
    /// (what `preview` does), caches cold; `share` as in production or every
    /// body built from scratch.
    fn compose_all(
        &self,
        c: &mut DbConn,
        runs: &[DueRun],
        share: bool,
    ) -> Result<((usize, usize), Duration)> {
        let mut composer = Composer::new(&self.digest, &self.email)?;
        composer.share_bodies = share;
        timed(|| {
            composer.prepare(c, runs)?;
            let (mut n, mut bytes) = (0usize, 0usize);
            for r in runs {
                let parts = Parts::for_channels(&r.channels);
                let (content, rendered) = composer.compose(c, r, parts)?;
                if !content.is_empty() {
                    n += 1;
                }
                bytes += rendered.bytes();
            }
            Ok((n, bytes))
        })
    }

    /// The hand-off without its writes on `workers` threads, caches cold.
    fn draft_on(
        &self,
        c: &mut DbConn,
        runs: &[DueRun],
        workers: usize,
        share: bool,
    ) -> Result<(Drafted, Duration)> {
        let mut composer = Composer::new(&self.digest, &self.email)?;
        (composer.workers, composer.share_bodies) = (workers, share);
        composer.read_through(self.db);
        timed(|| composer.draft_all(c, runs))
    }

    /// The plan, the hand-off without its writes (and its pairs on 1 and
    /// N workers), and every digest composed whole, shared and not.
    fn drafts(&self, c: &mut DbConn) -> Result<Drafts> {
        let args = self.args;
        let (runs, plan) = timed(|| tick(c, self.at, &mut Discard))?;
        // The hand-off without its writes: the goal's "compose + render".
        let (drafted, draft) = self.draft_on(c, &runs, args.workers, true)?;
        let mut on_workers = Vec::new();
        if args.workers > 1 {
            for (share, what) in [(true, "as posted"), (false, "from scratch")] {
                on_workers.push((what, self.pairs(c, &runs, share)?));
            }
        }
        let ((composed, bytes), comp) = self.compose_all(c, &runs, true)?;
        let (_, unshared) = self.compose_all(c, &runs, false)?;
        Ok(Drafts {
            runs: runs.len(),
            composed,
            bytes,
            plan,
            drafted,
            draft,
            comp,
            unshared,
            on_workers,
        })
    }

    /// `--rounds` pairs of runs on 1 and on `--workers` threads, each way
    /// round in turn.
    fn pairs(&self, c: &mut DbConn, runs: &[DueRun], share: bool) -> Result<Vec<Pair>> {
        let workers = self.args.workers;
        let mut pairs = Vec::new();
        for round in 0..self.args.rounds.max(1) {
            let (one, many) = if round % 2 == 0 {
                let one = self.draft_on(c, runs, 1, share)?;
                (one, self.draft_on(c, runs, workers, share)?)
            } else {
                let many = self.draft_on(c, runs, workers, share)?;
                (self.draft_on(c, runs, 1, share)?, many)
            };
            pairs.push((one.1, one.0.first_plan, many.1, many.0.first_plan));
        }
        Ok(pairs)
    }

    /// The whole tick with the real hand-off, then what its digests store
    /// and the time to fill their holes.
    fn full_tick(&self, c: &mut DbConn) -> Result<Ticked> {
        let mut composer = Composer::new(&self.digest, &self.email)?;
        composer.workers = self.args.workers;
        composer.read_through(self.db);
        let (runs, full) = timed(|| tick(c, self.at, &mut composer))?;
        Ok(Ticked {
            runs: runs.len(),
            posted: composer.posted,
            kept: stored(c)?,
            filled: fill_all(c)?,
            full,
        })
    }
}

pub fn compose(args: &ComposeArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let mut args = args.clone();
    args.channels = args
        .channels
        .split(',')
        .map(|c| Channel::parse(c).map(Channel::as_str))
        .collect::<Result<Vec<_>>>()?
        .join(",");
    let args = &args;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let anon = AnonPeak::start();
    let at = Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap();
    if !(0.0..=1.0).contains(&args.seen) {
        return Err(crate::error::Error::invalid(
            "--seen is a share from 0 to 1",
        ));
    }
    let (_, load) = timed(|| build_world(&mut c, args, at))?;
    let marks = world::add_seen(&mut c, args, at)?;
    writeln!(
        out,
        "bench compose on {:?}: {} subscribers (daily, one of {} collections each, 6 zones, on {}), \
         {} modifications over {} days on {} items per collection, {marks} seen marks; loaded in {:.1} s",
        c.backend(),
        args.subs,
        args.collections,
        args.channels,
        args.mods,
        args.days,
        args.items,
        load.as_secs_f64()
    )?;
    let m = Measure {
        args,
        db: &db,
        digest: DigestConfig::default(),
        email: EmailConfig::default(),
        at,
    };
    let reads = m.window_reads(&mut c)?;
    let drafts = c.rolled_back(|c| m.drafts(c))?;
    let ((), floor) = c.rolled_back(|c| timed(|| write_floor(c, at)))?;
    let ticked = c.rolled_back(|c| m.full_tick(c))?;
    report::Report {
        workers: args.workers,
        reads,
        drafts,
        floor,
        ticked,
    }
    .write(out, anon)
}
