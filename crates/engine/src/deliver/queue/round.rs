//! Delivery rounds: expand as many pending requests as a round has rows
//! (the lease holder from the start of the pending requests; on
//! PostgreSQL another process from their end), claim due rows, load them
//! with their requests, group them per (sender, recipient, channel),
//! deliver what is not email
//! at once, and hand the email to [`super::email`], which builds and sends
//! it on other threads while this one expands and claims the next round
//! and writes outcomes. A pass's first round is small so that sending
//! starts early; each next one is twice as large, up to [`ROUND`].
//!
//! Longer than 500 lines on purpose: a round's steps share one claimed
//! set and one connection, and its statements are tuned together on both
//! back ends (`docs/benchmarks.md`); split, the order they must run in
//! would no longer read top to bottom.

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
use crate::db::{in_ids, prefer_index_lookups, Backend, DbConn};
use crate::deliver::listener::Outgoing;
use crate::deliver::sink::Outcome;
use crate::digest::render::{fill, Links};
use crate::digest::words::Style;
use crate::error::Result;
use crate::parties::Channel;

/// Rows in a pass's first round.
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
#[derive(Clone, Queryable)]
pub(super) struct Req {
    pub id: i64,
    pub subject: String,
    pub message: String,
    pub message_html: Option<String>,
    pub message_chat: Option<String>,
    pub message_sms: Option<String>,
    pub request_date: NaiveDateTime,
    pub unsubscribe_url: Option<String>,
    /// A digest's bodies are a shared rendering (`nt_bodies`) with holes
    /// for the recipient's links, which follow.
    pub shared: bool,
    pub manage_url: Option<String>,
    pub full_url: Option<String>,
}

impl Req {
    /// A shared rendering's holes filled with this request's links: the
    /// bodies its recipient reads ([`crate::digest::render::fill`]).
    fn fill_holes(&mut self) {
        if !self.shared {
            return;
        }
        let links = Links {
            manage_url: self.manage_url.as_deref().unwrap_or(""),
            unsubscribe_url: self.unsubscribe_url.as_deref(),
            full_url: self.full_url.as_deref().unwrap_or(""),
        };
        let f = |s: &Option<String>, html: bool| s.as_deref().map(|t| fill(t, &links, html));
        let (html, chat) = (f(&self.message_html, true), f(&self.message_chat, false));
        self.message = fill(&self.message, &links, false);
        (self.message_html, self.message_chat) = (html, chat);
    }
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

/// Claims for the round `token` up to `limit` due rows (all when `None`)
/// that also meet `and` (more SQL conditions on `r`, the request, and
/// `q2`, the row) — not delivered, not given up, retries left, request
/// `sending`, next attempt due, not claimed by a live round — and returns
/// how many it claimed. Rows are taken in order of sender, recipient and
/// channel. On PostgreSQL they are picked `FOR UPDATE SKIP LOCKED`, so
/// rounds of several processes claim disjoint rows; SQLite has one writer
/// at a time. A claim lasts `claim_for`; a round that dies leaves it to
/// expire.
///
/// The unclaimed due rows are found first, from the `nt_queue_due` index,
/// and only then joined to their requests. Left to the planner, with
/// statistics older than the expansion just done, it walked the `sending`
/// requests and for each scanned every due row: 14–27 ms on PostgreSQL
/// for a first round of 1,000 that found nothing to claim, growing with
/// the square of the round (`docs/benchmarks.md`).
fn claim(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    claim_for: chrono::Duration,
    token: &str,
    and: &str,
    limit: Option<i64>,
) -> Result<usize> {
    let ts = sql_timestamp(conn, now);
    let until = sql_timestamp(conn, now + claim_for);
    let lock = match conn {
        DbConn::Postgres(_) => "FOR UPDATE OF q2 SKIP LOCKED",
        DbConn::Sqlite(_) => "",
    };
    let limit = limit.map(|n| format!("LIMIT {n}")).unwrap_or_default();
    let sql = format!(
        "WITH due AS MATERIALIZED ( \
             SELECT request_id, party_to, channel FROM nt_queue \
             WHERE NOT is_successful AND NOT gave_up AND next_attempt_at <= {ts} \
                 AND (claimed_until IS NULL OR claimed_until < {ts})) \
         UPDATE nt_queue SET claimed_by = '{token}', claimed_until = {until} \
         WHERE (request_id, party_to, channel) IN ( \
             SELECT q2.request_id, q2.party_to, q2.channel \
             FROM due JOIN nt_queue q2 ON (q2.request_id, q2.party_to, q2.channel) \
                     = (due.request_id, due.party_to, due.channel) \
                 JOIN nt_requests r ON r.request_id = q2.request_id \
             WHERE r.status = 'sending' AND NOT q2.is_successful AND NOT q2.gave_up \
                 AND q2.retry_count < r.max_retries AND q2.next_attempt_at <= {ts} \
                 AND (q2.claimed_until IS NULL OR q2.claimed_until < {ts}) {and} \
             ORDER BY r.party_from, q2.party_to, q2.channel, q2.request_id \
             {limit} {lock})"
    );
    conn.write_tx(|c| Ok(diesel::sql_query(&sql).execute(c)?))
}

/// Claims a round and loads it. The lease holder first expands pending
/// requests, up to `limit` of them, into rows already claimed by the round
/// ([`expand_some`]; another process on PostgreSQL, [`expand_unheld`]);
/// then the round claims up to `limit` rows expanded earlier and due now (retries, or everything when it does not expand),
/// only of pairs the expansion has finished. When that limit cuts a
/// (sender, recipient, channel) group, the rest of its due rows are
/// claimed too, and new rows of the groups after the cut are left to a
/// later round with the older rows of their pairs: every message holds
/// all of its pair's due rows.
fn claim_round(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    claim_for: chrono::Duration,
    limit: i64,
    leader: bool,
) -> Result<(Round, Expanded)> {
    let token = || uuid::Uuid::new_v4().simple().to_string();
    let fresh = token();
    let start = Instant::now();
    let ex = if leader {
        expand_some(conn, now, Some(limit), Some((&fresh, now + claim_for)))?
    } else {
        // PostgreSQL: from the other end (SQLite: nothing).
        expand_unheld(conn, now, limit, (&fresh, now + claim_for))?
    };
    // The older rows under a token of their own, so that where the limit
    // cut them can be found.
    let old = if ex.n > 0 { token() } else { fresh.clone() };
    let and = match ex.upto {
        Some((from, to)) => format!(
            "AND (r.party_from < {from} OR (r.party_from = {from} AND q2.party_to <= {to}))"
        ),
        None => String::new(),
    };
    let expand = start.elapsed();
    let n = claim(conn, now, claim_for, &old, &and, Some(limit))?;
    if n as i64 >= limit {
        if let Some((from, to, ch)) = last_group(conn, &old)? {
            let ch = Channel::parse(&ch)?.as_str();
            // The rows of that group (`=`), or of the groups after it (`>`).
            let group = |op: &str| {
                format!("(r.party_from, q2.party_to, q2.channel) {op} ({from}, {to}, '{ch}')")
            };
            claim(
                conn,
                now,
                claim_for,
                &old,
                &format!("AND {}", group("=")),
                None,
            )?;
            if old != fresh {
                let after = group(">");
                conn.write_tx(|c| {
                    Ok(diesel::sql_query(format!(
                        "UPDATE nt_queue SET claimed_by = NULL, claimed_until = NULL \
                         WHERE (request_id, party_to, channel) IN ( \
                             SELECT q2.request_id, q2.party_to, q2.channel FROM nt_queue q2 \
                             JOIN nt_requests r ON r.request_id = q2.request_id \
                             WHERE q2.claimed_by = '{fresh}' AND {after})"
                    ))
                    .execute(c)?)
                })?;
            }
        }
    }
    let claimed = start.elapsed();
    let round = load(conn, &[fresh, old])?;
    tracing::debug!(
        ?expand,
        claim = ?(claimed - expand),
        load = ?(start.elapsed() - claimed),
        "queue round steps"
    );
    Ok((round, ex))
}

/// The last (sender, recipient, channel) group claimed under `token`.
fn last_group(conn: &mut DbConn, token: &str) -> Result<Option<(i64, i64, String)>> {
    Ok(nt_queue::table
        .inner_join(nt_requests::table)
        .filter(nt_queue::claimed_by.eq(token))
        .select((
            nt_requests::party_from,
            nt_queue::party_to,
            nt_queue::channel,
        ))
        .order((
            nt_requests::party_from.desc(),
            nt_queue::party_to.desc(),
            nt_queue::channel.desc(),
        ))
        .first(conn)
        .optional()?)
}

/// The rows claimed under `tokens`, with their requests and senders.
///
/// On PostgreSQL in a transaction that prefers index look-ups: a round is
/// a few thousand rows, requests and bodies read by key, but at the
/// default cost of a random read the planner scanned every request and
/// body ever written instead (18 ms instead of 6 for 2,000 bodies with
/// 150,000 in the table, and growing with the history).
fn load(conn: &mut DbConn, tokens: &[String]) -> Result<Round> {
    match conn.backend() {
        Backend::Postgres => conn.write_tx(|c| {
            if let DbConn::Postgres(pg) = c {
                prefer_index_lookups(pg)?;
            }
            read_round(c, tokens)
        }),
        Backend::Sqlite => read_round(conn, tokens),
    }
}

/// [`load`]'s reads.
fn read_round(conn: &mut DbConn, tokens: &[String]) -> Result<Round> {
    let rows: Vec<Row> = nt_queue::table
        .inner_join(nt_requests::table)
        .left_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::claimed_by.eq_any(tokens))
        .select((
            nt_queue::request_id,
            nt_queue::party_to,
            nt_queue::channel,
            nt_queue::address,
            nt_queue::retry_count,
            nt_requests::max_retries,
            nt_requests::party_from,
            // A party deleted by hand after its rows were expanded (there
            // is no foreign key) is still written to at the row's address.
            // A row to an address (a negative key) is to no party: no name.
            diesel::dsl::sql::<Text>(
                "COALESCE(parties.name, CASE WHEN nt_queue.party_to < 0 THEN '' \
                 ELSE 'party ' || nt_queue.party_to END)",
            ),
            nt_requests::expand_group,
            nt_requests::channels,
        ))
        .order((
            nt_requests::party_from.asc(),
            nt_queue::party_to.asc(),
            nt_queue::channel.asc(),
            nt_queue::request_id.asc(),
        ))
        .load(conn)?;
    if rows.is_empty() {
        return Ok(Round {
            rows,
            reqs: HashMap::new(),
            names: HashMap::new(),
            styles: HashMap::new(),
            codes: HashMap::new(),
        });
    }
    // The claimed rows' requests, by id (one array constant on PostgreSQL).
    // Email needs the text and HTML bodies, XMPP and SMS their own texts
    // (and the text as a fallback): each query reads only what its channels
    // need, so an email round does not carry a chat body it never sends.
    // A digest's text, HTML and chat text may be a shared rendering
    // (`nt_bodies`), filled here with the request's own links.
    let mut reqs: HashMap<i64, Req> = HashMap::new();
    for email in [true, false] {
        let mut ids: Vec<i64> = rows
            .iter()
            .filter(|r| (r.channel == Channel::Email.as_str()) == email)
            .map(|r| r.request_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            continue;
        }
        let these = format!("nt_requests.request_id {}", in_ids(conn, &ids));
        // A body column this read needs, or NULL in its place.
        let body = |column: &'static str, needed: bool| {
            diesel::dsl::sql::<Nullable<Text>>(if needed { column } else { "NULL" })
        };
        let loaded: Vec<Req> = nt_requests::table
            .inner_join(nt_messages::table.left_join(nt_bodies::table))
            .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(&these))
            .select((
                nt_requests::request_id,
                nt_requests::subject,
                diesel::dsl::sql::<Text>("COALESCE(nt_bodies.message, nt_messages.message)"),
                body(
                    "COALESCE(nt_bodies.message_html, nt_messages.message_html)",
                    email,
                ),
                body(
                    "COALESCE(nt_bodies.message_chat, nt_messages.message_chat)",
                    !email,
                ),
                body("nt_messages.message_sms", !email),
                nt_requests::request_date,
                nt_requests::unsubscribe_url,
                nt_messages::body_id.is_not_null(),
                nt_messages::manage_url,
                nt_messages::full_url,
            ))
            .load(conn)?;
        // A request on email and another channel is in both: the second
        // read adds its chat and SMS texts.
        for mut r in loaded {
            r.fill_holes();
            match reqs.get_mut(&r.id) {
                Some(q) => (q.message_chat, q.message_sms) = (r.message_chat, r.message_sms),
                None => {
                    reqs.insert(r.id, r);
                }
            }
        }
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
    let styles = load_styles(conn, &rows)?;
    let codes = super::member::load_codes(conn, &rows, &reqs)?;
    Ok(Round {
        rows,
        reqs,
        names,
        styles,
        codes,
    })
}

/// The zone and 12/24-hour style ([`Style`], as digests show times) of
/// each recipient whose email in `rows` holds several requests: its
/// message heads each section with the time it was sent, in the
/// recipient's own terms. Only users have them (a group's rows, when
/// expanded, are its members'); a group sent to as one, or an address
/// with no user behind it (a sign-up's verification, the daily report),
/// reads UTC, 24-hour, as a group's digests do. One query, only when
/// some message holds several requests: most rounds make one message
/// per request and read nothing here.
fn load_styles(conn: &mut DbConn, rows: &[Row]) -> Result<HashMap<i64, Style>> {
    let mut batched: Vec<i64> = rows
        .windows(2)
        .filter(|w| {
            w[0].channel == Channel::Email.as_str()
                && (w[0].party_from, w[0].party_to, &w[0].channel)
                    == (w[1].party_from, w[1].party_to, &w[1].channel)
        })
        .map(|w| w[0].party_to)
        .collect();
    batched.sort_unstable();
    batched.dedup();
    let mut styles = HashMap::new();
    for chunk in batched.chunks(10_000) {
        let found: Vec<(i64, String, String)> = users::table
            .filter(users::party_id.eq_any(chunk))
            .select((users::party_id, users::timezone, users::locale))
            .load(conn)?;
        for (party, tz, locale) in found {
            // Zones are checked when a user is written; one the zone data
            // no longer knows reads UTC rather than stopping the round.
            let tz = tz.parse().unwrap_or(chrono_tz::UTC);
            styles.insert(party, Style::new(tz, &locale));
        }
    }
    Ok(styles)
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
    /// groups with no address, sends the XMPP and SMS ones and writes
    /// their outcomes; returns the email ones.
    fn settle_all_but_email(&mut self, round: &Round) -> Result<Vec<EmailJob>> {
        let rows = &round.rows;
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
            // A digest has its own chat and SMS texts; a plain notification
            // is its subject (SMS) or subject and message.
            let body: Vec<String> = batch
                .iter()
                .map(|r| round.req_for(r))
                .map(|q| match (ch, &q.message_chat, &q.message_sms) {
                    (Channel::Xmpp, Some(chat), _) => chat.clone(),
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
        // ping for all of them).
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
        if !others.is_empty() {
            email::Source::write(self, &others)?;
        }
        Ok(jobs)
    }
}
