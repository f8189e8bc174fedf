//! One pass of the nt queue with the `dir` transport, the embedded default:
//! seed 000's `expand_requests`, `process_queue` and `update_requests` in
//! their simplest form, so digests are visible on disk before the SMTP,
//! XMPP and SMS listeners exist.
//!
//! - **expand**: a `pending` request becomes one `nt_queue` row per end user
//!   (every user inside a group, each once, when `expand_group`; else the
//!   party itself) and channel, holding the address it goes to (none when the
//!   party has no enabled address for that channel); the request moves to
//!   `sending`.
//! - **process**: each due row is written to the outbox and marked
//!   successful; a row without an address is given up with that reason.
//! - **update**: a `sending` request with no open row is `sent` (all
//!   delivered), `partial_failure` or `failed`, with its fulfill date.
//!
//! Files are named after (request, party) and written to a temporary name,
//! then renamed: a pass killed between writing and marking the row rewrites
//! the same file with the same bytes, never a second copy.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use lettre::message::Mailbox;

use super::message::{self, Email};
use crate::config::EmailConfig;
use crate::db::schema::{contact_points, nt_queue, nt_requests, parties};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::parties::{expand as expand_party, Channel};

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Requests expanded into queue rows.
    pub expanded: usize,
    /// Messages written, per channel.
    pub written: BTreeMap<&'static str, usize>,
    /// Rows given up (no address for the channel).
    pub gave_up: usize,
    /// Requests that reached a final status.
    pub finished: usize,
}

/// The `dir` transport: where each channel's messages go.
pub struct Outbox {
    root: PathBuf,
    from: Mailbox,
    host: String,
}

impl Outbox {
    pub fn new(cfg: &EmailConfig) -> Result<Outbox> {
        let from = message::parse_from(&cfg.from)?;
        let host = from.email.domain().to_string();
        Ok(Outbox {
            root: PathBuf::from(&cfg.dir),
            from,
            host,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file a message to `party` of `request` on `channel` goes to.
    pub fn path(&self, request: i64, party: &str, channel: Channel) -> PathBuf {
        let name = format!("{request:08}-{party}");
        match channel {
            Channel::Email => self.root.join(format!("{name}.eml")),
            Channel::Xmpp => self.root.join("xmpp").join(format!("{name}.txt")),
            Channel::Sms => self.root.join("sms").join(format!("{name}.txt")),
        }
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let io = |e: std::io::Error| Error::Storage(format!("outbox {}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("tmp");
        fs::write(&tmp, bytes).map_err(io)?;
        fs::rename(&tmp, path).map_err(io)
    }
}

/// A request as the pass reads it.
#[derive(Queryable)]
struct Request {
    party_from: i64,
    subject: String,
    message: String,
    message_html: Option<String>,
    message_chat: Option<String>,
    message_sms: Option<String>,
    request_date: NaiveDateTime,
    unsubscribe_url: Option<String>,
}

/// One full pass at `now`: expand, process, update.
pub fn run_pass(conn: &mut DbConn, outbox: &Outbox, now: DateTime<Utc>) -> Result<PassReport> {
    let mut report = PassReport {
        expanded: expand(conn, now)?,
        ..PassReport::default()
    };
    process(conn, outbox, now, &mut report)?;
    report.finished = update(conn, now)?;
    Ok(report)
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

/// `expand_requests`: every pending request → queue rows, `sending`.
pub fn expand(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    let pending: Vec<(i64, i64, bool, String)> = nt_requests::table
        .filter(nt_requests::status.eq("pending"))
        .select((
            nt_requests::request_id,
            nt_requests::party_to,
            nt_requests::expand_group,
            nt_requests::channels,
        ))
        .order(nt_requests::request_id.asc())
        .load(conn)?;
    let n = pending.len();
    for (id, to, expand_group, channels) in pending {
        conn.write_tx(|c| {
            let targets: Vec<i64> = if expand_group {
                expand_party(c, crate::ids::PartyId(to))?
                    .into_iter()
                    .map(|u| u.id.0)
                    .collect()
            } else {
                vec![to]
            };
            for party in targets {
                let addrs = addresses(c, party)?;
                for ch in channels.split(',').filter(|s| !s.is_empty()) {
                    let ch = Channel::parse(ch)?;
                    diesel::insert_into(nt_queue::table)
                        .values((
                            nt_queue::request_id.eq(id),
                            nt_queue::party_to.eq(party),
                            nt_queue::channel.eq(ch.as_str()),
                            nt_queue::address.eq(addrs.get(ch.as_str())),
                            nt_queue::next_attempt_at.eq(now.naive_utc()),
                        ))
                        .execute(c)?;
                }
            }
            // Only a request still pending moves: a second pass racing this
            // one would fail the insert above on the primary key and roll back.
            diesel::update(nt_requests::table.find(id))
                .filter(nt_requests::status.eq("pending"))
                .set(nt_requests::status.eq("sending"))
                .execute(c)?;
            Ok(())
        })?;
    }
    Ok(n)
}

type Row = (i64, i64, String, Option<String>, String);

/// `process_queue` with the `dir` transport.
fn process(
    conn: &mut DbConn,
    outbox: &Outbox,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<()> {
    let rows: Vec<Row> = nt_queue::table
        .inner_join(nt_requests::table)
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_requests::status.eq("sending"))
        .filter(nt_queue::is_successful.eq(false))
        .filter(nt_queue::gave_up.eq(false))
        .filter(nt_queue::next_attempt_at.le(now.naive_utc()))
        .select((
            nt_queue::request_id,
            nt_queue::party_to,
            nt_queue::channel,
            nt_queue::address,
            parties::name,
        ))
        .order((nt_queue::request_id.asc(), nt_queue::party_to.asc()))
        .load(conn)?;
    let mut requests: HashMap<i64, Request> = HashMap::new();
    let mut names: HashMap<i64, String> = HashMap::new();
    for (id, party, channel, address, party_name) in rows {
        let ch = Channel::parse(&channel)?;
        let key = nt_queue::table.find((id, party, channel.as_str()));
        let Some(address) = address else {
            diesel::update(key)
                .set((
                    nt_queue::gave_up.eq(true),
                    nt_queue::smtp_reply_message.eq(format!("no {channel} address")),
                    nt_queue::last_attempt_at.eq(now.naive_utc()),
                ))
                .execute(conn)?;
            report.gave_up += 1;
            continue;
        };
        let r = match requests.entry(id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                nt_requests::table
                    .find(id)
                    .select((
                        nt_requests::party_from,
                        nt_requests::subject,
                        nt_requests::message,
                        nt_requests::message_html,
                        nt_requests::message_chat,
                        nt_requests::message_sms,
                        nt_requests::request_date,
                        nt_requests::unsubscribe_url,
                    ))
                    .first::<Request>(conn)?,
            ),
        };
        let from_name = match names.get(&r.party_from) {
            Some(n) => n.clone(),
            None => {
                let n: String = parties::table
                    .find(r.party_from)
                    .select(parties::name)
                    .first(conn)?;
                names.insert(r.party_from, n.clone());
                n
            }
        };
        let bytes = match ch {
            Channel::Email => {
                let message_id = format!("nt.{id}.{party}@{}", outbox.host);
                message::build(&Email {
                    from: &outbox.from,
                    from_name: (from_name != crate::digest::post::SYSTEM_PARTY)
                        .then_some(from_name.as_str()),
                    to_name: &party_name,
                    to_address: &address,
                    subject: &r.subject,
                    text: &r.message,
                    html: r.message_html.as_deref(),
                    date: r.request_date.and_utc(),
                    message_id: &message_id,
                    unsubscribe: r.unsubscribe_url.as_deref(),
                })?
            }
            Channel::Xmpp => {
                let body = r.message_chat.as_deref().unwrap_or(&r.message);
                format!("To: {address}\nType: chat\n\n{body}").into_bytes()
            }
            Channel::Sms => {
                let body = r.message_sms.as_deref().unwrap_or(&r.subject);
                format!("To: {address}\n\n{body}\n").into_bytes()
            }
        };
        outbox.write(&outbox.path(id, &party_name, ch), &bytes)?;
        diesel::update(key)
            .set((
                nt_queue::is_successful.eq(true),
                nt_queue::last_attempt_at.eq(now.naive_utc()),
            ))
            .execute(conn)?;
        *report.written.entry(ch.as_str()).or_default() += 1;
    }
    Ok(())
}

/// `update_requests`: a sending request with no open row gets its final
/// status and fulfill date. Returns how many did.
pub fn update(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    let sending: Vec<i64> = nt_requests::table
        .filter(nt_requests::status.eq("sending"))
        .select(nt_requests::request_id)
        .load(conn)?;
    let mut finished = 0;
    for id in sending {
        let rows: Vec<(bool, bool)> = nt_queue::table
            .filter(nt_queue::request_id.eq(id))
            .select((nt_queue::is_successful, nt_queue::gave_up))
            .load(conn)?;
        if rows.iter().any(|(ok, gave_up)| !ok && !gave_up) {
            continue;
        }
        let ok = rows.iter().filter(|r| r.0).count();
        let status = match ok {
            n if n == rows.len() && n > 0 => "sent",
            0 => "failed",
            _ => "partial_failure",
        };
        diesel::update(nt_requests::table.find(id))
            .filter(nt_requests::status.eq("sending"))
            .set((
                nt_requests::status.eq(status),
                nt_requests::fulfill_date.eq(now.naive_utc()),
            ))
            .execute(conn)?;
        finished += 1;
    }
    Ok(finished)
}

/// The `nt_job` row that guards queue passes, as the tick's guards ticks.
pub const QUEUE_JOB: &str = "queue";

/// One pass under the queue lease: `None` when another process holds it.
pub fn run_queue(
    conn: &mut DbConn,
    outbox: &Outbox,
    now: DateTime<Utc>,
    owner: &str,
    lease_for: chrono::Duration,
) -> Result<Option<PassReport>> {
    use crate::schedule::lease;
    if !lease::acquire(conn, QUEUE_JOB, owner, now, lease_for)? {
        return Ok(None);
    }
    let result = run_pass(conn, outbox, now);
    lease::release(conn, QUEUE_JOB, owner, now)?;
    result.map(Some)
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
            "expanded {} request(s); wrote {}; gave up {}; finished {} request(s)",
            self.expanded,
            if written.is_empty() {
                "nothing".to_string()
            } else {
                written.join(", ")
            },
            self.gave_up,
            self.finished
        )
    }
}

/// Messages delivered, per (recipient name, channel).
pub fn delivered(conn: &mut DbConn) -> Result<BTreeMap<(String, String), i64>> {
    let rows: Vec<(String, String)> = nt_queue::table
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::is_successful.eq(true))
        .select((parties::name, nt_queue::channel))
        .load(conn)?;
    let mut out = BTreeMap::new();
    for k in rows {
        *out.entry(k).or_default() += 1;
    }
    Ok(out)
}
