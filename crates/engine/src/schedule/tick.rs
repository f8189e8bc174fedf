//! One tick: every (subscription, period) whose scheduled instant has come
//! and that has no run yet gets exactly one run, recorded in the same
//! transaction that hands it on.
//!
//! The index a tick reads is `subscriptions.next_due_at`, the next
//! scheduled instant each subscription has not run yet: a range scan
//! `next_due_at <= tick` touches only the due subscriptions, so the cost
//! of a tick follows the number due, not the number that exist.
//!
//! Per due subscription, the tick considers the latest period scheduled at
//! or before it and every earlier period of the last hour (two only when a
//! 30- or 45-minute DST gap ends inside the hour):
//! - each gets a run when it is scheduled after the last run's period (for
//!   daily and weekly, also on a later local date) and not before
//!   `active_since`. Periods older than an hour were missed (downtime): they
//!   get no run of their own, so missed periods collapse into one digest
//!   whose window covers them.
//! - Windows chain: a modification window runs from the end of the last
//!   window (or `active_since`) to the tick; a forward window from there to
//!   the next period's scheduled instant.
//! - `next_due_at` moves to the first period after the tick.
//! - The run's unique key `(subscription_id, period)` is the last guard
//!   against a double: a second insert fails and rolls the chunk back.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;

use super::claim::RunRow;
use super::period::{Period, Rule};
use super::quiet;
use crate::db::schema::{group_prefs, parties, subscriptions, users};
use crate::db::{DbConn, Stamp};
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::modlog::Cut;
use crate::subscriptions::{Frequency, Key, KeyColumns, Kind};
use crate::validate::QuietHours;

/// Subscriptions claimed per transaction: about a third of a second of
/// write lock on this hardware. 5,000 measured 15–30% slower per run
/// (more commits, and on PostgreSQL more statements).
pub const CHUNK: i64 = 20_000;

mod due;
mod reschedule;
pub use due::{Discard, DueRun, HandOff, RunLine};
pub use reschedule::{reschedule, reschedule_party};

type Candidate = (
    (i64, Key, String, bool, bool),
    (
        NaiveDateTime,
        Option<NaiveDateTime>,
        Option<String>,
        Option<NaiveDateTime>,
        String,
    ),
    String,
    Option<(String, i32, String)>,
    Option<(String, i32, String)>,
);

/// The rule of a subscription: its party's zone and first day of week (a
/// user's from `users`, a group's from `group_prefs`), or UTC and Monday
/// when neither has a row.
pub fn rule_for(
    frequency: Frequency,
    hour: Option<i32>,
    day: Option<i32>,
    user: Option<(&str, i32)>,
) -> Result<Rule> {
    let (tz, week_start) = match user {
        Some((tz, ws)) => (
            tz.parse::<Tz>()
                .map_err(|_| Error::Storage(format!("stored timezone {tz:?} is unknown")))?,
            ws as u8,
        ),
        None => (Tz::UTC, 0),
    };
    Ok(Rule {
        tz,
        frequency,
        hour: hour.unwrap_or(0) as u8,
        day: day.unwrap_or(0) as u8,
        week_start,
    })
}

/// Runs one tick at `at`: claims every due run, hands each on, and returns
/// them. Works in chunks of [`CHUNK`] subscriptions, each its own
/// transaction; a crash between chunks leaves the rest due for the next tick.
pub fn tick(conn: &mut DbConn, at: DateTime<Utc>, sink: &mut dyn HandOff) -> Result<Vec<DueRun>> {
    tick_in_chunks(conn, at, sink, CHUNK)
}

/// [`tick`] with chunks of `chunk` subscriptions, at least one (tests use
/// small ones to go through many chunks).
pub fn tick_in_chunks(
    conn: &mut DbConn,
    at: DateTime<Utc>,
    sink: &mut dyn HandOff,
    chunk: i64,
) -> Result<Vec<DueRun>> {
    tick_as(conn, at, sink, chunk, Role::Leader)
}

/// Who runs a tick: the lease holder, or on PostgreSQL another process
/// helping it ([`super::share_tick`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Runs the tick to its end: every run due at the tick is recorded when
    /// it returns, whoever claimed it.
    Leader,
    /// Claims chunks no one else holds while there are any, then stops.
    Helper,
}

/// How a chunk's subscriptions are held while the chunk is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// SQLite: the write transaction holds the whole database already.
    None,
    /// PostgreSQL: row locks, passing over rows another process holds.
    Skip,
    /// PostgreSQL: row locks, waiting for rows another process holds (to
    /// find them moved on when it commits, or still due when it died).
    Wait,
}

/// [`tick_in_chunks`] as `role`. On PostgreSQL each chunk's subscriptions
/// are row-locked (`FOR UPDATE`) in its transaction, so processes ticking
/// at once claim disjoint chunks (`SKIP LOCKED`). The leader, once a chunk
/// comes back short, claims again waiting on the rows others hold until
/// none is left: a helper that dies mid-chunk leaves its rows to the
/// leader, in the same tick.
pub fn tick_as(
    conn: &mut DbConn,
    at: DateTime<Utc>,
    sink: &mut dyn HandOff,
    chunk: i64,
    role: Role,
) -> Result<Vec<DueRun>> {
    let chunk = chunk.max(1);
    let mut out = Vec::new();
    // Subscriptions sharing a rule share their periods: computed once per
    // rule and tick, not once per subscription or chunk.
    let mut plans: Plans = HashMap::new();
    let mut lock = match conn.backend().concurrent_writers() {
        false => Lock::None,
        true => Lock::Skip,
    };
    // One cut of the log for the whole tick, taken before any chunk: what
    // commits after it (a late `record`, a transaction held open across
    // the tick) is in each subscription's next window.
    let cut = crate::modlog::cut(conn)?;
    loop {
        let t = std::time::Instant::now();
        let n =
            conn.write_tx(|c| claim_chunk(c, (at, &cut), chunk, sink, &mut out, &mut plans, lock))?;
        sink.committed();
        tracing::debug!(with_commit = ?t.elapsed(), ?lock, "tick transaction");
        lock = match (lock, role) {
            (_, _) if n == chunk as usize => lock,
            (Lock::Skip, Role::Leader) => Lock::Wait,
            // Waiting, a chunk may come back short only because rows moved
            // on while it waited: done when nothing is left.
            (Lock::Wait, _) if n > 0 => lock,
            _ => return Ok(out),
        };
    }
}

/// The ids of the chunk's subscriptions, locked until the end of the
/// chunk's transaction; `None` where a write transaction holds the whole
/// database (SQLite) and there are no row locks to take.
fn lock_chunk(
    c: &mut DbConn,
    at: NaiveDateTime,
    chunk: i64,
    lock: Lock,
) -> Result<Option<Vec<i64>>> {
    let q = subscriptions::table
        .filter(subscriptions::next_due_at.le(at))
        .filter(subscriptions::paused.eq(false))
        .order((subscriptions::next_due_at.asc(), subscriptions::id.asc()))
        .limit(chunk)
        .select(subscriptions::id);
    Ok(crate::db::lock_rows!(
        c,
        q,
        i64,
        skip_locked = matches!(lock, Lock::Skip)
    )?)
}

fn claim_chunk(
    c: &mut DbConn,
    (at, cut): (DateTime<Utc>, &Cut),
    chunk: i64,
    sink: &mut dyn HandOff,
    out: &mut Vec<DueRun>,
    plans: &mut Plans,
    lock: Lock,
) -> Result<usize> {
    let at_n = at.naive_utc();
    let t0 = std::time::Instant::now();
    let Some(rows) = load_candidates(c, at_n, chunk, lock)? else {
        return Ok(0);
    };
    let n = rows.len();
    let loaded = t0.elapsed();
    let mut due = Vec::with_capacity(n);
    let mut nexts = Vec::with_capacity(n);
    for row in rows {
        nexts.push(plan_candidate(row, (at, cut), plans, &mut due)?);
    }
    let computed = t0.elapsed();
    let runs = hand_off(c, sink, due, at_n, out)?;
    let handed = t0.elapsed();
    super::claim::write(c, &runs, &nexts)?;
    tracing::debug!(
        candidates = n,
        runs = runs.len(),
        ?loaded,
        ?computed,
        ?handed,
        written = ?t0.elapsed(),
        "tick chunk"
    );
    Ok(n)
}

/// The chunk's due subscriptions, with what a run needs of their party;
/// `None` when the rows to lock were all taken by another process.
fn load_candidates(
    c: &mut DbConn,
    at_n: NaiveDateTime,
    chunk: i64,
    lock: Lock,
) -> Result<Option<Vec<Candidate>>> {
    let locked = match lock {
        Lock::None => None,
        _ => lock_chunk(c, at_n, chunk, lock)?,
    };
    let mut q = subscriptions::table
        .inner_join(parties::table)
        .left_join(users::table.on(users::party_id.eq(subscriptions::party_id)))
        .left_join(group_prefs::table.on(group_prefs::party_id.eq(subscriptions::party_id)))
        .filter(subscriptions::next_due_at.le(at_n))
        .filter(subscriptions::paused.eq(false))
        .order((subscriptions::next_due_at.asc(), subscriptions::id.asc()))
        .limit(chunk)
        .into_boxed();
    if let Some(ids) = &locked {
        if ids.is_empty() {
            return Ok(None);
        }
        q = q.filter(subscriptions::id.eq_any(ids));
    }
    let rows = q
        .select((
            (
                subscriptions::id,
                KeyColumns::default(),
                subscriptions::channels,
                subscriptions::include_own,
                subscriptions::send_empty,
            ),
            (
                subscriptions::active_since,
                subscriptions::last_scheduled_at,
                subscriptions::last_period,
                subscriptions::last_window_end,
                subscriptions::last_log_cut,
            ),
            parties::name,
            (users::timezone, users::week_start, users::quiet_hours).nullable(),
            (
                group_prefs::timezone,
                group_prefs::week_start,
                group_prefs::quiet_hours,
            )
                .nullable(),
        ))
        .load(c)?;
    Ok(Some(rows))
}

/// One candidate's runs at `at` (every period due since its last, each
/// window chained to the one before), pushed onto `due`; its new
/// `next_due_at`.
fn plan_candidate(
    row: Candidate,
    (at, cut): (DateTime<Utc>, &Cut),
    plans: &mut Plans,
    due: &mut Vec<DueRun>,
) -> Result<(i64, NaiveDateTime)> {
    let (
        (id, (party, coll, kind, freq, hour, day), channels, include_own, send_empty),
        (active, last_sched, last_key, last_end, last_pos),
        name,
        user,
        group,
    ) = row;
    let zone = user.or(group);
    let frequency = Frequency::parse(&freq)?;
    let kind = Kind::parse(&kind)?;
    let rule = rule_for(
        frequency,
        hour,
        day,
        zone.as_ref().map(|(t, w, _)| (t.as_str(), *w)),
    )?;
    let quiet = quiet::of_hourly(&rule, zone.as_ref().map(|z| z.2.as_str()));
    let plan = plans
        .entry((rule, quiet))
        .or_insert_with(|| Plan::new(&rule, at, quiet.as_ref()));
    let active = active.and_utc();
    let (mut last_sched, mut last_key) = (last_sched, last_key);
    let mut chained = last_end.map(|e| e.and_utc());
    let mut log_from = Cut::from_stored(last_pos);
    for (p, following) in plan.periods.iter().cloned() {
        if p.scheduled < active || !is_after_last(&rule, &p, last_sched, last_key.as_deref()) {
            continue;
        }
        let window_start = chained.unwrap_or(match kind {
            Kind::Modification => active,
            Kind::Forward => p.scheduled,
        });
        let window_end = match kind {
            // Never before the chain's end: a flush may have moved it past
            // this tick's instant ([`super::flush`]).
            Kind::Modification => chained.map_or(at, |c| c.max(at)),
            Kind::Forward => following,
        };
        let window_start = window_start.max(active).min(window_end);
        // Never backwards, whatever the back end's cut did meanwhile.
        let log_to = cut.clone().later(&log_from);
        let run = DueRun {
            subscription: SubscriptionId(id),
            party: PartyId(party),
            party_name: name.clone(),
            tz: rule.tz,
            frequency,
            kind,
            collection: coll.map(CollectionId),
            channels: channels.clone(),
            include_own,
            send_empty,
            period: p,
            tick: at,
            window_start,
            window_end,
            log_from: match kind {
                Kind::Modification => std::mem::replace(&mut log_from, log_to.clone()),
                Kind::Forward => log_to.clone(),
            },
            log_to,
        };
        last_sched = Some(run.period.scheduled.naive_utc());
        last_key = Some(run.period.key.clone());
        chained = Some(run.window_end);
        due.push(run);
    }
    Ok((id, plan.next.naive_utc()))
}

/// Hands `due` to `sink` (composed and posted in this transaction), moves
/// the runs onto `out`, and returns their rows, each with its request.
fn hand_off(
    c: &mut DbConn,
    sink: &mut dyn HandOff,
    due: Vec<DueRun>,
    at_n: NaiveDateTime,
    out: &mut Vec<DueRun>,
) -> Result<Vec<RunRow>> {
    sink.prepare(c, &due)?;
    let requests = sink.hand_off_all(c, &due)?;
    if requests.len() != due.len() {
        return Err(Error::Storage(format!(
            "the hand-off answered {} of {} runs",
            requests.len(),
            due.len()
        )));
    }
    let mut runs = Vec::with_capacity(due.len());
    for (run, request) in due.into_iter().zip(requests) {
        runs.push(RunRow {
            subscription_id: run.subscription.0,
            period: run.period.key.clone(),
            scheduled_at: Stamp(run.period.scheduled.naive_utc()),
            window_start: Stamp(run.window_start.naive_utc()),
            window_end: Stamp(run.window_end.naive_utc()),
            ran_at: Stamp(at_n),
            request_id: request.map(|r| r.0),
            log_from: Some(run.log_from.as_str().to_string()),
            log_to: Some(run.log_to.as_str().to_string()),
        });
        out.push(run);
    }
    Ok(runs)
}

/// What a tick at one instant does for every subscription of one rule.
struct Plan {
    /// [`periods_to_run`], each with the scheduled instant of the period
    /// after it (where a forward window ends).
    periods: Vec<(Period, DateTime<Utc>)>,
    /// The first period after the tick: the new `next_due_at`.
    next: DateTime<Utc>,
}

/// Plans per rule and (hourly) quiet window.
type Plans = HashMap<(Rule, Option<QuietHours>), Plan>;

impl Plan {
    /// An hourly rule's periods inside `quiet` get no run: the first after
    /// the window takes them in its window ([`quiet::moved_past`]).
    fn new(rule: &Rule, at: DateTime<Utc>, quiet: Option<&QuietHours>) -> Plan {
        let periods = periods_to_run(rule, at)
            .into_iter()
            .filter(|p| quiet::moved_past(quiet, rule, p.scheduled).is_none())
            .map(|p| {
                let following = rule.first_after(p.scheduled).scheduled;
                (p, following)
            })
            .collect();
        let next = rule.first_after(at).scheduled;
        Plan {
            periods,
            next: quiet::moved_past(quiet, rule, next).unwrap_or(next),
        }
    }
}

/// The periods a tick at `at` considers: the latest period scheduled at or
/// before `at`, and every earlier one of the last hour. Normally that is one
/// period; two when a 30- or 45-minute DST gap ends inside the hour
/// (Australia/Lord_Howe, Pacific/Chatham), and each gets its own run.
/// Periods older than an hour were missed (downtime, a paused or late
/// tick): they get no run of their own, the window of the next run covers
/// them, so missed periods collapse into one digest instead of a burst.
fn periods_to_run(rule: &Rule, at: DateTime<Utc>) -> Vec<Period> {
    let horizon = at - chrono::Duration::hours(1);
    let mut v = vec![rule.latest_at_or_before(at)];
    loop {
        let earlier = rule.latest_at_or_before(v[0].scheduled - chrono::Duration::microseconds(1));
        if earlier.scheduled <= horizon {
            return v;
        }
        v.insert(0, earlier);
    }
}

/// Whether period `p` comes after the last period run. For daily and
/// weekly the local date decides as well as the instant: after a user moves
/// from Tokyo to New York, New York's "2026-11-22" comes after Tokyo's
/// "2026-11-22" in time, but it is the same local day and must not be sent
/// twice. (Daily keys are dates, weekly keys `week-` + a date, so they
/// compare as strings.)
fn is_after_last(
    rule: &Rule,
    p: &Period,
    last_sched: Option<NaiveDateTime>,
    last_key: Option<&str>,
) -> bool {
    let later = last_sched.is_none_or(|l| p.scheduled > l.and_utc());
    let new_day = match (rule.frequency, last_key) {
        (Frequency::Hourly, _) | (_, None) => true,
        (_, Some(k)) => p.key.as_str() > k,
    };
    later && new_day
}

/// The first instant a subscription becomes due, for one that is active
/// from `since` and has never run: its first period scheduled at or after
/// `since`.
pub fn first_due(rule: &Rule, since: DateTime<Utc>) -> DateTime<Utc> {
    rule.first_after(since - chrono::Duration::microseconds(1))
        .scheduled
}
