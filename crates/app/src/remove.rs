//! Deleting what has history, each in one write transaction: a user or a
//! group (its subscriptions end, its unsent requests are cancelled, it
//! leaves every group, its contact points go, its row stays as a renamed
//! tombstone that history points at), a collection (its subscriptions end,
//! items in no other collection go, its modification log goes), a
//! subscription (ended for good, its unsent digests cancelled), and the
//! reversible stop of an unsubscribe link ([`unsubscribe`]; for a group's
//! digest, the member's opt-out, [`opt_out_in_tx`]).
//!
//! It sits above `deliver` because cancelling requests writes the nt
//! tables `deliver` owns, and `manage` is below `deliver`: each table's
//! owner does its part (`parties::retire_in_tx`,
//! `subscriptions::end_in_tx`, `deliver::queue::withdraw_in_tx`,
//! `items::delete_collection_in_tx`) inside the transaction opened here.
//! Names are resolved inside the transaction, so bad input writes nothing.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::DbConn;
use crate::deliver::queue::{give_up_member_in_tx, withdraw_in_tx};
use crate::error::Result;
use crate::events::{self, Event, Kind};
use crate::ids::{PartyId, SubscriptionId};
use crate::{items, parties, subscriptions};

/// What a deletion ended, cancelled and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Removed {
    pub subscriptions_ended: usize,
    /// Their run records (the scheduler's bookkeeping).
    pub runs_forgotten: usize,
    /// Pending or sending requests cancelled.
    pub requests_cancelled: usize,
    /// The deleted user's queued messages inside requests to a group, given up.
    pub messages_given_up: usize,
    pub memberships_removed: usize,
    pub contact_points_removed: usize,
    pub items_deleted: usize,
    /// Items also in another collection, which keep them.
    pub items_kept: usize,
    pub modifications_deleted: usize,
}

impl Removed {
    /// Messages that will not go out now: requests cancelled and rows given up.
    pub fn messages_cancelled(&self) -> usize {
        self.requests_cancelled + self.messages_given_up
    }

    /// `2 subscriptions ended, 3 pending messages cancelled, …` (what the
    /// CLI prints after `deleted user asha: `).
    pub fn summary(&self) -> String {
        let mut parts = vec![
            format!("{} subscriptions ended", self.subscriptions_ended),
            format!("{} pending messages cancelled", self.messages_cancelled()),
        ];
        for (n, what) in [
            (self.memberships_removed, "memberships removed"),
            (self.contact_points_removed, "contact points removed"),
            (self.items_deleted, "items deleted"),
            (self.items_kept, "items kept (in other collections)"),
            (self.modifications_deleted, "modifications deleted"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        parts.join(", ")
    }
}

/// Deletes the user `name` (see the module doc).
pub fn user(conn: &mut DbConn, now: DateTime<Utc>, name: &str) -> Result<Removed> {
    party(conn, now, "user", name)
}

/// Deletes the group `name`: its members stay, its memberships go.
pub fn group(conn: &mut DbConn, now: DateTime<Utc>, name: &str) -> Result<Removed> {
    party(conn, now, "group", name)
}

fn party(conn: &mut DbConn, now: DateTime<Utc>, kind: &str, name: &str) -> Result<Removed> {
    conn.write_tx(|c| {
        let id: PartyId = parties::find_kind(c, kind, name)?;
        let subs = subscriptions::ids_of_party(c, id)?;
        let mut out = end(c, now, Some(id), &subs, "party deleted")?;
        let r = parties::retire_in_tx(c, id)?;
        out.memberships_removed = r.memberships;
        out.contact_points_removed = r.contact_points;
        Ok(out)
    })
}

/// Deletes a collection by UUID: its subscriptions end (not those to all
/// collections), items in no other collection are deleted, its
/// modification log and read tickets go.
pub fn collection(conn: &mut DbConn, now: DateTime<Utc>, uuid: &str) -> Result<Removed> {
    conn.write_tx(|c| {
        let coll = items::find_collection(c, uuid)?;
        let subs = subscriptions::ids_of_collection(c, coll.id)?;
        let mut out = end(c, now, None, &subs, "collection deleted")?;
        let f = items::delete_collection_in_tx(c, coll.id)?;
        out.items_deleted = f.items_deleted;
        out.items_kept = f.items_kept;
        out.modifications_deleted = f.modifications;
        Ok(out)
    })
}

/// Ends one subscription for good (pausing keeps it; this does not).
pub fn subscription(conn: &mut DbConn, now: DateTime<Utc>, id: SubscriptionId) -> Result<Removed> {
    conn.write_tx(|c| {
        subscriptions::get(c, id)?;
        end(c, now, None, &[id], "deleted")
    })
}

/// Stops `ids` the way an unsubscribe link does, in one transaction: each
/// is paused (and held against a tick in flight) and its unsent digests are
/// cancelled, so nothing more of them goes out; unlike [`subscription`] the
/// rows stay, so `manage::resume` undoes it (from then on, no burst).
/// Doing it twice writes nothing new. Returns the requests cancelled.
pub fn unsubscribe(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    ids: &[SubscriptionId],
    via: Via,
) -> Result<usize> {
    conn.write_tx(|c| unsubscribe_in_tx(c, now, ids, via))
}

/// How a person stopped a digest, as the `unsubscribe` event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// A form: the unsubscribe page's, or the manage page's "stop all".
    Page,
    /// RFC 8058's one-click POST from the mail client.
    OneClick,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Page => "page",
            Via::OneClick => "one-click",
        }
    }
}

/// [`unsubscribe`] in the caller's transaction; `unsubscribe` is recorded
/// for each that was not stopped already.
pub fn unsubscribe_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    ids: &[SubscriptionId],
    via: Via,
) -> Result<usize> {
    let mut stopped = Vec::new();
    for id in ids {
        let s = subscriptions::get(c, *id)?;
        if !s.paused {
            stopped.push(
                Event::new(Kind::Unsubscribe)
                    .subscription(*id)
                    .party(s.party)
                    .with("how", via.as_str()),
            );
        }
    }
    subscriptions::hold_in_tx(c, ids)?;
    events::record_in_tx(c, now, &stopped)?;
    Ok(withdraw_in_tx(c, now, None, ids)?.requests)
}

/// Opts member `party` out of the group subscriptions `ids` (which the
/// caller has checked reach them), in the caller's transaction: the
/// group's next digests leave them out (`subscriptions::optouts`), and
/// their messages of its digests already queued and not sent are given up.
/// The subscriptions and the other members are untouched; doing it twice
/// writes nothing new. Returns the messages given up.
pub fn opt_out_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    ids: &[SubscriptionId],
    via: Via,
) -> Result<usize> {
    for id in ids {
        if subscriptions::opt_out_in_tx(c, now.naive_utc(), *id, party)? {
            let e = Event::new(Kind::Unsubscribe)
                .subscription(*id)
                .party(party)
                .with("how", via.as_str())
                .with("group", true);
            events::record_one_in_tx(c, now, e)?;
        }
    }
    give_up_member_in_tx(c, party, ids)
}

/// Holds `subs` against ticks, cancels what is unsent to `party` and of
/// `subs`, and ends `subs` (`why`, as the `subscription.ended` event
/// says).
fn end(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: Option<PartyId>,
    subs: &[SubscriptionId],
    why: &str,
) -> Result<Removed> {
    subscriptions::hold_in_tx(c, subs)?;
    let w = withdraw_in_tx(c, now, party, subs)?;
    let (ended, runs) = subscriptions::end_in_tx(c, now, subs, why)?;
    Ok(Removed {
        subscriptions_ended: ended,
        runs_forgotten: runs,
        requests_cancelled: w.requests,
        messages_given_up: w.rows,
        ..Removed::default()
    })
}
