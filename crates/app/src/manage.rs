//! Operations that span layers, above the layers they use: what a person
//! (through the command line, and soon the pages and the API) does to their
//! subscriptions and preferences, where the table's owner validates and
//! writes and the scheduler says when digests fall due, in one transaction.
//! A change of a party's quiet hours or zone makes the notifications held
//! for their quiet hours due at once, in the same transaction
//! ([`queue::release_held_in_tx`]): they follow the quiet hours the party
//! has now.

use chrono::{DateTime, Utc};

use std::collections::HashMap;

use crate::db::DbConn;
use crate::deliver::queue;
use crate::error::{Error, Result};
use crate::ids::{PartyId, SubscriptionId};
use crate::parties::{self, NewGroup, UserChanges, UserPut};
use crate::schedule::tick::{first_due, reschedule, reschedule_party, rule_for};
use crate::subscriptions::{self, Retime, SubscribeRequest, Subscribed};

/// Validates and stores a subscription (or merges it into the party's
/// subscription to the same digest), due first at its first period at or
/// after `now`.
pub fn subscribe(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    req: &SubscribeRequest,
) -> Result<Subscribed> {
    let prepared = subscriptions::prepare(conn, req)?;
    let t = prepared.timing();
    let rule = rule_for(t.frequency, t.hour, t.day, t.zone)?;
    subscriptions::store(conn, now, &prepared, first_due(&rule, now))
}

/// Resumes a paused subscription at `now`. No burst: its first digest is
/// its first period at or after `now`, one digest however many periods the
/// pause covered. Its modification window goes on from where the last
/// digest was cut in the log, so that digest holds what was waiting when
/// it was paused and what was recorded while it was (`docs/scheduling.md`).
pub fn resume(conn: &mut DbConn, id: SubscriptionId, now: DateTime<Utc>) -> Result<()> {
    conn.write_tx(|c| {
        if subscriptions::unpause_in_tx(c, now, id)? {
            reschedule(c, id, Some(now))?;
        }
        Ok(())
    })
}

/// Changes a user's preferences and reschedules their subscriptions in the
/// same transaction, so a new timezone neither loses nor doubles a period;
/// new quiet hours or a new zone release their held notifications.
pub fn update_user(conn: &mut DbConn, name: &str, ch: &UserChanges) -> Result<PartyId> {
    let valid = ch.validate()?;
    conn.write_tx(|c| {
        let id = parties::apply_user_changes_in_tx(c, name, &valid)?;
        reschedule_party(c, id)?;
        release_if(c, valid.moves_quiet_hours(), id)?;
        Ok(id)
    })
}

/// Releases the held notifications to `id` when `moved` (its quiet hours
/// or zone changed), in the caller's transaction.
fn release_if(c: &mut DbConn, moved: bool, id: PartyId) -> Result<()> {
    if moved {
        queue::release_held_in_tx(c, &[id])?;
    }
    Ok(())
}

/// Changes a group's preferences and reschedules its subscriptions in the
/// same transaction, as [`update_user`] does for a user.
pub fn update_group(conn: &mut DbConn, name: &str, ch: &UserChanges) -> Result<PartyId> {
    let valid = ch.validate()?;
    conn.write_tx(|c| {
        let id = parties::apply_group_changes_in_tx(c, name, &valid)?;
        reschedule_party(c, id)?;
        release_if(c, valid.moves_quiet_hours(), id)?;
        Ok(id)
    })
}

/// Creates a group, or changes an existing one's preferences
/// (`PUT /api/v1/groups/{name}`): a change reschedules its subscriptions
/// in the same transaction, as [`update_group`] does. An existing group's
/// address is left as it is (`contact` changes it). Returns the id and
/// whether it was created; a user of that name is a conflict.
pub fn put_group(conn: &mut DbConn, now: DateTime<Utc>, g: &NewGroup) -> Result<(PartyId, bool)> {
    let valid = g.validate()?;
    conn.write_tx(|c| match parties::find(c, valid.name()) {
        Ok((id, kind)) if kind == "group" => {
            parties::apply_group_changes_in_tx(c, valid.name(), valid.prefs())?;
            reschedule_party(c, id)?;
            release_if(c, valid.prefs().moves_quiet_hours(), id)?;
            Ok((id, false))
        }
        Ok(_) => Err(Error::conflict(format!(
            "{:?} is a user, not a group",
            valid.name()
        ))),
        Err(Error::NotFound(_)) => Ok((
            parties::create_group_in_tx(c, now.naive_utc(), &valid)?,
            true,
        )),
        Err(e) => Err(e),
    })
}

/// Creates or updates one user (`PUT /api/v1/users/{name}`): an update
/// reschedules their subscriptions in the same transaction, as
/// [`update_user`] does. Returns the id and whether it was created.
pub fn put_user(conn: &mut DbConn, now: DateTime<Utc>, p: &UserPut) -> Result<(PartyId, bool)> {
    match put_users(conn, now, std::slice::from_ref(p))? {
        Ok(done) => Ok(done[0]),
        Err(mut bad) => Err(bad.remove(0).1),
    }
}

/// What [`put_users`] did: each user's id and whether it was created, in
/// order; or, when nothing was written, each bad element (1-based) and why.
pub type Puts = std::result::Result<Vec<(PartyId, bool)>, Vec<(usize, Error)>>;

/// Creates or updates many users, all or nothing, in one transaction.
/// Every element is checked first (fields, then names against what is
/// stored); when any is bad, nothing is written and each bad one is
/// returned with its 1-based position.
pub fn put_users(conn: &mut DbConn, now: DateTime<Utc>, puts: &[UserPut]) -> Result<Puts> {
    let mut bad = Vec::new();
    let mut valid = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, p) in puts.iter().enumerate() {
        match p.validate() {
            Ok(v) => {
                if let Some(first) = seen.insert(v.name().to_string(), i + 1) {
                    let msg = format!("{:?} is also element {first}", v.name());
                    bad.push((i + 1, Error::invalid(msg)));
                }
                valid.push((i + 1, v));
            }
            Err(e) => bad.push((i + 1, e)),
        }
    }
    let now_n = now.naive_utc();
    conn.write_tx(|c| {
        for (line, v) in &valid {
            match parties::check_put(c, v) {
                Err(e) if e.is_bad_input() => bad.push((*line, e)),
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        if !bad.is_empty() {
            bad.sort_by_key(|(l, _)| *l);
            return Ok(Err(bad));
        }
        let mut done = Vec::new();
        let mut moved = Vec::new();
        for (_, v) in &valid {
            let (id, created) = parties::put_user_in_tx(c, now_n, v)?;
            if !created {
                reschedule_party(c, id)?;
                if v.changes().moves_quiet_hours() {
                    moved.push(id);
                }
            }
            done.push((id, created));
        }
        queue::release_held_in_tx(c, &moved)?;
        Ok(Ok(done))
    })
}

/// Pauses or resumes a subscription and changes its frequency, hour, day
/// or channels (`PATCH /api/v1/subscriptions/{id}`, `digestd subscription
/// retime`, the manage page), in one transaction: a new frequency, hour or
/// day reschedules it (its next digest holds everything since its last
/// one, whatever the cadence was), a resume does what [`resume`] does.
pub fn change_subscription(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    id: SubscriptionId,
    paused: Option<bool>,
    retime: &Retime,
) -> Result<()> {
    conn.write_tx(|c| {
        subscriptions::get(c, id)?;
        if !retime.is_empty() {
            subscriptions::retime_in_tx(c, id, retime)?;
        }
        let resumed = match paused {
            Some(true) => {
                subscriptions::pause_in_tx(c, now, id)?;
                false
            }
            Some(false) => subscriptions::unpause_in_tx(c, now, id)?,
            None => false,
        };
        if resumed {
            reschedule(c, id, Some(now))?;
        } else if retime.moves_periods() {
            reschedule(c, id, None)?;
        }
        Ok(())
    })
}
