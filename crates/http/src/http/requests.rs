//! The nt queue over HTTP: `POST /api/v1/requests` (`digestd notify`),
//! `GET /api/v1/requests/{id}` (`digestd request show ID --json`),
//! `POST /api/v1/requests/{id}/cancel` (`digestd cancel`) and
//! `GET /api/v1/queue` (`digestd queue status --json`). The same library
//! calls, so the same validation, errors and JSON.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::db::states::RequestStatus;
use crate::deliver::queue::{self, NewNotification, QueueStatus, RequestView};
use crate::ids::RequestId;

use super::body::{Path, RawBody};
use super::error::{ApiError, ApiResult};
use super::guard::Authed;
use super::idempotency::{self, IdemKey, Reply};
use super::App;

const ROUTE_REQUESTS: &str = "POST /api/v1/requests";

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(notify, show, cancel, status),
    components(schemas(NewRequest, Posted, Cancelled))
)]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/v1/requests", post(notify))
        .route("/api/v1/requests/{id}", get(show))
        .route("/api/v1/requests/{id}/cancel", post(cancel))
        .route("/api/v1/queue", get(status))
}

/// A notification to queue, as `digestd notify`'s options.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRequest {
    /// The sender: a user or group name.
    pub from: String,
    /// The recipient: a user or group name.
    pub to: String,
    pub subject: String,
    /// The text (at most 256 KiB; tabs and line breaks allowed).
    pub message: String,
    /// `email`, `xmpp`, `sms`, `webhook`, `slack`, `discord`, `teams`,
    /// `ntfy`, `matrix` (left out: `["email"]`; empty: refused).
    pub channels: Option<Vec<String>>,
    /// Send to every user inside the group instead of the group's address.
    #[serde(default)]
    pub expand_group: bool,
    /// Attempts before giving up, 1–100 (default `[email] max_retries`).
    #[serde(default)]
    pub max_retries: Option<i64>,
    /// Sent at once, even to recipients inside their quiet hours (by
    /// default a notification waits for them to end).
    #[serde(default)]
    pub urgent: bool,
}

/// The queued request's id.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Posted {
    pub id: i64,
}

/// A request cancelled.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Cancelled {
    pub id: i64,
    /// Always `cancelled`.
    #[schema(value_type = String)]
    pub status: RequestStatus,
}

/// Queues a notification, as `digestd notify`. Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/v1/requests", tag = "requests", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "replays the first answer to a retry")),
    request_body = NewRequest,
    responses((status = 201, description = "queued", body = Posted),
        (status = 400, description = "bad input"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs admin"),
        (status = 404, description = "no such sender or recipient"),
        (status = 422, description = "Idempotency-Key reused with another body")))]
async fn notify(
    State(app): State<App>,
    Authed(token): Authed,
    headers: HeaderMap,
    body: RawBody,
) -> ApiResult<Reply> {
    let key = IdemKey::from_request(&headers, &token, ROUTE_REQUESTS, &body.0)?;
    let keep = idempotency::Keep::from_config(&app.cfg.http);
    let (now, hours) = (app.clock.now(), keep.hours);
    let email = app.cfg.email.clone();
    app.blocking(move |c| {
        if let Some(k) = &key {
            if let Some(answer) = idempotency::prior(c, k, now, hours)? {
                return Ok(answer);
            }
        }
        let r: NewRequest = match body.text().and_then(|t| {
            serde_json::from_str(t).map_err(|e| ApiError::bad_request(format!("request body: {e}")))
        }) {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        let n = NewNotification {
            from: r.from,
            to: r.to,
            expand_group: r.expand_group,
            subject: r.subject,
            message: r.message,
            max_retries: r.max_retries,
            channels: match super::body::channels_given(r.channels) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            },
            urgent: r.urgent,
        };
        idempotency::once(c, key.as_ref(), now, keep, |c| {
            let id = queue::post_request(c, &email, &n, now)?;
            Ok(Reply::new(StatusCode::CREATED, &json!({ "id": id.0 })))
        })
    })
    .await?
}

/// One request and each recipient's delivery state: exactly what
/// `digestd request show ID --json` prints.
#[utoipa::path(get, path = "/api/v1/requests/{id}", tag = "requests", security(("bearer" = [])),
    params(("id" = i64, Path, description = "the request's id")),
    responses((status = 200, description = "{id, status, kind, subject, recipients: [{party, channel, address (admin only), successful, gave_up, retry_count, reply_code, reply_message}]}"),
        (status = 400, description = "the id is not a number"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs read"),
        (status = 404, description = "no such request")))]
async fn show(
    State(app): State<App>,
    Authed(token): Authed,
    Path(id): Path<i64>,
) -> ApiResult<Json<serde_json::Value>> {
    let v: RequestView = app.blocking(move |c| queue::show(c, RequestId(id))).await?;
    let mut v = serde_json::to_value(v).map_err(|e| {
        tracing::error!(error = %e, "request view");
        ApiError::internal()
    })?;
    // A `read` token sees who and how, never where: addresses are admin's.
    if !token.scope.sees_addresses() {
        if let Some(rs) = v["recipients"].as_array_mut() {
            for r in rs.iter_mut().filter_map(|r| r.as_object_mut()) {
                r.remove("address");
            }
        }
    }
    Ok(Json(v))
}

/// Cancels a pending or sending request, as `digestd cancel`.
#[utoipa::path(post, path = "/api/v1/requests/{id}/cancel", tag = "requests", security(("bearer" = [])),
    params(("id" = i64, Path, description = "the request's id")),
    responses((status = 200, description = "cancelled", body = Cancelled),
        (status = 401, description = "no valid token"), (status = 403, description = "needs admin"),
        (status = 404, description = "no such request"),
        (status = 409, description = "the request already finished")))]
async fn cancel(
    State(app): State<App>,
    _: Authed,
    Path(id): Path<i64>,
) -> ApiResult<Json<Cancelled>> {
    let now = app.clock.now();
    app.blocking(move |c| queue::cancel_request(c, RequestId(id), now))
        .await?;
    Ok(Json(Cancelled {
        id,
        status: RequestStatus::Cancelled,
    }))
}

/// Requests by status and queue rows by state: what `digestd queue status
/// --json` prints.
#[utoipa::path(get, path = "/api/v1/queue", tag = "requests", security(("bearer" = [])),
    responses((status = 200, description = "{requests: {status: count}, rows_open, rows_retrying, rows_delivered, rows_given_up}"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs read")))]
async fn status(State(app): State<App>, _: Authed) -> ApiResult<Json<QueueStatus>> {
    Ok(Json(app.blocking(queue::status).await?))
}
