//! The soak's clients: ingest posting batches of modifications, feed
//! readers with and without `If-None-Match`, API reads; each request's
//! latency recorded per route, marked when it overlapped a tick (the
//! top-of-hour burst), for the per-hour report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::clock::{Clock, FixedClock};

/// Latencies of one route in one interval, in microseconds, split by
/// whether a tick was running.
#[derive(Default, Clone)]
pub struct Route {
    pub calm: Vec<u32>,
    pub burst: Vec<u32>,
    pub errors: usize,
}

/// Latencies by route.
pub type Routes = BTreeMap<&'static str, Route>;

/// What every client records into, and the switches it reads.
#[derive(Default)]
pub struct Shared {
    pub routes: Mutex<Routes>,
    pub stop: AtomicBool,
    pub bursting: AtomicBool,
}

/// Modification batches posted in this process, each a run of item
/// numbers of its own.
static BATCHES: AtomicUsize = AtomicUsize::new(0);

impl Shared {
    fn record(&self, route: &'static str, took: Duration, ok: bool) {
        let us = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
        let burst = self.bursting.load(Ordering::Relaxed);
        let mut g = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let r = g.entry(route).or_default();
        if !ok {
            r.errors += 1;
        }
        if burst {
            r.burst.push(us);
        } else {
            r.calm.push(us);
        }
    }

    /// The interval's latencies, leaving empty ones behind.
    pub fn take(&self) -> Routes {
        std::mem::take(&mut *self.routes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// The quantile `q` of `v` (sorted here), in milliseconds.
pub(crate) fn quantile_ms(v: &mut [u32], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    f64::from(v[i]) / 1000.0
}

/// Where and as whom the clients talk.
#[derive(Clone)]
pub struct Target {
    pub base: String,
    pub auth: String,
    pub collections: Arc<Vec<String>>,
    pub clock: Arc<FixedClock>,
    pub batch: usize,
}

/// `n` modification lines (a JSON array) for batch number `b`, items of
/// their own, dated a second before the bench's clock.
fn batch_body(t: &Target, b: usize) -> String {
    let coll = &t.collections[b % t.collections.len()];
    let at: DateTime<Utc> = t.clock.now() - chrono::Duration::seconds(1);
    let at = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let lines: Vec<String> = (0..t.batch)
        .map(|i| {
            let n = (b * t.batch + i) as u128;
            let item = uuid::Uuid::from_u128(0x50a4_0000_0000_0000_0000_0000_0000_0000 + n);
            format!(
                r#"{{"collection":"{coll}","item":"{item}","actor":"soak0","action":"edited","at":"{at}","title":"Item {n}","kind":"event","changes":[{{"attribute":"location","old":"Room {n}","new":"Room {}"}}]}}"#,
                n + 1
            )
        })
        .collect();
    format!("[{}]", lines.join(","))
}

/// Posts batches until told to stop: `per_second` of them a second
/// (0: one after another, as fast as the server answers).
pub async fn ingest(t: Target, s: Arc<Shared>, per_second: f64) {
    let client = reqwest::Client::new();
    let mut pace = (per_second > 0.0).then(|| {
        let mut i = tokio::time::interval(Duration::from_secs_f64(1.0 / per_second));
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        i
    });
    while !s.stopped() {
        if let Some(p) = pace.as_mut() {
            p.tick().await;
        }
        let b = BATCHES.fetch_add(1, Ordering::Relaxed);
        let body = batch_body(&t, b);
        let started = Instant::now();
        let r = client
            .post(format!("{}/api/v1/modifications", t.base))
            .header("authorization", &t.auth)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        let ok = match r {
            Ok(r) => r.status() == 201 && r.bytes().await.is_ok(),
            Err(_) => false,
        };
        s.record(super::POST_ROUTE, started.elapsed(), ok);
    }
}

/// Reads `url` until told to stop; with `conditional`, sends the last
/// ETag it got (a widget's poll: 304 until the feed changes).
pub async fn reader(
    url: String,
    auth: String,
    s: Arc<Shared>,
    conditional: bool,
    route: &'static str,
) {
    let client = reqwest::Client::new();
    let mut etag: Option<String> = None;
    while !s.stopped() {
        let mut req = client.get(&url).header("authorization", &auth);
        if let Some(e) = etag.as_ref().filter(|_| conditional) {
            req = req.header("if-none-match", e);
        }
        let started = Instant::now();
        let ok = match req.send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                if let Some(e) = r.headers().get("etag").and_then(|v| v.to_str().ok()) {
                    etag = Some(e.to_string());
                }
                r.bytes().await.is_ok() && (status == 200 || status == 304)
            }
            Err(_) => false,
        };
        s.record(route, started.elapsed(), ok);
        if !ok {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
