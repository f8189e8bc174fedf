//! What a conditional feed GET reads, kept in memory so that answering
//! 304 costs no database round trip: collection heads by UUID, tokens and
//! read tickets by their secret's hash. Every entry is tagged with the
//! [`Watch`] generation under which it was read; a lookup asks the watch
//! for the current generation first, and an entry of any other
//! generation is not served (the whole map starts again). With no
//! generation (PostgreSQL's listener has no connection) nothing is served
//! from memory and nothing is kept.
//!
//! Only what was found is kept: an unknown token, ticket or collection is
//! asked of the database every time.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::access::Token;
use crate::db::Watch;
use crate::feeds::Head;
use crate::ids::CollectionId;

/// Entries a map holds before it starts again empty.
const MAX_ENTRIES: usize = 4096;

/// One generation's entries.
struct Tagged<K, V> {
    generation: u64,
    map: HashMap<K, V>,
}

impl<K: Hash + Eq, V: Clone> Tagged<K, V> {
    fn new() -> Self {
        Tagged {
            generation: 0,
            map: HashMap::new(),
        }
    }

    fn get(&mut self, generation: u64, k: &K) -> Option<V> {
        if self.generation != generation {
            self.map.clear();
            self.generation = generation;
        }
        self.map.get(k).cloned()
    }

    /// Keeps `v`, read under `generation`, unless the map has moved on to
    /// a later one (then `v` may already be stale).
    fn put(&mut self, generation: u64, k: K, v: V) {
        if generation < self.generation {
            return;
        }
        if generation > self.generation || self.map.len() >= MAX_ENTRIES {
            self.map.clear();
            self.generation = generation;
        }
        self.map.insert(k, v);
    }
}

/// See the module documentation. `None` inside: no watch could be started
/// (an SQLite file that cannot be opened twice); then nothing is cached.
pub struct Cache {
    watch: Option<Watch>,
    heads: Mutex<Tagged<String, Head>>,
    tokens: Mutex<Tagged<String, Token>>,
    tickets: Mutex<Tagged<String, CollectionId>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Cache {
    pub fn new(watch: Option<Watch>) -> Self {
        Cache {
            watch,
            heads: Mutex::new(Tagged::new()),
            tokens: Mutex::new(Tagged::new()),
            tickets: Mutex::new(Tagged::new()),
        }
    }

    /// The generation to read under, before reading: `None`, read from the
    /// database and keep nothing.
    pub async fn generation(&self) -> Option<u64> {
        self.watch.as_ref()?.generation().await
    }

    pub fn head(&self, g: u64, uuid: &str) -> Option<Head> {
        locked(&self.heads).get(g, &uuid.to_string())
    }

    pub fn put_head(&self, g: u64, head: &Head) {
        locked(&self.heads).put(g, head.uuid.clone(), head.clone());
    }

    /// The token a secret's hash names, unless its `last_used_at` is due
    /// to be moved (a minute old at `now`): then the database is asked, and
    /// marks it used, as [`crate::access::authenticate`] does.
    pub fn token(&self, g: u64, hash: &str, now: DateTime<Utc>) -> Option<Token> {
        locked(&self.tokens).get(g, &hash.to_string()).filter(|t| {
            t.last_used_at
                .is_some_and(|u| now - u < chrono::Duration::minutes(1))
        })
    }

    pub fn put_token(&self, g: u64, hash: String, token: &Token) {
        locked(&self.tokens).put(g, hash, token.clone());
    }

    pub fn ticket(&self, g: u64, hash: &str) -> Option<CollectionId> {
        locked(&self.tickets).get(g, &hash.to_string())
    }

    pub fn put_ticket(&self, g: u64, hash: String, collection: CollectionId) {
        locked(&self.tickets).put(g, hash, collection);
    }
}

#[cfg(test)]
mod tests {
    use super::Tagged;

    #[test]
    fn an_entry_is_served_only_in_its_own_generation() {
        let mut t: Tagged<&str, i32> = Tagged::new();
        t.put(1, "a", 1);
        assert_eq!(t.get(1, &"a"), Some(1));
        assert_eq!(t.get(2, &"a"), None, "a later generation starts empty");
        t.put(1, "a", 1);
        assert_eq!(t.get(2, &"a"), None, "read before the change: not kept");
        t.put(3, "b", 3);
        assert_eq!(t.get(3, &"b"), Some(3));
    }
}
