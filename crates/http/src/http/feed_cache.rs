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
mod tests {
    use super::FeedCache;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn ok(s: &str) -> super::ApiResult<String> {
        Ok(s.to_string())
    }

    #[tokio::test]
    async fn the_feed_cache_is_bounded_and_keyed_by_tag() {
        let c = FeedCache::new(1 << 10);
        let a = c.get_or_render("a|1", || async { ok("<feed/>") }).await;
        assert_eq!(a.unwrap().as_ref(), b"<feed/>");
        let again = c.get_or_render("a|1", || async { ok("other") }).await;
        assert_eq!(again.unwrap().as_ref(), b"<feed/>", "a hit");
        let b = c.get_or_render("a|2", || async { ok("two") }).await;
        assert_eq!(b.unwrap().as_ref(), b"two", "another tag renders");
        for i in 0..200 {
            let _ = c
                .get_or_render(&format!("k{i}"), || async { ok("xxxxxxxx") })
                .await;
        }
        assert!(c.stats().bytes <= 1 << 10, "{:?}", c.stats());
        let huge = "x".repeat(1 << 10);
        let _ = c.get_or_render("huge", || async { Ok(huge.clone()) }).await;
        let s = c.stats();
        let _ = c.get_or_render("huge", || async { ok("y") }).await;
        assert_eq!(c.stats().renders, s.renders + 1, "too large to keep");
    }

    #[tokio::test]
    async fn a_failed_or_abandoned_render_leaves_no_flight() {
        let c = FeedCache::new(1 << 10);
        // Kept, or too large to keep: either way its flight lands.
        for (key, body) in [("kept", "x".to_string()), ("big", "x".repeat(1 << 10))] {
            let got = c.get_or_render(key, || async { Ok(body.clone()) }).await;
            assert_eq!(got.ok().as_deref(), Some(body.as_bytes()));
            assert!(
                c.locked().flights.is_empty(),
                "{key}: a landed render's flight"
            );
        }
        assert_eq!(c.stats().entries, 1, "only the small one is kept");
        let failed = c
            .get_or_render("gone|1", || async {
                Err(crate::http::error::ApiError::internal())
            })
            .await;
        assert!(failed.is_err());
        assert!(c.locked().flights.is_empty(), "a failed render's flight");
        let abandoned = c.get_or_render("gone|2", std::future::pending);
        let waited = tokio::time::timeout(std::time::Duration::from_millis(10), abandoned).await;
        assert!(waited.is_err(), "the render never ends");
        assert!(
            c.locked().flights.is_empty(),
            "an abandoned render's flight"
        );
        assert_eq!(c.stats().entries, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_readers_of_one_tag_share_one_render() {
        let c = Arc::new(FeedCache::new(1 << 20));
        let runs = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (c, runs, gate) = (c.clone(), runs.clone(), gate.clone());
            tasks.push(tokio::spawn(async move {
                c.get_or_render("k", || async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    gate.notified().await;
                    ok("body")
                })
                .await
            }));
        }
        while runs.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        gate.notify_one();
        for t in tasks {
            assert_eq!(t.await.unwrap().unwrap().as_ref(), b"body");
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let s = c.stats();
        assert_eq!((s.renders, s.waits + s.hits), (1, 7), "{s:?}");
    }

    fn version(v: i64, body: &str) -> super::Version {
        super::Version {
            version: v,
            etag: format!("\"e{v}\""),
            changed_at: chrono::DateTime::from_timestamp(v * 60, 0).unwrap(),
            body: body.to_string().into(),
        }
    }

    /// While one reader renders a feed's new version, the others get the
    /// previous one with its own tag at once; once it lands, the new one.
    /// A render of an older version that lands late does not replace it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn readers_get_the_previous_version_while_the_next_renders() {
        use super::Served;
        let c = Arc::new(FeedCache::new(1 << 20));
        let first = c
            .serve("f", "f|1", version(1, ""), || async { ok("one") })
            .await;
        assert!(matches!(first, Ok(Served::Fresh(b)) if b.as_ref() == b"one"));
        let gate = Arc::new(tokio::sync::Notify::new());
        let started = Arc::new(AtomicUsize::new(0));
        let renderer = {
            let (c, gate, started) = (c.clone(), gate.clone(), started.clone());
            tokio::spawn(async move {
                c.serve("f", "f|2", version(2, ""), || async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    gate.notified().await;
                    ok("two")
                })
                .await
            })
        };
        while started.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        for _ in 0..3 {
            let got = c
                .serve("f", "f|2", version(2, ""), || async {
                    panic!("a second render of one version")
                })
                .await;
            match got {
                Ok(Served::Stale(v)) => assert_eq!(v, version(1, "one")),
                other => panic!("{other:?}"),
            }
        }
        // A newer version while an older one renders: the previous version,
        // and no second render of the feed.
        let newer = c
            .serve("f", "f|3", version(3, ""), || async {
                panic!("a second render of one feed")
            })
            .await;
        assert!(matches!(newer, Ok(Served::Stale(v)) if v == version(1, "one")));
        // Another feed has no previous version to serve: it renders.
        let other = c
            .serve("g", "g|2", version(2, ""), || async { ok("g") })
            .await;
        assert!(matches!(other, Ok(Served::Fresh(_))));
        gate.notify_one();
        assert!(matches!(renderer.await.unwrap(), Ok(Served::Fresh(b)) if b.as_ref() == b"two"));
        let now = c
            .serve("f", "f|2", version(2, ""), || async { ok("x") })
            .await;
        assert!(matches!(now, Ok(Served::Fresh(b)) if b.as_ref() == b"two"));
        c.remember("f", version(1, "one"));
        assert_eq!(c.locked().latest["f"], version(2, "two"));
        let s = c.stats();
        assert_eq!((s.renders, s.stale), (3, 4), "{s:?}");
        assert!(c.locked().rendering.is_empty() && c.locked().flights.is_empty());
    }
}
