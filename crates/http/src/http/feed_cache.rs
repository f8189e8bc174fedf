//! Rendered Atom feeds by collection and strong ETag, bounded in bytes
//! (`[http] feed_cache_bytes`), rendered once per version.
//!
//! A write moves a collection's version, so every poll after it asks for
//! a tag nobody has rendered yet. The first reader renders it; the others
//! that ask for the same tag while it renders wait for that render (a
//! *flight*) instead of rendering it again, so N readers after a write
//! cost one render, not N, and the writers keep the cores. A write never
//! waits on a reader: it touches nothing here (the version it moves is a
//! column of its own transaction).
//!
//! While a render is in flight, a reader who finds it so waits for it at
//! most 50 ms, then is served the feed's previous version, with that
//! version's own ETag and Last-Modified ([`Served::Stale`]): a feed whose
//! log holds millions of changes takes seconds to render, and its version
//! moves with every write. The reader who starts a render waits for it, so
//! one who reads after writing sees the write.
//!
//! Past the byte bound the map starts again empty: a tag names one
//! representation for good, so a hit is exactly what a render would give,
//! and the next poll of a dropped entry renders it once more.
//! Each process has its own.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use chrono::{DateTime, Utc};
use tokio::sync::OnceCell;

use super::{ApiError, ApiResult};

/// How long a reader waits for another reader's render of the newest
/// version before it is served the previous one: most renders land within
/// it, and a client that polls in a loop is paced by it, so readers of a
/// feed that renders for seconds do not take the cores from the writers.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

/// A render in flight: its first reader fills it, the others wait on it.
type Flight = Arc<OnceCell<Bytes>>;

#[derive(Default)]
struct Inner {
    done: HashMap<String, Bytes>,
    bytes: usize,
    flights: HashMap<String, Flight>,
    /// Each feed's newest version rendered, by the feed's tag without its
    /// version (its bytes counted in `bytes`).
    latest: HashMap<String, Version>,
    /// The render in flight of each feed that [`FeedCache::serve`]
    /// started: its key and flight.
    rendering: HashMap<String, (String, Flight)>,
}

impl Inner {
    /// Counts `len` more bytes, emptying both maps first when they would
    /// pass `max`; false, counting nothing, for a body larger than an
    /// eighth of `max` (served, not kept).
    fn make_room(&mut self, len: usize, max: usize) -> bool {
        if len > max / 8 {
            return false;
        }
        if self.bytes + len > max {
            self.done.clear();
            self.latest.clear();
            self.bytes = 0;
        }
        self.bytes += len;
        true
    }
}

/// What [`FeedCache::serve`] does for a reader.
enum Plan {
    /// Serve this older version unless the render in flight (its key and
    /// flight) lands within [`STALE_AFTER`].
    Stale(Version, String, Flight),
    /// Render this version (or wait for its render); `first`: as the
    /// feed's one render in flight.
    Render { first: bool },
}

/// A version of a feed as it was rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The collection's feed version it was rendered at.
    pub version: i64,
    pub etag: String,
    pub changed_at: DateTime<Utc>,
    pub body: Bytes,
}

/// A feed's body as [`FeedCache::serve`] answers it.
#[derive(Debug)]
pub enum Served {
    /// The version asked for.
    Fresh(Bytes),
    /// An older version, served while the one asked for renders.
    Stale(Version),
}

/// What `/metrics` shows of a cache: hits, misses, size now.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub entries: u64,
    pub bytes: u64,
    /// Feeds rendered (a miss that did the work).
    pub renders: u64,
    /// Misses that waited for another reader's render of the same tag.
    pub waits: u64,
    /// Reads served an older version while a render was in flight.
    pub stale: u64,
}

/// See the module documentation.
pub struct FeedCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
    hits: AtomicU64,
    renders: AtomicU64,
    waits: AtomicU64,
    stale: AtomicU64,
}

impl FeedCache {
    /// A cache of at most `max_bytes` of feed bodies (0 keeps none, but
    /// renders still fly once).
    pub fn new(max_bytes: usize) -> Self {
        FeedCache {
            max_bytes,
            inner: Mutex::default(),
            hits: AtomicU64::new(0),
            renders: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            stale: AtomicU64::new(0),
        }
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Feed `feed`'s version `want` (its body kept under `key`): kept,
    /// or rendered by `render` as [`FeedCache::get_or_render`] renders it;
    /// or, when a render of the feed (of this version or an older one) is
    /// in flight already and does not land within [`STALE_AFTER`], the
    /// newest older version of the feed kept. So a feed has one render in
    /// flight at a time once it has a version to serve meanwhile, however
    /// often writes move its version.
    pub async fn serve<F, Fut>(
        &self,
        feed: &str,
        key: &str,
        want: Version,
        render: F,
    ) -> ApiResult<Served>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ApiResult<String>>,
    {
        let plan = {
            let mut g = self.locked();
            if let Some(b) = g.done.get(key) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(Served::Fresh(b.clone()));
            }
            let old = g
                .latest
                .get(feed)
                .filter(|v| v.version < want.version)
                .cloned();
            match (old, g.rendering.get(feed).cloned()) {
                (Some(old), Some((k, flight))) => Plan::Stale(old, k, flight),
                (_, Some(_)) => Plan::Render { first: false },
                (_, None) => {
                    let flight = g.flights.entry(key.to_string()).or_default().clone();
                    g.rendering
                        .insert(feed.to_string(), (key.to_string(), flight));
                    Plan::Render { first: true }
                }
            }
        };
        let body = match plan {
            // Another reader renders this version: wait for it a little.
            Plan::Stale(old, k, _) if k == key => {
                match tokio::time::timeout(STALE_AFTER, self.get_or_render(key, render)).await {
                    Ok(body) => body?,
                    Err(_) => return Ok(self.served_stale(old)),
                }
            }
            // It renders an older one: the newest kept, when it lands.
            Plan::Stale(old, _, flight) => {
                let landed = flight.get_or_try_init(|| async { Err(ApiError::internal()) });
                let newest = match tokio::time::timeout(STALE_AFTER, landed).await {
                    Ok(Ok(_)) => self
                        .locked()
                        .latest
                        .get(feed)
                        .filter(|v| v.version < want.version && v.version > old.version)
                        .cloned(),
                    _ => None,
                };
                return Ok(self.served_stale(newest.unwrap_or(old)));
            }
            Plan::Render { first } => {
                let _rendering = first.then_some(Rendering {
                    cache: self,
                    feed,
                    key,
                });
                self.get_or_render(key, render).await?
            }
        };
        self.remember(
            feed,
            Version {
                body: body.clone(),
                ..want
            },
        );
        Ok(Served::Fresh(body))
    }

    fn served_stale(&self, old: Version) -> Served {
        self.stale.fetch_add(1, Ordering::Relaxed);
        Served::Stale(old)
    }

    /// Notes `v` as `feed`'s newest version rendered, unless a newer one
    /// is noted.
    fn remember(&self, feed: &str, v: Version) {
        let mut g = self.locked();
        if g.latest
            .get(feed)
            .is_some_and(|old| old.version >= v.version)
            || !g.make_room(v.body.len(), self.max_bytes)
        {
            return;
        }
        if let Some(old) = g.latest.insert(feed.to_string(), v) {
            g.bytes -= old.body.len();
        }
    }

    /// The body kept under `key`, or the one rendered by `render` — by
    /// this caller, or by the reader already rendering `key`, whose
    /// result this one waits for. A failed render keeps nothing: the next
    /// waiter tries once more.
    pub async fn get_or_render<F, Fut>(&self, key: &str, render: F) -> ApiResult<Bytes>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ApiResult<String>>,
    {
        let flight = {
            let mut g = self.locked();
            if let Some(b) = g.done.get(key) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(b.clone());
            }
            g.flights.entry(key.to_string()).or_default().clone()
        };
        // However this call ends (done, failed, or dropped mid-render by a
        // reader that went away), a flight nobody else waits on leaves the
        // map: a tag that is never asked again holds nothing.
        let landing = Landing {
            cache: self,
            key,
            flight,
        };
        let mut rendered_here = false;
        let out = landing
            .flight
            .get_or_try_init(|| {
                rendered_here = true;
                self.renders.fetch_add(1, Ordering::Relaxed);
                async move { render().await.map(Bytes::from) }
            })
            .await
            .cloned();
        if !rendered_here {
            self.waits.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(body) = &out {
            if rendered_here {
                self.keep(key, body.clone());
            }
        }
        out
    }

    /// Keeps `body` under `key`: readers from now on hit the map, the ones
    /// already waiting read the flight, which its [`Landing`] takes out.
    fn keep(&self, key: &str, body: Bytes) {
        let mut g = self.locked();
        if !g.make_room(body.len(), self.max_bytes) {
            return;
        }
        if let Some(old) = g.done.insert(key.to_string(), body) {
            g.bytes -= old.len();
        }
    }

    pub fn stats(&self) -> CacheStats {
        let g = self.locked();
        let renders = self.renders.load(Ordering::Relaxed);
        let waits = self.waits.load(Ordering::Relaxed);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: renders + waits,
            entries: g.done.len() as u64,
            bytes: g.bytes as u64,
            renders,
            waits,
            stale: self.stale.load(Ordering::Relaxed),
        }
    }
}

/// Takes a feed's render out of `rendering` when its renderer is done
/// with it, landed, failed or dropped.
struct Rendering<'a> {
    cache: &'a FeedCache,
    feed: &'a str,
    key: &'a str,
}

impl Drop for Rendering<'_> {
    fn drop(&mut self) {
        let mut g = self.cache.locked();
        if g.rendering
            .get(self.feed)
            .is_some_and(|(k, _)| k == self.key)
        {
            g.rendering.remove(self.feed);
            // A render abandoned before it landed left its flight for
            // `rendering` to hold: nobody else holds it now.
            let left = g.flights.get(self.key);
            if left.is_some_and(|f| !f.initialized() && Arc::strong_count(f) == 1) {
                g.flights.remove(self.key);
            }
        }
    }
}

/// Takes a flight out of the map when its last caller is done with it.
struct Landing<'a> {
    cache: &'a FeedCache,
    key: &'a str,
    flight: Flight,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        let mut g = self.cache.locked();
        let ours = g
            .flights
            .get(self.key)
            .is_some_and(|f| Arc::ptr_eq(f, &self.flight));
        // The map's reference and ours: nobody else is waiting.
        if ours && (self.flight.initialized() || Arc::strong_count(&self.flight) <= 2) {
            g.flights.remove(self.key);
        }
    }
}

#[cfg(test)]
mod tests;
