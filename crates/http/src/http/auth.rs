//! Bearer tokens: `Authorization: Bearer <secret>`. No header, a malformed
//! one, or an unknown secret is 401; a known token without the scope is 403.
//! The secret is never logged (the trace layer logs method and path only).

use axum::http::{header, HeaderMap};

use crate::access::{self, Scope, Token};

use super::cache::Cache;
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
    Ok(scoped(access::authenticate(conn, now, secret)?, scope))
}

/// A token found (or not) for a request that needs `scope`.
pub(crate) fn scoped(token: Option<Token>, scope: Option<Scope>) -> ApiResult<Token> {
    match token {
        None => Err(ApiError::unauthorized()),
        Some(t) if scope.is_none_or(|s| t.scope.allows(s)) => Ok(t),
        Some(_) => Err(ApiError::forbidden(scope.map_or("", Scope::as_str))),
    }
}

/// The key a presented secret is cached under (its hash), if it could be
/// a secret at all.
pub(crate) fn cache_key(secret: &str) -> Option<String> {
    (secret.len() <= 128).then(|| access::hash_secret(secret))
}

/// The token a presented secret names, from the process's cache when
/// generation `g` holds it (no database work); `None`: ask the database
/// ([`check_and_keep`]).
pub fn cached(
    cache: &Cache,
    g: Option<u64>,
    now: chrono::DateTime<chrono::Utc>,
    p: &Presented,
) -> Option<Token> {
    let (Some(g), Presented::Secret(secret)) = (g, p) else {
        return None;
    };
    cache.token(g, &cache_key(secret)?, now)
}

/// [`check`] on a connection, keeping the token found under `g`.
pub(crate) fn check_and_keep(
    conn: &mut crate::db::DbConn,
    cache: &Cache,
    g: Option<u64>,
    now: chrono::DateTime<chrono::Utc>,
    p: &Presented,
) -> crate::error::Result<Option<Token>> {
    let Presented::Secret(secret) = p else {
        return Ok(None);
    };
    let token = access::authenticate(conn, now, secret)?;
    if let (Some(g), Some(t), Some(key)) = (g, &token, cache_key(secret)) {
        cache.put_token(g, key, t);
    }
    Ok(token)
}

/// The caller's token from the request's headers, when it has `scope`
/// (`None`: any scope; admin has every scope). The guard calls it before
/// the body is read (`guard`).
pub async fn verify(state: &App, headers: &HeaderMap, scope: Option<Scope>) -> ApiResult<Token> {
    let p = presented(headers);
    let now = state.clock.now();
    let g = state.cache.generation().await;
    if let Some(t) = cached(&state.cache, g, now, &p) {
        return scoped(Some(t), scope);
    }
    let app = state.clone();
    let token = state
        .blocking(move |c| check_and_keep(c, &app.cache, g, now, &p))
        .await?;
    scoped(token, scope)
}
