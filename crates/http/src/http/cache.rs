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
//! asked of the database every time. Each map is bounded in bytes (a third
//! of `[http] cache_bytes`, each entry weighed by its key and its value's
//! text): past it the map starts again empty.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::access::Token;
use crate::db::Watch;
use crate::feeds::Head;
use crate::ids::CollectionId;

use super::feed_cache::CacheStats;

/// What an entry costs beyond its value's fixed size: the map's slot and
/// the heap text it points at.
trait Weigh {
    fn weight(&self) -> usize;
}

impl Weigh for String {
    fn weight(&self) -> usize {
        self.len()
    }
}

impl Weigh for Head {
    fn weight(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        self.uuid.len()
            + self.name.len()
            + opt(&self.owner)
            + opt(&self.owner_tz)
            + opt(&self.owner_locale)
    }
}

impl Weigh for Token {
    fn weight(&self) -> usize {
        self.name.len()
    }
}

impl Weigh for CollectionId {
    fn weight(&self) -> usize {
        0
    }
}

/// A map slot's own cost, beside the key and value's sizes.
const SLOT_BYTES: usize = 16;

fn weigh<K: Weigh, V: Weigh>(k: &K, v: &V) -> usize {
    SLOT_BYTES + std::mem::size_of::<(K, V)>() + k.weight() + v.weight()
}

/// One generation's entries.
struct Tagged<K, V> {
    generation: u64,
    map: HashMap<K, V>,
    bytes: usize,
    max_bytes: usize,
    hits: u64,
    misses: u64,
}

impl<K: Hash + Eq + Weigh, V: Clone + Weigh> Tagged<K, V> {
    fn new(max_bytes: usize) -> Self {
        Tagged {
            generation: 0,
            map: HashMap::new(),
            bytes: 0,
            max_bytes,
            hits: 0,
            misses: 0,
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
    }

    fn get(&mut self, generation: u64, k: &K) -> Option<V> {
        if self.generation != generation {
            self.clear();
            self.generation = generation;
        }
        let v = self.map.get(k).cloned();
        if v.is_some() {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        v
    }

    /// Keeps `v`, read under `generation`, unless the map has moved on to
    /// a later one (then `v` may already be stale).
    fn put(&mut self, generation: u64, k: K, v: V) {
        if generation < self.generation {
            return;
        }
        let w = weigh(&k, &v);
        if w > self.max_bytes {
            return;
        }
        if generation > self.generation || self.bytes + w > self.max_bytes {
            self.clear();
            self.generation = generation;
        }
        if let Some(old) = self.map.get(&k) {
            self.bytes -= weigh(&k, old);
        }
        self.bytes += w;
        self.map.insert(k, v);
    }

    fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits,
            misses: self.misses,
            entries: self.map.len() as u64,
            bytes: self.bytes as u64,
            ..CacheStats::default()
        }
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
    /// Caches of `max_bytes` in all, a third for each map.
    pub fn new(watch: Option<Watch>, max_bytes: usize) -> Self {
        let each = max_bytes / 3;
        Cache {
            watch,
            heads: Mutex::new(Tagged::new(each)),
            tokens: Mutex::new(Tagged::new(each)),
            tickets: Mutex::new(Tagged::new(each)),
        }
    }

    /// Each map's counts and size, by name, for `/metrics`.
    pub fn stats(&self) -> [(&'static str, CacheStats); 3] {
        [
            ("heads", locked(&self.heads).stats()),
            ("tokens", locked(&self.tokens).stats()),
            ("tickets", locked(&self.tickets).stats()),
        ]
    }

    /// The generation to read under, before reading: `None`, read from the
    /// database and keep nothing.
    pub async fn generation(&self) -> Option<u64> {
        self.watch.as_ref()?.generation().await
    }

    pub fn head(&self, g: u64, uuid: &str) -> Option<Head> {
        locked(&self.heads).get(g, &uuid.to_string())
    }

    pub(crate) fn put_head(&self, g: u64, head: &Head) {
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

    pub(crate) fn put_token(&self, g: u64, hash: String, token: &Token) {
        locked(&self.tokens).put(g, hash, token.clone());
    }

    pub fn ticket(&self, g: u64, hash: &str) -> Option<CollectionId> {
        locked(&self.tickets).get(g, &hash.to_string())
    }

    pub(crate) fn put_ticket(&self, g: u64, hash: String, collection: CollectionId) {
        locked(&self.tickets).put(g, hash, collection);
    }
}

#[cfg(test)]
mod tests {
    use super::Tagged;

    #[test]
    fn an_entry_is_served_only_in_its_own_generation() {
        let s = |v: &str| v.to_string();
        let mut t: Tagged<String, String> = Tagged::new(1 << 10);
        t.put(1, s("a"), s("1"));
        assert_eq!(t.get(1, &s("a")), Some(s("1")));
        assert_eq!(t.get(2, &s("a")), None, "a later generation starts empty");
        t.put(1, s("a"), s("1"));
        assert_eq!(t.get(2, &s("a")), None, "read before the change: not kept");
        t.put(3, s("b"), s("3"));
        assert_eq!(t.get(3, &s("b")), Some(s("3")));
    }

    #[test]
    fn a_map_keeps_within_its_bytes() {
        let mut t: Tagged<String, String> = Tagged::new(1 << 10);
        for i in 0..1000 {
            t.put(1, format!("key{i}"), "v".repeat(20));
            assert!(t.bytes <= 1 << 10, "{}", t.bytes);
        }
        assert!(!t.map.is_empty());
        t.put(1, "k".into(), "v".repeat(2000));
        assert_eq!(t.get(1, &"k".to_string()), None, "larger than the bound");
    }
}
