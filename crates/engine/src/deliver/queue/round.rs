//! Delivery rounds: expand as many pending requests as a round has rows
//! (the lease holder from the start of the pending requests; on
//! PostgreSQL another process from their end), claim due rows, load them
//! with their requests, group them per (sender, recipient, channel),
//! deliver what is not email
//! at once, and hand the email to [`super::email`], which builds and sends
//! it on other threads while this one expands and claims the next round
//! and writes outcomes. A pass's first round is small so that sending
//! starts early; each next one is twice as large, up to [`ROUND`].
//! Claiming ([`claim`]) and reading a claimed round ([`read`]) are
//! modules of their own.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};

use super::build::BuildCtx;
use super::cancel::{Cancelled, Watch};
use super::email::{self, EmailBatch, EmailJob};
use super::expand::{analyze, expand_some, expand_unheld, sql_timestamp, Expanded};
use super::journal::{self, Journal, Replay};
use super::settle::{write_outcomes, Settle};
use super::{Delivery, PassReport, ROUND};
use crate::db::schema::{nt_bodies, nt_messages, nt_queue, nt_requests, parties, users};
use crate::db::{in_ids, DbConn};
use crate::deliver::listener::{Outgoing, Signing};
use crate::deliver::sink::Outcome;
use crate::deliver::webhook::{self, body as hook};
use crate::digest::words::Style;
use crate::error::Result;
use crate::parties::Channel;

/// Rows in a pass's first round.
mod claim;
mod read;
use claim::claim_round;
use read::load;

const FIRST_ROUND: i64 = 1_000;

/// A deliverable queue row.
#[derive(Debug, Clone, Queryable)]
pub(super) struct Row {
    pub request_id: i64,
    pub party_to: i64,
    pub channel: String,
    pub address: Option<String>,
    pub retry_count: i32,
    pub max_retries: i32,
    pub party_from: i64,
    pub to_name: String,
    /// The request's `expand_group` and channels: a request not expanded
    /// over a group has one row per channel it names.
    pub expand_group: bool,
    pub channels: String,
}

impl Row {
    /// How many queue rows the request has, when that is known without
    /// counting them: one per channel for a request to a single party.
    pub fn rows_of_request(&self) -> Option<usize> {
        (!self.expand_group).then(|| self.channels.split(',').filter(|c| !c.is_empty()).count())
    }
}

/// A request's content, as messages need it.
///
/// A digest's bodies are a shared rendering (`nt_bodies`) with holes for
/// the recipient's links: a round reads each shared rendering once and
/// every request of it holds the same text ([`Arc`]), filled only as each
/// message is built ([`Round::req_for`]). Filled when the round was read,
/// a round of 2,000 hourly digests held its own copy of each body, and
/// with one round building while the next is read, the bodies were the
/// largest part of a server's memory under the soak's load
/// (`docs/benchmarks.md`, Soak).
#[derive(Clone)]
pub(super) struct Req {
    pub id: i64,
    pub subject: String,
    pub message: Arc<str>,
    pub message_html: Option<Arc<str>>,
    pub message_chat: Option<Arc<str>>,
    pub message_sms: Option<String>,
    pub request_date: NaiveDateTime,
    pub unsubscribe_url: Option<String>,
    /// Whether the bodies are a shared rendering, with holes.
    pub shared: bool,
    pub manage_url: Option<String>,
    pub full_url: Option<String>,
    /// A digest's webhook document (`None` for a notification, or when
    /// no channel of its request reads it).
    pub message_webhook: Option<String>,
}

/// A claimed round, loaded and owned, so its email can be built on another
/// thread while the next round is claimed.
pub(super) struct Round {
    /// In order of sender, recipient, channel, request.
    pub rows: Vec<Row>,
    pub reqs: HashMap<i64, Req>,
    /// Senders' names.
    pub names: HashMap<i64, String>,
    /// How each recipient whose email holds several requests reads times
    /// ([`load_styles`]); a recipient not here reads UTC, 24-hour.
    pub styles: HashMap<i64, Style>,
    /// The subscriber codes of the members a group's digest goes to in
    /// this round ([`super::member::load_codes`]).
    pub codes: HashMap<i64, String>,
}

/// Every round of a pass: claims, loads, delivers, settles. Returns the
/// rows it claimed.
pub(super) fn deliver_rounds(
    conn: &mut DbConn,
    d: &mut Delivery,
    now: DateTime<Utc>,
    leader: bool,
    report: &mut PassReport,
) -> Result<usize> {
    let started = Instant::now();
    // The email listener goes to the sender thread for the pass; the
    // others stay here for what is not email.
    let k = d
        .listeners
        .iter()
        .position(|l| l.key() == Channel::Email)
        .expect("Delivery::new gives email a listener");
    let key = crate::deliver::msgid::MessageKey::load(conn)?;
    // What this process's last pass had sent and not written goes in first.
    let journal = d.journal(conn, &key)?;
    let policy = (d.retry_base, d.retry_cap);
    journal::replay_own(
        conn,
        &journal,
        &mut Replay {
            policy,
            now,
            report,
        },
    )?;
    let mut email = d.listeners.remove(k);
    let ctx = BuildCtx::new(d, now.naive_utc(), key);
    let cancelled = Cancelled::default();
    let mut rounds = Rounds {
        conn,
        d,
        now,
        report,
        size: FIRST_ROUND,
        rows: 0,
        leader,
        analyzed: false,
        watch: Watch::new(&cancelled),
        journal: &journal,
    };
    let result = email::run(
        email.as_mut(),
        &journal,
        &|round, job| cancelled.with(|c| ctx.build_one(round, job, c)),
        &mut rounds,
    );
    let n = rounds.rows;
    d.listeners.insert(k, email);
    let t = result?;
    // Every outcome is in the database now.
    journal.clear()?;
    if n > 0 {
        tracing::debug!(
            rows = n,
            built = ?t.built,
            sending = ?t.sending,
            settled = ?t.settled,
            total = ?started.elapsed(),
            "queue rounds"
        );
    }
    Ok(n)
}

/// The queue side of a pass, for [`email::run`].
struct Rounds<'a> {
    conn: &'a mut DbConn,
    d: &'a mut Delivery,
    now: DateTime<Utc>,
    report: &'a mut PassReport,
    /// The next round's size.
    size: i64,
    /// Rows claimed so far.
    rows: usize,
    /// Whether this pass expands pending requests (it holds the lease).
    leader: bool,
    /// Whether the planner's statistics were refreshed after expanding.
    analyzed: bool,
    /// Requests cancelled since their round went to the builder.
    watch: Watch<'a>,
    /// This process's sent journal.
    journal: &'a Journal,
}

impl email::Source for Rounds<'_> {
    fn next(&mut self) -> Result<Option<EmailBatch>> {
        // Statistics taken before a large expansion make the planner
        // pick a nested loop per request for the next rounds' statements;
        // they are refreshed once, after the first round has gone to the
        // builder, so that its messages do not wait for it.
        if self.report.expanded >= 1_000 && !self.analyzed {
            analyze(self.conn)?;
            self.analyzed = true;
        }
        loop {
            let limit = self.size;
            self.size = (limit * 2).min(ROUND);
            // As many pending requests as the round has rows, so the
            // first message goes out before the backlog is expanded.
            let start = Instant::now();
            // A dead process's accepted messages are written delivered
            // before its claims can be taken (they last until they expire).
            journal::replay_dead(
                self.conn,
                self.journal,
                &mut Replay {
                    policy: (self.d.retry_base, self.d.retry_cap),
                    now: self.now,
                    report: self.report,
                },
            )?;
            let (round, ex) =
                claim_round(self.conn, self.now, self.d.claim_for, limit, self.leader)?;
            let expanded = ex.n;
            self.report.expanded += expanded;
            let took = start.elapsed();
            if round.rows.is_empty() {
                if expanded == 0 {
                    return Ok(None);
                }
                continue;
            }
            self.rows += round.rows.len();
            let jobs = self.settle_all_but_email(&round)?;
            tracing::debug!(
                expanded,
                rows = round.rows.len(),
                email = jobs.len(),
                ?took,
                "queue round"
            );
            if !jobs.is_empty() {
                self.watch.handed(&round);
                return Ok(Some(EmailBatch {
                    round: Arc::new(round),
                    jobs,
                }));
            }
        }
    }

    fn write(&mut self, done: &[Settle]) -> Result<()> {
        let policy = (self.d.retry_base, self.d.retry_cap);
        let (now, report) = (self.now, &mut *self.report);
        self.conn
            .write_tx(|c| write_outcomes(c, policy, done, now, report))
    }

    fn watch(&mut self) -> Result<()> {
        self.watch.check(self.conn)
    }
}

impl Rounds<'_> {
    /// Groups the round per (sender, recipient, channel); gives up the
    /// groups with no address, sends the XMPP, SMS and webhook ones and
    /// writes their outcomes (a webhook that answered 410 Gone is
    /// disabled); returns the email ones.
    fn settle_all_but_email(&mut self, round: &Round) -> Result<Vec<EmailJob>> {
        let rows = &round.rows;
        let secrets = self.webhook_secrets(rows)?;
        let mut jobs: Vec<EmailJob> = Vec::new();
        let mut others: Vec<Settle> = Vec::new();
        // (channel, index in `others`, message) for the push listeners.
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
                rows_of_request: batch.iter().map(Row::rows_of_request).collect(),
                outcome,
            };
            let ch = Channel::parse(&r0.channel)?;
            let Some(address) = r0.address.clone() else {
                others.push(Settle {
                    attempted: false,
                    ..settle(Outcome::permanent(
                        None,
                        format!("no {} address", ch.as_str()),
                    ))
                });
                continue;
            };
            if ch == Channel::Email {
                jobs.push(EmailJob {
                    range,
                    address,
                    settle: settle(Outcome::transient(None, "not sent")),
                });
                continue;
            }
            if ch.is_url() {
                // The webhook signs with its URL's secret; a preset's URL is
                // its own credential, and its listener turns the document
                // into the service's format as it sends it.
                let signing = match (ch, secrets.get(&(r0.party_to, address.clone()))) {
                    (Channel::Webhook, None) => {
                        others.push(Settle {
                            attempted: false,
                            ..settle(Outcome::permanent(
                                None,
                                "no webhook secret: the URL changed since the message was queued",
                            ))
                        });
                        continue;
                    }
                    (Channel::Webhook, Some(secret)) => Some(Signing {
                        id: hook::message_id(
                            &batch.iter().map(|r| r.request_id).collect::<Vec<_>>(),
                            r0.party_to,
                        ),
                        secret: secret.clone(),
                    }),
                    _ => None,
                };
                let docs = batch
                    .iter()
                    .map(|r| round.req_for(r))
                    .map(|q| match &q.message_webhook {
                        Some(doc) => hook::digest(q.id, doc),
                        None => hook::notification(q.id, &q.subject, &q.message, q.request_date),
                    })
                    .collect();
                let file = self.d.outbox.path(batch[0].request_id, &r0.to_name, ch);
                let mut m = Outgoing::text(&address, &hook::message(docs), file);
                m.signing = signing;
                pushes.push((ch, others.len(), m));
                others.push(settle(Outcome::transient(None, "not sent")));
                continue;
            }
            // A digest has its own chat and SMS texts; a plain notification
            // is its subject (SMS) or subject and message.
            let body: Vec<String> = batch
                .iter()
                .map(|r| round.req_for(r))
                .map(|q| match (ch, &q.message_chat, &q.message_sms) {
                    (Channel::Xmpp, Some(chat), _) => chat.to_string(),
                    (Channel::Xmpp, None, _) => format!("{}\n{}", q.subject, q.message),
                    (_, _, Some(sms)) => sms.clone(),
                    (_, _, None) => q.subject.clone(),
                })
                .collect();
            let sep = if ch == Channel::Sms { "\n" } else { "\n\n" };
            let file = self.d.outbox.path(batch[0].request_id, &r0.to_name, ch);
            pushes.push((
                ch,
                others.len(),
                Outgoing::text(&address, &body.join(sep), file),
            ));
            others.push(settle(Outcome::transient(None, "not sent")));
        }
        // The push listeners, a batch per channel (one XMPP session, one
        // ping for all of them): every channel but email, so none added
        // later is left unsent.
        for ch in Channel::ALL.into_iter().filter(|c| *c != Channel::Email) {
            let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut pushes)
                .into_iter()
                .partition(|p| p.0 == ch);
            pushes = rest;
            let (idx, msgs): (Vec<usize>, Vec<Outgoing>) =
                mine.into_iter().map(|(_, k, m)| (k, m)).unzip();
            if msgs.is_empty() {
                continue;
            }
            // Each acceptance written down as it comes (the listeners send
            // one message at a time, or tell of each as it is taken).
            let keys: Vec<&[journal::RowKey]> = idx.iter().map(|&k| &others[k].keys[..]).collect();
            let journal = self.journal;
            let sent = self
                .d
                .listener(ch)
                .send_noting(&msgs, &|i, d| journal.note(keys[i], d));
            for (k, r) in idx.into_iter().zip(sent) {
                others[k].outcome = Outcome::from(r);
            }
        }
        let gone: Vec<(i64, Channel, String)> = others
            .iter()
            .filter_map(|s| {
                let ch = Channel::parse(&s.keys.first()?.2).ok()?;
                ch.is_url().then_some((s, ch))
            })
            .filter(|(s, _)| {
                matches!(
                    s.outcome,
                    Outcome::Permanent {
                        code: Some(webhook::GONE),
                        ..
                    }
                )
            })
            .filter_map(|(s, ch)| Some((s.keys[0].1, ch, s.address.clone()?)))
            .collect();
        if !gone.is_empty() {
            self.conn.write_tx(|c| {
                for (party, ch, url) in &gone {
                    crate::parties::disable_gone_webhook_in_tx(c, *party, *ch, url)?;
                }
                Ok(())
            })?;
            tracing::warn!(
                endpoints = gone.len(),
                "webhook contact points disabled: 410 Gone"
            );
        }
        if !others.is_empty() {
            email::Source::write(self, &others)?;
        }
        Ok(jobs)
    }

    /// The secrets of the webhook contact points the round's webhook rows
    /// go to, by (party, URL).
    fn webhook_secrets(&mut self, rows: &[Row]) -> Result<HashMap<(i64, String), String>> {
        let mut parties: Vec<i64> = rows
            .iter()
            .filter(|r| r.channel == Channel::Webhook.as_str())
            .map(|r| r.party_to)
            .collect();
        if parties.is_empty() {
            return Ok(HashMap::new());
        }
        parties.sort_unstable();
        parties.dedup();
        crate::parties::webhook_secrets(self.conn, &parties)
    }
}
