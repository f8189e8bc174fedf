//! Extractors whose refusals are JSON like every other error: a body within
//! the route's limit (413 beyond; the limit is the guard's, `guard`),
//! valid UTF-8, parsed as JSON.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::guard::BodyLimit;
use super::App;

/// The raw body, within the configured limit.
pub struct RawBody(pub Bytes);

impl FromRequest<App> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &App) -> Result<Self, ApiError> {
        let limit = req
            .extensions()
            .get::<BodyLimit>()
            .map_or(app.cfg.http.max_body_bytes, |l| l.0);
        match Bytes::from_request(req, app).await {
            Ok(b) => Ok(RawBody(b)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::too_large(limit))
            }
            Err(e) => Err(ApiError::bad_request(format!(
                "could not read the request body: {}",
                e.body_text()
            ))),
        }
    }
}

impl RawBody {
    /// The body as text: refused (400) unless it is UTF-8.
    pub fn text(&self) -> Result<&str, ApiError> {
        std::str::from_utf8(&self.0).map_err(|e| {
            ApiError::bad_request(format!(
                "request body is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            ))
        })
    }
}

/// A JSON body parsed into `T`; any failure is 400 with serde's reason.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<App> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &App) -> Result<Self, ApiError> {
        let raw = RawBody::from_request(req, app).await?;
        let text = raw.text()?;
        serde_json::from_str(text)
            .map(JsonBody)
            .map_err(|e| ApiError::bad_request(format!("request body: {e}")))
    }
}

/// Query parameters parsed into `T`; a failure is 400 with a JSON body.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Query(q.0))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// Path parameters parsed into `T`; a failure is 400 with a JSON body.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Path(p.0))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}
