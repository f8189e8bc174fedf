//! Members' opt-outs from group subscriptions (`subscription_optouts`).
//!
//! A group's digest reaches every user inside the group, through nested
//! groups too. A member who unsubscribes from it stops it for themselves
//! only: the group keeps the subscription, the others keep getting it, and
//! the queue writes no row for the member when it expands the group's
//! requests (`deliver::queue::expand`). An opt-out is keyed on the
//! subscription and the person, not on a membership, so leaving the group
//! and joining it again (or reaching it through another group) does not
//! clear it: only the member (their manage or unsubscribe page) or an
//! operator (`digestd subscription optin`, the API, `/admin`) does.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use super::{list_where, Subscription};
use crate::db::schema::{parties, subscription_optouts, subscriptions};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{PartyId, SubscriptionId};
use crate::validate;

/// One member's opt-out, as the operator reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptOut {
    pub subscription: SubscriptionId,
    /// The member's name.
    pub member: String,
    #[serde(skip)]
    pub party: PartyId,
    pub created_at: DateTime<Utc>,
}

/// The group subscriptions that reach `party` through its groups (nested
/// too), by id. A user's own subscriptions are not among them.
pub fn reaching(c: &mut DbConn, party: PartyId) -> Result<Vec<Subscription>> {
    let mut groups: Vec<PartyId> = crate::parties::groups_of(c, party)?.into_iter().collect();
    groups.sort_unstable();
    let mut out = Vec::new();
    for g in groups {
        out.extend(list_where(c, Some(g))?);
    }
    out.sort_by_key(|s| s.id);
    Ok(out)
}

/// The subscriptions `party` has opted out of.
pub fn opted_out(c: &mut DbConn, party: PartyId) -> Result<Vec<SubscriptionId>> {
    let ids: Vec<i64> = subscription_optouts::table
        .filter(subscription_optouts::party_id.eq(party.0))
        .select(subscription_optouts::subscription_id)
        .order(subscription_optouts::subscription_id.asc())
        .load(c)?;
    Ok(ids.into_iter().map(SubscriptionId).collect())
}

/// Opts `party` out of `sub` in the caller's transaction (the caller has
/// checked that `sub` reaches `party` through a group); whether it was
/// not opted out before. Opting out twice writes nothing more.
pub fn opt_out_in_tx(
    c: &mut DbConn,
    now: NaiveDateTime,
    sub: SubscriptionId,
    party: PartyId,
) -> Result<bool> {
    // The subscription's row lock orders two opt-outs at once on
    // PostgreSQL (SQLite has one writer at a time).
    c.lock_row_in_tx("subscriptions", sub.0)?;
    let has: i64 = subscription_optouts::table
        .filter(subscription_optouts::subscription_id.eq(sub.0))
        .filter(subscription_optouts::party_id.eq(party.0))
        .count()
        .get_result(c)?;
    if has > 0 {
        return Ok(false);
    }
    diesel::insert_into(subscription_optouts::table)
        .values((
            subscription_optouts::subscription_id.eq(sub.0),
            subscription_optouts::party_id.eq(party.0),
            subscription_optouts::created_at.eq(now),
        ))
        .execute(c)?;
    Ok(true)
}

/// Clears `party`'s opt-out from `sub` in the caller's transaction;
/// whether there was one.
pub fn opt_in_in_tx(c: &mut DbConn, sub: SubscriptionId, party: PartyId) -> Result<bool> {
    let n = diesel::delete(
        subscription_optouts::table
            .filter(subscription_optouts::subscription_id.eq(sub.0))
            .filter(subscription_optouts::party_id.eq(party.0)),
    )
    .execute(c)?;
    Ok(n > 0)
}

/// The opt-outs of subscription `sub` (every subscription's when `None`),
/// by subscription and member name. An unknown subscription is NotFound.
pub fn list_optouts(c: &mut DbConn, sub: Option<SubscriptionId>) -> Result<Vec<OptOut>> {
    if let Some(id) = sub {
        exists(c, id)?;
    }
    let mut q = subscription_optouts::table
        .inner_join(parties::table.on(parties::id.eq(subscription_optouts::party_id)))
        .select((
            subscription_optouts::subscription_id,
            subscription_optouts::party_id,
            parties::name,
            subscription_optouts::created_at,
        ))
        .order((
            subscription_optouts::subscription_id.asc(),
            parties::name.asc(),
        ))
        .into_boxed();
    if let Some(id) = sub {
        q = q.filter(subscription_optouts::subscription_id.eq(id.0));
    }
    let rows: Vec<(i64, i64, String, NaiveDateTime)> = q.load(c)?;
    Ok(rows
        .into_iter()
        .map(|(s, p, member, at)| OptOut {
            subscription: SubscriptionId(s),
            member,
            party: PartyId(p),
            created_at: at.and_utc(),
        })
        .collect())
}

/// The operator's clear: `member`'s opt-out from `sub` removed, so the
/// group's digests reach them again. Everything is checked before the
/// write: an unknown subscription, an unknown or malformed name, or a
/// member with no opt-out from it is NotFound and writes nothing.
pub fn clear(c: &mut DbConn, sub: SubscriptionId, member: &str) -> Result<()> {
    c.write_tx(|c| {
        exists(c, sub)?;
        let party = member_named(c, member)?;
        if !opt_in_in_tx(c, sub, party)? {
            return Err(Error::not_found(format!(
                "{} has not opted out of subscription {sub}",
                validate::escape_for_line(member)
            )));
        }
        Ok(())
    })
}

/// The party named `member`, or NotFound (a malformed name too: it names
/// nobody).
fn member_named(c: &mut DbConn, member: &str) -> Result<PartyId> {
    crate::parties::find(c, member).map(|(id, _)| id)
}

/// NotFound unless subscription `sub` exists.
fn exists(c: &mut DbConn, sub: SubscriptionId) -> Result<()> {
    let n: i64 = subscriptions::table
        .filter(subscriptions::id.eq(sub.0))
        .count()
        .get_result(c)?;
    if n == 0 {
        return Err(Error::not_found(format!("no subscription {sub}")));
    }
    Ok(())
}
