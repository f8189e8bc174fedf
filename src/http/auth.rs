//! Bearer tokens: `Authorization: Bearer <secret>`. No header, a malformed
//! one, or an unknown secret is 401; a known token without the scope is 403.
//! The secret is never logged (the trace layer logs method and path only).

use axum::http::{header, HeaderMap};

use crate::access::{self, Scope, Token};

use super::error::{ApiError, ApiResult};
use super::App;

/// The secret a request carries, if its Authorization header is Bearer.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, secret) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| secret.trim())
        .filter(|s| !s.is_empty())
}

/// What a request's Authorization header presents, read before any
/// database work so that the check can share a connection with the rest.
#[derive(Debug, Clone)]
pub enum Presented {
    Nothing,
    Malformed,
    Secret(String),
}

pub fn presented(headers: &HeaderMap) -> Presented {
    if headers.get(header::AUTHORIZATION).is_none() {
        return Presented::Nothing;
    }
    match bearer(headers) {
        Some(s) => Presented::Secret(s.to_string()),
        None => Presented::Malformed,
    }
}

/// [`require`] on a connection the caller holds (inside one blocking call
/// that goes on to read with it): `Ok(Err(..))` is a 401 or 403.
pub fn check(
    conn: &mut crate::db::DbConn,
    now: chrono::DateTime<chrono::Utc>,
    p: &Presented,
    scope: Scope,
) -> crate::error::Result<ApiResult<Token>> {
    let Presented::Secret(secret) = p else {
        return Ok(Err(ApiError::unauthorized()));
    };
    Ok(match access::authenticate(conn, now, secret)? {
        None => Err(ApiError::unauthorized()),
        Some(t) if t.scope.allows(scope) => Ok(t),
        Some(_) => Err(ApiError::forbidden(scope.as_str())),
    })
}

/// The caller's token, when it has `scope` (admin has every scope).
pub async fn require(state: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Token> {
    let token = caller(state, headers)
        .await?
        .ok_or_else(ApiError::unauthorized)?;
    if token.scope.allows(scope) {
        Ok(token)
    } else {
        Err(ApiError::forbidden(scope.as_str()))
    }
}

/// The caller's token, if any valid one is presented (401 for a bad one:
/// a request that names a token must name a real one).
pub async fn caller(state: &App, headers: &HeaderMap) -> ApiResult<Option<Token>> {
    if headers.get(header::AUTHORIZATION).is_none() {
        return Ok(None);
    }
    let secret = bearer(headers)
        .ok_or_else(ApiError::unauthorized)?
        .to_string();
    let now = state.clock.now();
    let token = state
        .blocking(move |c| access::authenticate(c, now, &secret))
        .await?;
    token.map(Some).ok_or_else(ApiError::unauthorized)
}

/// Any valid token, whatever its scope.
pub async fn any(state: &App, headers: &HeaderMap) -> ApiResult<Token> {
    caller(state, headers)
        .await?
        .ok_or_else(ApiError::unauthorized)
}
