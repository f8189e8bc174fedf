//! One render per version of a feed, on both back ends: after a write, N
//! readers asking for the feed at once get the same new document under the
//! same ETag, and `/metrics` counts one render (`digestd_feed_renders_total`),
//! the others having waited for it or read it from memory; the cache's
//! size and hits are shown there too.

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
        let before = w.get(&p, Some(&wo.read));
        assert_eq!(before.status, 200);
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
            let tag = answers[0].header("etag").unwrap();
            assert_ne!(Some(&tag), before.header("etag").as_ref());
            for a in &answers {
                let f = feed(a);
                assert!(f
                    .entries
                    .iter()
                    .any(|e| title(&e.title) == format!("Renamed {round}")));
                assert_eq!(a.header("etag").as_ref(), Some(&tag));
                assert_eq!(a.text, answers[0].text);
            }
            let after = sample(w, &wo.read, "digestd_feed_renders_total");
            assert_eq!(after - renders, 1.0, "round {round}: {READERS} readers");
        }
        assert!(sample(w, &wo.read, "digestd_cache_bytes{cache=\"feeds\"}") > 0.0);
        assert!(sample(w, &wo.read, "digestd_cache_hits_total{cache=\"feeds\"}") >= 0.0);
    });
}
