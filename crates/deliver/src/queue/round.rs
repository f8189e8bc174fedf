//! Delivery rounds: expand as many pending requests as a round has rows
//! (the lease holder from the start of the pending requests; on
//! PostgreSQL another process from their end), claim due rows, load them
//! with their requests, group them per (sender, recipient, channel), and
//! hand the messages to [`super::email`]'s threads, which build and send
//! them (email by its builder and sender, the rest by the pusher) while
//! this one expands and claims the next round and writes outcomes. A pass's first round is small so that sending
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
use super::email::{self, EmailBatch, EmailJob, Work};
use super::expand::{analyze, expand_some, expand_unheld, Expanded};
use super::journal::{self, Journal, Replay};
use super::settle::{write_outcomes, Settle};
use super::{Delivery, PassReport, ROUND};
use crate::db::schema::{nt_bodies, nt_messages, nt_queue, nt_requests, parties, users};
use crate::db::DbConn;
use crate::digest::words::Style;
use crate::error::Result;
use crate::listener::{MatrixRoute, Outgoing, Signing};
use crate::matrix;
use crate::parties::Channel;
use crate::sink::Outcome;
use crate::webhook::{self, body as hook};

/// Rows in a pass's first round.
mod claim;
mod push;
mod quiet;
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
    /// A notification that is not urgent: held while its recipient is
    /// inside their quiet hours ([`quiet`]).
    pub holdable: bool,
    /// The request's kind and subscription, for the settle's events.
    pub digest: bool,
    pub subscription_id: Option<i64>,
}

impl Row {
    /// How many queue rows the request has, when that is known without
    /// counting them: one per channel for a request to a single party.
    pub(crate) fn rows_of_request(&self) -> Option<usize> {
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
/// (`docs/benchmarks-history.md`, Soak).
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
    /// A digest's subscription (`None` for a notification).
    pub subscription_id: Option<i64>,
    /// A forward digest's calendar, for its email (read for email only).
    pub calendar: Option<Arc<str>>,
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
    /// The list (collection uuid and name; no uuid: every collection)
    /// of each subscription whose digest goes by email in this round.
    pub lists: HashMap<i64, (Option<String>, String)>,
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
    // The email listener goes to the sender thread for the pass, the
    // others to the pusher.
    let mut others = std::mem::take(&mut d.listeners);
    let k = others
        .iter()
        .position(|l| l.key() == Channel::Email)
        .expect("Delivery::new gives email a listener");
    let key = crate::msgid::MessageKey::load(conn)?;
    for l in others.iter_mut() {
        l.site_key(&key);
    }
    // What this process's last pass had sent and not written goes in first.
    let journal = d.journal(conn, &key)?;
    let policy = d.settle_policy();
    journal::replay_own(
        conn,
        &journal,
        &mut Replay {
            policy,
            now,
            report,
        },
    )?;
    let mut email = others.remove(k);
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
        &mut others,
        &journal,
        &|round, job| cancelled.with(|c| ctx.build_one(round, job, c)),
        &mut rounds,
    );
    let n = rounds.rows;
    others.insert(k, email);
    d.listeners = others;
    let t = result?;
    // Every outcome is in the database now.
    journal.clear()?;
    if n > 0 {
        tracing::debug!(
            rows = n,
            built = ?t.built,
            sending = ?t.sending,
            pushing = ?t.pushing,
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
    fn next(&mut self) -> Result<Option<Work>> {
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
                    policy: self.d.settle_policy(),
                    now: self.now,
                    report: self.report,
                },
            )?;
            let (mut round, ex) =
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
            // Notifications to recipients inside their quiet hours wait.
            let policy = self.d.settle_policy();
            let (now, report) = (self.now, &mut *self.report);
            let held = quiet::take_held(self.conn, now, &mut round, |c, held| {
                write_outcomes(c, policy, held, now, report)
            })?;
            if held > 0 && round.rows.is_empty() {
                continue;
            }
            self.rows += round.rows.len();
            let (jobs, pushes) = self.plan(&round)?;
            tracing::debug!(
                expanded,
                rows = round.rows.len(),
                email = jobs.len(),
                pushes = pushes.len(),
                ?took,
                "queue round"
            );
            if jobs.is_empty() && pushes.is_empty() {
                continue;
            }
            let email = (!jobs.is_empty()).then(|| {
                self.watch.handed(&round);
                EmailBatch {
                    round: Arc::new(round),
                    jobs,
                }
            });
            return Ok(Some(Work { email, pushes }));
        }
    }

    fn write(&mut self, done: &[Settle], rooms: &[(String, String)]) -> Result<()> {
        self.write_with_rooms(done, rooms)
    }

    fn watch(&mut self) -> Result<()> {
        self.watch.check(self.conn)
    }
}
