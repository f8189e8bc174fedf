//! The per-message events of a settle, in its transaction: a digest
//! delivered to one recipient on one channel (`digest.delivered`) and a
//! row given up (`delivery.failed`), when the pass's `[events]` posts
//! them. Each row's request kind and subscription come with the settle,
//! as the round read them; only a journal's replay, which has no round,
//! makes the settle read them here.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::{Of, RowUpdate};
use crate::db::schema::nt_requests;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{PartyId, SubscriptionId};
use digestd_engine::events::{self, Event, Kind, Wants};

/// Records the events `wants` asks for among `ups`.
pub(super) fn record(
    c: &mut DbConn,
    wants: Wants,
    ups: &[RowUpdate],
    now: DateTime<Utc>,
) -> Result<()> {
    let wanted = |u: &&RowUpdate| {
        (wants.delivered && u.is_successful) || (wants.failed && u.gave_up && !u.is_successful)
    };
    // A message to an address no party has (a sign-up's link) is nobody's.
    let ups: Vec<&RowUpdate> = ups
        .iter()
        .filter(wanted)
        .filter(|u| u.party_to > 0)
        .collect();
    if ups.is_empty() {
        return Ok(());
    }
    let of = unknown(c, &ups)?;
    let mut list = Vec::new();
    for u in ups {
        let Some(Of {
            digest,
            subscription,
        }) = u.of.or_else(|| of.get(&u.request_id).copied())
        else {
            continue;
        };
        let kind = if digest { "digest" } else { "notification" };
        let event = if u.is_successful {
            if !digest {
                continue;
            }
            Event::new(Kind::DigestDelivered)
        } else {
            Event::new(Kind::DeliveryFailed)
                .with("kind", kind)
                .with("reply_code", u.code)
                .with("reason", u.text.as_str())
        };
        let mut event = event
            .party(PartyId(u.party_to))
            .with("request", u.request_id)
            .with("channel", u.channel.as_str())
            .with("address", u.address.clone())
            .with("attempts", u.retry_count);
        if let Some(s) = subscription {
            event = event.subscription(SubscriptionId(s));
        }
        list.push(event);
    }
    events::record_in_tx(c, now, &list)
}

/// The kind and subscription of the requests of `ups` that no round read
/// (a journal's replay), read here; nothing is read for the others.
fn unknown(c: &mut DbConn, ups: &[&RowUpdate]) -> Result<HashMap<i64, Of>> {
    let mut ids: Vec<i64> = ups
        .iter()
        .filter(|u| u.of.is_none())
        .map(|u| u.request_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut of = HashMap::new();
    for chunk in ids.chunks(1_000) {
        let rows: Vec<(i64, String, Option<i64>)> = nt_requests::table
            .filter(nt_requests::request_id.eq_any(chunk))
            .select((
                nt_requests::request_id,
                nt_requests::kind,
                nt_requests::subscription_id,
            ))
            .load(c)?;
        of.extend(rows.into_iter().map(|(id, kind, subscription)| {
            let digest = kind == "digest";
            (
                id,
                Of {
                    digest,
                    subscription,
                },
            )
        }));
    }
    Ok(of)
}
