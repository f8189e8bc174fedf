//! A user put whole: created when the name is free, else its preferences
//! and addresses changed (what `PUT /api/v1/users/{name}` and its bulk form
//! do). Validated with no storage touched ([`UserPut::validate`]), then
//! written in the caller's transaction ([`put_user_in_tx`]);
//! `manage::put_users` reschedules a changed user in the same one.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::prefs::{apply_changes_by_id, UserChanges, ValidChanges};
use super::{find, insert_contact, insert_party, new_subscriber_code, not_reserved, Channel};
use crate::db::schema::{contact_points, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::validate;

/// A user's preferences and addresses, each optional (a new user needs a
/// timezone). An address given replaces the stored one when it differs
/// (the new one unverified, enabled); one not given stays.
#[derive(Debug, Clone, Default)]
pub struct UserPut {
    pub name: String,
    pub changes: UserChanges,
    pub email: Option<String>,
    pub xmpp: Option<String>,
    pub phone: Option<String>,
    /// A Matrix user ID (`@alice:example.org`) or room ID.
    pub matrix: Option<String>,
}

/// [`UserPut`], validated.
#[derive(Debug, Clone)]
pub struct ValidPut {
    name: String,
    changes: ValidChanges,
    contacts: Vec<(Channel, String)>,
}

impl UserPut {
    /// Checks every field; touches no storage.
    pub fn validate(&self) -> Result<ValidPut> {
        let name = not_reserved(validate::name("user", &self.name)?)?;
        let changes = self.changes.validate()?;
        let mut contacts = Vec::new();
        for (channel, addr) in [
            (Channel::Email, &self.email),
            (Channel::Xmpp, &self.xmpp),
            (Channel::Sms, &self.phone),
            (Channel::Matrix, &self.matrix),
        ] {
            if let Some(a) = addr {
                contacts.push((channel, channel.validate_address(a)?));
            }
        }
        Ok(ValidPut {
            name,
            changes,
            contacts,
        })
    }
}

impl ValidPut {
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The preferences it sets.
    pub fn changes(&self) -> &ValidChanges {
        &self.changes
    }
}

/// Whether [`put_user_in_tx`] would create or update `p`, or why it cannot
/// (the name is a group's; a new user without a timezone). Reads only.
pub fn check_put(c: &mut DbConn, p: &ValidPut) -> Result<Option<PartyId>> {
    match find(c, &p.name) {
        Ok((id, kind)) if kind == "user" => Ok(Some(id)),
        Ok(_) => Err(Error::conflict(format!(
            "{:?} is a group, not a user",
            p.name
        ))),
        Err(Error::NotFound(_)) if p.changes.timezone_name().is_none() => {
            Err(Error::invalid(format!(
                "a new user needs a timezone (tz): {:?} does not exist",
                p.name
            )))
        }
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates or updates one user in the caller's transaction; its id and
/// whether it was created.
pub fn put_user_in_tx(c: &mut DbConn, now: NaiveDateTime, p: &ValidPut) -> Result<(PartyId, bool)> {
    match check_put(c, p)? {
        None => {
            let id = insert_party(c, "user", &p.name, now)?;
            let ch = &p.changes;
            diesel::insert_into(users::table)
                .values((
                    users::party_id.eq(id.0),
                    users::timezone.eq(ch.timezone_name().expect("checked")),
                    users::week_start.eq(ch.week_start_or(0)),
                    users::daily_hour.eq(ch.daily_hour_or(8)),
                    users::locale.eq(ch.locale_or("en-US")),
                    users::subscriber_code.eq(new_subscriber_code()),
                    users::quiet_hours.eq(ch.quiet_hours_or("")),
                ))
                .execute(c)?;
            for (channel, address) in &p.contacts {
                insert_contact(c, id, *channel, address, now)?;
            }
            Ok((id, true))
        }
        Some(id) => {
            apply_changes_by_id(c, id, &p.changes)?;
            for (channel, address) in &p.contacts {
                set_address(c, id, *channel, address, now)?;
            }
            Ok((id, false))
        }
    }
}

/// Sets a party's address on `channel` unless it is already that one (so
/// putting the same user twice keeps an address verified); a new Matrix
/// address gets a new direct room, as `contact --set` gives it.
fn set_address(
    c: &mut DbConn,
    id: PartyId,
    channel: Channel,
    address: &str,
    now: NaiveDateTime,
) -> Result<()> {
    let mine = contact_points::table
        .filter(contact_points::party_id.eq(id.0))
        .filter(contact_points::channel.eq(channel.as_str()));
    let stored: Option<String> = mine.select(contact_points::address).first(c).optional()?;
    match stored {
        Some(s) if s == address => {}
        Some(_) => {
            diesel::update(mine)
                .set((
                    contact_points::address.eq(address),
                    contact_points::verified.eq(false),
                    contact_points::disabled.eq(false),
                    contact_points::bounce_count.eq(0),
                    contact_points::matrix_room.eq(None::<String>),
                ))
                .execute(c)?;
        }
        None => insert_contact(c, id, channel, address, now)?,
    }
    Ok(())
}

/// Creates many new users in the caller's transaction, in bulk
/// (`digestd user import`: [`crate::db::insert_returning_ids!`] for the
/// parties, [`crate::db::insert_rows!`] for their preferences and
/// addresses): every name must be free (the caller
/// checked with [`check_put`] or a bulk look-up) and every user must have a
/// timezone. Returns each name's new id.
pub fn insert_users_in_tx(
    c: &mut DbConn,
    now: NaiveDateTime,
    puts: &[&ValidPut],
) -> Result<std::collections::HashMap<String, PartyId>> {
    use crate::db::schema::parties;
    let party_rows: Vec<_> = puts
        .iter()
        .map(|p| {
            (
                parties::kind.eq("user"),
                parties::name.eq(p.name.as_str()),
                parties::created_at.eq(now),
            )
        })
        .collect();
    let ids = crate::db::insert_returning_ids!(
        c,
        parties::table,
        &party_rows,
        parties::id,
        parties::name => |i| puts[i].name.clone()
    )?;
    let ids: std::collections::HashMap<String, PartyId> = puts
        .iter()
        .zip(ids)
        .map(|(p, id)| (p.name.clone(), PartyId(id)))
        .collect();
    let codes: Vec<String> = puts.iter().map(|_| super::new_subscriber_code()).collect();
    let mut user_rows = Vec::with_capacity(puts.len());
    let mut contact_rows = Vec::new();
    for (p, code) in puts.iter().zip(&codes) {
        let id = ids[&p.name].0;
        let ch = &p.changes;
        let tz = ch.timezone_name().ok_or_else(|| {
            Error::invalid(format!("a new user needs a timezone (tz): {:?}", p.name))
        })?;
        user_rows.push(NewUser {
            party_id: id,
            timezone: tz,
            week_start: ch.week_start_or(0),
            daily_hour: ch.daily_hour_or(8),
            locale: ch.locale_or("en-US"),
            subscriber_code: code,
            quiet_hours: ch.quiet_hours_or(""),
        });
        for (channel, address) in &p.contacts {
            contact_rows.push(NewContact {
                party_id: id,
                channel: channel.as_str(),
                address,
                created_at: now,
            });
        }
    }
    crate::db::insert_rows!(c, users::table, &user_rows);
    crate::db::insert_rows!(c, contact_points::table, &contact_rows);
    Ok(ids)
}

/// A new user's preferences, as [`insert_users_in_tx`] writes them.
#[derive(Insertable)]
#[diesel(table_name = users, treat_none_as_default_value = false)]
struct NewUser<'a> {
    party_id: i64,
    timezone: &'a str,
    week_start: i32,
    daily_hour: i32,
    locale: &'a str,
    subscriber_code: &'a str,
    quiet_hours: &'a str,
}

/// A new user's address, as [`insert_users_in_tx`] writes it.
#[derive(Insertable)]
#[diesel(table_name = contact_points, treat_none_as_default_value = false)]
struct NewContact<'a> {
    party_id: i64,
    channel: &'static str,
    address: &'a str,
    created_at: NaiveDateTime,
}
