//! A subscription's later life: read by party, its frequency, hour, day
//! and channels changed (`PATCH /api/v1/subscriptions/{id}`, `digestd
//! subscription retime`, the manage page), and ended for good
//! (`digestd subscription end`, and with its user, group or collection).
//! The writes run in the caller's transaction: `manage` reschedules a
//! changed one, `remove` cancels the pending digests of ended ones.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::twin::{channel_list, twin_of, Digest};
use super::{list_where, Frequency, Kind, Subscription};
use crate::db::schema::subscriptions;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::events::{self, Event, Kind as EventKind};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::parties::{self, Channel};
use crate::validate;

/// The subscriptions of one party, by id.
pub fn list_for_party(conn: &mut DbConn, party: PartyId) -> Result<Vec<Subscription>> {
    list_where(conn, Some(party))
}

/// One subscription.
pub fn get(conn: &mut DbConn, id: SubscriptionId) -> Result<Subscription> {
    let party: i64 = subscriptions::table
        .find(id.0)
        .select(subscriptions::party_id)
        .first(conn)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("no subscription {id}")))?;
    list_where(conn, Some(PartyId(party)))?
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| Error::not_found(format!("no subscription {id}")))
}

/// The ids of a party's subscriptions.
pub fn ids_of_party(c: &mut DbConn, party: PartyId) -> Result<Vec<SubscriptionId>> {
    let ids: Vec<i64> = subscriptions::table
        .filter(subscriptions::party_id.eq(party.0))
        .select(subscriptions::id)
        .load(c)?;
    Ok(ids.into_iter().map(SubscriptionId).collect())
}

/// The ids of the subscriptions to one collection (not those to all).
pub fn ids_of_collection(c: &mut DbConn, coll: CollectionId) -> Result<Vec<SubscriptionId>> {
    let ids: Vec<i64> = subscriptions::table
        .filter(subscriptions::collection_id.eq(coll.0))
        .select(subscriptions::id)
        .load(c)?;
    Ok(ids.into_iter().map(SubscriptionId).collect())
}

/// Stops ticks from taking `ids` before they end: on PostgreSQL this
/// takes their row locks (waiting for a tick that holds one to commit, so
/// the digest it posts is seen and cancelled); on SQLite writers take
/// turns anyway.
pub fn hold_in_tx(c: &mut DbConn, ids: &[SubscriptionId]) -> Result<()> {
    let raw: Vec<i64> = ids.iter().map(|i| i.0).collect();
    for chunk in raw.chunks(10_000) {
        diesel::update(subscriptions::table.filter(subscriptions::id.eq_any(chunk)))
            .set((
                subscriptions::paused.eq(true),
                subscriptions::next_due_at.eq(None::<chrono::NaiveDateTime>),
            ))
            .execute(c)?;
    }
    Ok(())
}

/// Ends `ids` for good in the caller's transaction: their runs go, then the
/// rows, each deleted here (on PostgreSQL no foreign key cascades from the
/// runs). Digests already posted keep their requests, whose
/// `subscription_id` `queue::withdraw_in_tx` clears first
/// (`remove::end`). Each records `subscription.ended` with `why`
/// (`deleted`, `party deleted`, `collection deleted`). Returns
/// (subscriptions, runs) removed.
pub fn end_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    ids: &[SubscriptionId],
    why: &str,
) -> Result<(usize, usize)> {
    use crate::db::schema::{subscription_optouts, subscription_runs};
    let raw: Vec<i64> = ids.iter().map(|i| i.0).collect();
    let (mut subs, mut runs) = (0, 0);
    for chunk in raw.chunks(10_000) {
        let ending: Vec<(i64, i64)> = subscriptions::table
            .filter(subscriptions::id.eq_any(chunk))
            .select((subscriptions::id, subscriptions::party_id))
            .load(c)?;
        let ended: Vec<Event> = ending
            .into_iter()
            .map(|(s, p)| {
                Event::new(EventKind::SubscriptionEnded)
                    .subscription(SubscriptionId(s))
                    .party(PartyId(p))
                    .with("why", why)
            })
            .collect();
        events::record_in_tx(c, now, &ended)?;
        runs += diesel::delete(
            subscription_runs::table.filter(subscription_runs::subscription_id.eq_any(chunk)),
        )
        .execute(c)?;
        // What `ON DELETE CASCADE` does, said here so it holds whatever
        // the connection's foreign-key setting.
        diesel::delete(
            subscription_optouts::table.filter(subscription_optouts::subscription_id.eq_any(chunk)),
        )
        .execute(c)?;
        subs += diesel::delete(subscriptions::table.filter(subscriptions::id.eq_any(chunk)))
            .execute(c)?;
    }
    Ok((subs, runs))
}

/// What `PATCH` may change besides pausing.
#[derive(Debug, Clone, Default)]
pub struct Retime {
    /// hourly, daily or weekly.
    pub frequency: Option<String>,
    pub hour: Option<i64>,
    pub day: Option<String>,
    pub channels: Option<Vec<String>>,
}

impl Retime {
    pub fn is_empty(&self) -> bool {
        self.frequency.is_none()
            && self.hour.is_none()
            && self.day.is_none()
            && self.channels.is_none()
    }

    /// Whether it moves the subscription's periods (the caller reschedules).
    pub fn moves_periods(&self) -> bool {
        self.frequency.is_some() || self.hour.is_some() || self.day.is_some()
    }
}

/// Parses channels as `subscribe` does: sorted, each once, at least one.
pub(super) fn parse_channels(list: &[String]) -> Result<Vec<Channel>> {
    if list.is_empty() {
        return Ok(vec![Channel::Email]);
    }
    let mut channels: Vec<Channel> = list
        .iter()
        .map(|c| Channel::parse(c))
        .collect::<Result<_>>()?;
    channels.sort();
    channels.dedup();
    Ok(channels)
}

/// The hour and day a subscription of `frequency` keeps: an hourly one
/// takes neither, a daily one an hour and no day, a weekly one both. Each
/// is the one asked for, else the one stored; one that the frequency needs
/// and neither gives is refused, as is one it does not take.
fn timing(
    frequency: Frequency,
    asked: (Option<u8>, Option<u8>),
    stored: (Option<i32>, Option<i32>),
) -> Result<(Option<i32>, Option<i32>)> {
    let hour = asked.0.map(i32::from).or(stored.0);
    let day = asked.1.map(i32::from).or(stored.1);
    let need = |v: Option<i32>, what: &str| {
        v.map(Some).ok_or_else(|| {
            Error::invalid(format!(
                "a {} subscription needs {what}",
                frequency.as_str()
            ))
        })
    };
    match frequency {
        Frequency::Hourly if asked.0.is_some() || asked.1.is_some() => Err(Error::invalid(
            "an hourly subscription takes neither hour nor day",
        )),
        Frequency::Hourly => Ok((None, None)),
        Frequency::Daily if asked.1.is_some() => {
            Err(Error::invalid("a daily subscription takes hour, not day"))
        }
        Frequency::Daily => Ok((need(hour, "an hour (0-23)")?, None)),
        Frequency::Weekly => Ok((
            need(hour, "an hour (0-23)")?,
            need(day, "a day (mon..sun)")?,
        )),
    }
}

/// Changes a subscription's frequency, hour, day or channels in the
/// caller's transaction, checked as `subscribe` checks them (a user's
/// channels each need an enabled address). Refused (409, naming it) when
/// the party already has the digest the new frequency, hour and day make.
/// The caller reschedules.
pub fn retime_in_tx(c: &mut DbConn, id: SubscriptionId, r: &Retime) -> Result<()> {
    let asked = r.frequency.as_deref().map(Frequency::parse).transpose()?;
    let hour = r.hour.map(validate::hour).transpose()?;
    let day = r.day.as_deref().map(validate::weekday).transpose()?;
    if r.channels.as_ref().is_some_and(Vec::is_empty) {
        // `subscribe` reads no channels as email; here they replace the
        // subscription's, and none would silently turn it into email.
        return Err(Error::invalid(format!(
            "channels: give at least one channel ({})",
            Channel::named()
        )));
    }
    let channels = r.channels.as_deref().map(parse_channels).transpose()?;
    let s = get(c, id)?;
    let frequency = match asked {
        Some(f) => f,
        None => Frequency::parse(&s.frequency)?,
    };
    let (new_hour, new_day) = timing(frequency, (hour, day), (s.hour_of_day, s.day_of_week))?;
    if let Some(ch) = &channels {
        let (name, kind) = (parties::name_of(c, s.party)?, parties_kind(c, s.party)?);
        if kind == "user" {
            super::Lookup::default().check_addresses(c, s.party, &name, ch)?;
        }
    }
    let digest = Digest {
        party: s.party,
        collection: s.collection,
        kind: Kind::parse(&s.kind)?,
        frequency,
        hour: new_hour,
        day: new_day,
    };
    if let Some(t) = twin_of(c, &digest)? {
        if t.id != id {
            return Err(Error::conflict(format!(
                "the party already has that digest: subscription {}",
                t.id
            )));
        }
    }
    diesel::update(subscriptions::table.find(id.0))
        .set((
            subscriptions::frequency.eq(frequency.as_str()),
            subscriptions::hour_of_day.eq(new_hour),
            subscriptions::day_of_week.eq(new_day),
        ))
        .execute(c)?;
    if let Some(ch) = channels {
        diesel::update(subscriptions::table.find(id.0))
            .set(subscriptions::channels.eq(channel_list(&ch)))
            .execute(c)?;
    }
    Ok(())
}

fn parties_kind(c: &mut DbConn, party: PartyId) -> Result<String> {
    use crate::db::schema::parties;
    Ok(parties::table
        .find(party.0)
        .select(parties::kind)
        .first(c)?)
}
