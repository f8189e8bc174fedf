//! Subscriptions: who wants which digest (modification or forward) of which
//! collection (or all), how often, at which local hour and day, on which
//! channels. Validated here, before anything is written.
//!
//! A party has each digest once: party, collection (or all), kind,
//! frequency, local hour and day say which digest it is, and a second
//! subscription with the same six would send every digest twice. So
//! [`store`] refuses such a twin, naming the subscription that exists,
//! or merges it into that one when all it adds is channels. Its other
//! settings (`send_empty`, `include_own`) do not make another digest: a
//! twin that differs only there is refused too. The check runs in the write
//! transaction, and the unique index `subscriptions_digest` on the same six
//! (NULLs folded, as NULL never equals NULL) stops two concurrent writers.
//!
//! Owns `subscriptions` and `subscription_optouts` (members' opt-outs from
//! group subscriptions: [`optouts`]). (`subscription_runs` belongs to the
//! scheduler.)

mod bulk;
mod change;
mod life;
mod named;
mod optouts;
mod twin;

pub use bulk::{store_many_in_tx, Lookup};
pub use life::{pause, pause_in_tx, unpause_in_tx};

pub use change::{
    end_in_tx, get, hold_in_tx, ids_of_collection, ids_of_party, list_for_party, retime_in_tx,
    Retime,
};
pub use named::{list_named, Named};
pub use optouts::{
    clear as clear_optout, list_optouts, opt_in_in_tx, opt_out_in_tx, opted_out, reaching, OptOut,
};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::subscriptions;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::parties::Channel;
use crate::validate;
use change::parse_channels;
use twin::{channel_list, merge, twin_of, Digest, DIGEST_INDEX};
pub use twin::{Key, KeyColumns};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Frequency {
    Hourly,
    Daily,
    Weekly,
}

impl Frequency {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "hourly" => Ok(Frequency::Hourly),
            "daily" => Ok(Frequency::Daily),
            "weekly" => Ok(Frequency::Weekly),
            o => Err(Error::invalid(format!(
                "invalid frequency {o:?}: use hourly, daily or weekly"
            ))),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Hourly => "hourly",
            Frequency::Daily => "daily",
            Frequency::Weekly => "weekly",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// What is coming up in the next period (`findItemsInRange`).
    Forward,
    /// What changed since the last digest (`findModifiedItems`).
    Modification,
}

impl Kind {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "forward" => Ok(Kind::Forward),
            "modification" => Ok(Kind::Modification),
            o => Err(Error::invalid(format!(
                "invalid kind {o:?}: use modification or forward"
            ))),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Forward => "forward",
            Kind::Modification => "modification",
        }
    }
}

/// What `digestd subscribe` takes, unvalidated.
#[derive(Debug, Clone, Default)]
pub struct SubscribeRequest {
    pub party: String,
    pub frequency: String,
    pub kind: String,
    /// A collection UUID, or `None` for all collections.
    pub collection: Option<String>,
    /// Default: `["email"]`.
    pub channels: Vec<String>,
    pub hour: Option<i64>,
    pub day: Option<String>,
    /// Show the subscriber's own changes too (left out by default).
    pub include_own: bool,
    /// Post a digest even when it holds nothing (not by default).
    pub send_empty: bool,
}

/// A stored subscription.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subscription {
    pub id: SubscriptionId,
    pub party: PartyId,
    pub collection: Option<CollectionId>,
    pub kind: String,
    pub frequency: String,
    pub day_of_week: Option<i32>,
    pub hour_of_day: Option<i32>,
    pub channels: Vec<String>,
    pub paused: bool,
}

impl std::fmt::Display for Subscription {
    /// `#3 party 7 weekly modification, Mon 08:00 local, via email (paused)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{} party {} {} {}",
            self.id, self.party, self.frequency, self.kind
        )?;
        self.fmt_timing(f)
    }
}

impl Subscription {
    /// `, Mon 08:00 local, via email (paused)`: the tail of both listings.
    fn fmt_timing(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.day_of_week, self.hour_of_day) {
            (Some(d), Some(h)) => write!(
                f,
                ", {} {h:02}:00 local",
                crate::validate::weekday_name(d as u8)
            )?,
            (None, Some(h)) => write!(f, ", {h:02}:00 local")?,
            _ => {}
        }
        write!(f, ", via {}", self.channels.join(","))?;
        if self.paused {
            write!(f, " (paused)")?;
        }
        Ok(())
    }
}

/// What [`subscribe`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscribed {
    /// A new subscription.
    Created(SubscriptionId),
    /// The party had this digest already: the request's channels were added
    /// to that subscription, which now has `channels`.
    Merged {
        id: SubscriptionId,
        channels: Vec<Channel>,
    },
}

impl Subscribed {
    /// The subscription that delivers the digest, new or merged into.
    pub fn id(&self) -> SubscriptionId {
        match self {
            Subscribed::Created(id) | Subscribed::Merged { id, .. } => *id,
        }
    }
}

/// A validated subscription request, with its names resolved and its hour
/// and day defaulted, not yet stored: what the scheduler needs to find its
/// first period ([`Prepared::timing`]) before [`store`] writes it.
pub struct Prepared<'a> {
    req: &'a SubscribeRequest,
    digest: Digest,
    channels: Vec<Channel>,
    /// The party's timezone and first day of week (a user's or a group's);
    /// `None` when it has none (UTC, Monday).
    zone: Option<(String, i32)>,
}

/// When a subscription's digests fall due: what the scheduler's rule is
/// made of.
pub struct Timing<'a> {
    pub frequency: Frequency,
    pub hour: Option<i32>,
    pub day: Option<i32>,
    /// The party's timezone and first day of week; `None` when it has
    /// none (UTC, Monday).
    pub zone: Option<(&'a str, i32)>,
}

impl Prepared<'_> {
    pub fn timing(&self) -> Timing<'_> {
        Timing {
            frequency: self.digest.frequency,
            hour: self.digest.hour,
            day: self.digest.day,
            zone: self.zone.as_ref().map(|(t, w)| (t.as_str(), *w)),
        }
    }
}

/// Validates a subscription request and resolves its names; writes
/// nothing. Hour and day default from the party's preferences (daily hour,
/// first day of week: a user's, or a group's `group_prefs`), else 08:00 on
/// Monday.
pub fn prepare<'a>(conn: &mut DbConn, req: &'a SubscribeRequest) -> Result<Prepared<'a>> {
    prepare_with(conn, &Lookup::default(), req)
}

/// [`prepare`] with names, preferences and addresses taken from `look`
/// where it has them (`digestd subscription import` loads them for the
/// whole batch).
pub fn prepare_with<'a>(
    conn: &mut DbConn,
    look: &Lookup,
    req: &'a SubscribeRequest,
) -> Result<Prepared<'a>> {
    let frequency = Frequency::parse(&req.frequency)?;
    let kind = Kind::parse(&req.kind)?;
    let channels = parse_channels(&req.channels)?;
    let hour = req.hour.map(validate::hour).transpose()?;
    let day = req.day.as_deref().map(validate::weekday).transpose()?;
    match frequency {
        Frequency::Hourly if hour.is_some() || day.is_some() => {
            return Err(Error::invalid(
                "an hourly subscription takes neither --hour nor --day",
            ))
        }
        Frequency::Daily if day.is_some() => {
            return Err(Error::invalid(
                "a daily subscription takes --hour, not --day",
            ))
        }
        _ => {}
    }
    let (party, party_kind) = look.party(conn, &req.party)?;
    let collection = match &req.collection {
        Some(u) => Some(look.collection(conn, u)?),
        None => None,
    };
    let prefs = look.prefs(conn, party)?;
    let (week_start, daily_hour) = prefs.as_ref().map_or((0, 8), |p| (p.1, p.2));
    if party_kind == "user" {
        look.check_addresses(conn, party, &req.party, &channels)?;
    }
    let (hour, day) = match frequency {
        Frequency::Hourly => (None, None),
        Frequency::Daily => (Some(hour.map_or(daily_hour, i32::from)), None),
        Frequency::Weekly => (
            Some(hour.map_or(daily_hour, i32::from)),
            Some(day.map_or(week_start, i32::from)),
        ),
    };
    Ok(Prepared {
        req,
        digest: Digest {
            party,
            collection,
            kind,
            frequency,
            hour,
            day,
        },
        channels,
        zone: prefs.map(|(tz, ws, _)| (tz, ws)),
    })
}

/// Stores a prepared subscription whose first period falls due at
/// `next_due`, or merges it into the party's subscription to the same
/// digest (see the module doc). `manage::subscribe` is the whole operation.
pub fn store(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    p: &Prepared,
    next_due: DateTime<Utc>,
) -> Result<Subscribed> {
    // A concurrent writer can store the same digest between our look-up
    // and our write (PostgreSQL; SQLite's writers take turns): the index
    // refuses our insert, or our channel update finds the row changed.
    // Then look again, which finds what it stored. Each lost race is
    // another writer's progress, and a digest sees at most three: its
    // insert and two merges (channels only grow, from one to all three),
    // so the fourth look finds it settled.
    for _ in 0..4 {
        let mut raced = false;
        let done = conn.write_tx(|c| store_once(c, now, p, next_due, &mut raced));
        if !raced {
            return done;
        }
    }
    Err(Error::Storage(
        "subscribe: the subscription kept changing under concurrent writers; try again".into(),
    ))
}

fn store_once(
    c: &mut DbConn,
    now: DateTime<Utc>,
    p: &Prepared,
    next_due: DateTime<Utc>,
    raced: &mut bool,
) -> Result<Subscribed> {
    let (req, digest, channels) = (p.req, &p.digest, &p.channels);
    let Digest {
        party,
        collection,
        kind,
        frequency,
        hour,
        day,
    } = *digest;
    if let Some(twin) = twin_of(c, digest)? {
        return merge(c, &twin, channels, req, raced);
    }
    // Its windows start where the log can be cut now: what was recorded
    // before it existed is not its to send, whatever its `at`.
    let from = crate::modlog::start_cut(c, collection)?;
    let inserted = diesel::insert_into(subscriptions::table)
        .values((
            subscriptions::party_id.eq(party.0),
            subscriptions::collection_id.eq(collection.map(|c| c.0)),
            subscriptions::kind.eq(kind.as_str()),
            subscriptions::frequency.eq(frequency.as_str()),
            subscriptions::day_of_week.eq(day),
            subscriptions::hour_of_day.eq(hour),
            subscriptions::channels.eq(channel_list(channels)),
            subscriptions::include_own.eq(req.include_own),
            subscriptions::send_empty.eq(req.send_empty),
            subscriptions::created_at.eq(now.naive_utc()),
            subscriptions::active_since.eq(now.naive_utc()),
            subscriptions::next_due_at.eq(Some(next_due.naive_utc())),
            subscriptions::last_log_cut.eq(from.as_str()),
        ))
        .returning(subscriptions::id)
        .get_result::<i64>(c);
    match inserted {
        Ok(id) => {
            let id = SubscriptionId(id);
            life::created_events(c, now, &[(id, digest, channels)])?;
            Ok(Subscribed::Created(id))
        }
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            info,
        )) if info.constraint_name() == Some(DIGEST_INDEX)
            || info.message().contains(DIGEST_INDEX) =>
        {
            *raced = true;
            Err(Error::conflict("the same subscription was just stored"))
        }
        Err(e) => Err(e.into()),
    }
}

/// All subscriptions, by id.
pub fn list(conn: &mut DbConn) -> Result<Vec<Subscription>> {
    list_where(conn, None)
}

/// The subscriptions of `party` (all when `None`), by id.
fn list_where(conn: &mut DbConn, party: Option<PartyId>) -> Result<Vec<Subscription>> {
    let mut q = subscriptions::table.into_boxed();
    if let Some(p) = party {
        q = q.filter(subscriptions::party_id.eq(p.0));
    }
    let rows: Vec<Stored> = q
        .select(Stored::as_select())
        .order(subscriptions::id.asc())
        .load(conn)?;
    Ok(rows.into_iter().map(Subscription::from).collect())
}

/// The columns of `subscriptions` a [`Subscription`] shows.
#[derive(Queryable, Selectable)]
#[diesel(table_name = subscriptions)]
struct Stored {
    id: i64,
    party_id: i64,
    collection_id: Option<i64>,
    kind: String,
    frequency: String,
    day_of_week: Option<i32>,
    hour_of_day: Option<i32>,
    channels: String,
    paused: bool,
}

impl From<Stored> for Subscription {
    fn from(r: Stored) -> Subscription {
        Subscription {
            id: SubscriptionId(r.id),
            party: PartyId(r.party_id),
            collection: r.collection_id.map(CollectionId),
            kind: r.kind,
            frequency: r.frequency,
            day_of_week: r.day_of_week,
            hour_of_day: r.hour_of_day,
            channels: r.channels.split(',').map(str::to_string).collect(),
            paused: r.paused,
        }
    }
}
