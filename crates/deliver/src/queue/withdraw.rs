//! Requests withdrawn because what they were for is gone: a deleted user's
//! or group's, an ended subscription's. Runs in the caller's transaction
//! (`remove`'s). Cancelling is what `cancel_request` does (status
//! `cancelled`, fulfill date now): a round that already claimed their rows
//! leaves them out ([`super::cancel`]). A deleted user's rows inside
//! requests to a group (expanded to its members) are given up with the
//! reason `recipient deleted`; the rest of such a request goes out.
//! Requests already finished stay as they are: they are history (an ended
//! subscription's lose their `subscription_id`, as its foreign key says).

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::{nt_queue, nt_requests};
use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{PartyId, SubscriptionId};

/// What [`withdraw_in_tx`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Withdrawn {
    /// Pending or sending requests cancelled.
    pub requests: usize,
    /// Queue rows to the party, in other requests, given up.
    pub rows: usize,
}

/// The reason written on a given-up row of a deleted recipient.
pub const RECIPIENT_DELETED: &str = "recipient deleted";

/// Cancels the unfinished requests addressed to `party` and those of the
/// subscriptions `subs`, and gives up `party`'s open rows in requests to
/// others.
pub fn withdraw_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: Option<PartyId>,
    subs: &[SubscriptionId],
) -> Result<Withdrawn> {
    let now = now.naive_utc();
    let open = || nt_requests::status.eq_any(RequestStatus::strs(RequestStatus::OPEN));
    let cancel = (
        nt_requests::status.eq(RequestStatus::Cancelled.as_str()),
        nt_requests::fulfill_date.eq(Some(now)),
    );
    let mut out = Withdrawn::default();
    if let Some(p) = party {
        out.requests += diesel::update(nt_requests::table)
            .filter(open())
            .filter(nt_requests::party_to.eq(p.0))
            .set(cancel)
            .execute(c)?;
    }
    let subs: Vec<i64> = subs.iter().map(|s| s.0).collect();
    for chunk in subs.chunks(10_000) {
        out.requests += diesel::update(nt_requests::table)
            .filter(open())
            .filter(nt_requests::subscription_id.eq_any(chunk))
            .set(cancel)
            .execute(c)?;
        // What `ON DELETE SET NULL` does when the subscriptions go, said
        // here so it holds whatever the connection's foreign-key setting.
        diesel::update(nt_requests::table)
            .filter(nt_requests::subscription_id.eq_any(chunk))
            .set(nt_requests::subscription_id.eq(None::<i64>))
            .execute(c)?;
    }
    if let Some(p) = party {
        let sending = nt_requests::table
            .filter(nt_requests::status.eq(RequestStatus::Sending.as_str()))
            .select(nt_requests::request_id);
        out.rows = diesel::update(nt_queue::table)
            .filter(nt_queue::party_to.eq(p.0))
            .filter(nt_queue::is_successful.eq(false))
            .filter(nt_queue::gave_up.eq(false))
            .filter(nt_queue::request_id.eq_any(sending))
            .set((
                nt_queue::gave_up.eq(true),
                nt_queue::smtp_reply_message.eq(RECIPIENT_DELETED),
                nt_queue::claimed_by.eq(None::<String>),
                nt_queue::claimed_until.eq(None::<chrono::NaiveDateTime>),
            ))
            .execute(c)?;
    }
    Ok(out)
}

/// The reason written on a given-up row of a member who opted out.
pub const OPTED_OUT: &str = "opted out";

/// Gives up `party`'s open rows in the sending requests of the
/// subscriptions `subs` (a member who opted out of a group's digests that
/// were already expanded); the other members' rows go out. Returns the
/// rows given up.
pub fn give_up_member_in_tx(
    c: &mut DbConn,
    party: PartyId,
    subs: &[SubscriptionId],
) -> Result<usize> {
    let subs: Vec<i64> = subs.iter().map(|s| s.0).collect();
    let mut n = 0;
    for chunk in subs.chunks(10_000) {
        let sending = nt_requests::table
            .filter(nt_requests::status.eq(RequestStatus::Sending.as_str()))
            .filter(nt_requests::subscription_id.eq_any(chunk))
            .select(nt_requests::request_id);
        n += diesel::update(nt_queue::table)
            .filter(nt_queue::party_to.eq(party.0))
            .filter(nt_queue::is_successful.eq(false))
            .filter(nt_queue::gave_up.eq(false))
            .filter(nt_queue::request_id.eq_any(sending))
            .set((
                nt_queue::gave_up.eq(true),
                nt_queue::smtp_reply_message.eq(OPTED_OUT),
                nt_queue::claimed_by.eq(None::<String>),
                nt_queue::claimed_until.eq(None::<chrono::NaiveDateTime>),
            ))
            .execute(c)?;
    }
    Ok(n)
}
