//! The nt queue of seed 000: `post_request`, `cancel_request`,
//! `expand_requests`, `process_queue`, `update_requests`, with the
//! weaknesses its "Future Work" admits fixed: a broken SMTP connection is
//! reopened and the pass goes on, transient and permanent failures are told
//! apart (retry with exponential backoff, or give up at once), outcomes are
//! written a chunk at a time in set-based statements, and messages carry
//! HTML.
//!
//! Rows are processed in rounds; a round claims its rows (so several
//! processes can deliver at once) and takes them in order of sender,
//! recipient and channel; every pending row of one (sender, recipient,
//! channel) goes out as one message holding all of them (see
//! [`super::message::combine`]). The `queue` lease guards expansion and the
//! status update.
//!
//! - [`post`]: post, cancel, show, status, test-alert;
//! - [`address`]: one email to an address no party has (a sign-up's
//!   verification);
//! - [`list`]: requests by status, sender, recipient; one request's attempts;
//! - [`expand`]: requests into queue rows;
//! - [`round`]: claim due rows, batch them per pair, deliver;
//! - [`email`]: a pass's email on three threads (build, send, write);
//! - [`journal`]: each accepted message written down as it is accepted,
//!   and a dead process's journal replayed before rows are claimed;
//! - [`build`]: one message per (sender, recipient) group;
//! - [`cancel`]: requests cancelled while their round is in flight;
//! - [`settle`]: write outcomes, retries and backoff, final statuses;
//! - [`held`]: rows held for quiet hours made due when those change;
//! - [`purge`]: finished requests older than a cutoff, and all of theirs;
//! - [`withdraw`]: requests to a deleted party or of an ended subscription;
//!   a member's rows of a group digest they opted out of.

mod address;
mod build;
mod cancel;
mod email;
mod expand;
mod held;
mod journal;
mod list;
mod member;
mod post;
mod purge;
mod pusher;
mod round;
mod settle;
mod withdraw;

pub use address::{post_system_email_in, post_to_address};
pub use expand::expand;
pub use held::{release_held_in_tx, RELEASED};
pub use list::{attempts, count_by_status, list, Attempt, RequestFilter, RequestRow};
pub use post::{
    cancel_request, post_request, show, status, test_alert, test_alert_matrix, test_alert_sms,
    test_alert_webhook, test_alert_xmpp, NewNotification, QueueStatus, RecipientView, RequestView,
    MAX_MESSAGE,
};
pub use purge::{purge, QueuePurged};
pub use settle::update;
pub use withdraw::{give_up_member_in_tx, withdraw_in_tx, Withdrawn, OPTED_OUT, RECIPIENT_DELETED};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::events::{EventPoster, Posted};
use super::listener::Listener;
use super::matrix::MatrixListener;
use super::msgid::MessageKey;
use super::outbox::{Outbox, OutboxListener};
use super::sink::EmailSink;
use super::sms::SmsGateway;
use super::webhook::WebhookListener;
use super::xmpp::XmppListener;
use crate::config::{
    Config, EmailConfig, EventsConfig, MatrixConfig, SmsConfig, SmsTransport, WebhookConfig,
    XmppConfig, XmppTransport,
};
use crate::db::states::RowState;
use crate::db::DbConn;
use crate::error::Result;
use crate::parties::Channel;
use round::deliver_rounds;

/// Rows claimed per round, at most. Small rounds keep the last round's
/// sending, which nothing overlaps, short: `bench smtp` measured rounds of
/// 1,000 then 2,000 faster than 1,000, 4,000, then 10,000 on both back ends
/// (`docs/benchmarks.md`).
const ROUND: i64 = 2_000;

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
    /// Notification rows held until their recipient's quiet hours end.
    pub held: usize,
    /// Requests that reached a final status.
    pub finished: usize,
    /// Queue rows (one request to one recipient on one channel) settled,
    /// per (channel, outcome): `sent`, `retry` (will be tried again) or
    /// `failed` (given up). Rows, where `written` counts messages: the
    /// metrics count deliveries per person, however they were batched.
    pub rows: BTreeMap<(Channel, RowState), usize>,
    /// The operators' events posted, retrying and given up.
    pub events: Posted,
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
        )?;
        if self.held > 0 {
            write!(f, "; held {} (quiet hours)", self.held)?;
        }
        let e = &self.events;
        if e.sent + e.retrying + e.failed > 0 {
            write!(
                f,
                "; events posted {}, retrying {}, given up {}",
                e.sent, e.retrying, e.failed
            )?;
        }
        Ok(())
    }
}

/// How the queue reaches people: a listener per channel (`email`, `xmpp`,
/// `sms`, `webhook` and its presets, `matrix`), the outbox paths, and the
/// retry policy.
pub struct Delivery {
    pub outbox: Outbox,
    from: lettre::message::Mailbox,
    host: String,
    retry_base: chrono::Duration,
    retry_cap: chrono::Duration,
    /// How long a round's claim on its rows lasts (the lease length).
    pub claim_for: chrono::Duration,
    /// DKIM signing of every email, when `[email]` configures it.
    pub(crate) dkim: Option<crate::dkim::Signer>,
    /// One listener per channel, by key: email's transport, for XMPP and
    /// SMS the outbox until `with_xmpp` / `with_sms` put a server there,
    /// and the webhook listener (writing to the outbox until
    /// `with_webhook` says `http`).
    pub listeners: Vec<Box<dyn Listener>>,
    /// Where the sent journals are (`[queue] journal_dir`; `None`: the
    /// default for the database the first pass runs on), and this
    /// process's own, opened by its first pass and kept for its life.
    journal_dir: Option<PathBuf>,
    journal: Option<Arc<journal::Journal>>,
    /// Where the release before kept them (`[email] dir`/`journal`), read
    /// while it exists.
    legacy_journal_dir: PathBuf,
    /// The poster of `[events]`, when it names a URL; and the per-message
    /// events settling records (those it posts).
    events: Option<EventPoster>,
    wants: digestd_engine::events::Wants,
    /// The process's runtime, on which the SMTP and XMPP listeners run
    /// their sessions (blocking on it from the pass's threads).
    rt: tokio::runtime::Handle,
}

impl Delivery {
    /// The queue's delivery as the settings say: `[email]`, the sent
    /// journal's directory (made and checked now: one that cannot be made
    /// is bad input), the `[sms]` and `[xmpp]` listeners, on the runtime
    /// `rt`. What `serve` and `queue run` use.
    pub fn from_config(cfg: &Config, rt: &tokio::runtime::Handle) -> Result<Delivery> {
        Delivery::new(&cfg.email, rt)?
            .with_journal_dir(&cfg.journal_dir())?
            .with_events(&cfg.events)?
            .with_listeners(cfg)
    }

    /// The queue's delivery through `[email]`'s transport, XMPP and SMS to
    /// the outbox; its sent journal in the default directory for the
    /// database it runs on (`Config::journal_dir`) unless
    /// [`Delivery::with_journal_dir`] names one. The SMTP and XMPP
    /// listeners run on `rt`, the process's one runtime; a pass blocks on
    /// it, so it runs on a blocking thread, never in an async task.
    pub fn new(cfg: &EmailConfig, rt: &tokio::runtime::Handle) -> Result<Delivery> {
        let from = crate::config::parse_from(&cfg.from)?;
        Delivery {
            host: from.email.domain().to_string(),
            from,
            outbox: Outbox::new(cfg)?,
            retry_base: chrono::Duration::seconds(cfg.retry_base_seconds as i64),
            retry_cap: chrono::Duration::seconds(cfg.retry_cap_seconds as i64),
            claim_for: chrono::Duration::seconds(600),
            journal_dir: None,
            journal: None,
            legacy_journal_dir: PathBuf::from(&cfg.dir).join("journal"),
            dkim: crate::dkim::load(cfg)?,
            events: None,
            wants: digestd_engine::events::Wants::default(),
            rt: rt.clone(),
            listeners: vec![
                Box::new(EmailSink::new(cfg, rt)?),
                Box::new(OutboxListener::new(Channel::Xmpp, cfg)?),
                Box::new(OutboxListener::new(Channel::Sms, cfg)?),
                Box::new(WebhookListener::new(&WebhookConfig::default(), cfg, rt)?),
                Box::new(MatrixListener::new(&MatrixConfig::default(), cfg, rt)?),
            ],
        }
        .with_webhook(&WebhookConfig::default(), cfg)
    }

    /// Keeps the sent journal in `dir`, which is made and checked now
    /// ([`journal::check_dir`]).
    pub fn with_journal_dir(mut self, dir: &Path) -> Result<Delivery> {
        journal::check_dir(dir)?;
        self.journal_dir = Some(dir.to_path_buf());
        Ok(self)
    }

    /// Posts the operators' events of `cfg` after each pass that holds the
    /// queue lease, and records the per-message ones it posts.
    pub fn with_events(mut self, cfg: &EventsConfig) -> Result<Delivery> {
        self.events = EventPoster::new(cfg, &self.rt)?;
        self.wants = digestd_engine::events::Wants::of(cfg);
        Ok(self)
    }

    /// How outcomes are settled: the backoff and the events recorded.
    fn settle_policy(&self) -> settle::Policy {
        settle::Policy {
            retry_base: self.retry_base,
            retry_cap: self.retry_cap,
            wants: self.wants,
        }
    }

    /// Adds (or replaces) the listener for its key.
    pub fn with_listener(mut self, l: Box<dyn Listener>) -> Delivery {
        self.listeners.retain(|x| x.key() != l.key());
        self.listeners.push(l);
        self
    }

    /// Adds the SMS gateway when `[sms] transport` is `http`.
    pub fn with_sms(self, cfg: &SmsConfig) -> Result<Delivery> {
        Ok(if cfg.transport == SmsTransport::Http {
            let l = SmsGateway::new(cfg, &self.rt)?;
            self.with_listener(Box::new(l))
        } else {
            self
        })
    }

    /// Adds the XMPP listener when `[xmpp] transport` is `xmpp`.
    pub fn with_xmpp(self, cfg: &XmppConfig) -> Result<Delivery> {
        Ok(if cfg.transport == XmppTransport::Xmpp {
            let l = XmppListener::new(cfg, self.rt.clone())?;
            self.with_listener(Box::new(l))
        } else {
            self
        })
    }

    /// The webhook listener of `[webhook]`, and its presets' (their `dir`
    /// transport writes under `[email] dir`).
    pub fn with_webhook(self, cfg: &WebhookConfig, email: &EmailConfig) -> Result<Delivery> {
        let rt = self.rt.clone();
        let mut d = self.with_listener(Box::new(WebhookListener::new(cfg, email, &rt)?));
        for ch in Channel::PRESETS {
            d = d.with_listener(Box::new(WebhookListener::on(ch, cfg, email, &rt)?));
        }
        Ok(d)
    }

    /// The Matrix listener of `[matrix]` (its `dir` transport writes
    /// under `[email] dir`).
    pub fn with_matrix(self, cfg: &MatrixConfig, email: &EmailConfig) -> Result<Delivery> {
        let l = MatrixListener::new(cfg, email, &self.rt)?;
        Ok(self.with_listener(Box::new(l)))
    }

    /// The listeners of `[sms]`, `[xmpp]`, `[webhook]` and `[matrix]`, as
    /// configured.
    pub(crate) fn with_listeners(self, cfg: &Config) -> Result<Delivery> {
        self.with_sms(&cfg.sms)?
            .with_xmpp(&cfg.xmpp)?
            .with_webhook(&cfg.webhook, &cfg.email)?
            .with_matrix(&cfg.matrix, &cfg.email)
    }

    /// The listener for `channel`.
    pub fn listener(&mut self, channel: Channel) -> &mut Box<dyn Listener> {
        self.listeners
            .iter_mut()
            .find(|l| l.key() == channel)
            .expect("Delivery::new gives every channel a listener")
    }

    /// Closes the listeners' sessions.
    pub fn shutdown(&mut self) {
        for l in &mut self.listeners {
            l.shutdown();
        }
    }

    /// This process's sent journal, opened on first use, for the database
    /// of `conn`, whose key is `key`.
    fn journal(&mut self, conn: &mut DbConn, key: &MessageKey) -> Result<Arc<journal::Journal>> {
        if let Some(j) = &self.journal {
            return Ok(j.clone());
        }
        let dir = match &self.journal_dir {
            Some(d) => d.clone(),
            None => default_journal_dir(conn)?,
        };
        let j = Arc::new(journal::Journal::open(
            &dir,
            &key.installation_tag(),
            Some(self.legacy_journal_dir.clone()),
        )?);
        self.journal = Some(j.clone());
        Ok(j)
    }

    /// The wait before the attempt after `attempts` failed ones:
    /// base × 2^(attempts − 1), at most the cap.
    pub fn backoff(&self, attempts: i32) -> chrono::Duration {
        backoff(self.retry_base, self.retry_cap, attempts)
    }
}

/// The journal directory [`Config::journal_dir`] gives by default, for the
/// database `conn` is open on: beside an SQLite file (as SQLite names it),
/// else [`crate::config::PG_JOURNAL_DIR`].
fn default_journal_dir(conn: &mut DbConn) -> Result<PathBuf> {
    Ok(match conn.sqlite_file()? {
        Some(file) => PathBuf::from(format!("{file}.journal")),
        None => PathBuf::from(crate::config::PG_JOURNAL_DIR),
    })
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
    for l in d.listeners.iter_mut() {
        l.pass_at(now);
    }
    // Rounds until nothing is left that is due now; a round settles every
    // row it claimed (delivered, retried later, or given up). The leader
    // expands pending requests a round at a time before claiming.
    deliver_rounds(conn, d, now, leader, &mut report)?;
    if leader {
        let t = std::time::Instant::now();
        let finished = update(conn, now)?;
        report.finished += finished;
        tracing::debug!(requests = finished, took = ?t.elapsed(), "queue update");
        if let Some(poster) = &d.events {
            report.events = poster.post_due(conn, now)?;
        }
    }
    Ok(report)
}

/// The `nt_job` row that guards queue passes, as the tick's guards ticks.
pub const QUEUE_JOB: &str = "queue";

/// One pass with the queue lease guarding the status update and the
/// expansion of requests over groups: the process holding it expands and
/// settles; on PostgreSQL the others expand requests to single parties
/// from the other end of the pending ones (`expand_unheld`); every process
/// delivers the rows it claims, so several share a burst's delivery
/// without sending a row twice.
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
