//! Renaming parties, taking a member out of a group, and retiring a party
//! (the parties' half of `digestd user delete` / `group delete`; the
//! whole operation, with its subscriptions and pending requests, is
//! `remove`'s).
//!
//! A retired party keeps its `parties` row as a tombstone, renamed
//! `NAME (deleted #ID)`: requests already sent (`nt_requests.party_to`,
//! `party_from`) and the modification log (`actor_id`) still point at it,
//! so history reads who it was, while the name is free again and no look-up
//! by name ([`find`], [`ids_by_name`]) can reach it (a space is not allowed
//! in a name).

use diesel::prelude::*;

use super::{find, not_reserved};
use crate::db::schema::{contact_points, group_prefs, memberships, parties, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::validate;

/// Looks `name` up and requires it to be a `kind` (`user` or `group`).
pub fn find_kind(conn: &mut DbConn, kind: &str, name: &str) -> Result<PartyId> {
    let (id, k) = find(conn, name).map_err(|e| match e {
        Error::NotFound(_) => Error::not_found(format!("no {kind} named {name:?}")),
        other => other,
    })?;
    if k != kind {
        return Err(Error::invalid(format!("{name:?} is a {k}, not a {kind}")));
    }
    Ok(id)
}

/// Renames the user or group (`kind`) `old` to `new`. Its id, and so its
/// subscriptions, memberships and history, stay.
pub fn rename(conn: &mut DbConn, kind: &str, old: &str, new: &str) -> Result<PartyId> {
    let new = not_reserved(validate::name(kind, new)?)?;
    not_reserved(old.to_string())?;
    conn.write_tx(|c| {
        let id = find_kind(c, kind, old)?;
        if old == new {
            return Ok(id);
        }
        let taken: i64 = parties::table
            .filter(parties::name.eq(&new))
            .count()
            .get_result(c)?;
        if taken > 0 {
            return Err(Error::conflict(format!(
                "a user or group named {new:?} already exists"
            )));
        }
        diesel::update(parties::table.find(id.0))
            .set(parties::name.eq(&new))
            .execute(c)?;
        Ok(id)
    })
}

/// Takes `member` out of `group` (not out of the groups inside it).
pub fn remove_member(conn: &mut DbConn, group: &str, member: &str) -> Result<()> {
    conn.write_tx(|c| {
        let gid = find_kind(c, "group", group)?;
        let (mid, _) = find(c, member)?;
        let n = diesel::delete(
            memberships::table
                .filter(memberships::group_id.eq(gid.0))
                .filter(memberships::member_id.eq(mid.0)),
        )
        .execute(c)?;
        if n == 0 {
            return Err(Error::not_found(format!("{member:?} is not in {group:?}")));
        }
        Ok(())
    })
}

/// What retiring a party removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retired {
    /// Memberships: the party's in other groups, and (a group's) its members'.
    pub memberships: usize,
    pub contact_points: usize,
}

/// The name a retired party keeps (see the module doc).
pub fn tombstone_name(name: &str, id: PartyId) -> String {
    format!("{name} (deleted #{id})")
}

/// Retires a party inside the caller's transaction: it leaves every group
/// (and a group loses its members), its contact points go (their bounce
/// records with them), a user's or group's preferences go, and the row
/// stays as a tombstone. Its subscriptions must have been ended first.
pub fn retire_in_tx(c: &mut DbConn, id: PartyId) -> Result<Retired> {
    let name: String = parties::table.find(id.0).select(parties::name).first(c)?;
    let name = not_reserved(name)?;
    let memberships = diesel::delete(
        memberships::table.filter(
            memberships::group_id
                .eq(id.0)
                .or(memberships::member_id.eq(id.0)),
        ),
    )
    .execute(c)?;
    let contact_points =
        diesel::delete(contact_points::table.filter(contact_points::party_id.eq(id.0)))
            .execute(c)?;
    diesel::delete(users::table.find(id.0)).execute(c)?;
    diesel::delete(group_prefs::table.find(id.0)).execute(c)?;
    diesel::update(parties::table.find(id.0))
        .set(parties::name.eq(tombstone_name(&name, id)))
        .execute(c)?;
    Ok(Retired {
        memberships,
        contact_points,
    })
}
