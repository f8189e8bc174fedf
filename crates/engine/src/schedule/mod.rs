//! The scheduler: local periods ([`period`]), the 168-bucket week grid
//! ([`grid`]), the tick that finds and claims due runs ([`tick`]), the run
//! a tick would find, claimed by nobody ([`preview_run`]), the last ticks
//! as their runs recorded them ([`recent_ticks`]), quiet hours in time
//! ([`quiet`]), the lease that keeps two processes from running the same
//! job ([`lease`]), and a subscription's waiting changes sent now, out of
//! its schedule ([`flush`]).
//!
//! Owns `subscription_runs`, the scheduler columns of `subscriptions`
//! (`active_since`, `next_due_at`, `last_scheduled_at`, `last_period`,
//! `last_window_end`) and `nt_job`.

mod claim;
pub mod flush;
pub mod grid;
mod history;
pub mod lease;
pub mod period;
mod preview;
pub mod quiet;
mod simulate;
pub mod tick;

pub use claim::{list as list_runs, RunRecord};
pub use flush::{flush_in_tx, Flushed};
pub use history::{recent_ticks, TickSummary};
pub use period::{Period, Rule};
pub use preview::{past_run, preview_run, PreviewRun};
pub use simulate::{simulate, Ticks};
pub use tick::{tick, DueRun, HandOff};

use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::error::Result;

/// The lease name of the tick job in `nt_job`.
pub const TICK_JOB: &str = "tick";

/// One tick under the lease: `None` when another process holds it (that
/// process is running this tick), else the runs recorded.
pub fn run_tick(
    conn: &mut DbConn,
    at: DateTime<Utc>,
    owner: &str,
    lease_for: chrono::Duration,
    sink: &mut dyn HandOff,
) -> Result<Option<Vec<DueRun>>> {
    led_tick(conn, at, owner, lease_for, sink, tick::CHUNK)
}

/// [`run_tick`] in chunks of `chunk` subscriptions.
fn led_tick(
    conn: &mut DbConn,
    at: DateTime<Utc>,
    owner: &str,
    lease_for: chrono::Duration,
    sink: &mut dyn HandOff,
    chunk: i64,
) -> Result<Option<Vec<DueRun>>> {
    if !lease::acquire(conn, TICK_JOB, owner, at, lease_for)? {
        return Ok(None);
    }
    let result = tick::tick_in_chunks(conn, at, sink, chunk);
    // Release even when the tick failed, so the next tick need not wait for
    // the lease to expire; what was not committed is still due.
    lease::release(conn, TICK_JOB, owner, at)?;
    result.map(Some)
}

/// What [`share_tick`] did.
#[derive(Debug)]
pub enum Shared {
    /// It held the lease and ran the tick to its end.
    Led(Vec<DueRun>),
    /// Another process held the lease; on PostgreSQL this one claimed the
    /// chunks no one else held while there were any (these runs).
    Helped(Vec<DueRun>),
    /// Another process held the lease, on SQLite: its one writer runs it.
    Skipped,
}

/// One tick as `digestd serve` runs it, in chunks of `chunk`: under the
/// lease as [`run_tick`]; without it, on PostgreSQL, helping the holder
/// (processes claim disjoint chunks under row locks, [`tick::tick_as`]),
/// so two processes share a burst's composing. A helper does no more than
/// its chunks: the holder finishes the tick and does what follows it.
pub fn share_tick(
    conn: &mut DbConn,
    at: DateTime<Utc>,
    owner: &str,
    lease_for: chrono::Duration,
    sink: &mut dyn HandOff,
    chunk: i64,
) -> Result<Shared> {
    if let Some(runs) = led_tick(conn, at, owner, lease_for, sink, chunk)? {
        return Ok(Shared::Led(runs));
    }
    if !conn.backend().concurrent_writers() {
        return Ok(Shared::Skipped);
    }
    tick::tick_as(conn, at, sink, chunk, tick::Role::Helper).map(Shared::Helped)
}
