//! The HTTP face: axum on the process's tokio runtime. Database work runs
//! on the blocking pool through the r2d2 pool ([`App::blocking`]); Diesel
//! stays synchronous. Every API error is a JSON body ([`error`]); bearer tokens
//! are in [`auth`], and which scope each route needs, with its body limit,
//! in [`guard`], which checks both before a body is read. The accept loop,
//! with its connection cap and timeouts, is [`server`].
//!
//! Routes: [`health`] (`/healthz`, `/readyz`, `/api/v1/token`),
//! [`openapi`] (`/api/v1/openapi.json`, merged from each route module's
//! `openapi()`), [`metrics`] (`/metrics`, Prometheus text), [`ingest`]
//! (`/api/v1/modifications`, `/items`, `/collections`), [`seen`]
//! (`/api/v1/seen`), [`requests`]
//! (`/api/v1/requests`, `/queue`) with [`idempotency`] for the POSTs that write,
//! [`atom`] (`/atom/collection/{uuid}/changed|range`, the Cosmo feeds),
//! [`pages`] (`/s/{code}…`, the HTML pages digests link to, and `/admin…`,
//! the operator's; errors there are pages, not JSON).
//! `digestd web` runs this server alone ([`run_web`]); `digestd serve`
//! runs it beside its ticks ([`serve_on`]).

pub mod atom;
pub mod auth;
pub mod body;
pub mod cache;
pub mod client;
pub mod error;
pub mod feed_cache;
pub mod guard;
pub mod health;
pub mod idempotency;
pub mod ingest;
pub mod log;
pub mod media;
pub mod metrics;
pub mod openapi;
pub mod pages;
pub mod people;
pub mod requests;
pub mod seen;
pub mod server;
pub mod stream;
pub mod subscriptions;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::Router;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;

use crate::clock::Clock;
use crate::config::Config;
use crate::db::{Db, DbConn};
use crate::error::{Error, Result};

pub use error::{ApiError, ApiResult};

/// What every handler shares.
pub struct AppState {
    pub db: Db,
    pub cfg: Config,
    pub clock: Arc<dyn Clock>,
    /// What `/metrics` shows of this process; `serve` feeds it.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Rendered Atom feeds by strong tag (`atom`).
    pub feed_cache: feed_cache::FeedCache,
    /// Heads, tokens and tickets, so that a conditional feed GET asks the
    /// database nothing (`cache`).
    pub cache: cache::Cache,
    /// `[http] trusted_proxies`, parsed ([`client`]).
    pub trusted_proxies: Vec<crate::validate::IpNet>,
    /// The body limits and the budget of bodies in flight ([`guard`]).
    pub bodies: guard::Bodies,
}

/// The handlers' state: cheap to clone.
#[derive(Clone)]
pub struct App(pub Arc<AppState>);

impl std::ops::Deref for App {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.0
    }
}

impl App {
    pub fn new(db: Db, cfg: Config, clock: Arc<dyn Clock>) -> Self {
        Self::with_metrics(db, cfg, clock, Default::default())
    }

    /// With the metrics a tick loop feeds (`serve`).
    pub fn with_metrics(
        db: Db,
        cfg: Config,
        clock: Arc<dyn Clock>,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Self {
        // Checked when the settings were loaded; a Config built in code
        // with a bad list trusts no proxy.
        let trusted_proxies =
            crate::validate::ip_nets(&cfg.http.trusted_proxies).unwrap_or_default();
        let watch = crate::db::Watch::start(&db)
            .map_err(|e| tracing::warn!(error = %e, "no change watch; nothing cached"))
            .ok();
        let cache = cache::Cache::new(watch, cfg.http.cache_bytes);
        let bodies = guard::Bodies::from_config(&cfg.http);
        let feed_cache = feed_cache::FeedCache::new(cfg.http.feed_cache_bytes);
        App(Arc::new(AppState {
            bodies,
            db,
            cfg,
            clock,
            trusted_proxies,
            metrics,
            feed_cache,
            cache,
        }))
    }

    /// Runs `f` with a pooled connection on the blocking pool.
    pub async fn blocking<T, F>(&self, f: F) -> ApiResult<T>
    where
        F: FnOnce(&mut DbConn) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = db.conn()?;
            f(&mut conn)
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "blocking task failed");
            ApiError::internal()
        })?
        .map_err(ApiError::from)
    }
}

/// Every route, with the layers every answer goes through.
pub fn router(app: App) -> Router {
    let limit = app.cfg.http.max_body_bytes;
    let timeout = Duration::from_secs(app.cfg.http.timeout_seconds);
    let hsts = hsts(&app.cfg);
    let router = Router::new()
        .merge(health::routes())
        .merge(atom::routes())
        .merge(openapi::routes())
        .merge(metrics::routes())
        .merge(ingest::routes())
        .merge(seen::routes())
        .merge(requests::routes())
        .merge(people::routes())
        .merge(subscriptions::routes())
        .merge(pages::routes())
        // Tokens and body limits, from the headers, before any handler
        // reads a body; on the routes only (the fallbacks read nothing).
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::guard,
        ))
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed on this route",
            )
        })
        // The most any extractor reads anywhere; the guard narrows it per route.
        .layer(axum::extract::DefaultBodyLimit::max(limit))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            timeout,
        ))
        // Method, route template, status, duration: never the path or
        // query, which carry codes, tokens, MACs and tickets.
        .layer(axum::middleware::from_fn(log::log))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        ));
    let router = match hsts {
        Some(v) => router.layer(SetResponseHeaderLayer::overriding(
            header::STRICT_TRANSPORT_SECURITY,
            v,
        )),
        None => router,
    };
    router.with_state(app)
}

/// `Strict-Transport-Security` for every answer when the public base
/// (`[digest] base_url`) is https and `[http] hsts_max_age_seconds` is
/// not 0; none over plain http, where a browser ignores it anyway.
pub(crate) fn hsts(cfg: &Config) -> Option<HeaderValue> {
    let https = cfg
        .digest
        .base_url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"));
    let age = cfg.http.hsts_max_age_seconds;
    if !https || age == 0 {
        return None;
    }
    HeaderValue::from_str(&format!("max-age={age}")).ok()
}

/// Binds `[http] listen` (a clear error when the address is taken).
/// A start-up failure like a bad setting: one line naming the setting,
/// exit 2.
pub async fn bind(listen: &str) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(listen).await.map_err(|e| {
        Error::invalid(format!(
            "config: http.listen {}: {e} (another process may hold the port; choose another with [http] listen or DIGESTD_HTTP__LISTEN)",
            crate::validate::escape_for_line(listen)
        ))
    })
}

/// Serves until `shutdown` completes, then lets the requests in flight
/// finish (graceful drain) and returns.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    // The peer's address reaches handlers as `ConnectInfo` (the admin
    // login's failure limit keys on it); the server provides it.
    let limits = server::Limits::from_config(&app.cfg.http).within_descriptors();
    server::run(listener, router(app), limits, shutdown).await;
    Ok(())
}

/// Completes on SIGTERM or ctrl-c.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// `digestd web`: the HTTP server alone, until SIGTERM or ctrl-c, on `rt`,
/// the process's runtime.
pub fn run_web(cfg: &Config, clock: Arc<dyn Clock>, rt: &tokio::runtime::Runtime) -> Result<()> {
    rt.block_on(async {
        let db = Db::open_existing(&cfg.database.url, cfg.database.pool_size)?;
        let listener = bind(&cfg.http.listen).await?;
        let addr = listener.local_addr()?;
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            database = %crate::text::redact_url(&cfg.database.url),
            %addr,
            "digestd web listening"
        );
        eprintln!("digestd web: listening on http://{addr}");
        let app = App::new(db, cfg.clone(), clock);
        serve_on(listener, app, shutdown_signal()).await
    })
}
