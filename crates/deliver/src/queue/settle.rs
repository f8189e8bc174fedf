//! Writing what happened: each row delivered, retried after a backoff, or
//! given up, with one `delivery_log` row per attempt (or give-up); then
//! each finished request's status.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::{backoff, PassReport};
use crate::db::states::{LogOutcome, RequestStatus, RowState};
use crate::db::{in_bound, DbConn, IdList, Ids, Settled, Stamp};
use crate::error::Result;
use crate::parties::Channel;
use crate::sink::Outcome;
use diesel::sql_types::{Text, Timestamp};

mod events;
mod warn;

/// What to write back for a batch of rows.
#[derive(Clone)]
pub(super) struct Settle {
    /// False when nothing was attempted: given up without counting an
    /// attempt (no address), or, with a transient outcome, held until its
    /// `retry_after_secs` (the recipient's quiet hours).
    pub(super) attempted: bool,
    pub(super) keys: Vec<(i64, i64, String)>,
    pub(super) retry_counts: Vec<i32>,
    pub(super) max_retries: Vec<i32>,
    /// Each row's request's number of rows, where known without counting
    /// ([`super::round::Row::rows_of_request`]).
    pub(super) rows_of_request: Vec<Option<usize>>,
    /// Each row's request as the round read it, for the events; `None`
    /// where no round read it (a journal's replay): the settle reads it.
    pub(super) of: Vec<Option<Of>>,
    /// Where it went (the same for every row of a batch).
    pub(super) address: Option<String>,
    pub(super) outcome: Outcome,
}

/// What the events of a settled row say of its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Of {
    pub(super) digest: bool,
    pub(super) subscription: Option<i64>,
}

impl Settle {
    /// This batch without the rows of the requests in `cancelled`; `None`
    /// when nothing is left.
    pub(super) fn without(&self, cancelled: &HashSet<i64>) -> Option<Settle> {
        let keep: Vec<usize> = (0..self.keys.len())
            .filter(|&k| !cancelled.contains(&self.keys[k].0))
            .collect();
        if keep.is_empty() {
            return None;
        }
        let pick = |v: &[i32]| keep.iter().map(|&k| v[k]).collect();
        Some(Settle {
            attempted: self.attempted,
            keys: keep.iter().map(|&k| self.keys[k].clone()).collect(),
            retry_counts: pick(&self.retry_counts),
            max_retries: pick(&self.max_retries),
            rows_of_request: keep.iter().map(|&k| self.rows_of_request[k]).collect(),
            of: keep.iter().map(|&k| self.of[k]).collect(),
            address: self.address.clone(),
            outcome: self.outcome.clone(),
        })
    }
}

/// How outcomes are settled: the retry backoff's base and cap, and which
/// per-message events are recorded with them.
#[derive(Clone, Copy)]
pub(super) struct Policy {
    pub(super) retry_base: chrono::Duration,
    pub(super) retry_cap: chrono::Duration,
    pub(super) wants: digestd_engine::events::Wants,
}

/// One queue row's new state.
struct RowUpdate {
    request_id: i64,
    rows_of_request: Option<usize>,
    of: Option<Of>,
    party_to: i64,
    channel: String,
    is_successful: bool,
    gave_up: bool,
    retry_count: i32,
    next_attempt_at: NaiveDateTime,
    code: Option<i32>,
    text: String,
    /// For `delivery_log`: where it went, what happened, the far end's id.
    address: Option<String>,
    logged: LogOutcome,
    remote_id: Option<String>,
    /// Held for the recipient's quiet hours (`nt_queue.held`).
    held: bool,
}

pub(super) fn write_outcomes(
    c: &mut DbConn,
    policy: Policy,
    settles: &[Settle],
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<()> {
    let now_n = now.naive_utc();
    let ups = row_updates((policy.retry_base, policy.retry_cap), settles, now, report)?;
    write_rows(c, &ups, now_n)?;
    events::record(c, policy.wants, &ups, now)?;
    // A message to an address (a sign-up's confirm link) is kept no
    // longer than it is needed.
    let to_address: Vec<i64> = ups
        .iter()
        .filter(|u| u.party_to < 0 && (u.is_successful || u.gave_up))
        .map(|u| u.request_id)
        .collect();
    super::address::scrub_in(c, &to_address)?;
    finish_requests(c, &ups, now, report)
}

/// Each settled row's update: delivered, retried after its backoff, or
/// given up; counted in `report`, and each failure logged once.
fn row_updates(
    (retry_base, retry_cap): (chrono::Duration, chrono::Duration),
    settles: &[Settle],
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<Vec<RowUpdate>> {
    let now_n = now.naive_utc();
    let mut ups = Vec::new();
    for s in settles {
        let code = s.outcome.code().map(i32::from);
        let text = s.outcome.text();
        let text = text[..floor_char(&text, 1000)].to_string();
        if let (Outcome::Sent { .. }, Some((_, _, ch))) = (&s.outcome, s.keys.first()) {
            let ch = Channel::parse(ch)?;
            *report.written.entry(ch.as_str()).or_default() += 1;
        }
        if let Some((_, _, ch)) = s.keys.first() {
            let retry = matches!(s.outcome, Outcome::Transient { .. })
                && (!s.attempted || s.retry_counts[0] + 1 < s.max_retries[0]);
            warn::failed(s, Channel::parse(ch)?.as_str(), retry);
        }
        for (k, (req, party, ch)) in s.keys.iter().enumerate() {
            let channel = Channel::parse(ch)?;
            let attempts = s.retry_counts[k] + 1;
            let mut u = RowUpdate {
                request_id: *req,
                rows_of_request: s.rows_of_request[k],
                of: s.of[k],
                party_to: *party,
                channel: ch.clone(),
                is_successful: false,
                gave_up: false,
                retry_count: attempts,
                next_attempt_at: now_n,
                code,
                text: text.clone(),
                address: s.address.clone(),
                logged: LogOutcome::Sent,
                remote_id: match &s.outcome {
                    Outcome::Sent { remote_id, .. } => remote_id.clone(),
                    _ => None,
                },
                held: false,
            };
            match &s.outcome {
                Outcome::Sent { .. } => {
                    u.is_successful = true;
                    u.retry_count = s.retry_counts[k];
                    *report.rows.entry((channel, RowState::Sent)).or_default() += 1;
                }
                // Held, not attempted (the recipient's quiet hours): no
                // attempt counted, no backoff, not retrying.
                Outcome::Transient {
                    retry_after_secs, ..
                } if !s.attempted => {
                    let wait = chrono::Duration::seconds(retry_after_secs.unwrap_or(0) as i64);
                    u.next_attempt_at = (now + wait).naive_utc();
                    u.retry_count = s.retry_counts[k];
                    u.logged = LogOutcome::Transient;
                    u.held = true;
                    report.held += 1;
                }
                Outcome::Transient {
                    retry_after_secs, ..
                } if attempts < s.max_retries[k] => {
                    // The backoff, or later when the far end asked for it
                    // (HTTP Retry-After), at most a day.
                    let asked =
                        chrono::Duration::seconds(retry_after_secs.unwrap_or(0).min(86_400) as i64);
                    let wait = backoff(retry_base, retry_cap, attempts).max(asked);
                    u.next_attempt_at = (now + wait).naive_utc();
                    u.logged = LogOutcome::Transient;
                    if k == 0 {
                        report.retrying += 1;
                    }
                    *report.rows.entry((channel, RowState::Retry)).or_default() += 1;
                }
                // Permanent, or out of retries.
                _ => {
                    u.gave_up = true;
                    u.logged = match s.outcome {
                        Outcome::Permanent { .. } if s.attempted => LogOutcome::Permanent,
                        _ => LogOutcome::GaveUp,
                    };
                    if !s.attempted {
                        u.retry_count = s.retry_counts[k];
                    }
                    report.gave_up += 1;
                    *report.rows.entry((channel, RowState::Failed)).or_default() += 1;
                }
            }
            ups.push(u);
        }
    }
    Ok(ups)
}

/// Moves on the requests whose last open rows `ups` settled.
fn finish_requests(
    c: &mut DbConn,
    ups: &[RowUpdate],
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<()> {
    // The requests whose last row this was are final now. A request whose
    // rows are all here gets its status from them; one with a row still
    // open is not final; the others are counted in the database.
    let mut here: BTreeMap<i64, (usize, usize, bool, Option<usize>)> = BTreeMap::new();
    for u in ups {
        let e = here
            .entry(u.request_id)
            .or_insert((0, 0, false, u.rows_of_request));
        e.0 += 1;
        e.1 += usize::from(u.is_successful);
        e.2 |= !u.is_successful && !u.gave_up;
    }
    let mut known: BTreeMap<RequestStatus, Vec<i64>> = BTreeMap::new();
    let mut count = Vec::new();
    for (id, (n, ok, open, rows)) in here {
        match (open, rows) {
            (true, _) => {}
            (false, Some(rows)) if rows == n => {
                known.entry(final_status(n, ok)).or_default().push(id)
            }
            _ => count.push(id),
        }
    }
    let set = format!(
        "UPDATE nt_requests SET status = $1, fulfill_date = $2 \
         WHERE request_id {} AND status = $4",
        in_bound(c, "$3"),
    );
    for (status, ids) in &known {
        for chunk in ids.chunks(5_000) {
            report.finished += diesel::sql_query(&set)
                .bind::<Text, _>(status.as_str())
                .bind::<Timestamp, _>(now.naive_utc())
                .bind::<IdList, _>(Ids(chunk.to_vec()))
                .bind::<Text, _>(RequestStatus::Sending.as_str())
                .execute(c)?;
        }
    }
    for chunk in count.chunks(5_000) {
        report.finished += finish(c, now, Some(chunk))?;
    }
    Ok(())
}

/// A finished request's status from its rows: `n` rows, `ok` delivered.
fn final_status(n: usize, ok: usize) -> RequestStatus {
    if ok == n {
        RequestStatus::Sent
    } else if ok == 0 {
        RequestStatus::Failed
    } else {
        RequestStatus::PartialFailure
    }
}

/// The rows' new states, and one `delivery_log` row each: two statements
/// for the whole slice ([`crate::db::settle_queue_rows`]; a statement per
/// row spent most of its time in diesel building and looking up the
/// statement).
fn write_rows(c: &mut DbConn, ups: &[RowUpdate], now_n: NaiveDateTime) -> Result<()> {
    let rows: Vec<Settled> = ups
        .iter()
        .map(|u| Settled {
            request_id: u.request_id,
            party_to: u.party_to,
            channel: u.channel.clone(),
            is_successful: u.is_successful,
            gave_up: u.gave_up,
            retry_count: u.retry_count,
            next_attempt_at: Stamp(u.next_attempt_at),
            code: u.code,
            text: u.text.clone(),
            address: u.address.clone(),
            outcome: u.logged.as_str(),
            remote_id: u.remote_id.clone(),
            held: u.held,
        })
        .collect();
    crate::db::settle_queue_rows(c, &rows, now_n)
}

/// The largest char boundary at or below `max`.
fn floor_char(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `update_requests`: every sending request with no open row (not
/// delivered, not given up, retries left) gets its final status — sent (all
/// delivered), failed (none, or no row at all), partial_failure — and its
/// fulfill date. Returns how many requests finished.
///
/// `fulfill_date IS NULL` adds nothing to `status = 'sending'` (a request
/// gets its fulfill date when it becomes final) but lets both statements
/// read only the unfinished requests, through `nt_requests_unfinished`,
/// instead of every request ever written.
pub fn update(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    let rowless = "UPDATE nt_requests SET status = 'failed', fulfill_date = $1 \
         WHERE status = 'sending' AND fulfill_date IS NULL AND NOT EXISTS \
             (SELECT 1 FROM nt_queue q WHERE q.request_id = nt_requests.request_id)";
    conn.write_tx(|c| {
        let n = finish(c, now, None)?;
        Ok(n + diesel::sql_query(rowless)
            .bind::<Timestamp, _>(now.naive_utc())
            .execute(c)?)
    })
}

/// [`update`] for the requests in `only` (all when `None`) that have rows,
/// in one statement: each request's rows counted and its status set. Settling
/// calls it for the requests of the rows it wrote, in the same transaction,
/// so a request is final as soon as its last row is; the pass's [`update`]
/// is then left with what two processes settled at once, each before seeing
/// the other's rows.
fn finish(conn: &mut DbConn, now: DateTime<Utc>, only: Option<&[i64]>) -> Result<usize> {
    let only_sql = match only {
        Some(_) => format!("AND r.request_id {}", in_bound(conn, "$2")),
        None => String::new(),
    };
    let sql = format!(
        "UPDATE nt_requests SET fulfill_date = $1, status = CASE \
             WHEN a.ok = a.n THEN 'sent' WHEN a.ok = 0 THEN 'failed' \
             ELSE 'partial_failure' END \
         FROM (SELECT q.request_id AS id, COUNT(*) AS n, \
                   SUM(CASE WHEN q.is_successful THEN 1 ELSE 0 END) AS ok, \
                   SUM(CASE WHEN NOT q.is_successful AND NOT q.gave_up \
                       AND q.retry_count < r.max_retries THEN 1 ELSE 0 END) AS open \
               FROM nt_queue q JOIN nt_requests r ON r.request_id = q.request_id \
               WHERE r.status = 'sending' AND r.fulfill_date IS NULL {only_sql} \
               GROUP BY q.request_id) AS a \
         WHERE nt_requests.request_id = a.id AND nt_requests.status = 'sending' \
             AND a.open = 0"
    );
    let q = diesel::sql_query(sql)
        .into_boxed::<<DbConn as diesel::Connection>::Backend>()
        .bind::<Timestamp, _>(now.naive_utc());
    let q = match only {
        Some(ids) => q.bind::<IdList, _>(Ids(ids.to_vec())),
        None => q,
    };
    Ok(q.execute(conn)?)
}
