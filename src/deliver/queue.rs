//! The nt queue of seed 000: `post_request`, `cancel_request`,
//! `expand_requests`, `process_queue`, `update_requests`, with the
//! weaknesses its "Future Work" admits fixed: a broken SMTP connection is
//! reopened and the pass goes on, transient and permanent failures are told
//! apart (retry with exponential backoff, or give up at once), statuses are
//! written for a whole round in one transaction, and messages carry HTML.
//!
//! Rows are processed in rounds ordered by sender, recipient and channel;
//! every pending row of one (sender, recipient, channel) goes out as one
//! message holding all of them (see [`super::message::combine`]).

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use serde::Serialize;

use super::message::{self, Email, Part};
use super::outbox::Outbox;
use super::sink::{EmailSink, Outcome, Outgoing};
use crate::config::EmailConfig;
use crate::db::schema::{contact_points, nt_messages, nt_queue, nt_requests, parties};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{PartyId, RequestId};
use crate::parties::{expand as expand_party, Channel};
use crate::validate;

/// Rows read per round.
const ROUND: i64 = 10_000;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Requests expanded into queue rows.
    pub expanded: usize,
    /// Messages delivered, per channel (one message may carry several rows).
    pub written: BTreeMap<&'static str, usize>,
    /// Messages that failed and will be retried.
    pub retrying: usize,
    /// Rows given up (no address, permanent failure, out of retries).
    pub gave_up: usize,
    /// Requests that reached a final status.
    pub finished: usize,
}

impl std::fmt::Display for PassReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let written: Vec<String> = self
            .written
            .iter()
            .map(|(ch, n)| format!("{ch} {n}"))
            .collect();
        write!(
            f,
            "expanded {} request(s); delivered {}; retrying {}; gave up {}; finished {} request(s)",
            self.expanded,
            if written.is_empty() {
                "nothing".to_string()
            } else {
                written.join(", ")
            },
            self.retrying,
            self.gave_up,
            self.finished
        )
    }
}

/// What `digestd notify` posts.
#[derive(Debug, Clone, Default)]
pub struct NewNotification {
    pub from: String,
    pub to: String,
    pub expand_group: bool,
    pub subject: String,
    pub message: String,
    pub max_retries: Option<i64>,
    pub channels: Vec<String>,
}

/// Longest notification body accepted.
pub const MAX_MESSAGE: usize = 256 * 1024;

/// `post_request`: validates everything, then inserts one pending request.
pub fn post_request(
    conn: &mut DbConn,
    cfg: &EmailConfig,
    n: &NewNotification,
    now: DateTime<Utc>,
) -> Result<RequestId> {
    let subject = validate::text("subject", &n.subject)?;
    if n.message.trim().is_empty() {
        return Err(Error::invalid("message is empty"));
    }
    if n.message.len() > MAX_MESSAGE {
        return Err(Error::invalid(format!(
            "message is longer than {MAX_MESSAGE} bytes"
        )));
    }
    if n.message
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(Error::invalid(
            "message contains a control character other than newline or tab",
        ));
    }
    let max_retries = match n.max_retries {
        None => i64::from(cfg.max_retries),
        Some(m) if (1..=100).contains(&m) => m,
        Some(m) => return Err(Error::invalid(format!("--max-retries {m}: use 1-100"))),
    };
    let mut channels: Vec<Channel> = if n.channels.is_empty() {
        vec![Channel::Email]
    } else {
        n.channels
            .iter()
            .map(|c| Channel::parse(c))
            .collect::<Result<_>>()?
    };
    channels.sort();
    channels.dedup();
    let (from, _) = crate::parties::find(conn, &n.from)?;
    let (to, to_kind) = crate::parties::find(conn, &n.to)?;
    if n.expand_group && to_kind != "group" {
        return Err(Error::invalid(format!(
            "--expand-group: {} is not a group",
            n.to
        )));
    }
    let channel_list = channels
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let id = conn.write_tx(|c| {
        let id = diesel::insert_into(nt_requests::table)
            .values((
                nt_requests::party_to.eq(to.0),
                nt_requests::expand_group.eq(n.expand_group),
                nt_requests::party_from.eq(from.0),
                nt_requests::subject.eq(&subject),
                nt_requests::channels.eq(&channel_list),
                nt_requests::request_date.eq(now.naive_utc()),
                nt_requests::status.eq("pending"),
                nt_requests::max_retries.eq(max_retries as i32),
            ))
            .returning(nt_requests::request_id)
            .get_result::<i64>(c)?;
        diesel::insert_into(nt_messages::table)
            .values((
                nt_messages::request_id.eq(id),
                nt_messages::message.eq(n.message.replace("\r\n", "\n")),
            ))
            .execute(c)?;
        Ok(id)
    })?;
    Ok(RequestId(id))
}

/// `cancel_request`: a pending or sending request becomes cancelled; rows
/// not yet delivered are never sent.
pub fn cancel_request(conn: &mut DbConn, id: RequestId, now: DateTime<Utc>) -> Result<()> {
    conn.write_tx(|c| {
        let status: Option<String> = nt_requests::table
            .find(id.0)
            .select(nt_requests::status)
            .first(c)
            .optional()?;
        match status.as_deref() {
            None => Err(Error::not_found(format!("no request {id}"))),
            Some("pending" | "sending") => {
                diesel::update(nt_requests::table.find(id.0))
                    .set((
                        nt_requests::status.eq("cancelled"),
                        nt_requests::fulfill_date.eq(now.naive_utc()),
                    ))
                    .execute(c)?;
                Ok(())
            }
            Some(s) => Err(Error::conflict(format!(
                "request {id} is already {s}; only pending or sending requests can be cancelled"
            ))),
        }
    })
}

/// One recipient of a request, as `request show` prints it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecipientView {
    pub party: String,
    pub channel: String,
    pub address: Option<String>,
    pub successful: bool,
    pub gave_up: bool,
    pub retry_count: i32,
    pub reply_code: Option<i32>,
    pub reply_message: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RequestView {
    pub id: i64,
    pub status: String,
    pub kind: String,
    pub subject: String,
    pub recipients: Vec<RecipientView>,
}

pub fn show(conn: &mut DbConn, id: RequestId) -> Result<RequestView> {
    let (status, kind, subject): (String, String, String) = nt_requests::table
        .find(id.0)
        .select((nt_requests::status, nt_requests::kind, nt_requests::subject))
        .first(conn)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("no request {id}")))?;
    type R = (
        String,
        String,
        Option<String>,
        bool,
        bool,
        i32,
        Option<i32>,
        Option<String>,
    );
    let rows: Vec<R> = nt_queue::table
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::request_id.eq(id.0))
        .select((
            parties::name,
            nt_queue::channel,
            nt_queue::address,
            nt_queue::is_successful,
            nt_queue::gave_up,
            nt_queue::retry_count,
            nt_queue::smtp_reply_code,
            nt_queue::smtp_reply_message,
        ))
        .order((parties::name.asc(), nt_queue::channel.asc()))
        .load(conn)?;
    Ok(RequestView {
        id: id.0,
        status,
        kind,
        subject,
        recipients: rows
            .into_iter()
            .map(|r| RecipientView {
                party: r.0,
                channel: r.1,
                address: r.2,
                successful: r.3,
                gave_up: r.4,
                retry_count: r.5,
                reply_code: r.6,
                reply_message: r.7,
            })
            .collect(),
    })
}

/// Requests by status and queue rows by state, for `queue status`.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct QueueStatus {
    pub requests: BTreeMap<String, i64>,
    pub rows_open: i64,
    pub rows_retrying: i64,
    pub rows_delivered: i64,
    pub rows_given_up: i64,
}

pub fn status(conn: &mut DbConn) -> Result<QueueStatus> {
    let by: Vec<(String, i64)> = nt_requests::table
        .group_by(nt_requests::status)
        .select((nt_requests::status, diesel::dsl::count_star()))
        .load(conn)?;
    let rows: Vec<(bool, bool, i32)> = nt_queue::table
        .select((
            nt_queue::is_successful,
            nt_queue::gave_up,
            nt_queue::retry_count,
        ))
        .load(conn)?;
    let mut s = QueueStatus {
        requests: by.into_iter().collect(),
        ..QueueStatus::default()
    };
    for (ok, gave_up, retries) in rows {
        match (ok, gave_up) {
            (true, _) => s.rows_delivered += 1,
            (false, true) => s.rows_given_up += 1,
            (false, false) if retries > 0 => s.rows_retrying += 1,
            _ => s.rows_open += 1,
        }
    }
    Ok(s)
}

/// The enabled addresses of `party`, by channel.
fn addresses(conn: &mut DbConn, party: i64) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = contact_points::table
        .filter(contact_points::party_id.eq(party))
        .filter(contact_points::disabled.eq(false))
        .select((contact_points::channel, contact_points::address))
        .load(conn)?;
    Ok(rows.into_iter().collect())
}

/// `expand_requests`: every pending request → one queue row per end user
/// (or the party itself when not expanded) and channel; `sending`.
///
/// Requests to a single party (a user, or a group not expanded) are
/// expanded set-based, a chunk at a time in one statement; a request
/// expanded over a group walks the group (nested, cycle-safe, each user
/// once) in its own transaction.
pub fn expand(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    let pending: Vec<(i64, i64, bool, String, String)> = nt_requests::table
        .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
        .filter(nt_requests::status.eq("pending"))
        .select((
            nt_requests::request_id,
            nt_requests::party_to,
            nt_requests::expand_group,
            nt_requests::channels,
            parties::kind,
        ))
        .order(nt_requests::request_id.asc())
        .load(conn)?;
    let n = pending.len();
    let (groups, simple): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|(_, _, expand, _, kind)| *expand && kind == "group");
    let ts = sql_timestamp(conn, now);
    for chunk in simple.chunks(5_000) {
        let ids = chunk
            .iter()
            .map(|r| r.0.to_string())
            .collect::<Vec<_>>()
            .join(",");
        conn.write_tx(|c| {
            // Only requests still pending move: a second pass racing this one
            // fails the insert on the primary key and rolls back.
            diesel::sql_query(format!(
                "INSERT INTO nt_queue (request_id, party_to, channel, address, retry_count, \
                     is_successful, gave_up, next_attempt_at) \
                 SELECT r.request_id, r.party_to, ch.name, cp.address, 0, false, false, {ts} \
                 FROM nt_requests r \
                 CROSS JOIN (SELECT 'email' AS name UNION ALL SELECT 'xmpp' UNION ALL SELECT 'sms') ch \
                 LEFT JOIN contact_points cp ON cp.party_id = r.party_to \
                     AND cp.channel = ch.name AND NOT cp.disabled \
                 WHERE r.request_id IN ({ids}) AND r.status = 'pending' \
                     AND (',' || r.channels || ',') LIKE ('%,' || ch.name || ',%')"
            ))
            .execute(c)?;
            diesel::sql_query(format!(
                "UPDATE nt_requests SET status = 'sending' \
                 WHERE request_id IN ({ids}) AND status = 'pending'"
            ))
            .execute(c)?;
            Ok(())
        })?;
    }
    // PostgreSQL plans the next query from statistics taken before these
    // rows existed: after a large expansion it would pick a nested loop per
    // request (0.8 s for 10,000). Refresh them; it takes milliseconds.
    if simple.len() >= 1_000 {
        if let DbConn::Postgres(pg) = conn {
            pg.batch_execute("ANALYZE nt_queue; ANALYZE nt_requests")?;
        }
    }
    for (id, to, _, channels, _) in groups {
        conn.write_tx(|c| {
            let users = expand_party(c, PartyId(to))?;
            for u in users {
                let addrs = addresses(c, u.id.0)?;
                for ch in channels.split(',').filter(|s| !s.is_empty()) {
                    let ch = Channel::parse(ch)?;
                    diesel::insert_into(nt_queue::table)
                        .values((
                            nt_queue::request_id.eq(id),
                            nt_queue::party_to.eq(u.id.0),
                            nt_queue::channel.eq(ch.as_str()),
                            nt_queue::address.eq(addrs.get(ch.as_str())),
                            nt_queue::next_attempt_at.eq(now.naive_utc()),
                        ))
                        .execute(c)?;
                }
            }
            diesel::update(nt_requests::table.find(id))
                .filter(nt_requests::status.eq("pending"))
                .set(nt_requests::status.eq("sending"))
                .execute(c)?;
            Ok(())
        })?;
    }
    Ok(n)
}

/// `t` as an SQL timestamp literal, written the way diesel binds one (on
/// SQLite timestamps are text and compare as text, so the form must match).
fn sql_timestamp(conn: &DbConn, t: DateTime<Utc>) -> String {
    let s = t.naive_utc().format("%F %T%.f");
    match conn {
        DbConn::Sqlite(_) => format!("'{s}'"),
        DbConn::Postgres(_) => format!("TIMESTAMP '{s}'"),
    }
}

/// A deliverable queue row.
#[derive(Debug, Clone, Queryable)]
struct Row {
    request_id: i64,
    party_to: i64,
    channel: String,
    address: Option<String>,
    retry_count: i32,
    max_retries: i32,
    party_from: i64,
    to_name: String,
}

/// A request's content, as messages need it.
#[derive(Queryable)]
struct Req {
    id: i64,
    subject: String,
    message: String,
    message_html: Option<String>,
    message_chat: Option<String>,
    message_sms: Option<String>,
    request_date: NaiveDateTime,
    unsubscribe_url: Option<String>,
}

/// How the queue reaches people: the email transport, the outbox for the
/// channels without a listener yet, and the retry policy.
pub struct Delivery {
    pub email: EmailSink,
    pub outbox: Outbox,
    from: lettre::message::Mailbox,
    host: String,
    retry_base: chrono::Duration,
    retry_cap: chrono::Duration,
    /// How long a round's claim on its rows lasts (the lease length).
    pub claim_for: chrono::Duration,
}

impl Delivery {
    pub fn new(cfg: &EmailConfig) -> Result<Delivery> {
        let from = message::parse_from(&cfg.from)?;
        Ok(Delivery {
            host: from.email.domain().to_string(),
            from,
            email: EmailSink::new(cfg)?,
            outbox: Outbox::new(cfg)?,
            retry_base: chrono::Duration::seconds(cfg.retry_base_seconds as i64),
            retry_cap: chrono::Duration::seconds(cfg.retry_cap_seconds as i64),
            claim_for: chrono::Duration::seconds(600),
        })
    }

    /// The wait before the attempt after `attempts` failed ones:
    /// base × 2^(attempts − 1), at most the cap.
    pub fn backoff(&self, attempts: i32) -> chrono::Duration {
        backoff(self.retry_base, self.retry_cap, attempts)
    }
}

fn backoff(base: chrono::Duration, cap: chrono::Duration, attempts: i32) -> chrono::Duration {
    let exp = attempts.clamp(1, 30) - 1;
    let secs = base
        .num_seconds()
        .saturating_mul(1i64 << exp)
        .min(cap.num_seconds());
    chrono::Duration::seconds(secs)
}

/// One pass at `now`: expand, process, update.
pub fn run_pass(conn: &mut DbConn, d: &mut Delivery, now: DateTime<Utc>) -> Result<PassReport> {
    pass(conn, d, now, true)
}

fn pass(
    conn: &mut DbConn,
    d: &mut Delivery,
    now: DateTime<Utc>,
    leader: bool,
) -> Result<PassReport> {
    let mut report = PassReport::default();
    if leader {
        let t = std::time::Instant::now();
        report.expanded = expand(conn, now)?;
        tracing::debug!(requests = report.expanded, took = ?t.elapsed(), "queue expand");
    }
    // Rounds until nothing is left that is due now; a round settles every
    // row it claimed (delivered, retried later, or given up).
    for _ in 0..10_000 {
        if process_round(conn, d, now, &mut report)? == 0 {
            break;
        }
    }
    if leader {
        let t = std::time::Instant::now();
        report.finished = update(conn, now)?;
        tracing::debug!(requests = report.finished, took = ?t.elapsed(), "queue update");
    }
    Ok(report)
}

/// The `nt_job` row that guards queue passes, as the tick's guards ticks.
pub const QUEUE_JOB: &str = "queue";

/// One pass with the queue lease guarding expansion and the status update:
/// the process holding it expands and settles; every process delivers the
/// rows it claims, so several can deliver at once (PostgreSQL) without
/// sending a row twice.
pub fn run_queue(
    conn: &mut DbConn,
    d: &mut Delivery,
    now: DateTime<Utc>,
    owner: &str,
    lease_for: chrono::Duration,
) -> Result<PassReport> {
    use crate::schedule::lease;
    d.claim_for = lease_for;
    let leader = lease::acquire(conn, QUEUE_JOB, owner, now, lease_for)?;
    if !leader {
        tracing::info!(%now, "another process holds the queue lease: delivering only");
    }
    let result = pass(conn, d, now, leader);
    if leader {
        lease::release(conn, QUEUE_JOB, owner, now)?;
    }
    result
}

/// What to write back for a batch of rows.
#[derive(Clone)]
struct Settle {
    /// False when nothing was attempted (no address): given up without
    /// counting an attempt.
    attempted: bool,
    keys: Vec<(i64, i64, String)>,
    retry_counts: Vec<i32>,
    max_retries: Vec<i32>,
    outcome: Outcome,
}

/// Claims up to [`ROUND`] due rows for this round — not delivered, not
/// given up, retries left, request `sending`, next attempt due, not claimed
/// by a live round — and returns the round's token. On PostgreSQL the rows
/// are picked `FOR UPDATE SKIP LOCKED`, so rounds of several processes
/// claim disjoint rows; SQLite has one writer at a time. A claim lasts
/// `claim_for`; a round that dies leaves it to expire.
fn claim(conn: &mut DbConn, now: DateTime<Utc>, claim_for: chrono::Duration) -> Result<String> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    let ts = sql_timestamp(conn, now);
    let until = sql_timestamp(conn, now + claim_for);
    let lock = match conn {
        DbConn::Postgres(_) => "FOR UPDATE OF q2 SKIP LOCKED",
        DbConn::Sqlite(_) => "",
    };
    let sql = format!(
        "UPDATE nt_queue SET claimed_by = '{token}', claimed_until = {until} \
         WHERE (request_id, party_to, channel) IN ( \
             SELECT q2.request_id, q2.party_to, q2.channel \
             FROM nt_queue q2 JOIN nt_requests r ON r.request_id = q2.request_id \
             WHERE r.status = 'sending' AND NOT q2.is_successful AND NOT q2.gave_up \
                 AND q2.retry_count < r.max_retries AND q2.next_attempt_at <= {ts} \
                 AND (q2.claimed_until IS NULL OR q2.claimed_until < {ts}) \
             ORDER BY r.party_from, q2.party_to, q2.channel, q2.request_id \
             LIMIT {ROUND} {lock})"
    );
    conn.write_tx(|c| Ok(diesel::sql_query(&sql).execute(c)?))?;
    Ok(token)
}

fn process_round(
    conn: &mut DbConn,
    d: &mut Delivery,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<usize> {
    let now_n = now.naive_utc();
    let token = claim(conn, now, d.claim_for)?;
    let rows: Vec<Row> = nt_queue::table
        .inner_join(nt_requests::table)
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::claimed_by.eq(&token))
        .select((
            nt_queue::request_id,
            nt_queue::party_to,
            nt_queue::channel,
            nt_queue::address,
            nt_queue::retry_count,
            nt_requests::max_retries,
            nt_requests::party_from,
            parties::name,
        ))
        .order((
            nt_requests::party_from.asc(),
            nt_queue::party_to.asc(),
            nt_queue::channel.asc(),
            nt_queue::request_id.asc(),
        ))
        .load(conn)?;
    let n = rows.len();
    if n == 0 {
        return Ok(0);
    }
    let started = std::time::Instant::now();
    let mut ids: Vec<i64> = rows.iter().map(|r| r.request_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut reqs: HashMap<i64, Req> = HashMap::new();
    for chunk in ids.chunks(5_000) {
        let rs: Vec<Req> = nt_requests::table
            .inner_join(nt_messages::table)
            .filter(nt_requests::request_id.eq_any(chunk))
            .select((
                nt_requests::request_id,
                nt_requests::subject,
                nt_messages::message,
                nt_messages::message_html,
                nt_messages::message_chat,
                nt_messages::message_sms,
                nt_requests::request_date,
                nt_requests::unsubscribe_url,
            ))
            .load(conn)?;
        reqs.extend(rs.into_iter().map(|r| (r.id, r)));
    }
    let mut senders: Vec<i64> = rows.iter().map(|r| r.party_from).collect();
    senders.sort_unstable();
    senders.dedup();
    let names: HashMap<i64, String> = parties::table
        .filter(parties::id.eq_any(&senders))
        .select((parties::id, parties::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();

    let loaded = started.elapsed();
    let mut settles: Vec<Settle> = Vec::new();
    let mut jobs: Vec<EmailJob> = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let r0 = &rows[i];
        let mut j = i;
        while j < rows.len()
            && (rows[j].party_from, rows[j].party_to, &rows[j].channel)
                == (r0.party_from, r0.party_to, &r0.channel)
        {
            j += 1;
        }
        let batch = &rows[i..j];
        let range = (i, j);
        i = j;
        let settle = |outcome| Settle {
            attempted: true,
            keys: batch
                .iter()
                .map(|r| (r.request_id, r.party_to, r.channel.clone()))
                .collect(),
            retry_counts: batch.iter().map(|r| r.retry_count).collect(),
            max_retries: batch.iter().map(|r| r.max_retries).collect(),
            outcome,
        };
        let ch = Channel::parse(&r0.channel)?;
        let Some(address) = r0.address.clone() else {
            settles.push(Settle {
                attempted: false,
                ..settle(Outcome::permanent(
                    None,
                    format!("no {} address", ch.as_str()),
                ))
            });
            continue;
        };
        let parts: Vec<&Req> = batch.iter().map(|r| &reqs[&r.request_id]).collect();
        let first = batch[0].request_id;
        match ch {
            Channel::Email => {
                jobs.push(EmailJob {
                    range,
                    address,
                    settle: settles.len(),
                });
                settles.push(settle(Outcome::transient(None, "not sent")));
            }
            Channel::Xmpp | Channel::Sms => {
                let body: Vec<&str> = parts
                    .iter()
                    .map(|q| match ch {
                        Channel::Xmpp => q.message_chat.as_deref().unwrap_or(&q.message),
                        _ => q.message_sms.as_deref().unwrap_or(&q.subject),
                    })
                    .collect();
                let text = match ch {
                    Channel::Xmpp => format!("To: {address}\nType: chat\n\n{}", body.join("\n\n")),
                    _ => format!("To: {address}\n\n{}\n", body.join("\n")),
                };
                let path = d.outbox.path(first, &r0.to_name, ch);
                let outcome = match d.outbox.write(&path, text.as_bytes()) {
                    Ok(()) => Outcome::Sent {
                        code: None,
                        text: format!("written to {}", path.display()),
                    },
                    Err(e) => Outcome::transient(None, e.to_string()),
                };
                settles.push(settle(outcome));
            }
        }
    }
    // What is not email is settled already: write it first.
    let others: Vec<Settle> = settles
        .iter()
        .enumerate()
        .filter(|(k, _)| !jobs.iter().any(|j| j.settle == *k))
        .map(|(_, s)| s.clone())
        .collect();
    let policy = (d.retry_base, d.retry_cap);
    conn.write_tx(|c| write_outcomes(c, policy, &others, now, report))?;

    // Email, pipelined: while the sender thread sends chunk k over the SMTP
    // sessions, this thread builds chunk k+1 and writes the outcomes of the
    // chunks that came back.
    let ctx = BuildCtx {
        rows: &rows,
        reqs: &reqs,
        names: &names,
        from: &d.from,
        host: &d.host,
        outbox: &d.outbox,
        now: now_n,
    };
    let email = &mut d.email;
    let mut built = std::time::Duration::ZERO;
    std::thread::scope(|scope| -> Result<()> {
        let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<(usize, Vec<Outgoing>)>(1);
        let (res_tx, res_rx) = std::sync::mpsc::channel::<(usize, Vec<Outcome>)>();
        scope.spawn(move || {
            for (k, msgs) in job_rx {
                if res_tx.send((k, email.send_all(&msgs))).is_err() {
                    break;
                }
            }
        });
        // Per chunk handed over: the settle index of each message sent.
        let mut handed: Vec<Vec<usize>> = Vec::new();
        let settle_chunk =
            |sent: &[usize], outs: Vec<Outcome>, conn: &mut DbConn, report: &mut PassReport| {
                let done: Vec<Settle> = sent
                    .iter()
                    .zip(outs)
                    .map(|(&k, o)| Settle {
                        outcome: o,
                        ..settles[k].clone()
                    })
                    .collect();
                conn.write_tx(|c| write_outcomes(c, policy, &done, now, report))
            };
        let mut result = Ok(());
        for chunk in jobs.chunks(EMAIL_CHUNK) {
            let t = std::time::Instant::now();
            let mut msgs = Vec::with_capacity(chunk.len());
            let mut sent = Vec::with_capacity(chunk.len());
            let mut bad = Vec::new();
            for job in chunk {
                match ctx.build_one(job) {
                    Ok(m) => {
                        msgs.push(m);
                        sent.push(job.settle);
                    }
                    // A stored address the builder refuses: given up.
                    Err(e) => bad.push(Settle {
                        outcome: Outcome::permanent(None, e.to_string()),
                        ..settles[job.settle].clone()
                    }),
                }
            }
            built += t.elapsed();
            if !bad.is_empty() {
                result = conn.write_tx(|c| write_outcomes(c, policy, &bad, now, report));
            }
            handed.push(sent);
            if result.is_err() || job_tx.send((handed.len() - 1, msgs)).is_err() {
                break;
            }
            while let Ok((k, outs)) = res_rx.try_recv() {
                result = settle_chunk(&handed[k], outs, conn, report);
                if result.is_err() {
                    break;
                }
            }
            if result.is_err() {
                break;
            }
        }
        drop(job_tx);
        for (k, outs) in res_rx {
            if result.is_ok() {
                result = settle_chunk(&handed[k], outs, conn, report);
            }
        }
        result
    })?;
    tracing::debug!(
        rows = n,
        messages = settles.len(),
        ?loaded,
        ?built,
        total = ?started.elapsed(),
        "queue round"
    );
    Ok(n)
}

/// Email messages per hand-over to the sender thread.
const EMAIL_CHUNK: usize = 256;

/// One email message to build: rows `range` of the round, to `address`.
struct EmailJob {
    range: (usize, usize),
    address: String,
    settle: usize,
}

/// What building a message needs, shared with nothing mutable.
struct BuildCtx<'a> {
    rows: &'a [Row],
    reqs: &'a HashMap<i64, Req>,
    names: &'a HashMap<i64, String>,
    from: &'a lettre::message::Mailbox,
    host: &'a str,
    outbox: &'a Outbox,
    now: NaiveDateTime,
}

impl BuildCtx<'_> {
    fn build_one(&self, job: &EmailJob) -> Result<Outgoing> {
        let batch = &self.rows[job.range.0..job.range.1];
        let r0 = &batch[0];
        let parts: Vec<&Req> = batch.iter().map(|r| &self.reqs[&r.request_id]).collect();
        let first = r0.request_id;
        let ps: Vec<Part> = parts
            .iter()
            .map(|q| Part {
                subject: &q.subject,
                text: &q.message,
                html: q.message_html.as_deref(),
                date: q.request_date.and_utc(),
            })
            .collect();
        let (subject, text, html) = message::combine(&ps);
        let from_name = self
            .names
            .get(&r0.party_from)
            .map(String::as_str)
            .filter(|n| *n != crate::digest::post::SYSTEM_PARTY);
        let message_id = if batch.len() == 1 {
            format!("nt.{first}.{}@{}", r0.party_to, self.host)
        } else {
            format!("nt.{first}.{}.{}@{}", r0.party_to, batch.len(), self.host)
        };
        let date = parts
            .iter()
            .map(|q| q.request_date)
            .max()
            .unwrap_or(self.now)
            .and_utc();
        let unsubscribe = match parts.as_slice() {
            [one] => one.unsubscribe_url.as_deref(),
            _ => None,
        };
        let bytes = message::build(&Email {
            from: self.from,
            from_name,
            to_name: &r0.to_name,
            to_address: &job.address,
            subject: &subject,
            text: &text,
            html: Some(&html),
            date,
            message_id: &message_id,
            unsubscribe,
        })?;
        Ok(Outgoing {
            envelope_from: self.from.email.to_string(),
            to: job.address.clone(),
            bytes,
            file: self.outbox.path(first, &r0.to_name, Channel::Email),
        })
    }
}

/// `digestd test-alert`: one message to `to`, now, through the configured
/// email transport (not the queue); the outcome as a line.
pub fn test_alert(cfg: &EmailConfig, to: &str, now: DateTime<Utc>) -> Result<String> {
    let to = validate::email(to)?;
    let mut d = Delivery::new(cfg)?;
    let text = format!(
        "This is a test message from digestd, sent {} through the {:?} transport.\n",
        now.format("%a, %d %b %Y %H:%M:%S UTC"),
        cfg.transport
    );
    let bytes = message::build(&Email {
        from: &d.from,
        from_name: None,
        to_name: &to,
        to_address: &to,
        subject: "digestd test alert",
        text: &text,
        html: Some(&message::text_to_html(&text)),
        date: now,
        message_id: &format!("test.{}@{}", now.timestamp_micros(), d.host),
        unsubscribe: None,
    })?;
    let out = Outgoing {
        envelope_from: d.from.email.to_string(),
        to: to.clone(),
        bytes,
        file: d
            .outbox
            .root()
            .join(format!("test-alert-{}.eml", now.timestamp_micros())),
    };
    match d.email.send_all(std::slice::from_ref(&out)).pop() {
        Some(Outcome::Sent { code, text }) => Ok(format!(
            "sent to {to}: {}{text}",
            code.map_or(String::new(), |c| format!("{c} "))
        )),
        Some(o) => Err(Error::Storage(format!(
            "test alert to {to} failed: {}{}",
            o.code().map_or(String::new(), |c| format!("{c} ")),
            o.text()
        ))),
        None => Err(Error::Storage("test alert: no outcome".into())),
    }
}

/// One queue row's new state.
struct RowUpdate {
    request_id: i64,
    party_to: i64,
    channel: String,
    is_successful: bool,
    gave_up: bool,
    retry_count: i32,
    next_attempt_at: NaiveDateTime,
    code: Option<i32>,
    text: String,
}

fn write_outcomes(
    c: &mut DbConn,
    (retry_base, retry_cap): (chrono::Duration, chrono::Duration),
    settles: &[Settle],
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<()> {
    let now_n = now.naive_utc();
    let mut ups = Vec::new();
    for s in settles {
        let code = s.outcome.code().map(i32::from);
        let text = s.outcome.text();
        let text = text[..floor_char(text, 1000)].to_string();
        if let (Outcome::Sent { .. }, Some((_, _, ch))) = (&s.outcome, s.keys.first()) {
            let ch = Channel::parse(ch)?;
            *report.written.entry(ch.as_str()).or_default() += 1;
        }
        for (k, (req, party, ch)) in s.keys.iter().enumerate() {
            let attempts = s.retry_counts[k] + 1;
            let mut u = RowUpdate {
                request_id: *req,
                party_to: *party,
                channel: ch.clone(),
                is_successful: false,
                gave_up: false,
                retry_count: attempts,
                next_attempt_at: now_n,
                code,
                text: text.clone(),
            };
            match &s.outcome {
                Outcome::Sent { .. } => {
                    u.is_successful = true;
                    u.retry_count = s.retry_counts[k];
                }
                Outcome::Transient { .. } if attempts < s.max_retries[k] => {
                    u.next_attempt_at =
                        (now + backoff(retry_base, retry_cap, attempts)).naive_utc();
                    if k == 0 {
                        report.retrying += 1;
                    }
                }
                // Permanent, or out of retries.
                _ => {
                    u.gave_up = true;
                    if !s.attempted {
                        u.retry_count = s.retry_counts[k];
                    }
                    report.gave_up += 1;
                }
            }
            ups.push(u);
        }
    }
    match c {
        // No round trip to save: one cached prepared UPDATE per row.
        DbConn::Sqlite(_) => {
            for u in &ups {
                diesel::update(nt_queue::table.find((
                    u.request_id,
                    u.party_to,
                    u.channel.as_str(),
                )))
                .set((
                    nt_queue::is_successful.eq(u.is_successful),
                    nt_queue::gave_up.eq(u.gave_up),
                    nt_queue::retry_count.eq(u.retry_count),
                    nt_queue::next_attempt_at.eq(u.next_attempt_at),
                    nt_queue::last_attempt_at.eq(now_n),
                    nt_queue::smtp_reply_code.eq(u.code),
                    nt_queue::smtp_reply_message.eq(&u.text),
                    nt_queue::claimed_by.eq(None::<String>),
                    nt_queue::claimed_until.eq(None::<NaiveDateTime>),
                ))
                .execute(c)?;
            }
        }
        // One statement per 10,000 rows.
        DbConn::Postgres(pg) => {
            use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text, Timestamp};
            for chunk in ups.chunks(10_000) {
                diesel::sql_query(
                    "UPDATE nt_queue AS q SET is_successful = v.ok, gave_up = v.gave_up, \
                         retry_count = v.retries, next_attempt_at = v.next, last_attempt_at = $10, \
                         smtp_reply_code = v.code, smtp_reply_message = v.text, \
                         claimed_by = NULL, claimed_until = NULL \
                     FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                         AS v(req, party, ch, ok, gave_up, retries, next, code, text) \
                     WHERE q.request_id = v.req AND q.party_to = v.party AND q.channel = v.ch",
                )
                .bind::<Array<BigInt>, _>(chunk.iter().map(|u| u.request_id).collect::<Vec<_>>())
                .bind::<Array<BigInt>, _>(chunk.iter().map(|u| u.party_to).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(chunk.iter().map(|u| u.channel.clone()).collect::<Vec<_>>())
                .bind::<Array<Bool>, _>(chunk.iter().map(|u| u.is_successful).collect::<Vec<_>>())
                .bind::<Array<Bool>, _>(chunk.iter().map(|u| u.gave_up).collect::<Vec<_>>())
                .bind::<Array<Integer>, _>(chunk.iter().map(|u| u.retry_count).collect::<Vec<_>>())
                .bind::<Array<Timestamp>, _>(
                    chunk.iter().map(|u| u.next_attempt_at).collect::<Vec<_>>(),
                )
                .bind::<Array<Nullable<Integer>>, _>(
                    chunk.iter().map(|u| u.code).collect::<Vec<_>>(),
                )
                .bind::<Array<Text>, _>(chunk.iter().map(|u| u.text.clone()).collect::<Vec<_>>())
                .bind::<Timestamp, _>(now_n)
                .execute(pg)?;
            }
        }
    }
    Ok(())
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
/// delivered), failed (none), partial_failure — and its fulfill date. One
/// aggregate read, then one UPDATE per status and chunk. Returns how many
/// requests finished.
pub fn update(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    use diesel::dsl::count;
    use diesel::sql_types::{BigInt, Nullable};
    // Per sending request: rows, delivered rows, open rows.
    let open = diesel::dsl::sql::<Nullable<BigInt>>(
        "SUM(CASE WHEN NOT nt_queue.is_successful AND NOT nt_queue.gave_up \
              AND nt_queue.retry_count < nt_requests.max_retries THEN 1 ELSE 0 END)",
    );
    let ok = diesel::dsl::sql::<Nullable<BigInt>>(
        "SUM(CASE WHEN nt_queue.is_successful THEN 1 ELSE 0 END)",
    );
    let rows: Vec<(i64, i64, Option<i64>, Option<i64>)> = nt_requests::table
        .left_join(nt_queue::table)
        .filter(nt_requests::status.eq("sending"))
        .group_by(nt_requests::request_id)
        .select((
            nt_requests::request_id,
            count(nt_queue::request_id.nullable()),
            ok,
            open,
        ))
        .load(conn)?;
    let mut by: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (id, n, ok, open) in rows {
        if open.unwrap_or(0) > 0 {
            continue;
        }
        let ok = ok.unwrap_or(0);
        let status = if n > 0 && ok == n {
            "sent"
        } else if ok == 0 {
            "failed"
        } else {
            "partial_failure"
        };
        by.entry(status).or_default().push(id);
    }
    let mut finished = 0;
    conn.write_tx(|c| {
        for (status, ids) in &by {
            for chunk in ids.chunks(5_000) {
                finished += diesel::update(nt_requests::table)
                    .filter(nt_requests::request_id.eq_any(chunk))
                    .filter(nt_requests::status.eq("sending"))
                    .set((
                        nt_requests::status.eq(*status),
                        nt_requests::fulfill_date.eq(now.naive_utc()),
                    ))
                    .execute(c)?;
            }
        }
        Ok(())
    })?;
    Ok(finished)
}
