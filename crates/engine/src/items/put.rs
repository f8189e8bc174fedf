//! Items: `digestd item put` and `PUT /api/v1/items/{uuid}`. A put
//! validates and resolves everything first, then writes the item, its
//! collection links and the modifications it records in one transaction.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use super::collection_ids;
use crate::db::schema::{collection_items, items};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, ItemId, PartyId};
use crate::modlog::{self, Action, Change, NewModification};
use crate::parties;
use crate::validate::{self, AtBounds};

/// The JSON document `digestd item put` reads: the item's full new state.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ItemInput {
    pub uuid: String,
    /// One collection …
    #[serde(default)]
    pub collection: Option<String>,
    /// … or several.
    #[serde(default)]
    pub collections: Option<Vec<String>>,
    pub kind: String,
    pub title: String,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub reminder: Option<String>,
    #[serde(default)]
    pub rrule: Option<String>,
    #[serde(default)]
    pub tz: Option<String>,
    /// Where the item lives in its source system (http or https): the
    /// link feeds and digests give it. None: no link.
    #[serde(default)]
    pub url: Option<String>,
    /// Who made the change (a username).
    pub actor: String,
    /// When it happened (RFC 3339); defaults to now.
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub deleted: bool,
}

/// What [`put_item`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PutOutcome {
    pub item: ItemId,
    pub uuid: String,
    /// The actions recorded, one per (collection, action); empty when the
    /// stored item already had this state.
    pub actions: Vec<String>,
    pub changes: Vec<Change>,
}

/// The comparable state of an item: attribute name → value.
type State = BTreeMap<&'static str, Option<String>>;

fn rfc3339(t: NaiveDateTime) -> String {
    t.and_utc().to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A recurrence rule is checked against the item's own start and zone, the
/// way the forward digest will expand it.
fn validate_rrule(r: &str, start: Option<NaiveDateTime>, tz: Option<&str>) -> Result<String> {
    let r = validate::text("rrule", r)?;
    let start = start.ok_or_else(|| Error::invalid("an item with an rrule needs a start"))?;
    let tz = tz
        .map(validate::timezone)
        .transpose()?
        .unwrap_or(chrono_tz::Tz::UTC);
    crate::recur::validate(&r, start.and_utc(), tz)
        .map_err(|e| Error::invalid(format!("invalid rrule {r:?}: {e}")))
}

/// Validated item state and its collections.
struct Valid {
    uuid: String,
    collections: BTreeSet<String>,
    kind: String,
    title: String,
    start: Option<NaiveDateTime>,
    reminder: Option<NaiveDateTime>,
    rrule: Option<String>,
    tz: Option<String>,
    url: Option<String>,
    at: DateTime<Utc>,
}

impl Valid {
    fn state(&self) -> State {
        BTreeMap::from([
            ("kind", Some(self.kind.clone())),
            ("title", Some(self.title.clone())),
            ("start", self.start.map(rfc3339)),
            ("reminder", self.reminder.map(rfc3339)),
            ("rrule", self.rrule.clone()),
            ("timezone", self.tz.clone()),
            ("url", self.url.clone()),
        ])
    }
}

fn validate_input(input: &ItemInput, now: DateTime<Utc>, bounds: &AtBounds) -> Result<Valid> {
    let uuid = validate::uuid("item", &input.uuid)?;
    let mut colls: Vec<&String> = input.collections.iter().flatten().collect();
    colls.extend(input.collection.iter());
    if colls.is_empty() && !input.deleted {
        return Err(Error::invalid(
            "item needs \"collection\" or \"collections\"",
        ));
    }
    let collections = colls
        .into_iter()
        .map(|c| validate::uuid("collection", c))
        .collect::<Result<BTreeSet<_>, _>>()?;
    let time = |what: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| validate::instant(what, s).map(|t| t.naive_utc()))
            .transpose()
    };
    let start = time("start", &input.start)?;
    Ok(Valid {
        uuid,
        collections,
        kind: validate::text("kind", &input.kind)?,
        title: validate::text("title", &input.title)?,
        start,
        reminder: time("reminder", &input.reminder)?,
        rrule: input
            .rrule
            .as_deref()
            .map(|r| validate_rrule(r, start, input.tz.as_deref()))
            .transpose()?,
        tz: input
            .tz
            .as_deref()
            .map(|t| validate::timezone(t).map(|z| z.name().to_string()))
            .transpose()?,
        url: input.url.as_deref().map(validate::item_url).transpose()?,
        at: match &input.at {
            Some(a) => bounds.check(validate::instant("at", a)?)?,
            None => now,
        },
    })
}

/// An `items` row as a put compares against it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = items)]
struct StoredItem {
    id: i64,
    kind: String,
    title: String,
    start_at: Option<NaiveDateTime>,
    reminder_at: Option<NaiveDateTime>,
    rrule: Option<String>,
    timezone: Option<String>,
    deleted: bool,
    url: Option<String>,
}

/// Upserts an item and records what changed. Everything is validated and
/// resolved before the write transaction opens; the item row, its
/// collection links and the modifications are written together.
pub fn put_item(conn: &mut DbConn, now: DateTime<Utc>, input: &ItemInput) -> Result<PutOutcome> {
    put_item_within(conn, now, input, &AtBounds::ANY)
}

/// [`put_item`] with its `at` held to `bounds` (`[record] max_ahead_seconds`
/// and `max_age_days`, as `digestd item put` and the API do).
pub fn put_item_within(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    input: &ItemInput,
    bounds: &AtBounds,
) -> Result<PutOutcome> {
    let v = validate_input(input, now, bounds)?;
    let (actor, _) = parties::find(conn, &input.actor)?;
    let wanted_uuids: Vec<&str> = v.collections.iter().map(String::as_str).collect();
    let wanted = collection_ids(conn, &wanted_uuids)?;
    if let Some(missing) = v.collections.iter().find(|u| !wanted.contains_key(*u)) {
        return Err(Error::not_found(format!("no collection {missing}")));
    }
    let tx_id = uuid::Uuid::new_v4().hyphenated().to_string();
    let wanted: BTreeSet<i64> = wanted.values().map(|c| c.0).collect();
    conn.write_tx(|c| {
        let stored: Option<StoredItem> = items::table
            .filter(items::uuid.eq(&v.uuid))
            .select(StoredItem::as_select())
            .first(c)
            .optional()?;
        let put = Put {
            v: &v,
            deleting: input.deleted,
            wanted: &wanted,
            at: v.at.naive_utc(),
            tx_id: &tx_id,
            actor,
            // A delete need not repeat the address: the stored one stays.
            url: v
                .url
                .clone()
                .or_else(|| stored.as_ref().and_then(|s| s.url.clone())),
        };
        let (item_id, mods, changes) = match stored {
            None => put.insert(c)?,
            Some(s) => put.update(c, s)?,
        };
        modlog::record_in_tx(c, &mods)?;
        Ok(PutOutcome {
            item: ItemId(item_id),
            uuid: v.uuid.clone(),
            actions: mods.iter().map(|m| m.action.as_str().to_string()).collect(),
            changes,
        })
    })
}

/// One validated put inside its write transaction: what it writes, and
/// the modifications it records.
struct Put<'a> {
    v: &'a Valid,
    deleting: bool,
    /// The collections the item is to belong to.
    wanted: &'a BTreeSet<i64>,
    at: NaiveDateTime,
    tx_id: &'a str,
    actor: PartyId,
    url: Option<String>,
}

/// The item's id, the modifications to record and the item's changes.
type Written = (i64, Vec<NewModification>, Vec<Change>);

impl Put<'_> {
    fn modification(&self, coll: i64, action: Action, changes: Vec<Change>) -> NewModification {
        NewModification {
            tx_id: self.tx_id.to_string(),
            occurred_at: self.v.at,
            collection: CollectionId(coll),
            item_uuid: self.v.uuid.clone(),
            actor: Some(self.actor),
            action,
            item_kind: self.v.kind.clone(),
            item_title: self.v.title.clone(),
            item_url: self.url.clone(),
            changes,
        }
    }

    /// Links the item into every wanted collection, recorded as created
    /// there with every value it has.
    fn create_in_wanted(&self, c: &mut DbConn, id: i64) -> Result<Written> {
        let changes = creation_changes(&self.v.state());
        let mut mods = Vec::new();
        for coll in self.wanted {
            link(c, CollectionId(*coll), id)?;
            mods.push(self.modification(*coll, Action::Created, changes.clone()));
        }
        Ok((id, mods, changes))
    }

    /// A new item.
    fn insert(&self, c: &mut DbConn) -> Result<Written> {
        let v = self.v;
        if self.deleting {
            return Err(Error::not_found(format!(
                "cannot delete unknown item {}",
                v.uuid
            )));
        }
        let id: i64 = diesel::insert_into(items::table)
            .values((
                items::uuid.eq(&v.uuid),
                items::kind.eq(&v.kind),
                items::title.eq(&v.title),
                items::start_at.eq(v.start),
                items::reminder_at.eq(v.reminder),
                items::rrule.eq(&v.rrule),
                items::timezone.eq(&v.tz),
                items::url.eq(&v.url),
                items::created_at.eq(self.at),
                items::updated_at.eq(self.at),
            ))
            .returning(items::id)
            .get_result(c)?;
        self.create_in_wanted(c, id)
    }

    /// A stored item: deleted, back after a delete, or edited.
    fn update(&self, c: &mut DbConn, stored: StoredItem) -> Result<Written> {
        let StoredItem {
            id,
            kind,
            title,
            start_at,
            reminder_at,
            rrule,
            timezone,
            deleted,
            url,
        } = stored;
        let current: BTreeSet<i64> = collection_items::table
            .filter(collection_items::item_id.eq(id))
            .select(collection_items::collection_id)
            .load::<i64>(c)?
            .into_iter()
            .collect();
        if self.deleting {
            let mut mods = Vec::new();
            if !deleted {
                diesel::update(items::table.find(id))
                    .set((items::deleted.eq(true), items::updated_at.eq(self.at)))
                    .execute(c)?;
                for coll in &current {
                    mods.push(self.modification(*coll, Action::Deleted, vec![]));
                }
            }
            return Ok((id, mods, Vec::new()));
        }
        write_state(c, id, self.v, self.at)?;
        if deleted {
            // Put after delete: the item comes back, recorded as created
            // again in the collections it now belongs to.
            diesel::delete(collection_items::table.filter(collection_items::item_id.eq(id)))
                .execute(c)?;
            return self.create_in_wanted(c, id);
        }
        let old_state: State = BTreeMap::from([
            ("kind", Some(kind)),
            ("title", Some(title)),
            ("start", start_at.map(rfc3339)),
            ("reminder", reminder_at.map(rfc3339)),
            ("rrule", rrule),
            ("timezone", timezone),
            ("url", url),
        ]);
        let new_state = self.v.state();
        let changes: Vec<Change> = old_state
            .iter()
            .filter(|(k, old)| new_state.get(*k) != Some(old))
            .map(|(k, old)| Change {
                attribute: k.to_string(),
                old: old.clone(),
                new: new_state.get(k).cloned().flatten(),
            })
            .collect();
        let mut mods = Vec::new();
        for coll in self.wanted.difference(&current) {
            link(c, CollectionId(*coll), id)?;
            mods.push(self.modification(*coll, Action::Added, vec![]));
        }
        for coll in current.difference(self.wanted) {
            diesel::delete(
                collection_items::table
                    .filter(collection_items::collection_id.eq(coll))
                    .filter(collection_items::item_id.eq(id)),
            )
            .execute(c)?;
            mods.push(self.modification(*coll, Action::Removed, vec![]));
        }
        if !changes.is_empty() {
            for coll in self.wanted.intersection(&current) {
                mods.push(self.modification(*coll, Action::Edited, changes.clone()));
            }
        }
        Ok((id, mods, changes))
    }
}

/// Overwrites a stored item with the validated new state (not deleted).
fn write_state(c: &mut DbConn, id: i64, v: &Valid, at: NaiveDateTime) -> Result<()> {
    diesel::update(items::table.find(id))
        .set((
            items::kind.eq(&v.kind),
            items::title.eq(&v.title),
            items::start_at.eq(v.start),
            items::reminder_at.eq(v.reminder),
            items::rrule.eq(&v.rrule),
            items::timezone.eq(&v.tz),
            items::url.eq(&v.url),
            items::deleted.eq(false),
            items::updated_at.eq(at),
        ))
        .execute(c)?;
    Ok(())
}

/// The values of a newly created item: every attribute that has a value.
fn creation_changes(state: &State) -> Vec<Change> {
    state
        .iter()
        .filter(|(_, val)| val.is_some())
        .map(|(k, val)| Change {
            attribute: k.to_string(),
            old: None,
            new: val.clone(),
        })
        .collect()
}

fn link(c: &mut DbConn, coll: CollectionId, item: i64) -> Result<()> {
    diesel::insert_into(collection_items::table)
        .values((
            collection_items::collection_id.eq(coll.0),
            collection_items::item_id.eq(item),
        ))
        .execute(c)?;
    Ok(())
}
