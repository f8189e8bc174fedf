//! Subscriptions with their party's and collection's names, for people
//! (`digestd subscription list`): the ids stay, the names are added.

use std::collections::HashMap;

use diesel::prelude::*;
use serde::Serialize;

use super::{list, Subscription};
use crate::db::schema::{collections, parties};
use crate::db::DbConn;
use crate::error::Result;

/// A subscription with the names its ids stand for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Named {
    #[serde(flatten)]
    pub sub: Subscription,
    pub party_name: String,
    /// `None` for a subscription to every collection.
    pub collection_name: Option<String>,
    pub collection_uuid: Option<String>,
}

impl std::fmt::Display for Named {
    /// `#3 asha weekly modification of Team calendar, Mon 08:00 local, via email (paused)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.sub;
        write!(
            f,
            "#{} {} {} {} of {}",
            s.id,
            self.party_name,
            s.frequency,
            s.kind,
            self.collection_name.as_deref().unwrap_or("all collections")
        )?;
        s.fmt_timing(f)
    }
}

/// Every subscription, by id, with its names (two queries besides the list).
pub fn list_named(conn: &mut DbConn) -> Result<Vec<Named>> {
    let subs = list(conn)?;
    let mut party_ids: Vec<i64> = subs.iter().map(|s| s.party.0).collect();
    party_ids.sort_unstable();
    party_ids.dedup();
    let names: HashMap<i64, String> = parties::table
        .filter(parties::id.eq_any(&party_ids))
        .select((parties::id, parties::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();
    let mut coll_ids: Vec<i64> = subs
        .iter()
        .filter_map(|s| s.collection)
        .map(|c| c.0)
        .collect();
    coll_ids.sort_unstable();
    coll_ids.dedup();
    let colls: HashMap<i64, (String, String)> = collections::table
        .filter(collections::id.eq_any(&coll_ids))
        .select((collections::id, collections::name, collections::uuid))
        .load::<(i64, String, String)>(conn)?
        .into_iter()
        .map(|(id, name, uuid)| (id, (name, uuid)))
        .collect();
    Ok(subs
        .into_iter()
        .map(|sub| {
            let coll = sub.collection.and_then(|c| colls.get(&c.0));
            Named {
                party_name: names
                    .get(&sub.party.0)
                    .cloned()
                    .unwrap_or_else(|| format!("party {}", sub.party)),
                collection_name: coll.map(|(n, _)| n.clone()),
                collection_uuid: coll.map(|(_, u)| u.clone()),
                sub,
            }
        })
        .collect())
}
