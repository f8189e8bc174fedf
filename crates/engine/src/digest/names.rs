//! Party names as the composer loads them and its workers read them.
//!
//! The workers finishing one batch read the names while the tick's thread
//! plans the next batch and loads the names it needs. Those go into a map
//! of their own, and join the map the workers share when the next batch
//! is handed to them: by then the workers of the batch before have
//! finished and let go of it, so it is extended where it is, not copied.

use std::sync::Arc;

use crate::ids::{IdMap, PartyId};

pub(super) type NameMap = IdMap<PartyId, String>;

/// Names loaded so far: those handed to workers, and those loaded since.
#[derive(Default)]
pub(super) struct Names {
    shared: Arc<NameMap>,
    fresh: NameMap,
}

impl Names {
    pub fn get(&self, p: &PartyId) -> Option<&String> {
        self.shared.get(p).or_else(|| self.fresh.get(p))
    }

    pub fn contains_key(&self, p: &PartyId) -> bool {
        self.get(p).is_some()
    }

    /// Adds `name` unless `p` has one.
    pub fn insert(&mut self, p: PartyId, name: String) {
        if !self.shared.contains_key(&p) {
            self.fresh.entry(p).or_insert(name);
        }
    }

    pub fn len(&self) -> usize {
        self.shared.len() + self.fresh.len()
    }

    /// Forgets every name; workers still reading keep their own handle.
    pub fn clear(&mut self) {
        self.shared = Arc::default();
        self.fresh.clear();
    }

    /// Every name, for the workers of the next batch. The shared map is
    /// copied only when a worker still holds it (none does when each
    /// batch's workers are done before the next batch is handed out).
    pub fn share(&mut self) -> Arc<NameMap> {
        if !self.fresh.is_empty() {
            Arc::make_mut(&mut self.shared).extend(self.fresh.drain());
        }
        self.shared.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_loaded_while_shared_reach_the_next_share_without_touching_the_held_one() {
        let mut n = Names::default();
        n.insert(PartyId(1), "ann".into());
        let held = n.share();
        n.insert(PartyId(2), "bob".into());
        // Already named: the first name stays.
        n.insert(PartyId(1), "other".into());
        assert_eq!(n.get(&PartyId(1)).map(String::as_str), Some("ann"));
        assert_eq!(n.get(&PartyId(2)).map(String::as_str), Some("bob"));
        assert_eq!(n.len(), 2);
        assert!(held.get(&PartyId(2)).is_none());
        drop(held);
        let next = n.share();
        assert_eq!(next.len(), 2);
        assert!(Arc::ptr_eq(&next, &n.share()));
        n.clear();
        assert!(!n.contains_key(&PartyId(1)));
        assert_eq!(next.get(&PartyId(1)).map(String::as_str), Some("ann"));
    }
}
