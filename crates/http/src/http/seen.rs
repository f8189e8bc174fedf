//! `POST /api/v1/seen` (`digestd seen`): seen marks from the systems that
//! know when a person viewed an item. The ingest scope, checked from the
//! headers before the body is read (`guard`), with the bulk body limit.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::seen::{self, MarkInput, Refused, MAX_BATCH};

use super::body::RawBody;
use super::error::{ApiError, ApiResult};
use super::guard::Authed;
use super::App;

#[derive(utoipa::OpenApi)]
#[openapi(paths(record), components(schemas(SeenRecorded)))]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new().route("/api/v1/seen", post(record))
}

/// How many marks were recorded.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SeenRecorded {
    pub recorded: usize,
}

/// Records when people saw items: one `{"party", "item", "at"}` or an
/// array of at most 1,000, all or nothing. A later mark replaces an
/// earlier one; an earlier one changes nothing, so a retry is harmless.
#[utoipa::path(post, path = "/api/v1/seen", tag = "ingest", security(("bearer" = [])),
    request_body(content = serde_json::Value, description = "a mark {party, item, at} or an array of at most 1000"),
    responses(
        (status = 200, description = "every mark recorded", body = SeenRecorded),
        (status = 400, description = "bad body or bad entry (`entry`: its 0-based index); nothing recorded"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs ingest"),
        (status = 404, description = "an entry names an unknown user or item (`entry`); nothing recorded"),
        (status = 413, description = "body too large")))]
async fn record(
    State(app): State<App>,
    _: Authed,
    body: RawBody,
) -> ApiResult<(StatusCode, Json<SeenRecorded>)> {
    let batch = entries(body.text()?)?;
    let bounds = app.cfg.record.at_bounds(app.clock.now());
    let recorded = app
        .blocking(move |c| match seen::check(c, &batch, &bounds)? {
            Ok(marks) => seen::record(c, &marks).map(Ok),
            Err(r) => Ok(Err(r)),
        })
        .await?
        .map_err(refused)?;
    Ok((StatusCode::OK, Json(SeenRecorded { recorded })))
}

/// The body's marks: one object, or an array of at most [`MAX_BATCH`].
fn entries(text: &str) -> ApiResult<Vec<MarkInput>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ApiError::bad_request(format!(
            "request body: {e} (expected a mark or an array of marks)"
        ))
    })?;
    let values = match value {
        Value::Array(v) if v.len() > MAX_BATCH => {
            return Err(ApiError::bad_request(format!(
                "{} marks in one request; at most {MAX_BATCH} are accepted, nothing was written",
                v.len()
            ))
            .with_entry(MAX_BATCH))
        }
        Value::Array(v) => v,
        one @ Value::Object(_) => vec![one],
        _ => {
            return Err(ApiError::bad_request(
                "request body: expected a mark {party, item, at} or an array of them",
            ))
        }
    };
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v).map_err(|e| {
                refused(Refused {
                    index: i,
                    error: Error::invalid(format!("bad mark: {e}")),
                })
            })
        })
        .collect()
}

/// A refused entry: 400 (404 for an unknown user or item), naming it.
fn refused(r: Refused) -> ApiError {
    let status = match &r.error {
        Error::NotFound(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, r.line()).with_entry(r.index)
}
