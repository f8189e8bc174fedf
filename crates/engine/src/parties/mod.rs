//! Parties: users and groups, nested membership (cycle-free), contact points
//! per channel, and recursive expansion of a party to its users.
//!
//! Owns `parties`, `users`, `group_prefs`, `memberships` and
//! `contact_points`; [`contacts`] holds the contact points' reads and
//! changes, [`prefs`] a user's preference changes, [`groups`] groups with
//! their preferences, [`code`] finding a user by subscriber code,
//! [`upsert`] a user put whole (the API's `PUT`), [`remove`] renames,
//! leaving a group and retiring a party, [`page`] users a page at a time,
//! [`webhook`] a webhook contact point's URL and signing secret,
//! [`matrix`] the direct room kept on a Matrix contact point,
//! [`channel`] the delivery channels.

mod channel;
mod code;
mod contacts;
mod groups;
mod matrix;
mod page;
mod prefs;
mod remove;
mod upsert;
mod webhook;

pub use channel::Channel;
pub use code::{
    code_of, find_by_code, find_by_retired_code, is_code_shaped, manage_url, rotate_code,
    rotate_code_of, user_by_email,
};
pub use contacts::{
    change_contact, contact_points, remove_contact, show_contacts, ContactChange, ContactPoint,
};
pub use groups::{
    apply_group_changes_in_tx, create_group_in_tx, create_group_with, get_group, list_groups,
    Group, NewGroup, ValidGroup, GROUP_DAILY_HOUR, GROUP_LOCALE, GROUP_TIMEZONE, GROUP_WEEK_START,
};
pub use matrix::{keep_matrix_rooms_in_tx, matrix_rooms};
pub use page::{page_users, UserFilter};
pub use prefs::{apply_user_changes_in_tx, UserChanges, ValidChanges};
pub use remove::{find_kind, remove_member, rename, retire_in_tx, tombstone_name, Retired};
pub use upsert::{check_put, insert_users_in_tx, put_user_in_tx, UserPut, ValidPut};
pub use webhook::{
    disable_gone_webhook_in_tx, new_webhook_secret, rotate_webhook_secret, set_preset, set_webhook,
    webhook_secret_bytes, webhook_secrets,
};

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use rand::RngCore;
use serde::Serialize;

use crate::db::schema::{contact_points, memberships, parties, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::validate;

/// What `user add` takes; every field is validated by [`create_user`].
#[derive(Debug, Clone, Default)]
pub struct NewUser {
    pub name: String,
    pub timezone: String,
    pub email: Option<String>,
    pub xmpp: Option<String>,
    pub phone: Option<String>,
    /// A Matrix user ID or room ID.
    pub matrix: Option<String>,
    /// `mon`..`sun`; default Monday.
    pub week_start: Option<String>,
    /// 0–23; default 8.
    pub daily_hour: Option<i64>,
    pub locale: Option<String>,
    /// `HH:MM-HH:MM`; none (or empty): no quiet hours.
    pub quiet_hours: Option<String>,
}

/// A user as listed by `user list --json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct User {
    pub id: PartyId,
    pub username: String,
    /// `tz`, as `user add --tz` and every input names it.
    #[serde(rename = "tz")]
    pub timezone: String,
    pub week_start: String,
    pub daily_hour: i32,
    pub locale: String,
    /// `HH:MM-HH:MM` in their zone, or empty: none.
    pub quiet_hours: String,
    pub email: Option<String>,
    pub xmpp: Option<String>,
    pub phone: Option<String>,
}

/// A 32-byte random subscriber code, hex encoded (Fossil's scheme), used in
/// manage/unsubscribe links so no password is needed.
pub(crate) fn new_subscriber_code() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    crate::text::hex(&bytes)
}

/// The party that sends digests whose changes come from no single actor
/// (created by the digests migration).
pub const SYSTEM_PARTY: &str = "digestd";

/// The system party's name (it sends digests with no single actor) is not
/// for people or groups.
fn not_reserved(name: String) -> Result<String> {
    if name.eq_ignore_ascii_case(SYSTEM_PARTY) {
        return Err(Error::invalid(format!(
            "the name {name:?} is reserved for digestd itself"
        )));
    }
    Ok(name)
}

/// Creates a user with its contact points. Validates everything first.
pub fn create_user(conn: &mut DbConn, now: DateTime<Utc>, new: &NewUser) -> Result<PartyId> {
    let name = not_reserved(validate::name("user", &new.name)?)?;
    let tz = validate::timezone(&new.timezone)?;
    let week_start = match &new.week_start {
        Some(d) => validate::weekday(d)?,
        None => 0,
    };
    let daily_hour = validate::hour(new.daily_hour.unwrap_or(8))?;
    let locale = validate::locale(new.locale.as_deref().unwrap_or("en-US"))?;
    let quiet = validate::quiet_hours_stored(validate::quiet_hours(
        new.quiet_hours.as_deref().unwrap_or(""),
    )?);
    let mut contacts = Vec::new();
    for (channel, addr) in [
        (Channel::Email, &new.email),
        (Channel::Xmpp, &new.xmpp),
        (Channel::Sms, &new.phone),
        (Channel::Matrix, &new.matrix),
    ] {
        if let Some(a) = addr {
            contacts.push((channel, channel.validate_address(a)?));
        }
    }
    let now = now.naive_utc();
    conn.write_tx(|c| {
        let id = insert_party(c, "user", &name, now)?;
        diesel::insert_into(users::table)
            .values((
                users::party_id.eq(id.0),
                users::timezone.eq(tz.name()),
                users::week_start.eq(i32::from(week_start)),
                users::daily_hour.eq(i32::from(daily_hour)),
                users::locale.eq(&locale),
                users::subscriber_code.eq(new_subscriber_code()),
                users::quiet_hours.eq(&quiet),
            ))
            .execute(c)?;
        for (channel, address) in &contacts {
            insert_contact(c, id, *channel, address, now)?;
        }
        Ok(id)
    })
}

/// Creates a group with the default preferences, optionally with its own
/// email address (used when a request to it is not expanded);
/// [`create_group_with`] takes preferences too.
pub fn create_group(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    name: &str,
    email: Option<&str>,
) -> Result<PartyId> {
    create_group_with(
        conn,
        now,
        &NewGroup {
            name: name.to_string(),
            email: email.map(str::to_string),
            ..Default::default()
        },
    )
}

/// The group named `name`, created in the caller's transaction when no
/// party has that name (`digestd group import`); a user of that name is
/// refused.
pub fn ensure_group_in_tx(
    c: &mut DbConn,
    now: chrono::NaiveDateTime,
    name: &str,
) -> Result<PartyId> {
    let name = not_reserved(validate::name("group", name)?)?;
    match find(c, &name) {
        Ok((id, kind)) if kind == "group" => Ok(id),
        Ok(_) => Err(Error::invalid(format!("{name:?} is a user, not a group"))),
        Err(Error::NotFound(_)) => {
            let id = insert_party(c, "group", &name, now)?;
            groups::insert_prefs(c, id, &ValidChanges::default())?;
            Ok(id)
        }
        Err(e) => Err(e),
    }
}

fn insert_party(
    c: &mut DbConn,
    kind: &str,
    name: &str,
    now: chrono::NaiveDateTime,
) -> Result<PartyId> {
    diesel::insert_into(parties::table)
        .values((
            parties::kind.eq(kind),
            parties::name.eq(name),
            parties::created_at.eq(now),
        ))
        .returning(parties::id)
        .get_result(c)
        .map(PartyId)
        .map_err(|e| match Error::from(e) {
            Error::Conflict(_) => {
                Error::conflict(format!("a user or group named {name:?} already exists"))
            }
            other => other,
        })
}

fn insert_contact(
    c: &mut DbConn,
    party: PartyId,
    channel: Channel,
    address: &str,
    now: chrono::NaiveDateTime,
) -> Result<()> {
    diesel::insert_into(contact_points::table)
        .values((
            contact_points::party_id.eq(party.0),
            contact_points::channel.eq(channel.as_str()),
            contact_points::address.eq(address),
            contact_points::created_at.eq(now),
        ))
        .execute(c)?;
    Ok(())
}

/// Looks a party up by name: `(id, kind)` where kind is `user` or `group`.
pub fn find(conn: &mut DbConn, name: &str) -> Result<(PartyId, String)> {
    let missing = || Error::not_found(format!("no user or group named {name:?}"));
    // No party has a name the validator refuses; one with a NUL in it would
    // be a storage error on PostgreSQL instead of "no such user".
    if validate::name("user or group", name).is_err() {
        return Err(missing());
    }
    parties::table
        .filter(parties::name.eq(name))
        .select((parties::id, parties::kind))
        .first::<(i64, String)>(conn)
        .optional()?
        .map(|(id, kind)| (PartyId(id), kind))
        .ok_or_else(missing)
}

/// Adds `member` (a user or a group) to `group`. Refuses a membership that
/// would make a group contain itself, directly or through other groups.
pub fn add_member(conn: &mut DbConn, group: &str, member: &str) -> Result<()> {
    conn.write_tx(|c| add_member_in_tx(c, group, member))
}

/// [`add_member`] inside the caller's transaction (`digestd group import`).
pub fn add_member_in_tx(c: &mut DbConn, group: &str, member: &str) -> Result<()> {
    {
        let (gid, kind) = find(c, group)?;
        if kind != "group" {
            return Err(Error::invalid(format!("{group:?} is a user, not a group")));
        }
        let (mid, _) = find(c, member)?;
        if mid == gid {
            return Err(Error::conflict(format!(
                "group {group:?} cannot contain itself"
            )));
        }
        // A cycle appears iff `group` is already reachable from `member`.
        if descendants(c, mid)?.contains(&gid) {
            return Err(Error::conflict(format!(
                "adding {member:?} to {group:?} would create a cycle ({group:?} is already inside {member:?})"
            )));
        }
        let already: i64 = memberships::table
            .filter(memberships::group_id.eq(gid.0))
            .filter(memberships::member_id.eq(mid.0))
            .count()
            .get_result(c)?;
        if already == 0 {
            diesel::insert_into(memberships::table)
                .values((
                    memberships::group_id.eq(gid.0),
                    memberships::member_id.eq(mid.0),
                ))
                .execute(c)?;
        }
        Ok(())
    }
}

/// Every party reachable from `root` through memberships (not `root`
/// itself unless a cycle leads back to it). Breadth-first, one query per
/// level, each party visited once, so stored cycles cannot loop forever.
fn descendants(conn: &mut DbConn, root: PartyId) -> Result<HashSet<PartyId>> {
    let mut seen = HashSet::new();
    let mut frontier = vec![root.0];
    while !frontier.is_empty() {
        let next: Vec<i64> = memberships::table
            .filter(memberships::group_id.eq_any(&frontier))
            .select(memberships::member_id)
            .load(conn)?;
        frontier = next
            .into_iter()
            .filter(|id| seen.insert(PartyId(*id)))
            .collect();
    }
    Ok(seen)
}

/// Every group `party` is inside, directly or through other groups (its
/// memberships walked upwards, breadth-first, each group once, so stored
/// cycles cannot loop forever): the groups whose digests reach it.
pub(crate) fn groups_of(conn: &mut DbConn, party: PartyId) -> Result<HashSet<PartyId>> {
    let mut seen = HashSet::new();
    let mut frontier = vec![party.0];
    while !frontier.is_empty() {
        let next: Vec<i64> = memberships::table
            .filter(memberships::member_id.eq_any(&frontier))
            .select(memberships::group_id)
            .load(conn)?;
        frontier = next
            .into_iter()
            .filter(|id| seen.insert(PartyId(*id)))
            .collect();
    }
    seen.remove(&party);
    Ok(seen)
}

/// Expands a party to its users: a user is itself; a group is every user
/// inside it, recursively, each once, ordered by name.
pub fn expand(conn: &mut DbConn, party: PartyId) -> Result<Vec<User>> {
    let mut ids: HashSet<PartyId> = descendants(conn, party)?;
    ids.insert(party);
    let ids: Vec<i64> = ids.into_iter().map(|p| p.0).collect();
    load_users(conn, Some(&ids))
}

/// All users, ordered by name.
pub fn list_users(conn: &mut DbConn) -> Result<Vec<User>> {
    load_users(conn, None)
}

/// Loads one user by id.
pub fn get_user(conn: &mut DbConn, id: PartyId) -> Result<User> {
    load_users(conn, Some(&[id.0]))?
        .pop()
        .ok_or_else(|| Error::not_found(format!("no user with id {id}")))
}

fn load_users(conn: &mut DbConn, only: Option<&[i64]>) -> Result<Vec<User>> {
    let mut q = users::table
        .inner_join(parties::table)
        .select(UserStored::as_select())
        .order(parties::name.asc())
        .into_boxed();
    if let Some(ids) = only {
        q = q.filter(parties::id.eq_any(ids));
    }
    let rows: Vec<UserStored> = q.load(conn)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut contacts: BTreeMap<(i64, String), String> = BTreeMap::new();
    for chunk in ids.chunks(10_000) {
        let cps: Vec<(i64, String, String)> = contact_points::table
            .filter(contact_points::party_id.eq_any(chunk))
            .select((
                contact_points::party_id,
                contact_points::channel,
                contact_points::address,
            ))
            .load(conn)?;
        for (p, ch, a) in cps {
            contacts.insert((p, ch), a);
        }
    }
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut get = |ch: Channel| contacts.remove(&(r.id, ch.as_str().to_string()));
            User {
                id: PartyId(r.id),
                email: get(Channel::Email),
                xmpp: get(Channel::Xmpp),
                phone: get(Channel::Sms),
                username: r.name,
                timezone: r.timezone,
                week_start: validate::weekday_name(r.week_start as u8).to_string(),
                daily_hour: r.daily_hour,
                locale: r.locale,
                quiet_hours: r.quiet_hours,
            }
        })
        .collect())
}

/// A `users` row with its party's id and name, as a [`User`] shows it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = users)]
struct UserStored {
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

/// A party's name.
pub fn name_of(conn: &mut DbConn, party: PartyId) -> Result<String> {
    parties::table
        .find(party.0)
        .select(parties::name)
        .first(conn)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("no party with id {party}")))
}

/// Party ids by name, for resolving many names at once (e.g. `record`).
pub fn ids_by_name(conn: &mut DbConn, names: &[&str]) -> Result<BTreeMap<String, PartyId>> {
    Ok(kinds_by_name(conn, names)?
        .into_iter()
        .map(|(n, (id, _))| (n, id))
        .collect())
}

/// [`ids_by_name`] with each party's kind (`user` or `group`).
pub fn kinds_by_name(
    conn: &mut DbConn,
    names: &[&str],
) -> Result<BTreeMap<String, (PartyId, String)>> {
    let mut out = BTreeMap::new();
    let names: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| validate::name("user or group", n).is_ok())
        .collect();
    for chunk in names.chunks(10_000) {
        let rows: Vec<(i64, String, String)> = parties::table
            .filter(parties::name.eq_any(chunk))
            .select((parties::id, parties::name, parties::kind))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(id, n, k)| (n, (PartyId(id), k))));
    }
    Ok(out)
}
