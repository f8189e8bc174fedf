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
/// that goes on to read with it): `Ok(Err(..))` is a 401 or 403. `None`
/// takes a token of any scope.
pub fn check(
    conn: &mut crate::db::DbConn,
    now: chrono::DateTime<chrono::Utc>,
    p: &Presented,
    scope: Option<Scope>,
) -> crate::error::Result<ApiResult<Token>> {
    let Presented::Secret(secret) = p else {
        return Ok(Err(ApiError::unauthorized()));
    };
    Ok(match access::authenticate(conn, now, secret)? {
        None => Err(ApiError::unauthorized()),
        Some(t) if scope.is_none_or(|s| t.scope.allows(s)) => Ok(t),
        Some(_) => Err(ApiError::forbidden(scope.map_or("", Scope::as_str))),
    })
}

/// The caller's token, when it has `scope` (admin has every scope).
pub async fn require(state: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Token> {
    checked(state, headers, Some(scope)).await
}

/// Any valid token, whatever its scope.
pub async fn any(state: &App, headers: &HeaderMap) -> ApiResult<Token> {
    checked(state, headers, None).await
}

async fn checked(state: &App, headers: &HeaderMap, scope: Option<Scope>) -> ApiResult<Token> {
    let p = presented(headers);
    let now = state.clock.now();
    state.blocking(move |c| check(c, now, &p, scope)).await?
}
