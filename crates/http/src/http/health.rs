//! `/healthz`: the process answers. `/readyz`: the database answers and
//! the last tick (by any process sharing the database) finished within two
//! tick intervals; 503 with the reason otherwise. Neither needs a token.
//! `/api/v1/token`: which token the caller holds (any valid one).

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::schedule::{self, lease};

use super::error::ApiResult;
use super::guard::Authed;
use super::{ApiError, App};

#[derive(utoipa::OpenApi)]
#[openapi(paths(healthz, readyz, whoami))]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/api/v1/token", get(whoami))
}

/// The caller's own token: name and scope (any valid token may ask).
#[utoipa::path(get, path = "/api/v1/token", tag = "tokens", security(("bearer" = [])),
    responses((status = 200, description = "{\"name\": …, \"scope\": …}"), (status = 401, description = "no valid token")))]
async fn whoami(Authed(t): Authed) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(json!({"name": t.name, "scope": t.scope})))
}

/// The process runs.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "running")))]
async fn healthz() -> Json<serde_json::Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

/// The database answers and the last tick finished within two tick intervals.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, description = "ready"), (status = 503, description = "not ready, with why")))]
async fn readyz(State(app): State<App>) -> ApiResult<Json<serde_json::Value>> {
    let now = app.clock.now();
    let last = app
        .blocking(|c| lease::last_run(c, schedule::TICK_JOB))
        .await
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "database does not answer"))?;
    let cron = app.cfg.schedule.cron().map_err(ApiError::from)?;
    // The tick interval: the gap between the next two scheduled instants.
    let mut next = cron.after(&now);
    let interval = match (next.next(), next.next()) {
        (Some(a), Some(b)) => b - a,
        _ => chrono::Duration::hours(1),
    };
    match last {
        None => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no tick has finished yet",
        )),
        Some(t) if now - t > interval * 2 => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the last tick finished at {}, more than two tick intervals ({} s each) ago",
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                interval.num_seconds()
            ),
        )),
        Some(t) => Ok(Json(json!({
            "status": "ready",
            "last_tick": t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }))),
    }
}
