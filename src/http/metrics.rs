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
    let text = app.metrics.render(&db, now)?;
    Ok(([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text))
}
