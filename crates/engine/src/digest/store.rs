//! Writing a chunk's digests: each an `nt_requests` row (kind `digest`,
//! status `pending`) and its `nt_messages` row, and the shared renderings
//! (`nt_bodies`) they point at, in the tick's transaction.
//!
//! A batch of posts goes in a few statements: request ids are reserved
//! first (one query), then the requests and their messages are inserted
//! with those ids in bulk ([`crate::db::insert_rows!`]: a binary `COPY`
//! each on PostgreSQL; on SQLite multi-row `INSERT`s with bound values):
//! the requests owning their values, so that the statements that take
//! them can be kept prepared (as `schedule::claim` writes runs), the
//! messages, whose bodies are most of the bytes, borrowed, through
//! statements prepared per batch. A post per round trip was most of what a
//! tick spent on PostgreSQL.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::render::Rendered;
use crate::db::schema::{nt_bodies, nt_messages, nt_requests};
use crate::db::states::RequestStatus;
use crate::db::{DbConn, Stamp};
use crate::error::{Error, Result};
use crate::ids::{PartyId, RequestId, SubscriptionId};

/// A shared rendering a post points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyRef {
    /// Written already, in this transaction.
    Stored(i64),
    /// The batch's new rendering at this index, not written yet: it is
    /// written ([`write_bodies`]) and becomes `Stored` before any post
    /// naming it is.
    New(usize),
}

/// What a post stores as its bodies.
pub(super) enum Bodies {
    /// Rendered for its recipient alone (only what its channels read).
    Own(Rendered),
    /// A shared rendering with holes, the recipient's links that fill
    /// them, and the recipient's own SMS text and webhook document.
    Shared {
        body: BodyRef,
        sms: Option<String>,
        webhook: Option<String>,
        manage_url: String,
        full_url: String,
    },
}

/// A digest ready to post.
pub(super) struct Post {
    pub party_to: PartyId,
    pub expand_group: bool,
    pub party_from: PartyId,
    pub subject: String,
    pub channels: String,
    pub request_date: NaiveDateTime,
    pub max_retries: i32,
    pub subscription: SubscriptionId,
    pub period: String,
    pub unsubscribe_url: Option<String>,
    /// Only the renderings the request's channels read.
    pub bodies: Bodies,
}

#[derive(Insertable)]
#[diesel(table_name = nt_requests, treat_none_as_default_value = false)]
struct NewRequest<'a> {
    request_id: i64,
    party_to: i64,
    expand_group: bool,
    party_from: i64,
    subject: &'a str,
    channels: &'a str,
    request_date: NaiveDateTime,
    status: &'static str,
    max_retries: i32,
    kind: &'static str,
    subscription_id: Option<i64>,
    period: Option<&'a str>,
    unsubscribe_url: Option<&'a str>,
}

/// Rows per multi-row `INSERT` where the back end takes them (SQLite;
/// messages: 10 parameters a row, renderings 5): well under SQLite's
/// 32,766 parameters.
const PER_INSERT: usize = 500;

/// Rows per kept multi-row `INSERT` of requests where the back end takes
/// them (SQLite; 13 parameters a row).
const KEPT_REQUESTS: usize = 64;

/// A request as a kept statement binds it: owned, since a kept
/// statement's id is a type and cannot borrow (the messages, whose
/// bodies are most of the bytes, are bound borrowed instead, below).
#[derive(Insertable)]
#[diesel(table_name = nt_requests, treat_none_as_default_value = false)]
struct OwnedRequest {
    request_id: i64,
    party_to: i64,
    expand_group: bool,
    party_from: i64,
    subject: String,
    channels: String,
    request_date: Stamp,
    status: &'static str,
    max_retries: i32,
    kind: &'static str,
    subscription_id: Option<i64>,
    period: Option<String>,
    unsubscribe_url: Option<String>,
}

impl From<&NewRequest<'_>> for OwnedRequest {
    fn from(r: &NewRequest<'_>) -> OwnedRequest {
        OwnedRequest {
            request_id: r.request_id,
            party_to: r.party_to,
            expand_group: r.expand_group,
            party_from: r.party_from,
            subject: r.subject.to_string(),
            channels: r.channels.to_string(),
            request_date: Stamp(r.request_date),
            status: r.status,
            max_retries: r.max_retries,
            kind: r.kind,
            subscription_id: r.subscription_id,
            period: r.period.map(str::to_string),
            unsubscribe_url: r.unsubscribe_url.map(str::to_string),
        }
    }
}

#[derive(Insertable)]
#[diesel(table_name = nt_messages, treat_none_as_default_value = false)]
struct NewMessage<'a> {
    request_id: i64,
    message: &'a str,
    message_html: Option<&'a str>,
    message_chat: Option<&'a str>,
    message_sms: Option<&'a str>,
    body_id: Option<i64>,
    manage_url: Option<&'a str>,
    full_url: Option<&'a str>,
    message_webhook: Option<&'a str>,
    calendar: Option<&'a str>,
}

#[derive(Insertable)]
#[diesel(table_name = nt_bodies, treat_none_as_default_value = false)]
struct NewBody<'a> {
    body_id: i64,
    message: &'a str,
    message_html: Option<&'a str>,
    message_chat: Option<&'a str>,
    calendar: Option<&'a str>,
}

/// Writes the shared renderings `bodies` in one statement, returning their
/// ids (taken first, as the posts' are).
pub(super) fn write_bodies(c: &mut DbConn, bodies: &[Rendered]) -> Result<Vec<i64>> {
    let ids = crate::db::reserve_ids(c, "nt_bodies", "body_id", bodies.len())?;
    if ids.is_empty() {
        return Ok(ids);
    }
    let rows: Vec<NewBody> = bodies
        .iter()
        .zip(&ids)
        .map(|(r, id)| NewBody {
            body_id: *id,
            message: r.text.as_deref().unwrap_or(""),
            message_html: r.html.as_deref(),
            message_chat: r.chat.as_deref(),
            calendar: r.calendar.as_deref(),
        })
        .collect();
    // Bound, as the messages are (below).
    crate::db::insert_rows!(c, nt_bodies::table, &rows, per_insert = PER_INSERT);
    Ok(ids)
}

/// Posts `posts`, whose shared renderings are written already
/// ([`write_bodies`]); returns each post's request id, in order.
pub(super) fn write(c: &mut DbConn, posts: &[Post]) -> Result<Vec<RequestId>> {
    let t0 = std::time::Instant::now();
    let ids = crate::db::reserve_ids(c, "nt_requests", "request_id", posts.len())?;
    let reserved = t0.elapsed();
    let requests: Vec<NewRequest> = posts
        .iter()
        .zip(&ids)
        .map(|(p, id)| NewRequest {
            request_id: *id,
            party_to: p.party_to.0,
            expand_group: p.expand_group,
            party_from: p.party_from.0,
            subject: &p.subject,
            channels: &p.channels,
            request_date: p.request_date,
            status: RequestStatus::Pending.as_str(),
            max_retries: p.max_retries,
            kind: "digest",
            subscription_id: Some(p.subscription.0),
            period: Some(&p.period),
            unsubscribe_url: p.unsubscribe_url.as_deref(),
        })
        .collect();
    let messages: Vec<NewMessage> = posts
        .iter()
        .zip(&ids)
        .map(|(p, id)| {
            Ok(match &p.bodies {
                Bodies::Own(r) => NewMessage {
                    request_id: *id,
                    message: r.text.as_deref().unwrap_or(""),
                    message_html: r.html.as_deref(),
                    message_chat: r.chat.as_deref(),
                    message_sms: r.sms.as_deref(),
                    body_id: None,
                    manage_url: None,
                    full_url: None,
                    message_webhook: r.webhook.as_deref(),
                    calendar: r.calendar.as_deref(),
                },
                Bodies::Shared {
                    body,
                    sms,
                    webhook,
                    manage_url,
                    full_url,
                } => NewMessage {
                    request_id: *id,
                    message: "",
                    message_html: None,
                    message_chat: None,
                    message_sms: sms.as_deref(),
                    body_id: Some(match body {
                        BodyRef::Stored(b) => *b,
                        BodyRef::New(_) => {
                            return Err(Error::Storage(
                                "a digest names a shared rendering not written yet".into(),
                            ))
                        }
                    }),
                    manage_url: Some(manage_url),
                    full_url: Some(full_url),
                    message_webhook: webhook.as_deref(),
                    // The shared rendering holds it.
                    calendar: None,
                },
            })
        })
        .collect::<Result<_>>()?;
    crate::db::insert_rows!(
        c,
        nt_requests::table,
        &requests,
        kept = KEPT_REQUESTS,
        owned = OwnedRequest::from
    );
    // The messages bound, not in JSON: their bodies are most of the bytes,
    // and `json_extract` copied each of them again.
    crate::db::insert_rows!(c, nt_messages::table, &messages, per_insert = PER_INSERT);
    tracing::debug!(?reserved, written = ?t0.elapsed(), posts = posts.len(), "digest posts");
    Ok(ids.into_iter().map(RequestId).collect())
}
