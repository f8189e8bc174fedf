//! Groups and their preferences (`group_prefs`): the zone a group's
//! subscriptions are scheduled in, the first day of its weeks, the default
//! hour of its daily and weekly digests and the locale they are written
//! in — the same fields, validated the same way ([`UserChanges`]), as a
//! user's.
//!
//! Every live group has one `group_prefs` row: written when the group is
//! created ([`create_group_in_tx`], [`super::ensure_group_in_tx`]),
//! backfilled with the defaults for the groups that existed before the
//! table, deleted when the group is retired. Readers that meet no row
//! (none should) use the defaults, which are what groups had before they
//! had preferences: UTC, weeks from Monday, 08:00, `en-GB` (24-hour).
//! `manage::update_group` changes them and reschedules the group's
//! subscriptions in one transaction.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::Serialize;

use super::prefs::{UserChanges, ValidChanges};
use super::{find, insert_contact, insert_party, not_reserved, Channel};
use crate::db::schema::{contact_points, group_prefs, parties};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::validate;

/// A group's zone when it has none of its own.
pub const GROUP_TIMEZONE: &str = "UTC";
/// A group's first day of week when it has none (0 = Monday).
pub const GROUP_WEEK_START: u8 = 0;
/// A group's daily hour when it has none.
pub const GROUP_DAILY_HOUR: u8 = 8;
/// A group's locale when it has none: 24-hour times.
pub const GROUP_LOCALE: &str = "en-GB";

/// What `group add` takes; validated by [`NewGroup::validate`].
#[derive(Debug, Clone, Default)]
pub struct NewGroup {
    pub name: String,
    /// The group's own address (used when a request to it is not expanded).
    pub email: Option<String>,
    /// Its preferences; what is not given takes the group defaults.
    pub prefs: UserChanges,
}

/// [`NewGroup`], validated.
#[derive(Debug, Clone)]
pub struct ValidGroup {
    name: String,
    email: Option<String>,
    prefs: ValidChanges,
}

impl NewGroup {
    /// Checks every field; touches no storage.
    pub fn validate(&self) -> Result<ValidGroup> {
        Ok(ValidGroup {
            name: not_reserved(validate::name("group", &self.name)?)?,
            email: self.email.as_deref().map(validate::email).transpose()?,
            prefs: self.prefs.validate()?,
        })
    }
}

impl ValidGroup {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn prefs(&self) -> &ValidChanges {
        &self.prefs
    }
}

/// A group as `group list` / `group show` print it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Group {
    pub id: PartyId,
    pub name: String,
    /// `tz`, as `group add --tz` and every input names it.
    #[serde(rename = "tz")]
    pub timezone: String,
    pub week_start: String,
    pub daily_hour: i32,
    pub locale: String,
    /// `HH:MM-HH:MM` in its zone, or empty: none.
    pub quiet_hours: String,
    /// Its own address, if it has one.
    pub email: Option<String>,
    /// How many users and groups are directly in it.
    pub members: i64,
}

/// Creates a group with its address and preferences.
pub fn create_group_with(
    conn: &mut DbConn,
    now: chrono::DateTime<chrono::Utc>,
    new: &NewGroup,
) -> Result<PartyId> {
    let valid = new.validate()?;
    conn.write_tx(|c| create_group_in_tx(c, now.naive_utc(), &valid))
}

/// Creates a validated group in the caller's transaction.
pub fn create_group_in_tx(c: &mut DbConn, now: NaiveDateTime, g: &ValidGroup) -> Result<PartyId> {
    let id = insert_party(c, "group", &g.name, now)?;
    insert_prefs(c, id, &g.prefs)?;
    if let Some(a) = &g.email {
        insert_contact(c, id, Channel::Email, a, now)?;
    }
    Ok(id)
}

/// The preferences row of a new group: what `ch` gives, else the defaults.
pub(super) fn insert_prefs(c: &mut DbConn, id: PartyId, ch: &ValidChanges) -> Result<()> {
    diesel::insert_into(group_prefs::table)
        .values((
            group_prefs::party_id.eq(id.0),
            group_prefs::timezone.eq(ch.timezone_name().unwrap_or(GROUP_TIMEZONE)),
            group_prefs::week_start.eq(ch.week_start_or(GROUP_WEEK_START)),
            group_prefs::daily_hour.eq(ch.daily_hour_or(GROUP_DAILY_HOUR)),
            group_prefs::locale.eq(ch.locale_or(GROUP_LOCALE)),
            group_prefs::quiet_hours.eq(ch.quiet_hours_or("")),
        ))
        .execute(c)?;
    Ok(())
}

/// Writes a group's new preferences inside the caller's transaction (what
/// is not given stays). `manage::update_group` is the whole operation: it
/// reschedules the group's subscriptions in the same transaction.
pub fn apply_group_changes_in_tx(c: &mut DbConn, name: &str, ch: &ValidChanges) -> Result<PartyId> {
    // The system party is a 'group' row with no preferences to change.
    not_reserved(name.to_string())?;
    let (id, kind) = find(c, name)?;
    if kind != "group" {
        return Err(Error::invalid(format!("{name:?} is a user, not a group")));
    }
    apply_changes_by_id(c, id, ch)?;
    Ok(id)
}

/// [`apply_group_changes_in_tx`] for a group already looked up.
pub(crate) fn apply_changes_by_id(c: &mut DbConn, id: PartyId, ch: &ValidChanges) -> Result<()> {
    let stored: Option<(String, i32, i32, String, String)> = group_prefs::table
        .find(id.0)
        .select((
            group_prefs::timezone,
            group_prefs::week_start,
            group_prefs::daily_hour,
            group_prefs::locale,
            group_prefs::quiet_hours,
        ))
        .first(c)
        .optional()?;
    let Some((tz, ws, dh, locale, quiet)) = stored else {
        // A group the backfill missed: its row, with the defaults.
        return insert_prefs(c, id, ch);
    };
    diesel::update(group_prefs::table.find(id.0))
        .set((
            group_prefs::timezone.eq(ch.timezone_name().unwrap_or(tz.as_str())),
            group_prefs::week_start.eq(ch.week_start_or(ws as u8)),
            group_prefs::daily_hour.eq(ch.daily_hour_or(dh as u8)),
            group_prefs::locale.eq(ch.locale_or(&locale)),
            group_prefs::quiet_hours.eq(ch.quiet_hours_or(&quiet)),
        ))
        .execute(c)?;
    Ok(())
}

/// Every group, by name (a deleted group's tombstone has no preferences
/// row, so it is not listed).
pub fn list_groups(conn: &mut DbConn) -> Result<Vec<Group>> {
    load_groups(conn, None)
}

/// The group named `name`.
pub fn get_group(conn: &mut DbConn, name: &str) -> Result<Group> {
    not_reserved(name.to_string())?;
    let id = super::find_kind(conn, "group", name)?;
    load_groups(conn, Some(id))?
        .pop()
        .ok_or_else(|| Error::not_found(format!("no group named {name:?}")))
}

fn load_groups(conn: &mut DbConn, only: Option<PartyId>) -> Result<Vec<Group>> {
    use crate::db::schema::memberships;
    let mut q = group_prefs::table
        .inner_join(parties::table)
        .filter(parties::kind.eq("group"))
        .select(GroupStored::as_select())
        .order(parties::name.asc())
        .into_boxed();
    if let Some(id) = only {
        q = q.filter(parties::id.eq(id.0));
    }
    let rows: Vec<GroupStored> = q.load(conn)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut emails: BTreeMap<i64, String> = BTreeMap::new();
    let mut members: BTreeMap<i64, i64> = BTreeMap::new();
    for chunk in ids.chunks(10_000) {
        let e: Vec<(i64, String)> = contact_points::table
            .filter(contact_points::party_id.eq_any(chunk))
            .filter(contact_points::channel.eq(Channel::Email.as_str()))
            .select((contact_points::party_id, contact_points::address))
            .load(conn)?;
        emails.extend(e);
        let m: Vec<(i64, i64)> = memberships::table
            .filter(memberships::group_id.eq_any(chunk))
            .group_by(memberships::group_id)
            .select((memberships::group_id, diesel::dsl::count_star()))
            .load(conn)?;
        members.extend(m);
    }
    Ok(rows
        .into_iter()
        .map(|r| Group {
            id: PartyId(r.id),
            name: r.name,
            timezone: r.timezone,
            week_start: validate::weekday_name(r.week_start as u8).to_string(),
            daily_hour: r.daily_hour,
            locale: r.locale,
            quiet_hours: r.quiet_hours,
            email: emails.remove(&r.id),
            members: members.get(&r.id).copied().unwrap_or(0),
        })
        .collect())
}

/// A `group_prefs` row with its party's id and name, as a [`Group`]
/// shows it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = group_prefs)]
struct GroupStored {
    #[diesel(select_expression = parties::id)]
    id: i64,
    #[diesel(select_expression = parties::name)]
    name: String,
    timezone: String,
    week_start: i32,
    daily_hour: i32,
    locale: String,
    quiet_hours: String,
}
