//! Finding a user by their subscriber code, the capability in every
//! manage and unsubscribe link (`/s/{code}`).

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
