//! Finding a user by their subscriber code, the capability in every
//! manage and unsubscribe link (`/s/{code}`); replacing it
//! ([`rotate_code`]); and the user an email address belongs to (sign-up).
//!
//! A replaced code is kept only as its SHA-256 in `retired_codes`
//! ([`find_by_retired_code`]): an unsubscribe link in mail sent before the
//! change still stops digests with RFC 8058's one-click POST, and opens
//! nothing else.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::db::schema::{retired_codes, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::text::hex;

/// Whether `code` has the shape [`super::new_subscriber_code`] makes (64
/// lowercase hex digits). Anything else names nobody and is not looked up.
pub fn is_code_shaped(code: &str) -> bool {
    code.len() == 64 && code.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The user whose subscriber code is `code`, if any, found through the
/// column's unique index. A malformed code is answered without a query, an
/// unknown one after the same single look-up: 256 random bits leave
/// nothing to learn from the index's timing.
pub fn find_by_code(conn: &mut DbConn, code: &str) -> Result<Option<PartyId>> {
    if !is_code_shaped(code) {
        return Ok(None);
    }
    let id: Option<i64> = users::table
        .filter(users::subscriber_code.eq(code))
        .select(users::party_id)
        .first(conn)
        .optional()?;
    Ok(id.map(PartyId))
}

/// User `party`'s subscriber code (`None`: not a user).
pub fn code_of(conn: &mut DbConn, party: PartyId) -> Result<Option<String>> {
    Ok(users::table
        .filter(users::party_id.eq(party.0))
        .select(users::subscriber_code)
        .first(conn)
        .optional()?)
}

/// The user with an email contact point at `address` (as validated), if
/// any: the sign-up adds to them rather than making a second user.
pub fn user_by_email(conn: &mut DbConn, address: &str) -> Result<Option<PartyId>> {
    use crate::db::schema::contact_points;
    let id: Option<i64> = contact_points::table
        .inner_join(users::table.on(users::party_id.eq(contact_points::party_id)))
        .filter(contact_points::channel.eq("email"))
        .filter(contact_points::address.eq(address))
        .select(contact_points::party_id)
        .order(contact_points::party_id.asc())
        .first(conn)
        .optional()?;
    Ok(id.map(PartyId))
}

fn code_hash(code: &str) -> String {
    hex(&Sha256::digest(code.as_bytes()))
}

/// Gives user `party` a new subscriber code and returns it: every page
/// link with the old one stops working, except the one-click unsubscribe
/// ([`find_by_retired_code`]). One transaction.
pub fn rotate_code(conn: &mut DbConn, now: DateTime<Utc>, party: PartyId) -> Result<String> {
    conn.write_tx(|c| {
        let old = code_of(c, party)?.ok_or_else(|| {
            Error::invalid(format!("party {party} is not a user: it has no code"))
        })?;
        let new = super::new_subscriber_code();
        // Of two rotations at once, one replaces the code it read; the
        // other finds it changed and is refused rather than retiring it twice.
        let changed = diesel::update(
            users::table
                .filter(users::party_id.eq(party.0))
                .filter(users::subscriber_code.eq(&old)),
        )
        .set(users::subscriber_code.eq(&new))
        .execute(c)?;
        if changed == 0 {
            return Err(Error::Conflict(
                "the code was replaced meanwhile; nothing more was changed".into(),
            ));
        }
        diesel::insert_into(retired_codes::table)
            .values((
                retired_codes::code_hash.eq(code_hash(&old)),
                retired_codes::party_id.eq(party.0),
                retired_codes::retired_at.eq(now.naive_utc()),
            ))
            .execute(c)?;
        Ok(new)
    })
}

/// The manage page of the person whose subscriber code is `code`, under
/// `base_url` (`[digest] base_url`).
pub fn manage_url(base_url: &str, code: &str) -> String {
    format!("{}/s/{code}", base_url.trim_end_matches('/'))
}

/// [`rotate_code`] for the user named `name` (a group, or nobody, is
/// refused).
pub fn rotate_code_of(conn: &mut DbConn, now: DateTime<Utc>, name: &str) -> Result<String> {
    let (party, kind) = super::find(conn, name)?;
    if kind != "user" {
        return Err(Error::invalid(format!(
            "{name:?} is a {kind}: only users have a subscriber code"
        )));
    }
    rotate_code(conn, now, party)
}

/// The user whose code `code` was before it was replaced, if any. For the
/// one-click unsubscribe only.
pub fn find_by_retired_code(conn: &mut DbConn, code: &str) -> Result<Option<PartyId>> {
    if !is_code_shaped(code) {
        return Ok(None);
    }
    let id: Option<i64> = retired_codes::table
        .filter(retired_codes::code_hash.eq(code_hash(code)))
        .select(retired_codes::party_id)
        .first(conn)
        .optional()?;
    Ok(id.map(PartyId))
}
