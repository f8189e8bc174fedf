//! Seen marks in a modification digest: an item whose changes in the
//! window all happened at or before its recipient's mark on it (their
//! `last_at` ≤ the mark) is left out of their digest, and the digest says
//! how many were ("2 changes you have already seen are left out",
//! [`super::words::seen_left_out`]). An item changed after the mark stays,
//! with its whole net change in the window.
//!
//! The marks are a per-recipient filter like the own collapse
//! (`super::window`): read for a chunk's recipients and the items its
//! windows keep, in one query per batch that brings windows not read for
//! yet (the chunk's first batch reads most), and only for windows that
//! hold items. A recipient with no mark shares the window's list; the
//! recipients of the same list whose marks leave out the same items share
//! one filtered list (the same `Arc`), so the composer renders and stores
//! its body once for all of them, as it does the window's own. Such
//! recipients are rarely in one batch of the hand-off, so when a window's
//! marks are read the lists its recipients in the chunk get are made
//! (each worked out once a chunk), and a list two or more of them get is
//! [`SeenMarks::spread`]: its first reader's rendering is stored for the
//! others, in whatever batch they come. The lists are kept for the tick,
//! so a later chunk's recipients get the same list, and its rendering
//! stored already.
//! A marked recipient's marks are looked up in the window's list by item
//! UUID ([`SeenMarks::index`], made once a chunk), so filtering costs
//! their few marks, not the list's items.
//! Marks are a person's: a group's digest is composed once for all its
//! members, so marks leave nothing out of it. Only what a window keeps
//! (its first changes) is filtered; the counted rest is not.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::listed::{self, Listed};
use super::render::Content;
use super::window::{Window, WindowChanges};
use super::workers::Source;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::PartyId;
use crate::schedule::DueRun;
use crate::seen::{self, Marks};
use crate::subscriptions::Kind;

impl super::post::Composer {
    /// Queries for seen marks made so far (one per chunk in the common
    /// case; none for windows without items).
    pub fn seen_queries(&self) -> usize {
        self.seen.queries
    }
}

/// The marks of a chunk's recipients on its windows' items.
#[derive(Default)]
pub(super) struct SeenMarks {
    /// The chunk's recipients of each modification window.
    parties: HashMap<Window, Vec<PartyId>>,
    /// Windows whose marks are read for this chunk.
    read: HashSet<Window>,
    marks: Marks,
    /// The filtered lists made in this tick, shared by the recipients
    /// whose marks leave out the same items of the same list, in this
    /// chunk and the next (whose renderings are then stored already).
    made: HashMap<Made, (Held, Arc<Listed>)>,
    /// Each marked recipient's list of a window's (by the recipient and
    /// the window list's address, which the entry holds), made when the
    /// window's marks are read: `None` when their marks leave nothing
    /// out. At most one entry a marked recipient of the chunk, forgotten
    /// with it.
    mine: HashMap<(PartyId, usize), Mine>,
    /// The filtered lists (by address, held in `mine`) that two or more of
    /// the chunk's recipients get.
    spread: HashSet<usize>,
    /// Each shared list's items by UUID (by the list's address; the entry
    /// holds the list), made once a chunk: a marked recipient's few marks
    /// are looked up in it, instead of each of the list's items in their
    /// marks. `None` for a list that names an item twice.
    index: HashMap<usize, (Arc<Listed>, Option<Index>)>,
    /// Only the first this many items of a list are filtered: the whole
    /// digest's page keeps more items than a digest, and filters only
    /// the ones the digest did (`None`: every item kept).
    pub(super) first: Option<usize>,
    /// Queries made (tests: one per chunk in the common case).
    pub queries: usize,
}

/// A filtered list's key: its source's address (the shared list, or the
/// window of an own collapse and whose it is) and the positions in it of
/// the items left out.
type Made = (usize, Option<PartyId>, Vec<u32>);

/// A window's list and a recipient's list of it ([`SeenMarks::mine`]).
type Mine = (Arc<Listed>, Option<Arc<Listed>>);

/// A list's positions by item UUID ([`SeenMarks::index`]).
type Index = HashMap<String, u32>;

/// What a key's address points at, kept while the key is, so the address
/// cannot be reused for another source meanwhile.
type Held = Arc<dyn Any + Send + Sync>;

/// Filtered lists kept for a tick at most before they are forgotten (a
/// later recipient gets a list of their own, then shared again).
const MADE_MAX: usize = 4_096;

impl SeenMarks {
    /// A new chunk of `runs`: marks read for the chunk before are forgotten.
    pub(crate) fn begin_chunk(&mut self, runs: &[DueRun]) {
        self.parties.clear();
        self.read.clear();
        self.marks.clear();
        self.mine.clear();
        self.spread.clear();
        self.index.clear();
        for r in runs.iter().filter(|r| r.kind == Kind::Modification) {
            self.parties
                .entry((r.collection, r.span()))
                .or_default()
                .push(r.party);
        }
    }

    /// Reads, in one query, the marks on the items of `windows` not read
    /// for yet, of their recipients in the chunk (`who`: also, or alone
    /// when no chunk names one).
    pub fn read(
        &mut self,
        c: &mut DbConn,
        windows: &[(Window, &WindowChanges)],
        who: Option<PartyId>,
    ) -> Result<()> {
        let mut parties: Vec<PartyId> = Vec::new();
        let mut items: HashSet<&str> = HashSet::new();
        let mut not_before: Option<DateTime<Utc>> = None;
        let mut fresh = Vec::new();
        for (key, w) in windows {
            if !self.read.insert(key.clone()) {
                continue;
            }
            let (kept, first) = w.kept_items();
            let Some(first) = first else { continue };
            items.extend(kept);
            not_before = Some(not_before.map_or(first, |n| n.min(first)));
            parties.extend(self.parties.get(key).into_iter().flatten().copied());
            parties.extend(who);
            fresh.push((key, *w));
        }
        let Some(not_before) = not_before else {
            return Ok(());
        };
        self.queries += 1;
        for (p, m) in seen::read_for(c, &parties, &items, not_before)? {
            self.marks.entry(p).or_default().extend(m);
        }
        for (key, w) in fresh {
            self.make_lists(key, w);
        }
        Ok(())
    }

    /// Makes the lists of `w`'s list its marked recipients in the chunk
    /// get ([`SeenMarks::mine`]), so each is worked out once, and marks
    /// the ones two or more of them get [`SeenMarks::spread`]. One who made
    /// some of the window's changes is passed over: they may get their own
    /// collapse instead (then a list they do get counts short, and is
    /// stored only from its second batch: `handoff`).
    fn make_lists(&mut self, key: &Window, w: &WindowChanges) {
        let Some(ps) = self.parties.get(key) else {
            return;
        };
        let marked: Vec<PartyId> = ps
            .iter()
            .filter(|p| self.marks.contains_key(p) && !w.actors.contains(p))
            .copied()
            .collect();
        let mut readers: HashMap<usize, u32> = HashMap::new();
        for p in marked {
            let src = Source::Ready(Content::Changes(w.all.clone()));
            let l = self.filtered(p, &src);
            if let Some(l) = &l {
                *readers.entry(address(l)).or_default() += 1;
            }
            self.mine.insert((p, address(&w.all)), (w.all.clone(), l));
        }
        let shared = readers.into_iter().filter(|(_, n)| *n >= 2);
        self.spread.extend(shared.map(|(l, _)| l));
    }

    /// Whether `src` is a filtered list two or more of the chunk's
    /// recipients get.
    pub fn spread(&self, src: &Source) -> bool {
        match src {
            Source::Ready(Content::Changes(l)) => self.spread.contains(&address(l)),
            _ => false,
        }
    }

    /// The positions in `listed` of the items `me`'s marks leave out, in
    /// order. With [`SeenMarks::first`] set, only among the items a digest
    /// kept: `listed`'s first that many, and none after the that-many-th
    /// of `everyone` (the window's list, of which `listed` is `me`'s), as
    /// a list without its recipient's own changes keeps none past it
    /// (`super::listed::without`). `index` is `listed`'s, when made.
    fn left_out(
        &self,
        me: PartyId,
        listed: &Listed,
        everyone: &Listed,
        index: Option<&Index>,
    ) -> Vec<u32> {
        let Some(mine) = self.marks.get(&me) else {
            return Vec::new();
        };
        let n = self.first.unwrap_or(usize::MAX);
        let last = match n.checked_sub(1) {
            Some(i) if everyone.len() > n => everyone.items.get(i).map(|c| listed::key(c)),
            _ => None,
        };
        let seen = |i: u32, at: &DateTime<Utc>| {
            let c = &listed.items[i as usize];
            (i as usize) < n && last.is_none_or(|b| listed::key(c) <= b) && c.last_at <= *at
        };
        let mut out: Vec<u32> = match index {
            Some(index) => mine
                .iter()
                .filter_map(|(item, at)| index.get(item.as_str()).filter(|i| seen(**i, at)))
                .copied()
                .collect(),
            None => {
                let mine: HashMap<&str, &DateTime<Utc>> =
                    mine.iter().map(|(i, at)| (i.as_str(), at)).collect();
                (0u32..)
                    .zip(&listed.items)
                    .filter(|(i, c)| {
                        mine.get(c.item_uuid.as_str())
                            .is_some_and(|at| seen(*i, at))
                    })
                    .map(|(i, _)| i)
                    .collect()
            }
        };
        // The same mark read with two windows of one collection is one.
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Makes `l`'s [`SeenMarks::index`] unless the chunk has it.
    fn index(&mut self, l: &Arc<Listed>) {
        if self.index.contains_key(&address(l)) {
            return;
        }
        let mut index = Index::with_capacity(l.items.len());
        let unique = (0u32..)
            .zip(&l.items)
            .all(|(i, c)| index.insert(c.item_uuid.clone(), i).is_none());
        self.index
            .insert(address(l), (l.clone(), unique.then_some(index)));
    }

    /// `src` (`run`'s source, and whether it is shared) as its recipient
    /// gets it with their marks: when they leave something out, the list
    /// made already for the same source and the same items left out, else
    /// one made now and kept for the chunk's others. Shared either way.
    pub fn apply(&mut self, me: PartyId, src: (Source, bool)) -> (Source, bool) {
        if !self.marks.contains_key(&me) {
            return src;
        }
        let made = match &src.0 {
            Source::Ready(Content::Changes(v)) => match self.mine.get(&(me, address(v))) {
                Some((_, l)) => l.clone(),
                None => {
                    let l = self.filtered(me, &src.0);
                    self.mine.insert((me, address(v)), (v.clone(), l.clone()));
                    l
                }
            },
            _ => self.filtered(me, &src.0),
        };
        match made {
            Some(l) => (Source::Ready(Content::Changes(l)), true),
            None => src,
        }
    }

    /// `src` as `me` gets it with their marks: the list made already for
    /// the same source and the same items left out, else one made now and
    /// kept; `None` when the marks leave nothing out.
    fn filtered(&mut self, me: PartyId, src: &Source) -> Option<Arc<Listed>> {
        let (held, who, listed, everyone): (Held, _, _, _) = match src {
            Source::Ready(Content::Changes(v)) => (v.clone(), None, v.clone(), v.clone()),
            Source::Collapse(w, who) => {
                let mine = Arc::new(w.content_for(*who));
                (w.clone(), Some(*who), mine, w.all.clone())
            }
            Source::Ready(Content::Upcoming(_)) => return None,
        };
        if who.is_none() {
            self.index(&listed);
        }
        let index = self.index.get(&address(&listed));
        let index = index.and_then(|(_, i)| i.as_ref());
        let out = self.left_out(me, &listed, &everyone, index);
        if out.is_empty() {
            return None;
        }
        let key = (Arc::as_ptr(&held) as *const () as usize, who, out);
        if let Some((_, l)) = self.made.get(&key) {
            return Some(l.clone());
        }
        if self.made.len() >= MADE_MAX {
            self.made.clear();
        }
        let l = Arc::new(without(&listed, &key.2));
        self.made.insert(key, (held, l.clone()));
        Some(l)
    }
}

/// A list's address, to key by.
fn address(l: &Arc<Listed>) -> usize {
    Arc::as_ptr(l) as usize
}

/// `listed` without the items at positions `out` (in order), counted as
/// seen.
fn without(listed: &Listed, out: &[u32]) -> Listed {
    let mut skip = out.iter().peekable();
    let mut items = Vec::with_capacity(listed.items.len() - out.len());
    for (i, c) in (0u32..).zip(&listed.items) {
        if skip.next_if_eq(&&i).is_none() {
            items.push(c.clone());
        }
    }
    Listed {
        items,
        seen: listed.seen + out.len(),
        rest_collections: listed.rest_collections.clone(),
        ..*listed
    }
}

#[cfg(test)]
mod tests;
