//! `Idempotency-Key` for the POSTs that write (`/api/v1/modifications`,
//! `/api/v1/requests`): a retry with the same key and the same body gets
//! the first answer again, status and body, and writes nothing; the same
//! key with another body is 422.
//!
//! A key belongs to (token, route): another token's key, or the same key on
//! another route, is unrelated. One token may have at most
//! `[http] idempotency_max_keys` keys stored at once (all routes together);
//! a request with a new key past that is 429, saying when the oldest key
//! expires, and writes nothing (a replay of a stored key is still
//! answered). Keys are kept `[http] idempotency_hours`;
//! an older key is ignored, and expired keys are deleted (in a statement of
//! their own) just before a new one is stored. Only successes are kept: a refused request writes nothing,
//! its key included, so it may be retried as is.
//!
//! The key's row is claimed first inside the write's own transaction and
//! filled in with the answer before commit: the write and its key are
//! committed together or not at all. Two requests with one key at once:
//! the second one's claim fails on the primary key (on PostgreSQL it waits
//! for the first to commit), its transaction is rolled back and it answers
//! from the stored row. If that row has gone again (expired and purged in
//! between) the answer is 409, retry.
//!
//! This module owns `idempotency_keys`.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::access::Token;
use crate::db::schema::idempotency_keys as k;
use crate::db::DbConn;
use crate::error::{Error, Result};

use super::error::{ApiError, ApiResult};

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// Set on an answer that was replayed from a stored key.
pub const REPLAYED: &str = "idempotent-replayed";
/// The longest key accepted, in bytes.
pub const MAX_KEY: usize = 255;

/// A request's key, with what it is scoped to and the body's hash.
#[derive(Debug, Clone)]
pub struct IdemKey {
    pub token_id: i64,
    pub route: &'static str,
    pub key: String,
    pub hash: String,
}

impl IdemKey {
    /// The key the request carries, if any, with the hash of `body`: see
    /// [`KeyName::from_headers`] for what is refused.
    pub(crate) fn from_request(
        headers: &HeaderMap,
        token: &Token,
        route: &'static str,
        body: &[u8],
    ) -> ApiResult<Option<IdemKey>> {
        let named = KeyName::from_headers(headers, token, route)?;
        Ok(named.map(|n| n.with_hash(body_hash(body))))
    }
}

/// A request's key before its body is read: a streamed body's hash is
/// known only at its end ([`body_hash`]'s, computed as it arrives).
#[derive(Debug, Clone)]
pub struct KeyName {
    token_id: i64,
    route: &'static str,
    key: String,
}

impl KeyName {
    /// The key the request carries, if any: 400 when it is empty, longer
    /// than [`MAX_KEY`] bytes, not UTF-8, or holds a control character.
    pub(crate) fn from_headers(
        headers: &HeaderMap,
        token: &Token,
        route: &'static str,
    ) -> ApiResult<Option<KeyName>> {
        let Some(v) = headers.get(HEADER) else {
            return Ok(None);
        };
        let key = std::str::from_utf8(v.as_bytes())
            .map_err(|_| ApiError::bad_request("Idempotency-Key is not valid UTF-8"))?;
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(ApiError::bad_request(format!(
                "Idempotency-Key must be 1 to {MAX_KEY} bytes long"
            )));
        }
        if key.chars().any(char::is_control) {
            return Err(ApiError::bad_request(
                "Idempotency-Key contains a control character",
            ));
        }
        Ok(Some(KeyName {
            token_id: token.id,
            route,
            key: key.to_string(),
        }))
    }

    /// The key, for the body whose hash (hex SHA-256) is `hash`.
    pub(crate) fn with_hash(self, hash: String) -> IdemKey {
        IdemKey {
            token_id: self.token_id,
            route: self.route,
            key: self.key,
            hash,
        }
    }
}

/// SHA-256 of the body, in hex.
pub fn body_hash(body: &[u8]) -> String {
    crate::text::hex(&Sha256::digest(body))
}

/// A JSON answer: fresh, or replayed from a stored key.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub body: String,
    pub replayed: bool,
}

impl Reply {
    pub fn new(status: StatusCode, body: &serde_json::Value) -> Reply {
        Reply {
            status,
            body: body.to_string(),
            replayed: false,
        }
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            self.body,
        )
            .into_response();
        if self.replayed {
            r.headers_mut()
                .insert(REPLAYED, HeaderValue::from_static("true"));
        }
        r
    }
}

/// How old a key may be and still count.
fn cutoff(now: DateTime<Utc>, hours: u32) -> NaiveDateTime {
    (now - Duration::hours(i64::from(hours))).naive_utc()
}

/// The stored answer to this key, if a live one exists: `Ok(reply)` for
/// the same body, `Err(422)` for another.
pub(crate) fn prior(
    conn: &mut DbConn,
    key: &IdemKey,
    now: DateTime<Utc>,
    hours: u32,
) -> Result<Option<ApiResult<Reply>>> {
    let row: Option<(String, i32, String)> = k::table
        .filter(k::token_id.eq(key.token_id))
        .filter(k::route.eq(key.route))
        .filter(k::idem_key.eq(&key.key))
        .filter(k::created_at.gt(cutoff(now, hours)))
        .select((k::request_hash, k::status, k::body))
        .first(conn)
        .optional()?;
    Ok(row.map(|(hash, status, body)| {
        if hash != key.hash {
            return Err(ApiError::unprocessable(
                "this Idempotency-Key was used with a different request body",
            ));
        }
        let status = u16::try_from(status)
            .ok()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .ok_or_else(|| Error::Storage(format!("idempotency key stored status {status}")))
            .map_err(ApiError::from)?;
        Ok(Reply {
            status,
            body,
            replayed: true,
        })
    }))
}

/// How keys are kept: `[http] idempotency_hours` and
/// `idempotency_max_keys`.
#[derive(Debug, Clone, Copy)]
pub struct Keep {
    pub hours: u32,
    pub max_keys: u32,
}

impl Keep {
    pub fn from_config(c: &crate::config::HttpConfig) -> Keep {
        Keep {
            hours: c.idempotency_hours,
            max_keys: c.idempotency_max_keys,
        }
    }
}

/// 429 when `token_id` has its quota of live keys: with the seconds until
/// its oldest key expires and frees a place.
fn over_quota(
    conn: &mut DbConn,
    token_id: i64,
    now: DateTime<Utc>,
    keep: Keep,
) -> Result<Option<ApiError>> {
    let live = k::table
        .filter(k::token_id.eq(token_id))
        .filter(k::created_at.gt(cutoff(now, keep.hours)));
    let n: i64 = live.count().get_result(conn)?;
    if n < i64::from(keep.max_keys) {
        return Ok(None);
    }
    let oldest: Option<NaiveDateTime> = live.select(diesel::dsl::min(k::created_at)).first(conn)?;
    let frees = oldest.map_or(now, |t| {
        t.and_utc() + Duration::hours(i64::from(keep.hours))
    });
    let secs = (frees - now).num_seconds().max(1);
    let mut e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "this token has {n} Idempotency-Keys stored, its limit ([http] idempotency_max_keys); \
             retry in {secs} s, when its oldest expires, or send without a key"
        ),
    );
    e.retry_after_secs = Some(secs as u64);
    Ok(Some(e))
}

/// Runs `write` in one transaction with the key's row (none without a key):
/// the key is claimed, `write` runs, the row gets its answer, and all of it
/// commits together. An error from `write` rolls everything back. A token
/// at its quota of keys gets 429 and nothing runs.
pub fn once(
    conn: &mut DbConn,
    key: Option<&IdemKey>,
    now: DateTime<Utc>,
    keep: Keep,
    write: impl FnOnce(&mut DbConn) -> Result<Reply>,
) -> Result<ApiResult<Reply>> {
    let Some(key) = key else {
        return conn.write_tx(write).map(Ok);
    };
    let hours = keep.hours;
    // Purged in a statement of its own, so that the write's transaction
    // holds no locks on other keys' rows while it runs.
    diesel::delete(k::table.filter(k::created_at.le(cutoff(now, hours)))).execute(conn)?;
    // Counted before the claim: requests racing at the limit may each
    // store one key past it, no more.
    if let Some(e) = over_quota(conn, key.token_id, now, keep)? {
        return Ok(Err(e));
    }
    conn.write_tx(|c| {
        // A savepoint: losing the race leaves the transaction usable.
        let claim = c.write_tx(|c| {
            diesel::insert_into(k::table)
                .values((
                    k::token_id.eq(key.token_id),
                    k::route.eq(key.route),
                    k::idem_key.eq(&key.key),
                    k::request_hash.eq(&key.hash),
                    k::status.eq(0),
                    k::body.eq(""),
                    k::created_at.eq(now.naive_utc()),
                ))
                .execute(c)?;
            Ok(())
        });
        match claim {
            Ok(()) => {}
            Err(Error::Conflict(_)) => {
                return match prior(c, key, now, hours)? {
                    Some(answer) => Ok(answer),
                    None => Ok(Err(ApiError::new(
                        StatusCode::CONFLICT,
                        "a request with this Idempotency-Key is in flight; retry",
                    ))),
                };
            }
            Err(e) => return Err(e),
        }
        let reply = write(c)?;
        diesel::update(
            k::table
                .filter(k::token_id.eq(key.token_id))
                .filter(k::route.eq(key.route))
                .filter(k::idem_key.eq(&key.key)),
        )
        .set((
            k::status.eq(i32::from(reply.status.as_u16())),
            k::body.eq(&reply.body),
        ))
        .execute(c)?;
        Ok(Ok(reply))
    })
}
