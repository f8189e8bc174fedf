//! A request as its recipient reads it: a digest's shared rendering with
//! the request's own links in its holes, as each message is built.
//!
//! And a group's digest for each member: one request serves every member of
//! the group, and its links (so its bodies and its `unsubscribe_url`) hold
//! a hole where the member's subscriber code goes
//! ([`crate::digest::render::HOLE_CODE`]). A round reads the codes of the
//! members it sends such requests to, once ([`load_codes`]), and each
//! member's message is built from the request with their code filled in
//! ([`Round::req_for`]): their own manage and unsubscribe links and
//! `List-Unsubscribe`, batched messages included.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use diesel::prelude::*;

use super::round::{Req, Round, Row};
use crate::db::schema::users;
use crate::db::DbConn;
use crate::digest::render::webhook::fill_code_json;
use crate::digest::render::{fill, fill_code, has_code_hole, Links};
use crate::error::Result;

impl Req {
    /// Whether this is a group's digest, whose links carry each member's
    /// own code ([`crate::digest::render::HOLE_CODE`]).
    fn per_member(&self) -> bool {
        self.unsubscribe_url.as_deref().is_some_and(has_code_hole)
    }

    /// This request as its recipient reads it: a shared rendering's holes
    /// filled with the request's links ([`fill`]), then, for a group's
    /// digest, the code hole in its links and bodies with member `code`'s.
    fn as_read(&self, code: Option<&str>) -> Req {
        let links = Links {
            manage_url: self.manage_url.as_deref().unwrap_or(""),
            unsubscribe_url: self.unsubscribe_url.as_deref(),
            full_url: self.full_url.as_deref().unwrap_or(""),
        };
        let coded = |s: &str| code.map_or_else(|| s.to_string(), |c| fill_code(s, c));
        let body = |s: &str, html: bool| -> Arc<str> {
            if self.shared {
                let filled = fill(s, &links, html);
                match code {
                    Some(c) => fill_code(&filled, c).into(),
                    None => filled.into(),
                }
            } else {
                coded(s).into()
            }
        };
        let url = |s: &Option<String>| s.as_deref().map(coded);
        Req {
            id: self.id,
            subject: self.subject.clone(),
            message: body(&self.message, false),
            message_html: self.message_html.as_deref().map(|t| body(t, true)),
            message_chat: self.message_chat.as_deref().map(|t| body(t, false)),
            message_sms: url(&self.message_sms),
            request_date: self.request_date,
            unsubscribe_url: url(&self.unsubscribe_url),
            shared: false,
            manage_url: url(&self.manage_url),
            full_url: self.full_url.clone(),
            message_webhook: self
                .message_webhook
                .as_deref()
                .map(|t| code.map_or_else(|| t.to_string(), |c| fill_code_json(t, c))),
            subscription_id: self.subscription_id,
            calendar: self.calendar.clone(),
        }
    }
}

impl Round {
    /// Row `r`'s request as its recipient reads it ([`Req::as_read`]): its
    /// links filled in, with the member's own for a group's digest; a
    /// request with no holes as stored.
    pub(crate) fn req_for(&self, r: &Row) -> Cow<'_, Req> {
        let q = &self.reqs[&r.request_id];
        // A member with no code (deleted by hand since the expansion) gets
        // links that name no one, which the pages answer as a bad link.
        let code = q
            .per_member()
            .then(|| self.codes.get(&r.party_to).map_or("", String::as_str));
        if !q.shared && code.is_none() {
            return Cow::Borrowed(q);
        }
        Cow::Owned(q.as_read(code))
    }
}

/// The subscriber codes of the recipients of `rows` whose request is a
/// group's digest ([`Req::per_member`]): what fills its links for each
/// member. Nothing is read for a round with none.
pub(super) fn load_codes(
    conn: &mut DbConn,
    rows: &[Row],
    reqs: &HashMap<i64, Req>,
) -> Result<HashMap<i64, String>> {
    let mut members: Vec<i64> = rows
        .iter()
        .filter(|r| r.expand_group && reqs.get(&r.request_id).is_some_and(Req::per_member))
        .map(|r| r.party_to)
        .collect();
    members.sort_unstable();
    members.dedup();
    let mut codes = HashMap::with_capacity(members.len());
    for chunk in members.chunks(10_000) {
        let found: Vec<(i64, String)> = users::table
            .filter(users::party_id.eq_any(chunk))
            .select((users::party_id, users::subscriber_code))
            .load(conn)?;
        codes.extend(found);
    }
    Ok(codes)
}
