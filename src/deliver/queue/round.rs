//! One delivery round: claim due rows, group them per (sender, recipient,
//! channel), build one message per group and send it, writing outcomes as
//! they come back.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::email::{self, EmailJob};
use super::expand::sql_timestamp;
use super::settle::{write_outcomes, Settle};
use super::{Delivery, PassReport, ROUND};
use crate::db::schema::{nt_messages, nt_queue, nt_requests, parties};
use crate::db::DbConn;
use crate::deliver::listener::Outgoing;
use crate::deliver::message::{self, Email, Part};
use crate::deliver::outbox::Outbox;
use crate::deliver::sink::Outcome;
use crate::error::Result;
use crate::parties::Channel;

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

pub(super) fn process_round(
    conn: &mut DbConn,
    d: &mut Delivery,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<usize> {
    let now_n = now.naive_utc();
    let claiming = std::time::Instant::now();
    let token = claim(conn, now, d.claim_for)?;
    let claimed = claiming.elapsed();
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
    let fetched = claiming.elapsed() - claimed;
    // The claimed rows' requests, by the claim token: one statement, where
    // a list of ids would be a new statement of thousands of parameters.
    let claimed_requests = nt_queue::table
        .filter(nt_queue::claimed_by.eq(&token))
        .select(nt_queue::request_id);
    let reqs: HashMap<i64, Req> = nt_requests::table
        .inner_join(nt_messages::table)
        .filter(nt_requests::request_id.eq_any(claimed_requests))
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
        .load::<Req>(conn)?
        .into_iter()
        .map(|r| (r.id, r))
        .collect();
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
    // (channel, settle index, message) for the push listeners.
    let mut pushes: Vec<(Channel, usize, Outgoing)> = Vec::new();
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
            address: r0.address.clone(),
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
                // A digest has its own chat and SMS texts; a plain
                // notification is its subject (SMS) or subject and message.
                let body: Vec<String> = parts
                    .iter()
                    .map(|q| match (ch, &q.message_chat, &q.message_sms) {
                        (Channel::Xmpp, Some(chat), _) => chat.clone(),
                        (Channel::Xmpp, None, _) => format!("{}\n{}", q.subject, q.message),
                        (_, _, Some(sms)) => sms.clone(),
                        (_, _, None) => q.subject.clone(),
                    })
                    .collect();
                let sep = if ch == Channel::Sms { "\n" } else { "\n\n" };
                let file = d.outbox.path(first, &r0.to_name, ch);
                pushes.push((
                    ch,
                    settles.len(),
                    Outgoing::text(&address, &body.join(sep), file),
                ));
                settles.push(settle(Outcome::transient(None, "not sent")));
            }
        }
    }
    // The push listeners, a batch per channel (one XMPP session, one ping
    // for all of them).
    for ch in [Channel::Xmpp, Channel::Sms] {
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut pushes)
            .into_iter()
            .partition(|p| p.0 == ch);
        pushes = rest;
        let (idx, msgs): (Vec<usize>, Vec<Outgoing>) =
            mine.into_iter().map(|(_, k, m)| (k, m)).unzip();
        if msgs.is_empty() {
            continue;
        }
        for (k, r) in idx.into_iter().zip(d.listener(ch).send(&msgs)) {
            settles[k].outcome = Outcome::from(r);
        }
    }
    // What is not email is settled now: write it first.
    let mut is_email = vec![false; settles.len()];
    for j in &jobs {
        is_email[j.settle] = true;
    }
    let others: Vec<Settle> = settles
        .iter()
        .zip(&is_email)
        .filter(|(_, email)| !**email)
        .map(|(s, _)| s.clone())
        .collect();
    let policy = (d.retry_base, d.retry_cap);
    conn.write_tx(|c| write_outcomes(c, policy, &others, now, report))?;

    // Email, on three threads: build, send, write outcomes.
    let ctx = BuildCtx {
        rows: &rows,
        reqs: &reqs,
        names: &names,
        from: &d.from,
        host: &d.host,
        outbox: &d.outbox,
        now: now_n,
    };
    let email = d
        .listeners
        .iter_mut()
        .find(|l| l.key() == "email")
        .expect("Delivery::new gives email a listener");
    let t = email::deliver(
        email.as_mut(),
        &|job| ctx.build_one(job),
        &jobs,
        &settles,
        &mut |done| conn.write_tx(|c| write_outcomes(c, policy, done, now, report)),
    )?;
    tracing::debug!(
        rows = n,
        messages = settles.len(),
        ?claimed,
        ?fetched,
        ?loaded,
        built = ?t.built,
        sending = ?t.sending,
        settled = ?t.settled,
        total = ?started.elapsed(),
        "queue round"
    );
    Ok(n)
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
