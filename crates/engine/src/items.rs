//! Collections and the items in them. [`put_item`] upserts an item, diffs
//! it against the stored version and records the difference in the
//! modification log in the same transaction.
//!
//! Owns `collections`, `items` and `collection_items`.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::{collection_items, collections, items};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId};
use crate::modlog;
use crate::validate;

/// A collection as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collection {
    pub id: CollectionId,
    pub uuid: String,
    pub name: String,
}

/// Creates a collection with a fresh UUID.
pub fn create_collection(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    name: &str,
    owner: Option<PartyId>,
) -> Result<Collection> {
    let name = validate::text("collection name", name)?;
    let uuid = uuid::Uuid::new_v4().hyphenated().to_string();
    let id = conn.write_tx(|c| {
        refuse_taken_name(c, &name, None)?;
        Ok(diesel::insert_into(collections::table)
            .values((
                collections::uuid.eq(&uuid),
                collections::name.eq(&name),
                collections::owner_id.eq(owner.map(|p| p.0)),
                collections::created_at.eq(now.naive_utc()),
            ))
            .returning(collections::id)
            .get_result::<i64>(c)?)
    })?;
    Ok(Collection {
        id: CollectionId(id),
        uuid,
        name,
    })
}

/// Refuses `name` when another collection (not `except`) has it, in any
/// case: digests, feeds and pages name a collection by its name, and two
/// "Team calendar"s could not be told apart there.
fn refuse_taken_name(c: &mut DbConn, name: &str, except: Option<CollectionId>) -> Result<()> {
    c.lock_in_tx("collections.name")?;
    let taken: Vec<(i64, String, String)> = collections::table
        .select((collections::id, collections::uuid, collections::name))
        .load(c)?;
    let lower = name.to_lowercase();
    match taken
        .into_iter()
        .find(|(id, _, n)| Some(CollectionId(*id)) != except && n.to_lowercase() == lower)
    {
        Some((_, uuid, n)) => Err(Error::conflict(format!(
            "a collection named {n:?} already exists ({uuid}); choose another name"
        ))),
        None => Ok(()),
    }
}

/// Collection ids by UUID; UUIDs not found are simply absent from the map.
pub fn collection_ids(conn: &mut DbConn, uuids: &[&str]) -> Result<BTreeMap<String, CollectionId>> {
    let mut out = BTreeMap::new();
    for chunk in uuids.chunks(10_000) {
        let rows: Vec<(i64, String)> = collections::table
            .filter(collections::uuid.eq_any(chunk))
            .select((collections::id, collections::uuid))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(id, u)| (u, CollectionId(id))));
    }
    Ok(out)
}

/// One collection by UUID.
pub fn find_collection(conn: &mut DbConn, uuid: &str) -> Result<Collection> {
    let uuid = validate::uuid("collection", uuid)?;
    collections::table
        .filter(collections::uuid.eq(&uuid))
        .select((collections::id, collections::uuid, collections::name))
        .first::<(i64, String, String)>(conn)
        .optional()?
        .map(|(id, uuid, name)| Collection {
            id: CollectionId(id),
            uuid,
            name,
        })
        .ok_or_else(|| Error::not_found(format!("no collection {uuid}")))
}

/// Renames a collection (its UUID, items, log and subscriptions stay).
pub fn rename_collection(conn: &mut DbConn, uuid: &str, name: &str) -> Result<Collection> {
    let name = validate::text("collection name", name)?;
    let coll = find_collection(conn, uuid)?;
    conn.write_tx(|c| {
        refuse_taken_name(c, &name, Some(coll.id))?;
        diesel::update(collections::table.find(coll.id.0))
            .set(collections::name.eq(&name))
            .execute(c)?;
        Ok(())
    })?;
    Ok(Collection { name, ..coll })
}

/// What deleting a collection removed besides its subscriptions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CollectionForgotten {
    /// Items in no other collection, deleted.
    pub items_deleted: usize,
    /// Items also in another collection: they stay there.
    pub items_kept: usize,
    pub modifications: usize,
}

/// Deletes a collection in the caller's transaction: items in no other
/// collection go, items in another stay there, its modification log goes
/// (`modlog::forget_collection_in_tx`), and its read tickets with it
/// (`ON DELETE CASCADE`). Its subscriptions must have been ended first.
pub fn delete_collection_in_tx(c: &mut DbConn, id: CollectionId) -> Result<CollectionForgotten> {
    let mine: Vec<i64> = collection_items::table
        .filter(collection_items::collection_id.eq(id.0))
        .select(collection_items::item_id)
        .load(c)?;
    let mut shared = BTreeSet::new();
    for chunk in mine.chunks(10_000) {
        let rows: Vec<i64> = collection_items::table
            .filter(collection_items::item_id.eq_any(chunk))
            .filter(collection_items::collection_id.ne(id.0))
            .select(collection_items::item_id)
            .load(c)?;
        shared.extend(rows);
    }
    diesel::delete(collection_items::table.filter(collection_items::collection_id.eq(id.0)))
        .execute(c)?;
    let orphans: Vec<i64> = mine.into_iter().filter(|i| !shared.contains(i)).collect();
    let mut items_deleted = 0;
    for chunk in orphans.chunks(10_000) {
        items_deleted += diesel::delete(items::table.filter(items::id.eq_any(chunk))).execute(c)?;
    }
    let log = modlog::forget_collection_in_tx(c, id)?;
    diesel::delete(collections::table.find(id.0)).execute(c)?;
    Ok(CollectionForgotten {
        items_deleted,
        items_kept: shared.len(),
        modifications: log.modifications,
    })
}

/// All collections, by name.
pub fn list_collections(conn: &mut DbConn) -> Result<Vec<Collection>> {
    let rows: Vec<(i64, String, String)> = collections::table
        .select((collections::id, collections::uuid, collections::name))
        .order(collections::name.asc())
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(id, uuid, name)| Collection {
            id: CollectionId(id),
            uuid,
            name,
        })
        .collect())
}

/// Offers collection `uuid` on the public sign-up page, or stops offering
/// it (`digestd collection set UUID --public | --no-public`). Who signed
/// up keeps their subscription either way.
pub fn set_public(conn: &mut DbConn, uuid: &str, public: bool) -> Result<Collection> {
    let coll = find_collection(conn, uuid)?;
    conn.write_tx(|c| {
        diesel::update(collections::table.find(coll.id.0))
            .set(collections::public.eq(public))
            .execute(c)?;
        Ok(())
    })?;
    Ok(coll)
}

/// The ids of the collections offered on the sign-up page.
pub fn public_ids(conn: &mut DbConn) -> Result<BTreeSet<CollectionId>> {
    let ids: Vec<i64> = collections::table
        .filter(collections::public.eq(true))
        .select(collections::id)
        .load(conn)?;
    Ok(ids.into_iter().map(CollectionId).collect())
}

/// The collections offered on the sign-up page, by name.
pub fn public_collections(conn: &mut DbConn) -> Result<Vec<Collection>> {
    let public = public_ids(conn)?;
    Ok(list_collections(conn)?
        .into_iter()
        .filter(|k| public.contains(&k.id))
        .collect())
}

mod put;
pub use put::{put_item, put_item_within, ItemInput, PutOutcome};
