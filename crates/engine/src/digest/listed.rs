//! A window's net changes held to their first few: a digest shows at most
//! `[digest] max_items` lines and says how many more there are, so the
//! composer keeps the first `cap` changes of a window in order and counts
//! the rest exactly, with what the subject and the sender need of them
//! (their collections, their actors). A window of millions of changes costs
//! the time to read it, not the memory to hold it.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::compose::{Changes, ItemChange};
use crate::ids::{CollectionId, PartyId};

/// Where a change comes in a digest: by its first modification's time,
/// then the order recorded.
pub type Key = (DateTime<Utc>, i64);

pub fn key(c: &ItemChange) -> Key {
    (c.first_at, c.first_id)
}

/// Who made some changes, as far as the sender of a digest needs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Actors {
    /// No change.
    #[default]
    None,
    /// Every change, by this actor alone.
    One(PartyId),
    /// Several actors, or a change that names none.
    Many,
}

impl Actors {
    /// These actors and `c`'s.
    pub fn with(self, c: &ItemChange) -> Actors {
        match (self, c.actors.as_slice()) {
            (Actors::None, [a]) => Actors::One(*a),
            (Actors::One(x), [a]) if x == *a => self,
            _ => Actors::Many,
        }
    }

    pub fn and(self, other: Actors) -> Actors {
        match (self, other) {
            (Actors::None, o) | (o, Actors::None) => o,
            (Actors::One(a), Actors::One(b)) if a == b => self,
            _ => Actors::Many,
        }
    }
}

/// A window's net changes in digest order: the first ones, and the rest
/// counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listed {
    /// The first changes, in order (every change when `rest` is 0).
    pub items: Changes,
    /// Changes after `items`, not kept.
    pub rest: usize,
    /// The collections of the rest, in order of their first change there.
    pub rest_collections: Vec<CollectionId>,
    pub rest_actors: Actors,
    /// Changes left out because the recipient saw them (seen marks:
    /// `super::seen`); counted apart from the rest, and not in [`Listed::len`].
    pub seen: usize,
}

impl Listed {
    /// Every change, none left out.
    pub fn whole(items: Changes) -> Listed {
        Listed {
            items,
            ..Listed::default()
        }
    }

    /// Changes in all.
    pub fn len(&self) -> usize {
        self.items.len() + self.rest
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Who made every change: `Actors::One` is the digest's sender.
    pub fn actors(&self) -> Actors {
        self.items.iter().fold(self.rest_actors, |a, c| a.with(c))
    }
}

/// A change kept, with the parties whose own collapse leaves it out or
/// changes it (they made some of its modifications).
struct Entry {
    key: Key,
    change: Arc<ItemChange>,
    touched: Vec<PartyId>,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

/// The rest of a window: counted, their collections and actors noted.
#[derive(Default)]
struct Rest {
    count: usize,
    /// Each collection's first key among the rest.
    collections: HashMap<CollectionId, Key>,
    actors: Actors,
}

impl Rest {
    fn add(&mut self, c: &ItemChange) {
        self.count += 1;
        let k = key(c);
        self.collections
            .entry(c.collection)
            .and_modify(|f| *f = (*f).min(k))
            .or_insert(k);
        self.actors = self.actors.with(c);
    }

    fn collections(&self) -> Vec<CollectionId> {
        let mut v: Vec<(Key, CollectionId)> =
            self.collections.iter().map(|(c, k)| (*k, *c)).collect();
        v.sort_unstable();
        v.into_iter().map(|(_, c)| c).collect()
    }
}

/// Keeps the first `cap` changes pushed, in any order, and counts the rest.
pub struct Lister {
    cap: usize,
    /// The kept changes, the last in order on top.
    heap: BinaryHeap<Entry>,
    rest: Rest,
}

/// What a [`Lister`] kept: the list, and for each party the positions in
/// it of the changes they touched.
pub struct Kept {
    pub listed: Listed,
    pub touched: HashMap<PartyId, Vec<usize>>,
}

impl Lister {
    pub fn new(cap: usize) -> Lister {
        Lister {
            cap: cap.max(1),
            heap: BinaryHeap::new(),
            rest: Rest::default(),
        }
    }

    /// Adds `change`, which `touched` made some of.
    pub fn push(&mut self, change: Arc<ItemChange>, touched: Vec<PartyId>) {
        let e = Entry {
            key: key(&change),
            change,
            touched,
        };
        if self.heap.len() < self.cap {
            self.heap.push(e);
            return;
        }
        let mut top = self.heap.peek_mut().expect("cap is at least 1");
        if e.key < top.key {
            let out = std::mem::replace(&mut *top, e);
            drop(top);
            self.rest.add(&out.change);
        } else {
            self.rest.add(&e.change);
        }
    }

    pub fn finish(self) -> Kept {
        let entries = self.heap.into_sorted_vec();
        let mut touched: HashMap<PartyId, Vec<usize>> = HashMap::new();
        let mut items = Vec::with_capacity(entries.len());
        for (i, e) in entries.into_iter().enumerate() {
            for p in e.touched {
                touched.entry(p).or_default().push(i);
            }
            items.push(e.change);
        }
        Kept {
            listed: Listed {
                items,
                rest: self.rest.count,
                rest_collections: self.rest.collections(),
                rest_actors: self.rest.actors,
                seen: 0,
            },
            touched,
        }
    }
}

/// A party's own collapse of a window, kept as what differs from
/// everyone's.
#[derive(Debug, Default)]
pub struct Own {
    /// The items they touched, collapsed without their modifications.
    pub mine: Listed,
    /// Positions in everyone's list of the items they touched.
    pub touched: Vec<usize>,
    /// Items they touched that have a net change in everyone's collapse.
    pub touched_in_all: usize,
}

/// `all` (everyone's list, at most `cap` kept) as `own`'s party gets it:
/// the items they touched collapsed without their modifications, every
/// other item as in `all`. Exact in count; its first items are exact up to
/// `all`'s last kept item, past which nothing of the window is known.
pub fn without(all: &Listed, own: &Own, cap: usize) -> Listed {
    let boundary = (all.rest > 0)
        .then(|| all.items.last().map(|c| key(c)))
        .flatten();
    let mut items: Changes = all
        .items
        .iter()
        .enumerate()
        .filter(|(i, _)| own.touched.binary_search(i).is_err())
        .map(|(_, c)| c.clone())
        .collect();
    let mut rest_collections = all.rest_collections.clone();
    let mut rest_actors = all.rest_actors.and(own.mine.rest_actors);
    let mut later = |c: &ItemChange| {
        if !rest_collections.contains(&c.collection) {
            rest_collections.push(c.collection);
        }
        rest_actors = rest_actors.with(c);
    };
    for c in &own.mine.items {
        match boundary {
            Some(b) if key(c) > b => later(c),
            _ => items.push(c.clone()),
        }
    }
    items.sort_by_key(|c| key(c));
    if items.len() > cap {
        for c in items.split_off(cap) {
            later(&c);
        }
    }
    for c in &own.mine.rest_collections {
        if !rest_collections.contains(c) {
            rest_collections.push(*c);
        }
    }
    let rest = all.len() - own.touched_in_all + own.mine.len() - items.len();
    if rest == 0 {
        return Listed::whole(items);
    }
    Listed {
        rest,
        items,
        rest_collections,
        rest_actors,
        seen: 0,
    }
}
