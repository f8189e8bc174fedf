//! A group's digest for each member: one request serves every member of
//! the group, and its links (so its bodies and its `unsubscribe_url`) hold
//! a hole where the member's subscriber code goes
//! ([`crate::digest::render::HOLE_CODE`]). A round reads the codes of the
//! members it sends such requests to, once ([`load_codes`]), and each
//! member's message is built from the request with their code filled in
//! ([`Round::req_for`]): their own manage and unsubscribe links and
//! `List-Unsubscribe`, batched messages included.

use std::borrow::Cow;
use std::collections::HashMap;

use diesel::prelude::*;

use super::round::{Req, Round, Row};
use crate::db::schema::users;
use crate::db::DbConn;
use crate::digest::render::{fill_code, has_code_hole};
use crate::error::Result;

impl Req {
    /// Whether this is a group's digest, whose links carry each member's
    /// own code ([`crate::digest::render::HOLE_CODE`]).
    fn per_member(&self) -> bool {
        self.unsubscribe_url.as_deref().is_some_and(has_code_hole)
    }

    /// This request as member `code` reads it: the code hole in its links
    /// (and so in its bodies) filled with theirs.
    fn for_member(&self, code: &str) -> Req {
        let f = |s: &Option<String>| s.as_deref().map(|t| fill_code(t, code));
        Req {
            message: fill_code(&self.message, code),
            message_html: f(&self.message_html),
            message_chat: f(&self.message_chat),
            message_sms: f(&self.message_sms),
            unsubscribe_url: f(&self.unsubscribe_url),
            manage_url: f(&self.manage_url),
            subject: self.subject.clone(),
            full_url: self.full_url.clone(),
            ..*self
        }
    }
}

impl Round {
    /// Row `r`'s request as its recipient reads it: a group's digest with
    /// the member's own links ([`Req::for_member`]), any other as stored.
    pub fn req_for(&self, r: &Row) -> Cow<'_, Req> {
        let q = &self.reqs[&r.request_id];
        if !q.per_member() {
            return Cow::Borrowed(q);
        }
        // A member with no code (deleted by hand since the expansion) gets
        // links that name no one, which the pages answer as a bad link.
        let code = self.codes.get(&r.party_to).map_or("", String::as_str);
        Cow::Owned(q.for_member(code))
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
