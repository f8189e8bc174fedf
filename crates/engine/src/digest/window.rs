//! A window of the log as the composer keeps it: read once for every
//! subscriber of its collection and window, collapsed once for those who
//! made none of its changes, and with the raw modifications kept only for
//! the items a subscriber who made changes touched.
//!
//! A subscriber who made some of a window's changes, and whose
//! subscription leaves their own out, gets a collapse of their own
//! (`compose::collapse_without`), which needs every modification of the
//! items they touched, and no others. So a window read for a chunk keeps
//! the modifications of the items touched by the chunk's runs that leave
//! their own changes out ([`excluders`]), and notes whose they are; a
//! later run whose recipient is not among them reads the window again
//! ([`WindowChanges::covers`]). Kept whole, the modifications were most
//! of the composer's memory: about 100 MiB of `bench compose`'s 300.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::compose::{self, Changes};
use super::readers::read_parts;
use crate::db::{Db, DbConn};
use crate::error::Result;
use crate::ids::{CollectionId, PartyId};
use crate::modlog::{self, Modification, Span};
use crate::schedule::DueRun;
use crate::subscriptions::Kind;

/// A collection (or all of them) and a window's bounds in time and in the
/// log.
pub(super) type Window = (Option<CollectionId>, Span);

/// For each window a chunk's modification digests read: the recipients
/// whose subscriptions leave their own changes out.
pub(super) type Excluders = HashMap<Window, HashSet<PartyId>>;

/// The excluders of `runs`' windows (every window they read has an entry).
pub(super) fn excluders(runs: &[DueRun]) -> Excluders {
    let mut out = Excluders::new();
    for r in runs.iter().filter(|r| r.kind == Kind::Modification) {
        let e = out.entry((r.collection, r.span())).or_default();
        if !r.include_own {
            e.insert(r.party);
        }
    }
    out
}

/// One window of the log, read once: its collapse for someone who made
/// none of its changes, who made them, and the modifications some of them
/// need for their own collapse.
pub(super) struct WindowChanges {
    /// Every modification of the items touched by the parties in
    /// `kept_for`; every modification when that is `None`.
    pub mods: Vec<Modification>,
    kept_for: Option<HashSet<PartyId>>,
    pub all: Arc<Changes>,
    pub actors: HashSet<PartyId>,
    /// Modifications read (the cache's measure of its size).
    pub read: usize,
}

impl WindowChanges {
    /// The window of `mods`, keeping those `excluders` (when known) need.
    pub fn of(
        mut mods: Vec<Modification>,
        excluders: Option<&HashSet<PartyId>>,
    ) -> Result<Arc<WindowChanges>> {
        let all = Arc::new(compose::collapse(&mods, None)?);
        let actors: HashSet<PartyId> = mods.iter().filter_map(|m| m.actor).collect();
        let read = mods.len();
        let kept_for = excluders.map(|ex| {
            let kept: HashSet<PartyId> = actors.intersection(ex).copied().collect();
            let touched: HashSet<String> = mods
                .iter()
                .filter(|m| m.actor.is_some_and(|a| kept.contains(&a)))
                .map(|m| m.item_uuid.clone())
                .collect();
            mods.retain(|m| touched.contains(&m.item_uuid));
            mods.shrink_to_fit();
            kept
        });
        Ok(Arc::new(WindowChanges {
            mods,
            kept_for,
            all,
            actors,
            read,
        }))
    }

    /// Whether `me`'s own collapse can be made from what is kept.
    pub fn covers(&self, me: PartyId) -> bool {
        self.kept_for.as_ref().is_none_or(|k| k.contains(&me))
    }

    /// This window with every one of its modifications, `mods` (read
    /// again), its collapse and actors the same.
    pub fn with_every_mod(&self, mods: Vec<Modification>) -> Arc<WindowChanges> {
        Arc::new(WindowChanges {
            read: mods.len(),
            mods,
            kept_for: None,
            all: self.all.clone(),
            actors: self.actors.clone(),
        })
    }
}

pub(super) type Part<'a> = (Span, &'a [CollectionId]);

/// The windows of `parts` read and collapsed ([`read_parts`]): a chunk's
/// first batch reads most of its windows.
pub(super) fn read_windows(
    c: &mut DbConn,
    readers: Option<&Db>,
    workers: usize,
    parts: &[Part],
    excluders: Option<&Excluders>,
) -> Result<Vec<(Window, Arc<WindowChanges>)>> {
    read_parts(c, readers, workers, parts, |c, (span, part)| {
        let mut by: HashMap<CollectionId, Vec<Modification>> = HashMap::new();
        for m in modlog::find_in_span(c, Some(part), span)? {
            by.entry(m.collection).or_default().push(m);
        }
        part.iter()
            .map(|coll| {
                let key = (Some(*coll), span.clone());
                let ex = excluders.and_then(|e| e.get(&key));
                let w = WindowChanges::of(by.remove(coll).unwrap_or_default(), ex)?;
                Ok((key, w))
            })
            .collect()
    })
}
