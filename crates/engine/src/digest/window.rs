//! A window of the log as the composer keeps it: read once for every
//! subscriber of its collection and window, collapsed once, and held to its
//! first changes ([`super::listed`]) for everyone and for each subscriber
//! who made some of its changes and whose subscription leaves their own
//! out.
//!
//! Such a subscriber's own collapse differs from everyone's only in the
//! items they touched: those are collapsed again without their
//! modifications as the window is read ([`Builder::item`]), and the
//! subscriber's list is made from the two when their digest is composed
//! ([`WindowChanges::content_for`]). So the window is read for the
//! excluders known when it is read (a chunk's: [`excluders`]); a later run
//! whose recipient is not among them reads it again
//! ([`WindowChanges::covers`]).
//!
//! A window is read whole when it holds at most `read_whole`
//! modifications ([`READ_WHOLE`] unless a test says otherwise; one query,
//! and one for their values), else streamed one item at a time
//! ([`modlog::stream_span`]): either way, item by item into a [`Builder`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::compose;
use super::listed::{self, Listed, Lister, Own};
use super::readers::read_parts;
use crate::db::{Db, DbConn};
use crate::error::Result;
use crate::ids::{CollectionId, PartyId};
use crate::modlog::{self, Modification, Span};
use crate::schedule::DueRun;
use crate::subscriptions::Kind;

/// Modifications a window's read holds at once at most: a window with more
/// is streamed. A few hundred bytes each.
pub const READ_WHOLE: usize = 50_000;

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

/// One window of the log, read once: everyone's collapse, the actors, and
/// the own collapses of the excluders it was read for.
pub(super) struct WindowChanges {
    pub all: Arc<Listed>,
    own: HashMap<PartyId, Own>,
    /// Whose own collapse this holds (each of them who made a change).
    read_for: HashSet<PartyId>,
    pub actors: HashSet<PartyId>,
    cap: usize,
    /// Changes kept (the cache's measure of its size).
    pub kept: usize,
    /// It was streamed, too large to read whole.
    pub streamed: bool,
}

impl WindowChanges {
    /// Whether `me`'s own collapse can be made from what is kept.
    pub fn covers(&self, me: PartyId) -> bool {
        self.read_for.contains(&me)
    }

    /// Who this window holds own collapses for.
    pub fn read_for(&self) -> &HashSet<PartyId> {
        &self.read_for
    }

    /// The items this window keeps (everyone's, and each own collapse's),
    /// and the earliest instant of their last changes: what a seen mark
    /// must reach to leave one out (`super::seen`).
    pub(crate) fn kept_items(&self) -> (Vec<&str>, Option<chrono::DateTime<chrono::Utc>>) {
        let own = self.own.values().flat_map(|o| o.mine.items.iter());
        let mut out = Vec::new();
        let mut first = None;
        for c in self.all.items.iter().chain(own) {
            out.push(c.item_uuid.as_str());
            first = Some(first.map_or(c.last_at, |f: chrono::DateTime<chrono::Utc>| {
                f.min(c.last_at)
            }));
        }
        (out, first)
    }

    /// The window as `me` gets it, their own changes left out (`me` among
    /// those it was read for).
    pub(crate) fn content_for(&self, me: PartyId) -> Listed {
        match self.own.get(&me) {
            Some(own) => listed::without(&self.all, own, self.cap),
            None => (*self.all).clone(),
        }
    }
}

/// A window read item by item.
pub(super) struct Builder<'a> {
    excluders: Option<&'a HashSet<PartyId>>,
    cap: usize,
    all: Lister,
    own: HashMap<PartyId, (Lister, usize)>,
    actors: HashSet<PartyId>,
}

impl<'a> Builder<'a> {
    /// A window of whose changes the first `cap` are kept, with the own
    /// collapses of `excluders`.
    pub fn new(cap: usize, excluders: Option<&'a HashSet<PartyId>>) -> Builder<'a> {
        Builder {
            excluders,
            cap,
            all: Lister::new(cap),
            own: HashMap::new(),
            actors: HashSet::new(),
        }
    }

    /// Adds one item's modifications, in the log's order.
    pub fn item(&mut self, mods: &[Modification]) -> Result<()> {
        let refs: Vec<&Modification> = mods.iter().collect();
        let all = compose::collapse_item(&refs)?;
        let mut touched = Vec::new();
        for a in mods.iter().filter_map(|m| m.actor) {
            self.actors.insert(a);
            if self.excluders.is_some_and(|e| e.contains(&a)) && !touched.contains(&a) {
                touched.push(a);
            }
        }
        for me in &touched {
            let others: Vec<&Modification> = refs
                .iter()
                .copied()
                .filter(|m| m.actor != Some(*me))
                .collect();
            let cap = self.cap;
            let (mine, in_all) = self.own.entry(*me).or_insert_with(|| (Lister::new(cap), 0));
            *in_all += usize::from(all.is_some());
            if let Some(c) = compose::collapse_item(&others)? {
                mine.push(Arc::new(c), Vec::new());
            }
        }
        if let Some(c) = all {
            self.all.push(Arc::new(c), touched);
        }
        Ok(())
    }

    pub fn finish(self, streamed: bool) -> Arc<WindowChanges> {
        let all = self.all.finish();
        let mut touched = all.touched;
        let own: HashMap<PartyId, Own> = self
            .own
            .into_iter()
            .map(|(p, (mine, touched_in_all))| {
                let own = Own {
                    mine: mine.finish().listed,
                    touched: touched.remove(&p).unwrap_or_default(),
                    touched_in_all,
                };
                (p, own)
            })
            .collect();
        let kept = all.listed.items.len()
            + own
                .values()
                .map(|o| o.mine.items.len() + o.touched.len())
                .sum::<usize>();
        Arc::new(WindowChanges {
            all: Arc::new(all.listed),
            own,
            read_for: self.excluders.cloned().unwrap_or_default(),
            actors: self.actors,
            cap: self.cap,
            kept,
            streamed,
        })
    }
}

/// How a window is read: its first `cap` changes kept, streamed when it
/// holds more than `read_whole` modifications.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    pub cap: usize,
    pub read_whole: usize,
}

/// Window `coll`/`span` (`coll` `None`: every collection) read as `how`
/// says, with the own collapses of `excluders`.
pub(super) fn read_window(
    c: &mut DbConn,
    coll: Option<CollectionId>,
    span: &Span,
    how: Reading,
    excluders: Option<&HashSet<PartyId>>,
) -> Result<Arc<WindowChanges>> {
    let colls = coll.map(|c| [c]);
    let colls = colls.as_ref().map(|a| &a[..]);
    let mut b = Builder::new(how.cap, excluders);
    let streamed = each_item(c, colls, span, how, &mut |item| b.item(item))?;
    Ok(b.finish(streamed))
}

/// Hands `each` the modifications of `span` among `colls` one item at a
/// time, in the log's order: read whole when they are at most
/// `how.read_whole`, else streamed. Returns whether they were streamed.
fn each_item(
    c: &mut DbConn,
    colls: Option<&[CollectionId]>,
    span: &Span,
    how: Reading,
    each: &mut dyn FnMut(&[Modification]) -> Result<()>,
) -> Result<bool> {
    match modlog::find_in_span_upto(c, colls, span, Some(how.read_whole))? {
        Some(mods) => {
            for item in mods.chunk_by(|a, b| a.item_uuid == b.item_uuid) {
                each(item)?;
            }
            Ok(false)
        }
        None => {
            let n = colls.map_or(0, <[CollectionId]>::len);
            tracing::debug!(
                collections = n,
                "a window too large to read whole, streamed"
            );
            modlog::stream_span(c, colls, span, &mut |item| each(&item))?;
            Ok(true)
        }
    }
}

pub(super) type Part<'a> = (Span, &'a [CollectionId]);

/// The windows of `parts` read and collapsed ([`read_parts`]): a chunk's
/// first batch reads most of its windows. A part whose windows hold more
/// than `how.read_whole` modifications in all is streamed, each
/// collection's items to its own window.
pub(super) fn read_windows(
    c: &mut DbConn,
    readers: Option<&Db>,
    workers: usize,
    parts: &[Part],
    how: Reading,
    excluders: Option<&Excluders>,
) -> Result<Vec<(Window, Arc<WindowChanges>)>> {
    read_parts(c, readers, workers, parts, |c, (span, part)| {
        let ex = |coll: &CollectionId| excluders.and_then(|e| e.get(&(Some(*coll), span.clone())));
        let mut builders: HashMap<CollectionId, Builder> = part
            .iter()
            .map(|coll| (*coll, Builder::new(how.cap, ex(coll))))
            .collect();
        let mut to_window = |mods: &[Modification]| -> Result<()> {
            let first = mods[0].collection;
            if mods.iter().all(|m| m.collection == first) {
                if let Some(b) = builders.get_mut(&first) {
                    b.item(mods)?;
                }
                return Ok(());
            }
            // An item in several of the part's collections: in each, its
            // modifications there.
            let mut mods: Vec<Modification> = mods.to_vec();
            mods.sort_by_key(|m| m.collection);
            for one in mods.chunk_by(|a, b| a.collection == b.collection) {
                if let Some(b) = builders.get_mut(&one[0].collection) {
                    b.item(one)?;
                }
            }
            Ok(())
        };
        let streamed = each_item(c, Some(part), span, how, &mut to_window)?;
        Ok(part
            .iter()
            .map(|coll| {
                let w = builders
                    .remove(coll)
                    .expect("a builder per collection")
                    .finish(streamed);
                ((Some(*coll), span.clone()), w)
            })
            .collect())
    })
}
