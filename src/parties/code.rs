//! Finding a user by their subscriber code, the capability in every
//! manage and unsubscribe link (`/s/{code}`); and the user an email
//! address belongs to (sign-up).

use diesel::prelude::*;

use crate::db::schema::users;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::PartyId;

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
