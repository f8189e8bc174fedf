//! Operations that span layers, above the layers they use: what a person
//! (through the command line, and soon the pages and the API) does to their
//! subscriptions and preferences, where the table's owner validates and
//! writes and the scheduler says when digests fall due, in one transaction.

use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{PartyId, SubscriptionId};
use crate::parties::{self, UserChanges};
use crate::schedule::tick::{first_due, reschedule, reschedule_party, rule_for};
use crate::subscriptions::{self, SubscribeRequest, Subscribed};

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
/// its first period at or after `now`, and a modification window starts at
/// `now`, so what changed while it was paused is not sent.
pub fn resume(conn: &mut DbConn, id: SubscriptionId, now: DateTime<Utc>) -> Result<()> {
    conn.write_tx(|c| {
        if subscriptions::unpause_in_tx(c, id)? {
            reschedule(c, id, Some(now))?;
        }
        Ok(())
    })
}

/// Changes a user's preferences and reschedules their subscriptions in the
/// same transaction, so a new timezone neither loses nor doubles a period.
pub fn update_user(conn: &mut DbConn, name: &str, ch: &UserChanges) -> Result<PartyId> {
    let valid = ch.validate()?;
    conn.write_tx(|c| {
        let id = parties::apply_user_changes_in_tx(c, name, &valid)?;
        reschedule_party(c, id)?;
        Ok(id)
    })
}
