//! Many subscriptions at once (`digestd subscription import`), held to the
//! same rules as one: [`Lookup`] reads, in a few statements for the whole
//! batch, what [`super::prepare`] would read line by line (the parties, the
//! collections, the users' preferences, the contact points);
//! [`store_many_in_tx`] finds each line's twin among the parties'
//! subscriptions and the batch's earlier lines, then writes the new rows
//! in multi-row statements and the merged channels one row each.
//!
//! A name or UUID the lookup did not load (misspelt, or written another
//! way) is looked up alone, so a bad line gets the error `subscription add`
//! gives.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::twin::{
    channel_list, key_of, merged_channels, twins_of, Key, KeyColumns, Twin, DIGEST_INDEX,
};
use super::{Prepared, SubscribeRequest, Subscribed};
use crate::db::schema::{collections, contact_points, group_prefs, subscriptions, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::items;
use crate::parties::{self as party, Channel};

/// Rows per `= ANY`/`IN` look-up and per multi-row insert.
const CHUNK: usize = 5_000;

/// A user's timezone, first day of week and daily hour.
pub(super) type Prefs = (String, i32, i32);

/// What [`super::prepare`] reads, loaded ahead for a batch. Empty, every
/// look-up goes to the database.
#[derive(Default)]
pub struct Lookup {
    parties: HashMap<String, (PartyId, String)>,
    collections: HashMap<String, CollectionId>,
    /// Every loaded party: its preferences (a user's, or a group's
    /// `group_prefs`), `None` when it has none.
    prefs: HashMap<PartyId, Option<Prefs>>,
    /// Every loaded party: its usable (not disabled) channels.
    channels: HashMap<PartyId, Vec<String>>,
}

impl Lookup {
    /// Loads what the requests name.
    pub fn load(c: &mut DbConn, reqs: &[&SubscribeRequest]) -> Result<Self> {
        let mut names: Vec<&str> = reqs.iter().map(|r| r.party.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let parties = party::kinds_by_name(c, &names)?
            .into_iter()
            .collect::<HashMap<_, _>>();
        let ids: Vec<i64> = parties.values().map(|(id, _)| id.0).collect();
        let mut prefs: HashMap<PartyId, Option<Prefs>> =
            ids.iter().map(|id| (PartyId(*id), None)).collect();
        let mut channels: HashMap<PartyId, Vec<String>> =
            ids.iter().map(|id| (PartyId(*id), Vec::new())).collect();
        for chunk in ids.chunks(CHUNK) {
            let rows: Vec<(i64, String, i32, i32)> = users::table
                .filter(users::party_id.eq_any(chunk))
                .select((
                    users::party_id,
                    users::timezone,
                    users::week_start,
                    users::daily_hour,
                ))
                .load(c)?;
            let groups: Vec<(i64, String, i32, i32)> = group_prefs::table
                .filter(group_prefs::party_id.eq_any(chunk))
                .select((
                    group_prefs::party_id,
                    group_prefs::timezone,
                    group_prefs::week_start,
                    group_prefs::daily_hour,
                ))
                .load(c)?;
            for (id, tz, ws, dh) in rows.into_iter().chain(groups) {
                prefs.insert(PartyId(id), Some((tz, ws, dh)));
            }
            let rows: Vec<(i64, String)> = contact_points::table
                .filter(contact_points::party_id.eq_any(chunk))
                .filter(contact_points::disabled.eq(false))
                .select((contact_points::party_id, contact_points::channel))
                .load(c)?;
            for (id, ch) in rows {
                channels.entry(PartyId(id)).or_default().push(ch);
            }
        }
        let mut uuids: Vec<&str> = reqs
            .iter()
            .filter_map(|r| r.collection.as_deref())
            .collect();
        uuids.sort_unstable();
        uuids.dedup();
        let mut colls = HashMap::new();
        for chunk in uuids.chunks(CHUNK) {
            let rows: Vec<(i64, String)> = collections::table
                .filter(collections::uuid.eq_any(chunk))
                .select((collections::id, collections::uuid))
                .load(c)?;
            colls.extend(rows.into_iter().map(|(id, u)| (u, CollectionId(id))));
        }
        Ok(Lookup {
            parties,
            collections: colls,
            prefs,
            channels,
        })
    }

    pub(super) fn party(&self, c: &mut DbConn, name: &str) -> Result<(PartyId, String)> {
        match self.parties.get(name) {
            Some(p) => Ok(p.clone()),
            None => party::find(c, name),
        }
    }

    pub(super) fn collection(&self, c: &mut DbConn, uuid: &str) -> Result<CollectionId> {
        match self.collections.get(uuid) {
            Some(id) => Ok(*id),
            None => Ok(items::find_collection(c, uuid)?.id),
        }
    }

    pub(super) fn prefs(&self, c: &mut DbConn, p: PartyId) -> Result<Option<Prefs>> {
        if let Some(known) = self.prefs.get(&p) {
            return Ok(known.clone());
        }
        let user: Option<Prefs> = users::table
            .filter(users::party_id.eq(p.0))
            .select((users::timezone, users::week_start, users::daily_hour))
            .first(c)
            .optional()?;
        if user.is_some() {
            return Ok(user);
        }
        Ok(group_prefs::table
            .filter(group_prefs::party_id.eq(p.0))
            .select((
                group_prefs::timezone,
                group_prefs::week_start,
                group_prefs::daily_hour,
            ))
            .first(c)
            .optional()?)
    }

    /// A user must have an enabled address on every channel (a group's
    /// requests are expanded to its members, or go to its own address).
    pub(super) fn check_addresses(
        &self,
        c: &mut DbConn,
        p: PartyId,
        name: &str,
        asked: &[Channel],
    ) -> Result<()> {
        let loaded;
        let have: &[String] = match self.channels.get(&p) {
            Some(h) => h,
            None => {
                loaded = party::contact_points(c, p)?
                    .into_iter()
                    .filter(|cp| !cp.disabled)
                    .map(|cp| cp.channel)
                    .collect::<Vec<_>>();
                &loaded
            }
        };
        for ch in asked {
            if !have.iter().any(|h| h == ch.as_str()) {
                return Err(Error::invalid(format!(
                    "{name} has no {} address: add one before subscribing on that channel",
                    ch.as_str()
                )));
            }
        }
        Ok(())
    }
}

/// Where a digest already is: a stored subscription (its channels as they
/// will be), or a row of this batch still to insert.
enum Slot {
    /// `read`: its channels as stored, which a merge leaves behind.
    Stored {
        twin: Twin,
        read: String,
    },
    New(usize),
}

/// A row to insert: the line that made it and its channels so far.
struct NewRow<'p, 'a> {
    p: &'p Prepared<'a>,
    next_due: DateTime<Utc>,
    channels: Vec<Channel>,
}

/// What one line came to, before the writes give new rows their ids.
enum Outcome {
    Created(usize),
    MergedNew(usize, Vec<Channel>),
    Merged(SubscriptionId, Vec<Channel>),
}

/// What [`store_many_in_tx`] did with each line, in order; or the lines it
/// refused (their indexes in the batch), when nothing was written.
pub type Stored = std::result::Result<Vec<Subscribed>, Vec<(usize, Error)>>;

/// Stores `batch` (each prepared line with its first due time) in the
/// caller's transaction, in order, as [`super::store`] would line by line
/// (with no second look): a line whose digest the party has (stored, or an earlier line)
/// adds its channels to it or is refused, naming it. The outer error is the
/// database's; the inner ones are the lines' (then nothing is written).
pub fn store_many_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    batch: &[(Prepared, DateTime<Utc>)],
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Stored> {
    let mut parties: Vec<i64> = batch.iter().map(|(p, _)| p.digest.party.0).collect();
    parties.sort_unstable();
    parties.dedup();
    let mut slots: HashMap<Key, Slot> = HashMap::new();
    for (key, twin) in twins_of(c, &parties)? {
        let read = twin.channels.clone();
        slots.insert(key, Slot::Stored { twin, read });
    }
    let mut rows: Vec<NewRow> = Vec::new();
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut bad = Vec::new();
    for (i, (p, next_due)) in batch.iter().enumerate() {
        let key = key_of(&p.digest);
        let outcome = match slots.get_mut(&key) {
            None => {
                rows.push(NewRow {
                    p,
                    next_due: *next_due,
                    channels: p.channels.clone(),
                });
                slots.insert(key, Slot::New(rows.len() - 1));
                Ok(Outcome::Created(rows.len() - 1))
            }
            Some(Slot::Stored { twin, .. }) => {
                merged_channels(twin, &p.channels, p.req).map(|chs| {
                    twin.channels = channel_list(&chs);
                    Outcome::Merged(twin.id, chs)
                })
            }
            Some(Slot::New(n)) => {
                let row = &mut rows[*n];
                // An earlier line of this batch: compare as with a stored
                // row; it has no id yet, so name its line.
                let pending = Twin {
                    id: SubscriptionId(0),
                    channels: channel_list(&row.channels),
                    paused: false,
                    include_own: row.p.req.include_own,
                    send_empty: row.p.req.send_empty,
                };
                match merged_channels(&pending, &p.channels, p.req) {
                    Ok(chs) => {
                        row.channels = chs.clone();
                        Ok(Outcome::MergedNew(*n, chs))
                    }
                    Err(e) => Err(Error::conflict(
                        e.to_string()
                            .replace("subscription 0", "an earlier line of this import"),
                    )),
                }
            }
        };
        match outcome {
            Ok(o) => outcomes.push(o),
            Err(e) => bad.push((i, e)),
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    let ids = insert_rows(c, now, &rows, progress)?;
    if events {
        let made: Vec<_> = rows
            .iter()
            .zip(&ids)
            .map(|(r, id)| (*id, &r.p.digest, r.channels.as_slice()))
            .collect();
        super::life::created_events(c, now, &made)?;
    }
    for slot in slots.values() {
        if let Slot::Stored { twin, read } = slot {
            if twin.channels != *read {
                update_channels(c, twin, read)?;
            }
        }
    }
    Ok(Ok(outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Created(n) => Subscribed::Created(ids[n]),
            Outcome::MergedNew(n, channels) => Subscribed::Merged {
                id: ids[n],
                channels,
            },
            Outcome::Merged(id, channels) => Subscribed::Merged { id, channels },
        })
        .collect()))
}

/// Inserts the new rows; their ids, in `rows`' order
/// ([`crate::db::insert_returning_ids!`], the ids matched back where they
/// need to be by the digest each row delivers, which the unique index
/// makes one row's).
fn insert_rows(
    c: &mut DbConn,
    now: DateTime<Utc>,
    rows: &[NewRow],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<SubscriptionId>> {
    let now = now.naive_utc();
    // Their windows start where the log can be cut now.
    let from = crate::modlog::cut(c)?;
    let values = |r: &NewRow| {
        let d = &r.p.digest;
        (
            subscriptions::party_id.eq(d.party.0),
            subscriptions::collection_id.eq(d.collection.map(|c| c.0)),
            subscriptions::kind.eq(d.kind.as_str()),
            subscriptions::frequency.eq(d.frequency.as_str()),
            subscriptions::day_of_week.eq(d.day),
            subscriptions::hour_of_day.eq(d.hour),
            subscriptions::channels.eq(channel_list(&r.channels)),
            subscriptions::include_own.eq(r.p.req.include_own),
            subscriptions::send_empty.eq(r.p.req.send_empty),
            subscriptions::created_at.eq(now),
            subscriptions::active_since.eq(now),
            subscriptions::next_due_at.eq(Some(r.next_due.naive_utc())),
            subscriptions::last_log_cut.eq(from.as_str().to_string()),
        )
    };
    let mut ids = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(CHUNK / 5) {
        let vals: Vec<_> = chunk.iter().map(values).collect();
        let done = crate::db::insert_returning_ids!(
            c,
            subscriptions::table,
            &vals,
            subscriptions::id,
            KeyColumns::default() => |i| key_of(&chunk[i].p.digest)
        );
        match done {
            Ok(got) => ids.extend(got.into_iter().map(SubscriptionId)),
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                info,
            )) if info.constraint_name() == Some(DIGEST_INDEX)
                || info.message().contains(DIGEST_INDEX) =>
            {
                return Err(Error::Storage(
                    "a subscription of this import was stored by another writer meanwhile; try again"
                        .into(),
                ))
            }
            Err(e) => return Err(e.into()),
        }
        progress(ids.len());
    }
    Ok(ids)
}

/// Writes a stored twin's merged channels; a row changed since it was
/// `read` is another writer's: a storage error, which rolls the import back.
fn update_channels(c: &mut DbConn, twin: &Twin, read: &str) -> Result<()> {
    let n = diesel::update(
        subscriptions::table
            .find(twin.id.0)
            .filter(subscriptions::channels.eq(read)),
    )
    .set(subscriptions::channels.eq(&twin.channels))
    .execute(c)?;
    if n == 0 {
        return Err(Error::Storage(format!(
            "subscription {} was changed by another writer meanwhile; try again",
            twin.id
        )));
    }
    Ok(())
}
