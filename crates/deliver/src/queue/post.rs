//! Posting, cancelling and reading requests; the one-off test alert.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use super::Delivery;
use crate::config::{
    EmailConfig, SmsConfig, SmsTransport, WebhookConfig, XmppConfig, XmppTransport,
};
use crate::db::schema::{nt_messages, nt_queue, nt_requests, parties};
use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::RequestId;
use crate::listener::{Listener, Outgoing};
use crate::message::{self, Email};
use crate::outbox::OutboxListener;
use crate::parties::Channel;
use crate::sink::Outcome;
use crate::validate;

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
    /// Sent at once, even to a recipient inside their quiet hours.
    pub urgent: bool,
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
    // Tabs, line breaks and direction marks may stay; what XML or a chat
    // client cannot carry (U+FFFE, U+FFFF, other noncharacters) may not.
    validate::carriable("message", &n.message)?;
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
                nt_requests::status.eq(RequestStatus::Pending.as_str()),
                nt_requests::max_retries.eq(max_retries as i32),
                nt_requests::urgent.eq(n.urgent),
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
        let status = status.map(|s| s.parse::<RequestStatus>()).transpose()?;
        match status {
            None => Err(Error::not_found(format!("no request {id}"))),
            Some(s) if s.is_open() => {
                diesel::update(nt_requests::table.find(id.0))
                    .set((
                        nt_requests::status.eq(RequestStatus::Cancelled.as_str()),
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
    pub status: RequestStatus,
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
    let rows: Vec<Recipient> = nt_queue::table
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::request_id.eq(id.0))
        .select(Recipient::as_select())
        .order((parties::name.asc(), nt_queue::channel.asc()))
        .load(conn)?;
    Ok(RequestView {
        id: id.0,
        status: status
            .parse()
            .map_err(|e: Error| Error::Storage(e.to_string()))?,
        kind,
        subject,
        recipients: rows
            .into_iter()
            .map(|r| RecipientView {
                party: r.party,
                // A URL's path is the receiver's credential: shown masked.
                address: r.address.map(|a| match Channel::parse(&r.channel) {
                    Ok(c) => c.shown(&a),
                    Err(_) => a,
                }),
                channel: r.channel,
                successful: r.is_successful,
                gave_up: r.gave_up,
                retry_count: r.retry_count,
                reply_code: r.smtp_reply_code,
                reply_message: r.smtp_reply_message,
            })
            .collect(),
    })
}

/// A request's queue row with its recipient's name, as
/// [`RecipientView`] shows it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = nt_queue)]
struct Recipient {
    #[diesel(select_expression = parties::name)]
    party: String,
    channel: String,
    address: Option<String>,
    is_successful: bool,
    gave_up: bool,
    retry_count: i32,
    smtp_reply_code: Option<i32>,
    smtp_reply_message: Option<String>,
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

/// `digestd test-alert --channel sms`: one SMS to `to`, now, through the
/// gateway (`[sms] transport = "http"`), or written under the outbox's
/// `sms/` as the queue's `dir` listener writes it (the default).
pub fn test_alert_sms(
    cfg: &SmsConfig,
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
    to: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let to = validate::phone(to)?;
    match cfg.transport {
        SmsTransport::Dir => push_alert(
            &mut OutboxListener::new(Channel::Sms, email)?,
            &to,
            email,
            now,
        ),
        SmsTransport::Http => {
            let mut gw = crate::sms::SmsGateway::new(cfg, rt)?;
            push_alert(&mut gw, &to, email, now)
        }
    }
}

/// `digestd test-alert --channel xmpp`: one chat message to `to`, now,
/// through the configured XMPP account (not the queue), or written under
/// the outbox's `xmpp/` with `[xmpp] transport = "dir"` (the default).
pub fn test_alert_xmpp(
    cfg: &XmppConfig,
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
    to: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let to = validate::jid(to)?;
    match cfg.transport {
        XmppTransport::Dir => push_alert(
            &mut OutboxListener::new(Channel::Xmpp, email)?,
            &to,
            email,
            now,
        ),
        XmppTransport::Xmpp => {
            let mut l = crate::xmpp::XmppListener::new(cfg, rt.clone())?;
            let report = push_alert(&mut l, &to, email, now);
            l.shutdown();
            report
        }
    }
}

/// `digestd test-alert --channel webhook --to NAME` (or a preset's
/// channel): one notification, now, to the contact point of the user or
/// group `NAME` on `channel`, posted with `[webhook] transport = "http"`
/// or written under the outbox's `<channel>/` (the default). A webhook's
/// is signed with its secret; the report shows the URL masked.
pub fn test_alert_webhook(
    conn: &mut DbConn,
    channel: Channel,
    cfg: &WebhookConfig,
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
    party: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let (id, _) = crate::parties::find(conn, party)?;
    let missing = || Error::not_found(format!("{party} has no {} address", channel.as_str()));
    let (url, signing) = if channel == Channel::Webhook {
        let secrets = crate::parties::webhook_secrets(conn, &[id.0])?;
        let ((_, url), secret) = secrets.into_iter().next().ok_or_else(missing)?;
        let id = format!("msg_test_{}", now.timestamp_micros());
        (url, Some(crate::listener::Signing { id, secret }))
    } else {
        let p = crate::parties::contact_points(conn, id)?
            .into_iter()
            .find(|p| p.channel == channel.as_str())
            .ok_or_else(missing)?;
        (p.address, None)
    };
    let mut l = crate::webhook::WebhookListener::on(channel, cfg, email, rt)?;
    l.pass_at(now);
    let doc = crate::webhook::body::notification(
        0,
        "digestd test alert",
        &format!("digestd test alert, {}", now.format("%Y-%m-%d %H:%M UTC")),
        now.naive_utc(),
    );
    let file = std::path::Path::new(&email.dir)
        .join(channel.as_str())
        .join(format!("test-alert-{}.http", now.timestamp_micros()));
    let mut m = Outgoing::text(&url, &doc.to_string(), file);
    m.signing = signing;
    report(&channel.shown(&url), Outcome::from(l.send_raw(&m)))
}

/// `digestd test-alert --channel matrix --to NAME`: one notification, now,
/// to `NAME`'s Matrix contact point ([`crate::matrix::test_alert`]).
pub fn test_alert_matrix(
    conn: &mut DbConn,
    cfg: &crate::config::MatrixConfig,
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
    party: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let (to, outcome) = crate::matrix::test_alert(conn, cfg, email, rt, party, now)?;
    report(&to, outcome)
}

/// Sends the alert's text; a `dir` listener writes it to
/// `<[email] dir>/<channel>/test-alert-<µs>.txt`.
fn push_alert(
    l: &mut dyn Listener,
    to: &str,
    email: &EmailConfig,
    now: DateTime<Utc>,
) -> Result<String> {
    let body = format!("digestd test alert, {}", now.format("%Y-%m-%d %H:%M UTC"));
    let file = std::path::Path::new(&email.dir)
        .join(l.key().as_str())
        .join(format!("test-alert-{}.txt", now.timestamp_micros()));
    let outcome = Outcome::from(l.send_raw(&Outgoing::text(to, &body, file)));
    report(to, outcome)
}

/// A test alert's outcome as the line to print, or the error.
fn report(to: &str, outcome: Outcome) -> Result<String> {
    let reply = format!(
        "{}{}",
        outcome.code().map_or(String::new(), |c| format!("{c} ")),
        outcome.text()
    );
    // A refusal the settings or the address must fix (5xx: a bad
    // password, an unknown recipient) is the caller's (exit 2); anything
    // else is the server's for now (exit 1). Neither is a storage error.
    let refused = matches!(outcome, Outcome::Permanent { .. })
        || outcome.code().is_some_and(|c| (500..600).contains(&c));
    match outcome {
        Outcome::Sent { .. } => Ok(format!("sent to {to}: {reply}")),
        _ if refused => Err(Error::invalid(format!(
            "test alert to {to} refused: {reply}"
        ))),
        _ => Err(Error::Remote(format!("test alert to {to} failed: {reply}"))),
    }
}

/// `digestd test-alert`: one message to `to`, now, through the configured
/// email transport (not the queue); the outcome as a line.
pub fn test_alert(
    cfg: &EmailConfig,
    rt: &tokio::runtime::Handle,
    to: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let to = validate::email(to)?;
    let mut d = Delivery::new(cfg, rt)?;
    let text = format!(
        "This is a test message from digestd, sent {} through the {:?} transport.\n",
        now.format("%a, %d %b %Y %H:%M:%S UTC"),
        cfg.transport.as_str()
    );
    let bytes = message::build(&Email {
        from: &d.from,
        from_name: None,
        // No display name: the address alone (as a name, lettre encoded it).
        to_name: "",
        to_address: &to,
        subject: "digestd test alert",
        text: &text,
        html: Some(&message::text_to_html(&text)),
        date: now,
        message_id: &format!("test.{}@{}", now.timestamp_micros(), d.host),
        unsubscribe: None,
        thread: None,
        calendar: None,
        dkim: d.dkim.as_deref(),
    })?;
    let out = Outgoing {
        envelope_from: d.from.email.to_string(),
        to: to.clone(),
        bytes,
        file: d
            .outbox
            .root()
            .join(format!("test-alert-{}.eml", now.timestamp_micros())),
        signing: None,
        matrix: None,
    };
    let outcome = Outcome::from(d.listener(Channel::Email).send_raw(&out));
    d.shutdown();
    report(&to, outcome)
}
