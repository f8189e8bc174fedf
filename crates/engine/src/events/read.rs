//! Reading and moving the outbox's rows: the operator's list and replay,
//! the counts `/metrics` and `/admin` show, the purge, and what the
//! poster (`deliver::events`) takes and marks.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use super::Kind;
use crate::db::schema::events;
use crate::db::DbConn;
use crate::error::Result;

const PENDING: &str = "pending";
const SENT: &str = "sent";
const FAILED: &str = "failed";
const SKIPPED: &str = "skipped";

/// An `events` row as [`EventRow`] reads it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = events)]
struct Stored {
    id: i64,
    kind: String,
    subscription_id: Option<i64>,
    party_id: Option<i64>,
    occurred_at: NaiveDateTime,
    data: String,
    status: String,
    attempts: i32,
    sent_at: Option<NaiveDateTime>,
    last_error: Option<String>,
}

/// One recorded event, as `digestd events list` shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EventRow {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub subscription: Option<i64>,
    pub party: Option<i64>,
    pub occurred_at: DateTime<Utc>,
    /// pending, sent, failed (given up) or skipped (a type not posted).
    pub status: String,
    pub attempts: i32,
    pub sent_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub data: serde_json::Value,
}

impl From<Stored> for EventRow {
    fn from(r: Stored) -> EventRow {
        EventRow {
            id: r.id,
            kind: r.kind,
            subscription: r.subscription_id,
            party: r.party_id,
            occurred_at: r.occurred_at.and_utc(),
            status: r.status,
            attempts: r.attempts,
            sent_at: r.sent_at.map(|t| t.and_utc()),
            last_error: r.last_error,
            data: serde_json::from_str(&r.data).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// The events that happened at or after `since` (all when `None`), of
/// `kind` when given, oldest first, at most `limit`.
pub fn list(
    c: &mut DbConn,
    since: Option<DateTime<Utc>>,
    kind: Option<Kind>,
    limit: i64,
) -> Result<Vec<EventRow>> {
    let mut q = events::table.into_boxed();
    if let Some(t) = since {
        q = q.filter(events::occurred_at.ge(t.naive_utc()));
    }
    if let Some(k) = kind {
        q = q.filter(events::kind.eq(k.as_str()));
    }
    let rows: Vec<Stored> = q
        .select(Stored::as_select())
        .order(events::id.asc())
        .limit(limit)
        .load(c)?;
    Ok(rows.into_iter().map(EventRow::from).collect())
}

/// How many events are in each status: every pending one (the pending
/// index holds only those), and of the others those that happened at or
/// after `since` (the time index), so a page that shows them reads a
/// day's events, not all that `queue purge` has kept.
pub fn counts(c: &mut DbConn, since: DateTime<Utc>) -> Result<BTreeMap<String, i64>> {
    let pending: i64 = events::table
        .filter(events::status.eq(PENDING))
        .count()
        .get_result(c)?;
    let rows: Vec<(String, i64)> = events::table
        .filter(events::occurred_at.ge(since.naive_utc()))
        .filter(events::status.ne(PENDING))
        .group_by(events::status)
        .select((events::status, diesel::dsl::count_star()))
        .load(c)?;
    let mut out: BTreeMap<String, i64> = [PENDING, SENT, FAILED, SKIPPED]
        .into_iter()
        .map(|s| (s.to_string(), 0))
        .collect();
    out.extend(rows);
    out.insert(PENDING.to_string(), pending);
    Ok(out)
}

/// Posts again the events that happened at or after `since` (of `kind`
/// when given) and are not waiting already: pending from `now`, attempts
/// counted afresh, with the same `webhook-id` as before, so a receiver
/// that keeps ids sees them as the same events. Returns how many.
pub fn replay(
    c: &mut DbConn,
    since: DateTime<Utc>,
    kind: Option<Kind>,
    now: DateTime<Utc>,
) -> Result<usize> {
    let now = now.naive_utc();
    c.write_tx(|c| {
        let q = events::table
            .filter(events::occurred_at.ge(since.naive_utc()))
            .filter(events::status.ne(PENDING))
            .into_boxed();
        let q = match kind {
            Some(k) => q.filter(events::kind.eq(k.as_str())),
            None => q,
        };
        let ids: Vec<i64> = q.select(events::id).load(c)?;
        let mut n = 0;
        for chunk in ids.chunks(1_000) {
            n += diesel::update(events::table.filter(events::id.eq_any(chunk)))
                .set((
                    events::status.eq(PENDING),
                    events::attempts.eq(0),
                    events::next_attempt_at.eq(now),
                    events::last_error.eq(None::<String>),
                ))
                .execute(c)?;
        }
        Ok(n)
    })
}

/// Deletes the events that happened before `cutoff` and wait for nothing:
/// sent, given up or skipped; and, when `keep_pending` is false (nothing
/// posts them), the pending ones too. Returns how many.
pub fn purge_before(c: &mut DbConn, cutoff: DateTime<Utc>, keep_pending: bool) -> Result<usize> {
    let old = events::table.filter(events::occurred_at.lt(cutoff.naive_utc()));
    Ok(if keep_pending {
        diesel::delete(old.filter(events::status.ne(PENDING))).execute(c)?
    } else {
        diesel::delete(old).execute(c)?
    })
}

/// A pending event, as the poster takes it.
#[derive(Debug, Clone)]
pub struct Due {
    pub id: i64,
    pub kind: String,
    pub order_key: String,
    pub occurred_at: DateTime<Utc>,
    pub data: String,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
}

/// The first `limit` pending events after id `after`, in id order, due or
/// not (one that waits holds back the later ones of its order key).
pub fn due(c: &mut DbConn, after: i64, limit: i64) -> Result<Vec<Due>> {
    let rows: Vec<DueStored> = events::table
        .filter(events::status.eq(PENDING))
        .filter(events::id.gt(after))
        .select(DueStored::as_select())
        .order(events::id.asc())
        .limit(limit)
        .load(c)?;
    Ok(rows
        .into_iter()
        .map(|r| Due {
            id: r.id,
            kind: r.kind,
            order_key: r.order_key,
            occurred_at: r.occurred_at.and_utc(),
            data: r.data,
            attempts: r.attempts,
            next_attempt_at: r.next_attempt_at.and_utc(),
        })
        .collect())
}

/// An `events` row as the poster takes it ([`Due`]).
#[derive(Queryable, Selectable)]
#[diesel(table_name = events)]
struct DueStored {
    id: i64,
    kind: String,
    order_key: String,
    occurred_at: NaiveDateTime,
    data: String,
    attempts: i32,
    next_attempt_at: NaiveDateTime,
}

/// Marks pending events of a type not in `wanted` skipped (empty `wanted`:
/// every type is wanted). Returns how many.
pub fn skip_unwanted(c: &mut DbConn, wanted: &[String]) -> Result<usize> {
    if wanted.is_empty() {
        return Ok(0);
    }
    Ok(diesel::update(
        events::table
            .filter(events::status.eq(PENDING))
            .filter(events::kind.ne_all(wanted)),
    )
    .set(events::status.eq(SKIPPED))
    .execute(c)?)
}

/// Event `id` was accepted at `now`.
pub fn mark_sent(c: &mut DbConn, id: i64, attempts: i32, now: DateTime<Utc>) -> Result<()> {
    diesel::update(events::table.find(id).filter(events::status.eq(PENDING)))
        .set((
            events::status.eq(SENT),
            events::attempts.eq(attempts),
            events::sent_at.eq(Some(now.naive_utc())),
            events::last_error.eq(None::<String>),
        ))
        .execute(c)?;
    Ok(())
}

/// Event `id` failed with `error` and is tried again after `wait`.
pub fn mark_retry(
    c: &mut DbConn,
    id: i64,
    attempts: i32,
    error: &str,
    now: DateTime<Utc>,
    wait: Duration,
) -> Result<()> {
    diesel::update(events::table.find(id).filter(events::status.eq(PENDING)))
        .set((
            events::attempts.eq(attempts),
            events::next_attempt_at.eq((now + wait).naive_utc()),
            events::last_error.eq(Some(error)),
        ))
        .execute(c)?;
    Ok(())
}

/// Event `id` is given up after `error`.
pub fn mark_failed(c: &mut DbConn, id: i64, attempts: i32, error: &str) -> Result<()> {
    diesel::update(events::table.find(id).filter(events::status.eq(PENDING)))
        .set((
            events::status.eq(FAILED),
            events::attempts.eq(attempts),
            events::last_error.eq(Some(error)),
        ))
        .execute(c)?;
    Ok(())
}

/// How many events wait to be posted, and when the oldest of them
/// happened (the pending index, in id order).
pub fn pending(c: &mut DbConn) -> Result<(i64, Option<DateTime<Utc>>)> {
    let n: i64 = events::table
        .filter(events::status.eq(PENDING))
        .count()
        .get_result(c)?;
    let oldest: Option<NaiveDateTime> = events::table
        .filter(events::status.eq(PENDING))
        .order(events::id.asc())
        .select(events::occurred_at)
        .first(c)
        .optional()?;
    Ok((n, oldest.map(|t| t.and_utc())))
}

/// The newest event that happened at or after `since`, failed to post
/// and waits or was given up: its id, type and error.
pub fn last_error(c: &mut DbConn, since: DateTime<Utc>) -> Result<Option<(i64, String, String)>> {
    let row: Option<(i64, String, Option<String>)> = events::table
        .filter(events::occurred_at.ge(since.naive_utc()))
        .filter(events::status.eq_any([PENDING, FAILED]))
        .filter(events::last_error.is_not_null())
        .order(events::id.desc())
        .select((events::id, events::kind, events::last_error))
        .first(c)
        .optional()?;
    Ok(row.map(|(id, kind, e)| (id, kind, e.unwrap_or_default())))
}
