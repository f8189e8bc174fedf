//! `digestd bench tick`: how long a tick takes to find and claim its due
//! runs, beside two floors — the best hand-written query that only fetches
//! the same due rows, and the same writes a claim makes done as two
//! hand-written set statements — at several instants; then again with ten
//! times as many subscriptions that are not due, to show the cost follows
//! the due count; last, ticks at which nothing is due, what the
//! quarter-hour schedule adds to an hourly one.
//!
//! The world is loaded through a bulk path of its own (COPY / prepared
//! INSERTs): building a million users through `user add` would measure the
//! CLI, not the tick. Every subscription's scheduler state comes from the
//! same `Rule` the product uses.

mod quiet;
mod world;

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use clap::Args;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::{open_empty, peak_rss_mib};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::schedule::tick::{tick as run_tick, Discard};
use world::{add_idle, build_world};

pub(super) use world::mix;

#[derive(Args, Debug, Clone)]
pub struct TickArgs {
    /// Subscriptions in the world (one user each, over every zone).
    #[arg(long, default_value_t = 1_000_000)]
    pub subs: usize,
    /// Then grow the subscriptions that are not due this many times over.
    #[arg(long, default_value_t = 10)]
    pub idle_factor: usize,
    /// Instead of the rounds above: the tick with quiet hours on this share
    /// of the users (0 to 1) beside the tick without, alternated.
    #[arg(long)]
    pub quiet_share: Option<f64>,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-tick.db";
/// The base row and one idle weekly digest per hour of the week.
const MAX_IDLE_FACTOR: usize = 1 + 7 * 24;
#[derive(QueryableByName)]
#[allow(dead_code)]
struct FloorRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    frequency: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    hour_of_day: Option<i32>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    day_of_week: Option<i32>,
    #[diesel(sql_type = diesel::sql_types::Timestamp)]
    active_since: NaiveDateTime,
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    timezone: Option<String>,
}

/// The floor: fetch the due rows and the columns a tick needs, nothing more.
fn floor(c: &mut DbConn, at: DateTime<Utc>) -> Result<(usize, Duration)> {
    let sql = |p: &str| {
        format!(
            "SELECT s.id, s.frequency, s.hour_of_day, s.day_of_week, s.active_since, p.name, u.timezone \
             FROM subscriptions s JOIN parties p ON p.id = s.party_id LEFT JOIN users u ON u.party_id = s.party_id \
             WHERE s.next_due_at <= {p} AND NOT s.paused"
        )
    };
    let t = Instant::now();
    let rows: Vec<FloorRow> = match c {
        DbConn::Sqlite(s) => diesel::sql_query(sql("?"))
            .bind::<diesel::sql_types::Timestamp, _>(at.naive_utc())
            .load(s)?,
        DbConn::Postgres(p) => diesel::sql_query(sql("$1"))
            .bind::<diesel::sql_types::Timestamp, _>(at.naive_utc())
            .load(p)?,
    };
    Ok((rows.len(), t.elapsed()))
}

/// The write floor: the writes a claim cannot do without — a run row per
/// due subscription and its `next_due_at` moved on — as two hand-written
/// set statements with no time-zone arithmetic, committed, then undone
/// (untimed) from a copy of the rows taken before. The tick's own claim
/// does the same writes plus the periods in each zone: a yardstick for
/// what those writes cost here, not a strict bound (on PostgreSQL with a
/// large table the tick's chunked statements beat the single big ones).
fn write_floor(c: &mut DbConn, at: DateTime<Utc>) -> Result<Duration> {
    let at = at.naive_utc().format("%F %T").to_string();
    let due = format!("next_due_at <= '{at}' AND NOT paused");
    let (later, begin) = match c {
        DbConn::Sqlite(_) => ("datetime(next_due_at, '+7 days')", "BEGIN IMMEDIATE"),
        DbConn::Postgres(_) => ("next_due_at + interval '7 days'", "BEGIN"),
    };
    c.batch_execute(&format!(
        "DROP TABLE IF EXISTS floor_saved; \
         CREATE TEMP TABLE floor_saved AS SELECT id, next_due_at, last_scheduled_at, \
             last_period, last_window_end FROM subscriptions WHERE {due};"
    ))?;
    let t = Instant::now();
    c.batch_execute(&format!(
        "{begin}; \
         INSERT INTO subscription_runs (subscription_id, period, scheduled_at, window_start, \
             window_end, ran_at) \
         SELECT id, 'floor', next_due_at, COALESCE(last_window_end, active_since), \
             '{at}', '{at}' FROM subscriptions WHERE {due}; \
         UPDATE subscriptions SET next_due_at = {later}, last_scheduled_at = next_due_at, \
             last_period = 'floor', last_window_end = '{at}' WHERE {due}; \
         COMMIT;"
    ))?;
    let d = t.elapsed();
    c.batch_execute(
        "UPDATE subscriptions SET next_due_at = f.next_due_at, \
             last_scheduled_at = f.last_scheduled_at, last_period = f.last_period, \
             last_window_end = f.last_window_end \
         FROM floor_saved AS f WHERE subscriptions.id = f.id; \
         DELETE FROM subscription_runs WHERE period = 'floor'; \
         DROP TABLE floor_saved;",
    )?;
    if let DbConn::Postgres(pg) = c {
        // The undone rows are dead tuples the tick would otherwise wade through.
        pg.batch_execute("VACUUM subscriptions, subscription_runs")?;
    }
    Ok(d)
}

/// After a reset: the reset rewrote every claimed row and deleted every
/// run; on PostgreSQL vacuum that away (autovacuum would, between real
/// ticks) so each round starts clean and only the idle rows differ.
fn vacuum(c: &mut DbConn) -> Result<()> {
    if let DbConn::Postgres(pg) = c {
        pg.batch_execute("VACUUM ANALYZE subscriptions, subscription_runs, users, parties")?;
    }
    Ok(())
}

/// Puts every subscription back to "never ran" so the same instants can be
/// replayed: its next due instant becomes its first run's scheduled instant.
fn reset(c: &mut DbConn) -> Result<()> {
    c.batch_execute(
        "UPDATE subscriptions SET next_due_at = COALESCE((SELECT MIN(r.scheduled_at) FROM subscription_runs r \
             WHERE r.subscription_id = subscriptions.id), next_due_at), \
             last_scheduled_at = NULL, last_period = NULL, last_window_end = NULL \
         WHERE EXISTS (SELECT 1 FROM subscription_runs r WHERE r.subscription_id = subscriptions.id); \
         DELETE FROM subscription_runs;",
    )?;
    Ok(())
}

fn round(
    c: &mut DbConn,
    label: &str,
    instants: &[DateTime<Utc>],
    out: &mut dyn Write,
) -> Result<Vec<f64>> {
    writeln!(out, "{label}")?;
    writeln!(
        out,
        "  tick instant           due   fetch floor   write floor   tick (find+claim)   vs fetch   vs fetch+write   peak RSS"
    )?;
    let mut times = vec![];
    for at in instants {
        let (due, f) = floor(c, *at)?;
        let w = write_floor(c, *at)?;
        let t = Instant::now();
        let runs = run_tick(c, *at, &mut Discard)?;
        let d = t.elapsed();
        if runs.len() != due {
            return Err(Error::Storage(format!(
                "tick claimed {} runs but {due} rows were due",
                runs.len()
            )));
        }
        times.push(d.as_secs_f64());
        writeln!(
            out,
            "  {}  {:>8}  {:>9.3} s   {:>9.3} s   {:>13.3} s   {:>7.1}x   {:>13.1}x   {:>5.0} MiB",
            at.format("%Y-%m-%d %H:%M"),
            due,
            f.as_secs_f64(),
            w.as_secs_f64(),
            d.as_secs_f64(),
            d.as_secs_f64() / f.as_secs_f64(),
            d.as_secs_f64() / (f + w).as_secs_f64(),
            peak_rss_mib().unwrap_or(f64::NAN)
        )?;
    }
    Ok(times)
}

/// `digestd bench tick`.
pub fn tick(args: &TickArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.subs == 0 || args.idle_factor == 0 {
        return Err(Error::invalid(
            "--subs and --idle-factor must be at least 1",
        ));
    }
    if args.quiet_share.is_some_and(|s| !(0.0..=1.0).contains(&s)) {
        return Err(Error::invalid("--quiet-share must be between 0 and 1"));
    }
    if args.idle_factor > MAX_IDLE_FACTOR {
        return Err(Error::invalid(format!(
            "--idle-factor must be at most {MAX_IDLE_FACTOR}: each idle subscription is another weekly digest of its user, and a week has 168 hours"
        )));
    }
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let t0 = Utc.with_ymd_and_hms(2026, 11, 16, 0, 0, 0).unwrap();
    let instants: Vec<DateTime<Utc>> = [6, 12, 18, 24, 30]
        .iter()
        .map(|h| t0 + chrono::Duration::hours(*h))
        .collect();
    let t = Instant::now();
    build_world(&mut c, args.subs, t0)?;
    writeln!(out, "bench tick: {} subscriptions over {} zones (70% daily, 20% weekly, 10% hourly; half at 08:00 local), loaded in {:.1} s", args.subs, chrono_tz::TZ_VARIANTS.len(), t.elapsed().as_secs_f64())?;
    // Warm-up: the same ticks once, untimed, then reset, so that round 1
    // starts as round 2 does — with a runs table that has held the runs
    // and been emptied. Without it, PostgreSQL's round 1 also paid for
    // growing the runs table and its index from nothing, and round 2,
    // with ten times the rows, measured 25% faster.
    let t = Instant::now();
    for at in &instants {
        run_tick(&mut c, *at, &mut Discard)?;
    }
    reset(&mut c)?;
    vacuum(&mut c)?;
    writeln!(
        out,
        "warm-up: the same ticks once, untimed, then reset ({:.1} s)",
        t.elapsed().as_secs_f64()
    )?;
    if let Some(share) = args.quiet_share {
        return quiet::compare(&mut c, share, &instants, out);
    }
    let base = round(&mut c, "round 1", &instants, out)?;
    reset(&mut c)?;
    let extra = args.subs * (args.idle_factor - 1);
    let t = Instant::now();
    add_idle(
        &mut c,
        args.subs,
        extra,
        t0,
        t0 + chrono::Duration::days(400),
    )?;
    vacuum(&mut c)?;
    writeln!(
        out,
        "added {extra} subscriptions that are not due ({:.1} s); same instants again",
        t.elapsed().as_secs_f64()
    )?;
    let grown = round(
        &mut c,
        &format!(
            "round 2: {}x the subscriptions that are not due",
            args.idle_factor
        ),
        &instants,
        out,
    )?;
    let (a, b): (f64, f64) = (base.iter().sum(), grown.iter().sum());
    writeln!(
        out,
        "total tick time: {a:.3} s, then {b:.3} s with {}x idle: {:+.0}% (goal within ±20%)",
        args.idle_factor,
        (b / a - 1.0) * 100.0
    )?;
    idle_ticks(
        &mut c,
        args.subs * args.idle_factor,
        instants[instants.len() - 1],
        out,
    )
}

/// How many idle ticks a row of the report times.
const IDLE_TICKS: i64 = 20;

/// What the quarter-hour schedule adds to the hourly one: three more ticks
/// an hour, each of which finds little or nothing due. Timed as `serve`
/// runs them (lease, cut, the due probe), each a second after the last
/// real tick, when every due run has been claimed.
fn idle_ticks(
    c: &mut DbConn,
    subs: usize,
    after: DateTime<Utc>,
    out: &mut dyn Write,
) -> Result<()> {
    let mut times = vec![];
    for k in 1..=IDLE_TICKS {
        let t = Instant::now();
        let runs = crate::schedule::run_tick(
            c,
            after + chrono::Duration::seconds(k),
            "bench",
            chrono::Duration::minutes(10),
            &mut Discard,
        )?
        .ok_or_else(|| Error::conflict("bench tick: the tick lease is held elsewhere"))?;
        times.push(t.elapsed().as_secs_f64());
        if !runs.is_empty() {
            return Err(Error::Storage(format!(
                "an idle tick claimed {} runs",
                runs.len()
            )));
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    writeln!(
        out,
        "idle ticks ({IDLE_TICKS}, nothing due, {subs} subscriptions, lease included): median {:.2} ms, max {:.2} ms; \
         three more an hour cost {:.4}% of a core (goal under 1%)",
        median * 1e3,
        times[times.len() - 1] * 1e3,
        3.0 * median / 3600.0 * 100.0
    )?;
    Ok(())
}
