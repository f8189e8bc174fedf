//! `GET /metrics`: the Prometheus text exposition ([`crate::metrics`]):
//! this process's counters and the database's state read now. Needs a
//! token with the `read` scope (Prometheus sends it from its scrape
//! config's `authorization` block).

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::metrics;

use super::error::ApiResult;
use super::guard::Authed;
use super::App;

#[derive(utoipa::OpenApi)]
#[openapi(paths(scrape))]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new().route("/metrics", get(scrape))
}

/// Metrics in the Prometheus text exposition format (version 0.0.4).
#[utoipa::path(get, path = "/metrics", tag = "health", security(("bearer" = [])),
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain"),
        (status = 401, description = "no valid token"),
        (status = 403, description = "the token lacks the read scope")))]
async fn scrape(State(app): State<App>, _: Authed) -> ApiResult<impl IntoResponse> {
    let now = app.clock.now();
    let db = app.blocking(metrics::read_db).await?;
    let mut text = app.metrics.render(&db, now)?;
    text.push_str(&caches(&app).map_err(|e| {
        tracing::error!(error = %e, "cache metrics");
        super::ApiError::internal()
    })?);
    Ok(([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text))
}

/// The in-memory caches of this process: hits, misses, entries and bytes
/// per cache; renders of feeds and the readers that waited for one.
fn caches(app: &App) -> prometheus::Result<String> {
    use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};
    let r = Registry::new();
    let counter = |name: &str, help: &str| -> prometheus::Result<IntCounterVec> {
        let c = IntCounterVec::new(Opts::new(name, help), &["cache"])?;
        r.register(Box::new(c.clone()))?;
        Ok(c)
    };
    let gauge = |name: &str, help: &str| -> prometheus::Result<IntGaugeVec> {
        let g = IntGaugeVec::new(Opts::new(name, help), &["cache"])?;
        r.register(Box::new(g.clone()))?;
        Ok(g)
    };
    let hits = counter(
        "digestd_cache_hits_total",
        "Lookups answered from memory, by cache.",
    )?;
    let misses = counter(
        "digestd_cache_misses_total",
        "Lookups that read the database (or waited for a render), by cache.",
    )?;
    let entries = gauge("digestd_cache_entries", "Entries held now, by cache.")?;
    let bytes = gauge(
        "digestd_cache_bytes",
        "Bytes held now, by cache (bounded by [http] feed_cache_bytes and cache_bytes).",
    )?;
    let feeds = app.feed_cache.stats();
    let mut all = vec![("feeds", feeds)];
    all.extend(app.cache.stats());
    for (name, s) in all {
        hits.with_label_values(&[name]).inc_by(s.hits);
        misses.with_label_values(&[name]).inc_by(s.misses);
        entries.with_label_values(&[name]).set(s.entries as i64);
        bytes.with_label_values(&[name]).set(s.bytes as i64);
    }
    let renders = prometheus::IntCounter::new(
        "digestd_feed_renders_total",
        "Atom feed documents rendered (read from the log and written); one per version \
         however many readers asked at once.",
    )?;
    renders.inc_by(feeds.renders);
    r.register(Box::new(renders))?;
    let waits = prometheus::IntCounter::new(
        "digestd_feed_render_waits_total",
        "Feed reads that waited for another reader's render of the same version.",
    )?;
    waits.inc_by(feeds.waits);
    r.register(Box::new(waits))?;
    let stale = prometheus::IntCounter::new(
        "digestd_feed_stale_total",
        "Feed reads served the previous version while another reader's render of the newest \
         was in flight.",
    )?;
    stale.inc_by(feeds.stale);
    r.register(Box::new(stale))?;
    prometheus::TextEncoder::new().encode_to_string(&r.gather())
}
