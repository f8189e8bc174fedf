//! `post_to_address`: one email to an address that is no party's yet — a
//! sign-up's verification message (the sign-up module, above this one);
//! `post_system_email_in`: the operator's daily report, the same way. It goes through the
//! same queue as every request (rounds, retries, the `dir` outbox), but is
//! written already expanded: the request `sending`, its one queue row
//! addressed, since expansion reads the address from a party's contact
//! points and there is no party. A subscriber may not exist before the
//! address is confirmed, so none is made for it.
//!
//! Such a message holds a capability (the sign-up's confirm link) that is
//! stored nowhere else in clear, so once its row is final — sent, or given
//! up — [`scrub_in`] replaces its stored bodies with a note: the link then
//! exists only in the mail that was sent.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::config::EmailConfig;
use crate::db::schema::{nt_messages, nt_queue, nt_requests};
use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::RequestId;
use crate::parties::Channel;
use crate::parties::SYSTEM_PARTY;
use crate::validate;

/// Posts `subject` / `message` from digestd to `address` by email.
///
/// The request is from and to the system party (`nt_requests` keys its
/// recipient to a party); its one queue row is to `to_key`, which stands
/// for the recipient where the queue rows need a party id: it must be
/// negative (no party has such an id) and unique to the address's message,
/// since a round sends every row of one (sender, recipient) pair as one
/// message: a sign-up passes minus its own id. The `To` header then
/// carries the bare address, with no name. `html`, when given, is the
/// message's HTML part (otherwise the text, escaped).
#[allow(clippy::too_many_arguments)]
pub fn post_to_address(
    conn: &mut DbConn,
    cfg: &EmailConfig,
    to_key: i64,
    address: &str,
    subject: &str,
    message: &str,
    html: Option<&str>,
    now: DateTime<Utc>,
) -> Result<RequestId> {
    if to_key >= 0 {
        return Err(Error::invalid("post_to_address: to_key must be negative"));
    }
    let max_retries = cfg.max_retries as i32;
    let body = Body {
        subject,
        message,
        html,
    };
    conn.write_tx(|c| post_in(c, to_key, address, &body, max_retries, now))
}

/// What [`scrub_in`] leaves of a message to an address once it is final.
pub const SCRUBBED: &str =
    "This message was sent to its address; its text is not kept, since it held a one-time link.";

/// Replaces the stored bodies of `requests` — those of them posted to an
/// address (their queue row's key is negative) — with [`SCRUBBED`], in
/// the caller's transaction. Called when their rows become final.
pub(super) fn scrub_in(c: &mut DbConn, requests: &[i64]) -> Result<usize> {
    if requests.is_empty() {
        return Ok(0);
    }
    let to_address = nt_queue::table
        .filter(nt_queue::request_id.eq_any(requests))
        .filter(nt_queue::party_to.lt(0))
        .select(nt_queue::request_id);
    Ok(
        diesel::update(nt_messages::table.filter(nt_messages::request_id.eq_any(to_address)))
            .set((
                nt_messages::message.eq(SCRUBBED),
                nt_messages::message_html.eq(None::<String>),
            ))
            .execute(c)?,
    )
}

/// A message's subject and bodies.
struct Body<'a> {
    subject: &'a str,
    message: &'a str,
    html: Option<&'a str>,
}

/// A system notification to one email address that belongs to no party:
/// the operator's daily report (`report`), inside the caller's
/// transaction (the report's day is recorded in the same one). Its queue
/// row is to the system party itself. Not a contact point of the system
/// party, so a bounce from `address` disables nobody.
pub fn post_system_email_in(
    c: &mut DbConn,
    address: &str,
    subject: &str,
    message: &str,
    max_retries: u32,
    now: DateTime<Utc>,
) -> Result<RequestId> {
    let (system, _) = crate::parties::find(c, SYSTEM_PARTY)?;
    let max_retries = max_retries.min(100) as i32;
    let body = Body {
        subject,
        message,
        html: None,
    };
    post_in(c, system.0, address, &body, max_retries, now)
}

/// The request from the system party, written already expanded
/// (`sending`) with its one queue row to `to_key` at `address`, in the
/// caller's transaction.
fn post_in(
    c: &mut DbConn,
    to_key: i64,
    address: &str,
    body: &Body,
    max_retries: i32,
    now: DateTime<Utc>,
) -> Result<RequestId> {
    let address = validate::email(address)?;
    let subject = validate::text("subject", body.subject)?;
    let (from, _) = crate::parties::find(c, SYSTEM_PARTY)?;
    let now = now.naive_utc();
    let id: i64 = diesel::insert_into(nt_requests::table)
        .values((
            // The request names a party (a key); its row, the address.
            nt_requests::party_to.eq(from.0),
            nt_requests::expand_group.eq(false),
            nt_requests::party_from.eq(from.0),
            nt_requests::subject.eq(&subject),
            nt_requests::channels.eq(Channel::Email.as_str()),
            nt_requests::request_date.eq(now),
            nt_requests::status.eq(RequestStatus::Sending.as_str()),
            nt_requests::max_retries.eq(max_retries),
        ))
        .returning(nt_requests::request_id)
        .get_result(c)?;
    diesel::insert_into(nt_messages::table)
        .values((
            nt_messages::request_id.eq(id),
            nt_messages::message.eq(body.message.replace("\r\n", "\n")),
            nt_messages::message_html.eq(body.html),
        ))
        .execute(c)?;
    diesel::insert_into(nt_queue::table)
        .values((
            nt_queue::request_id.eq(id),
            nt_queue::party_to.eq(to_key),
            nt_queue::channel.eq(Channel::Email.as_str()),
            nt_queue::address.eq(&address),
            nt_queue::next_attempt_at.eq(now),
        ))
        .execute(c)?;
    Ok(RequestId(id))
}
