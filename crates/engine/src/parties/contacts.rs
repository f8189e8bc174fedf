//! Contact points: one address of a party on one channel, with its
//! verified, disabled and bounce state, and what `digestd contact` changes.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use super::{find, insert_contact, Channel};
use crate::db::schema::contact_points;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;

/// A contact point: one address of a party on one channel.
#[derive(Debug, Clone, Serialize, PartialEq, Queryable, Selectable)]
#[diesel(table_name = contact_points)]
pub struct ContactPoint {
    pub id: i64,
    pub party_id: i64,
    pub channel: String,
    pub address: String,
    pub verified: bool,
    pub disabled: bool,
    pub bounce_count: i32,
}

impl ContactPoint {
    /// The contact point as pages and the API show it: a URL channel's
    /// address (the receiver's credential is in its path) masked.
    pub fn shown(mut self) -> ContactPoint {
        if let Ok(ch) = super::Channel::parse(&self.channel) {
            self.address = ch.shown(&self.address);
        }
        self
    }
}

/// The contact points of a party.
pub fn contact_points(conn: &mut DbConn, party: PartyId) -> Result<Vec<ContactPoint>> {
    Ok(contact_points::table
        .filter(contact_points::party_id.eq(party.0))
        .select(ContactPoint::as_select())
        .order(contact_points::channel.asc())
        .load(conn)?)
}

/// The contact points of the party named `party`, by channel; only the one
/// on `channel` when given, which must exist (`digestd contact NAME`).
pub fn show_contacts(
    conn: &mut DbConn,
    party: &str,
    channel: Option<Channel>,
) -> Result<Vec<ContactPoint>> {
    let (id, _) = find(conn, party)?;
    let mut points = contact_points(conn, id)?;
    if let Some(ch) = channel {
        points.retain(|p| p.channel == ch.as_str());
        if points.is_empty() {
            return Err(Error::not_found(format!(
                "{party} has no {} address",
                ch.as_str()
            )));
        }
    }
    Ok(points)
}

impl std::fmt::Display for ContactPoint {
    /// `email ana@example.org (verified, enabled, 0 bounces)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ({}, {}, {} bounces)",
            self.channel,
            Channel::parse(&self.channel)
                .map(|c| c.shown(&self.address))
                .unwrap_or_else(|_| self.address.clone()),
            if self.verified {
                "verified"
            } else {
                "not verified"
            },
            if self.disabled { "disabled" } else { "enabled" },
            self.bounce_count
        )
    }
}

/// What `digestd contact` does to one contact point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactChange {
    /// A new address (validated for its channel): not verified, enabled,
    /// its bounce count reset. Added when the party has none there yet.
    Set(String),
    /// The address was confirmed by its owner.
    Verify,
    /// No more messages to it: the queue gives its rows up.
    Disable,
    /// Messages again; the bounce count starts over.
    Enable,
}

/// Changes `party`'s contact point on `channel`; the point after the change.
pub fn change_contact(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    party: &str,
    channel: Channel,
    change: &ContactChange,
) -> Result<ContactPoint> {
    let change = match change {
        ContactChange::Set(_) if channel == Channel::Webhook => {
            return Err(Error::invalid(
                "a webhook URL is set with its secret: digestd contact NAME --channel webhook --set URL",
            ))
        }
        ContactChange::Set(_) if channel.is_preset() => {
            return Err(Error::invalid(format!(
                "a {0} URL is checked against [webhook]'s policy: digestd contact NAME --channel {0} --set URL",
                channel.as_str()
            )))
        }
        ContactChange::Set(a) => ContactChange::Set(channel.validate_address(a)?),
        other => other.clone(),
    };
    let (id, _) = find(conn, party)?;
    conn.write_tx(|c| {
        let mine = contact_points::table
            .filter(contact_points::party_id.eq(id.0))
            .filter(contact_points::channel.eq(channel.as_str()));
        let n = match &change {
            // A new address, or a person back (who may have left the
            // room): a Matrix contact point gets a new direct room.
            ContactChange::Set(a) => diesel::update(mine)
                .set((
                    contact_points::address.eq(a),
                    contact_points::verified.eq(false),
                    contact_points::disabled.eq(false),
                    contact_points::bounce_count.eq(0),
                    contact_points::matrix_room.eq(None::<String>),
                ))
                .execute(c)?,
            ContactChange::Verify => diesel::update(mine)
                .set(contact_points::verified.eq(true))
                .execute(c)?,
            ContactChange::Disable => diesel::update(mine)
                .set(contact_points::disabled.eq(true))
                .execute(c)?,
            ContactChange::Enable => diesel::update(mine)
                .set((
                    contact_points::disabled.eq(false),
                    contact_points::bounce_count.eq(0),
                    contact_points::matrix_room.eq(None::<String>),
                ))
                .execute(c)?,
        };
        match (&change, n) {
            (ContactChange::Set(a), 0) => insert_contact(c, id, channel, a, now.naive_utc())?,
            (_, 0) => {
                return Err(Error::not_found(format!(
                    "{party} has no {} address",
                    channel.as_str()
                )))
            }
            _ => {}
        }
        Ok(())
    })?;
    contact_points(conn, id)?
        .into_iter()
        .find(|p| p.channel == channel.as_str())
        .ok_or_else(|| Error::not_found("contact point vanished"))
}

/// Removes `party`'s contact point on `channel` (a webhook's secret and a
/// Matrix contact point's room go with it); the point as it was. Queued
/// rows for it are given up when they come to be sent, as for a disabled
/// one.
pub fn remove_contact(conn: &mut DbConn, party: &str, channel: Channel) -> Result<ContactPoint> {
    let (id, _) = find(conn, party)?;
    let missing = || Error::not_found(format!("{party} has no {} address", channel.as_str()));
    conn.write_tx(|c| {
        let point = contact_points(c, id)?
            .into_iter()
            .find(|p| p.channel == channel.as_str())
            .ok_or_else(missing)?;
        diesel::delete(contact_points::table.find(point.id)).execute(c)?;
        Ok(point)
    })
}
