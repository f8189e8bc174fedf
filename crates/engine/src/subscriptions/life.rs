//! A subscription's life as the operators' events record it: made,
//! paused, resumed (each pause and resume with its event in the same
//! transaction, and none when nothing changes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::twin::Digest;
use crate::db::schema::subscriptions;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::events::{self, Event, Kind as EventKind};
use crate::ids::{PartyId, SubscriptionId};
use crate::parties::Channel;

/// Records `subscription.created` for each of `made` (its id, what it
/// stores, on which channels), in the caller's transaction.
pub(super) fn created_events(
    c: &mut DbConn,
    now: DateTime<Utc>,
    made: &[(SubscriptionId, &Digest, &[Channel])],
) -> Result<()> {
    use crate::db::schema::collections;
    let mut ids: Vec<i64> = made
        .iter()
        .filter_map(|m| m.1.collection)
        .map(|c| c.0)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut names: std::collections::HashMap<i64, String> = Default::default();
    for chunk in ids.chunks(1_000) {
        let rows: Vec<(i64, String)> = collections::table
            .filter(collections::id.eq_any(chunk))
            .select((collections::id, collections::name))
            .load(c)?;
        names.extend(rows);
    }
    let list: Vec<Event> = made
        .iter()
        .map(|(id, d, channels)| {
            let channels: Vec<&str> = channels.iter().map(|c| c.as_str()).collect();
            Event::new(EventKind::SubscriptionCreated)
                .subscription(*id)
                .party(d.party)
                .with(
                    "collection",
                    d.collection.and_then(|c| names.get(&c.0).cloned()),
                )
                .with("kind", d.kind.as_str())
                .with("frequency", d.frequency.as_str())
                .with("hour", d.hour)
                .with("day", d.day)
                .with("channels", channels)
        })
        .collect();
    events::record_in_tx(c, now, &list)
}

/// Pauses a subscription: it gets nothing until resumed.
pub fn pause(conn: &mut DbConn, now: DateTime<Utc>, id: SubscriptionId) -> Result<()> {
    conn.write_tx(|c| pause_in_tx(c, now, id))
}

/// [`pause`] inside the caller's transaction; `subscription.paused` is
/// recorded when it was not paused.
pub fn pause_in_tx(c: &mut DbConn, now: DateTime<Utc>, id: SubscriptionId) -> Result<()> {
    set_paused(c, now, id, true).map(|_| ())
}

/// Clears a subscription's pause inside the caller's transaction; whether
/// it was paused (then `subscription.resumed` is recorded).
/// `manage::resume` reschedules it in the same transaction.
pub fn unpause_in_tx(c: &mut DbConn, now: DateTime<Utc>, id: SubscriptionId) -> Result<bool> {
    set_paused(c, now, id, false)
}

/// Sets a subscription's pause to `to`, with its event, when it is not so
/// already; whether it changed.
fn set_paused(c: &mut DbConn, now: DateTime<Utc>, id: SubscriptionId, to: bool) -> Result<bool> {
    let (party, paused) = paused_of(c, id)?;
    if paused == to {
        return Ok(false);
    }
    diesel::update(subscriptions::table.find(id.0))
        .set(subscriptions::paused.eq(to))
        .execute(c)?;
    let kind = if to {
        EventKind::SubscriptionPaused
    } else {
        EventKind::SubscriptionResumed
    };
    events::record_one_in_tx(c, now, Event::new(kind).subscription(id).party(party))?;
    Ok(true)
}

/// A subscription's party and whether it is paused.
fn paused_of(c: &mut DbConn, id: SubscriptionId) -> Result<(PartyId, bool)> {
    let (party, paused): (i64, bool) = subscriptions::table
        .find(id.0)
        .select((subscriptions::party_id, subscriptions::paused))
        .first(c)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("no subscription {id}")))?;
    Ok((PartyId(party), paused))
}
