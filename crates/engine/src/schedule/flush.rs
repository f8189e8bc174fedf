//! "Send it now": one subscription's waiting changes as a digest, out of
//! its schedule (`digestd subscription flush`, `POST
//! /api/v1/subscriptions/{id}/flush`, the manage page's button).
//!
//! A flush is a run in the subscription's chain of windows, like a tick's:
//! its window runs from where the last digest was cut (`last_log_cut`,
//! `last_window_end`) to a cut of the log taken now, and it moves both on,
//! so the next digest, scheduled or flushed, holds only what came after.
//! It does not move the schedule: `next_due_at`, `last_period` and
//! `last_scheduled_at` stay as they are.
//!
//! Exactly once against the tick: the flush holds the subscription's row
//! for its whole transaction (PostgreSQL: `FOR UPDATE`, the lock a tick's
//! chunk takes on the rows it claims; SQLite: the write transaction holds
//! the database), reads the chain's end after taking it, cuts the log
//! inside it, and posts the digest, records the run and moves the chain's
//! end in that one transaction. A tick that claims the row after the flush
//! reads the moved end; its own cut, taken before the flush's, is never
//! earlier than the stored one ([`crate::modlog::Cut::later`]), and its
//! window never ends before the stored end, so it reads nothing twice.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::claim::RunRow;
use super::period::Period;
use super::preview::preview_run;
use super::tick::{DueRun, HandOff};
use crate::db::schema::{subscription_runs, subscriptions};
use crate::db::{DbConn, Stamp};
use crate::error::{Error, Result};
use crate::ids::{RequestId, SubscriptionId};
use crate::subscriptions::Kind;

/// What a flush did.
#[derive(Debug, Clone, PartialEq)]
pub enum Flushed {
    /// A digest was posted: its request, and the run it was recorded as.
    Sent {
        request: RequestId,
        run: Box<DueRun>,
    },
    /// Nothing was waiting: nothing was posted or written.
    Nothing,
}

/// Flushes subscription `id` at `at` in the caller's write transaction,
/// handing the run to `sink` (the composer) as a tick would. Refused when
/// the subscription is unknown (NotFound), paused or a forward digest
/// (Conflict); [`Flushed::Nothing`] when its window holds nothing to send
/// (whatever `send_empty` says), having written nothing.
pub fn flush_in_tx(
    c: &mut DbConn,
    id: SubscriptionId,
    at: DateTime<Utc>,
    sink: &mut dyn HandOff,
) -> Result<Flushed> {
    c.lock_row_in_tx("subscriptions", id.0)?;
    let p = preview_run(c, id, at)?;
    if p.paused {
        return Err(Error::conflict(format!(
            "subscription {id} is paused: resume it before sending it now"
        )));
    }
    if p.run.kind == Kind::Forward {
        return Err(Error::conflict(format!(
            "subscription {id} lists what is coming up, at its own times: it has nothing waiting to send now"
        )));
    }
    let (active, last_end): (NaiveDateTime, Option<NaiveDateTime>) = subscriptions::table
        .find(id.0)
        .select((subscriptions::active_since, subscriptions::last_window_end))
        .first(c)?;
    let mut run = p.run;
    // The chain's end: never before it, whatever the clocks of the
    // processes that tick and flush say.
    let start = last_end.unwrap_or(active).max(active).and_utc();
    run.window_start = start;
    run.window_end = at.max(start);
    run.tick = at;
    run.send_empty = false;
    run.period = Period {
        key: free_key(c, id, at)?,
        scheduled: at,
    };
    let due = std::slice::from_ref(&run);
    sink.prepare(c, due)?;
    let request = match sink.hand_off_all(c, due)?.as_slice() {
        [Some(r)] => *r,
        [None] => return Ok(Flushed::Nothing),
        other => {
            return Err(Error::Storage(format!(
                "the hand-off answered {} posts for one run",
                other.len()
            )))
        }
    };
    let row = RunRow {
        subscription_id: id.0,
        period: run.period.key.clone(),
        scheduled_at: Stamp(at.naive_utc()),
        window_start: Stamp(run.window_start.naive_utc()),
        window_end: Stamp(run.window_end.naive_utc()),
        ran_at: Stamp(at.naive_utc()),
        request_id: Some(request.0),
        log_from: Some(run.log_from.as_str().to_string()),
        log_to: Some(run.log_to.as_str().to_string()),
    };
    diesel::insert_into(subscription_runs::table)
        .values(&row)
        .execute(c)?;
    diesel::update(subscriptions::table.find(id.0))
        .set((
            subscriptions::last_window_end.eq(Some(row.window_end.0)),
            subscriptions::last_log_cut.eq(run.log_to.as_str()),
        ))
        .execute(c)?;
    Ok(Flushed::Sent {
        request,
        run: Box::new(run),
    })
}

/// The period key of a flush at `at`: `flush-` and the instant, which the
/// whole-digest link carries; `-2`, `-3`… after it when an earlier flush
/// took it (two at one instant).
fn free_key(c: &mut DbConn, id: SubscriptionId, at: DateTime<Utc>) -> Result<String> {
    let base = at.format("flush-%Y%m%dT%H%M%S%6fZ").to_string();
    let taken: Vec<String> = subscription_runs::table
        .filter(subscription_runs::subscription_id.eq(id.0))
        .filter(subscription_runs::period.like(format!("{base}%")))
        .select(subscription_runs::period)
        .load(c)?;
    let mut key = base.clone();
    let mut n = 1;
    while taken.contains(&key) {
        n += 1;
        key = format!("{base}-{n}");
    }
    Ok(key)
}
