//! Extractors whose refusals are JSON like every other error: a body within
//! the route's limit (413 beyond; the limit is the guard's, `guard`),
//! valid UTF-8, parsed as JSON. A body the guard marked JSON has no object
//! with a key twice (`media::unique_keys`), whatever the handler parses.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::guard::{BodyLimit, JsonBodyOf};
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
        let json = req.extensions().get::<JsonBodyOf>().copied();
        match Bytes::from_request(req, app).await {
            Ok(b) => {
                if let Some(j) = json {
                    super::media::unique_keys(&b, j.ndjson)?;
                }
                Ok(RawBody(b))
            }
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

/// Each element of the JSON array `text`, in order, with its 0-based
/// index, parsed one at a time: a body of millions of elements never
/// exists as a tree. 400 with serde's reason when `text` is not an array.
pub(crate) fn each_element(
    text: &str,
    f: impl FnMut(usize, serde_json::Value),
) -> Result<(), ApiError> {
    use serde::de::{Deserializer, SeqAccess, Visitor};

    struct Each<F>(F);
    impl<'de, F: FnMut(usize, serde_json::Value)> Visitor<'de> for Each<F> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON array")
        }
        fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while let Some(v) = seq.next_element()? {
                (self.0)(i, v);
                i += 1;
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_seq(Each(f))
        .and_then(|()| de.end())
        .map_err(|e| ApiError::bad_request(format!("request body: {e}")))
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

/// A body's `channels` as given: absent is none (the default, email), but
/// an empty list is refused, as the CLI and the manage page refuse no
/// channel: `[]` reads as "no channel", never as email.
pub fn channels_given(v: Option<Vec<String>>) -> Result<Vec<String>, ApiError> {
    match v {
        None => Ok(Vec::new()),
        Some(v) if v.is_empty() => Err(ApiError::bad_request(format!(
            "channels: give at least one channel ({}), or leave channels out for email",
            crate::parties::Channel::named()
        ))),
        Some(v) => Ok(v),
    }
}
