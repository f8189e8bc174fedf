//! A Matrix contact point's room: for a user ID, the direct room digestd
//! opened at the first delivery, kept in `contact_points.matrix_room` so
//! that later deliveries go to the same room; `NULL` until then (and for
//! a room ID, which is its own room). Setting or enabling the contact
//! point clears it (`contacts::change_contact`).

use std::collections::HashMap;

use diesel::prelude::*;

use super::Channel;
use crate::db::schema::contact_points;
use crate::db::DbConn;
use crate::error::Result;

/// The Matrix contact points of `parties`, enabled or not, by (party,
/// address), with the room kept for each: a queue row goes to the room of
/// the address it was expanded with.
pub fn matrix_rooms(
    conn: &mut DbConn,
    parties: &[i64],
) -> Result<HashMap<(i64, String), Option<String>>> {
    let mut out = HashMap::new();
    for chunk in parties.chunks(5_000) {
        let rows: Vec<(i64, String, Option<String>)> = contact_points::table
            .filter(contact_points::party_id.eq_any(chunk))
            .filter(contact_points::channel.eq(Channel::Matrix.as_str()))
            .select((
                contact_points::party_id,
                contact_points::address,
                contact_points::matrix_room,
            ))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(p, a, r)| ((p, a), r)));
    }
    Ok(out)
}

/// Keeps each (address, room) the Matrix listener opened on the Matrix
/// contact points at that address that have no room yet; in the caller's
/// transaction. A room is a direct room with the user the address names,
/// so every party that has that address may share it.
pub fn keep_matrix_rooms_in_tx(c: &mut DbConn, opened: &[(String, String)]) -> Result<usize> {
    let mut n = 0;
    for (address, room) in opened {
        n += diesel::update(
            contact_points::table
                .filter(contact_points::channel.eq(Channel::Matrix.as_str()))
                .filter(contact_points::address.eq(address))
                .filter(contact_points::matrix_room.is_null()),
        )
        .set(contact_points::matrix_room.eq(room))
        .execute(c)?;
    }
    Ok(n)
}
