//! Which digest a subscription delivers, and what [`super::subscribe`]
//! does when the party already has it: refuse, naming the subscription, or
//! add the request's channels to it. Runs inside the subscribe's write
//! transaction.

use diesel::prelude::*;

use super::{Frequency, Kind, SubscribeRequest, Subscribed};
use crate::db::schema::subscriptions;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::parties::Channel;

/// The unique index on which digest a subscription delivers (PostgreSQL
/// names it as the constraint, SQLite in its message).
pub(super) const DIGEST_INDEX: &str = "subscriptions_digest";

/// Which digest a subscription delivers: what `subscriptions_digest` keys.
#[derive(Clone, Copy)]
pub(super) struct Digest {
    pub party: PartyId,
    pub collection: Option<CollectionId>,
    pub kind: Kind,
    pub frequency: Frequency,
    pub hour: Option<i32>,
    pub day: Option<i32>,
}

/// A stored subscription to the same digest.
pub(super) struct Twin {
    pub id: SubscriptionId,
    pub channels: String,
    pub paused: bool,
    pub include_own: bool,
    pub send_empty: bool,
}

/// The party's subscription to digest `d`, paused or not.
pub(super) fn twin_of(c: &mut DbConn, d: &Digest) -> Result<Option<Twin>> {
    let key = key_of(d);
    Ok(twins_of(c, &[d.party.0])?
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, t)| t))
}

/// `subscriptions_digest`'s key: party, collection, kind, frequency, hour, day.
pub type Key = (i64, Option<i64>, String, String, Option<i32>, Option<i32>);

/// The columns of [`Key`], in its order (`KeyColumns::default()`).
pub type KeyColumns = (
    subscriptions::party_id,
    subscriptions::collection_id,
    subscriptions::kind,
    subscriptions::frequency,
    subscriptions::hour_of_day,
    subscriptions::day_of_week,
);

/// Which digest `d` is, as [`Key`].
pub(super) fn key_of(d: &Digest) -> Key {
    (
        d.party.0,
        d.collection.map(|c| c.0),
        d.kind.as_str().to_string(),
        d.frequency.as_str().to_string(),
        d.hour,
        d.day,
    )
}

/// The stored subscriptions of `parties`, by the digest each delivers.
pub(super) fn twins_of(c: &mut DbConn, parties: &[i64]) -> Result<Vec<(Key, Twin)>> {
    type Row = (i64, Key, String, bool, bool, bool);
    let mut out = Vec::new();
    for chunk in parties.chunks(5_000) {
        let rows: Vec<Row> = subscriptions::table
            .filter(subscriptions::party_id.eq_any(chunk))
            .select((
                subscriptions::id,
                KeyColumns::default(),
                subscriptions::channels,
                subscriptions::paused,
                subscriptions::include_own,
                subscriptions::send_empty,
            ))
            .load(c)?;
        out.extend(rows.into_iter().map(|r| {
            (
                r.1,
                Twin {
                    id: SubscriptionId(r.0),
                    channels: r.2,
                    paused: r.3,
                    include_own: r.4,
                    send_empty: r.5,
                },
            )
        }));
    }
    Ok(out)
}

/// Refuses the request (`asked`: its channels, parsed), or adds its
/// channels to `twin`. `raced`: the row changed since we read it (set,
/// with an error, so the caller looks again).
pub(super) fn merge(
    c: &mut DbConn,
    twin: &Twin,
    asked: &[Channel],
    req: &SubscribeRequest,
    raced: &mut bool,
) -> Result<Subscribed> {
    let id = twin.id;
    let channels = merged_channels(twin, asked, req)?;
    let n = diesel::update(
        subscriptions::table
            .find(id.0)
            .filter(subscriptions::channels.eq(&twin.channels)),
    )
    .set(subscriptions::channels.eq(channel_list(&channels)))
    .execute(c)?;
    if n == 0 {
        *raced = true;
        return Err(Error::conflict(format!(
            "{} already has this digest: subscription {id}, changed meanwhile",
            req.party
        )));
    }
    Ok(Subscribed::Merged { id, channels })
}

/// What [`merge`] decides, writing nothing: `twin`'s channels with the
/// request's added, or the refusal naming `twin` (paused; other settings
/// differ; no new channel).
pub(super) fn merged_channels(
    twin: &Twin,
    asked: &[Channel],
    req: &SubscribeRequest,
) -> Result<Vec<Channel>> {
    let id = twin.id;
    let has = format!("{} already has this digest: subscription {id}", req.party);
    if twin.paused {
        return Err(Error::conflict(format!(
            "{has}, which is paused: resume it (digestd subscription resume {id}) instead of subscribing again"
        )));
    }
    let mut channels: Vec<Channel> = twin
        .channels
        .split(',')
        .map(Channel::parse)
        .collect::<Result<_>>()?;
    let before = channels.clone();
    channels.extend_from_slice(asked);
    channels.sort();
    channels.dedup();
    let flag = |on: bool, name: &str| format!("{} --{name}", if on { "with" } else { "without" });
    let differs: Vec<String> = [
        (twin.send_empty != req.send_empty).then(|| flag(twin.send_empty, "send-empty")),
        (twin.include_own != req.include_own).then(|| flag(twin.include_own, "include-own")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !differs.is_empty() {
        return Err(Error::conflict(format!(
            "{has} (via {}, {}); a second subscription would send each digest twice",
            twin.channels,
            differs.join(", ")
        )));
    }
    if channels == before {
        return Err(Error::conflict(format!("{has} (via {})", twin.channels)));
    }
    Ok(channels)
}

/// How `subscriptions.channels` stores a set: in [`Channel`] order, by commas.
pub(super) fn channel_list(channels: &[Channel]) -> String {
    channels
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
