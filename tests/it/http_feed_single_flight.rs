//! One render per version of a feed, on both back ends: after a write, N
//! readers asking for the feed at once each get the new document or, while
//! it renders, the previous one, each under its own ETag; the next reader
//! gets the new one; and `/metrics` counts one render
//! (`digestd_feed_renders_total`), the others having waited for it, read
//! it from memory, or been served the previous version
//! (`digestd_feed_stale_total`); the cache's size and hits are shown there
//! too.

use crate::common;
use crate::common::atom;

use std::sync::Barrier;

use atom::*;

const READERS: usize = 16;

/// The value of the sample `name` (with its labels, as written) on `/metrics`.
fn sample(w: &common::web::Web, token: &str, name: &str) -> f64 {
    let m = w.get("/metrics", Some(token));
    assert_eq!(m.status, 200, "{}", m.text);
    m.text
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in {}", m.text))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn readers_after_a_write_share_one_render() {
    each(|w, wo| {
        let p = path(&wo.cal, "changed", WINDOW);
        let mut prev = w.get(&p, Some(&wo.read));
        assert_eq!(prev.status, 200);
        for round in 0..3 {
            put(
                w,
                &wo.cal,
                C,
                &format!("Renamed {round}"),
                "bob",
                "2026-11-16T11:50:00Z",
            );
            let renders = sample(w, &wo.read, "digestd_feed_renders_total");
            let gate = Barrier::new(READERS);
            let answers: Vec<_> = std::thread::scope(|s| {
                let readers: Vec<_> = (0..READERS)
                    .map(|_| {
                        s.spawn(|| {
                            gate.wait();
                            w.get(&p, Some(&wo.read))
                        })
                    })
                    .collect();
                readers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            let now = w.get(&p, Some(&wo.read));
            let tag = now.header("etag").unwrap();
            assert_ne!(tag, prev.header("etag").unwrap());
            let renamed = |a: &common::web::Answer| {
                feed(a)
                    .entries
                    .iter()
                    .any(|e| title(&e.title) == format!("Renamed {round}"))
            };
            assert!(renamed(&now), "{}", now.text);
            let mut fresh = 0;
            for a in &answers {
                if a.header("etag").as_ref() == Some(&tag) {
                    assert_eq!(a.text, now.text);
                    fresh += 1;
                } else {
                    assert_eq!(
                        a.header("etag"),
                        prev.header("etag"),
                        "the previous version"
                    );
                    assert_eq!(a.text, prev.text);
                    assert!(!renamed(a));
                }
            }
            assert!(fresh >= 1, "the reader who rendered it got it");
            let after = sample(w, &wo.read, "digestd_feed_renders_total");
            assert_eq!(after - renders, 1.0, "round {round}: {READERS} readers");
            prev = now;
        }
        assert!(sample(w, &wo.read, "digestd_feed_stale_total") >= 0.0);
        assert!(sample(w, &wo.read, "digestd_cache_bytes{cache=\"feeds\"}") > 0.0);
        assert!(sample(w, &wo.read, "digestd_cache_hits_total{cache=\"feeds\"}") >= 0.0);
    });
}
