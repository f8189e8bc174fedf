//! The feed cache's unit tests: bounds, single-flight, stale answers.

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
