//! The operator's page sessions: an `admin` token exchanged at
//! `/admin/login` for a session id that a cookie carries. The id is 32
//! random bytes (`dgs_` and hex), shown once, in the cookie; only its
//! SHA-256 is stored, looked up by hash and compared in constant time.
//! A session ends when it expires, at logout, or when its token is revoked
//! (`admin_sessions.token_id` cascades, and every check joins the token,
//! so a token that lost its row or its scope opens nothing).
//! This module owns `admin_sessions`.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::{authenticate, constant_time_eq, hash_secret, new_secret, Scope, MAX_SECRET};
use crate::db::schema::{admin_sessions, api_tokens};
use crate::db::DbConn;
use crate::error::Result;

const SESSION_PREFIX: &str = "dgs_";

/// A live session: who opened it and until when.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: i64,
    /// The name of the token it was opened with.
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// Opens a session for `secret` when it is an `admin` token: returns the
/// new session id (the cookie's value) and when it expires. Any other
/// secret writes nothing and returns `None`. Expired sessions are swept in
/// the same transaction.
pub fn open(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    secret: &str,
    lasts: Duration,
) -> Result<Option<(String, DateTime<Utc>)>> {
    let Some(token) = authenticate(conn, now, secret)? else {
        return Ok(None);
    };
    if token.scope != Scope::Admin {
        return Ok(None);
    }
    let sid = new_secret(SESSION_PREFIX);
    let hash = hash_secret(&sid);
    let expires = now + lasts;
    conn.write_tx(|c| {
        diesel::delete(
            admin_sessions::table.filter(admin_sessions::expires_at.le(now.naive_utc())),
        )
        .execute(c)?;
        diesel::insert_into(admin_sessions::table)
            .values((
                admin_sessions::token_id.eq(token.id),
                admin_sessions::session_hash.eq(&hash),
                admin_sessions::created_at.eq(now.naive_utc()),
                admin_sessions::expires_at.eq(expires.naive_utc()),
            ))
            .execute(c)?;
        Ok(())
    })?;
    Ok(Some((sid, expires)))
}

/// The live session `sid` names at `now`, or `None` (unknown, malformed,
/// expired, or its token revoked or no longer `admin`). Reads only.
pub fn check(conn: &mut DbConn, now: DateTime<Utc>, sid: &str) -> Result<Option<Session>> {
    if sid.len() > MAX_SECRET || !sid.starts_with(SESSION_PREFIX) {
        return Ok(None);
    }
    let hash = hash_secret(sid);
    let row: Option<(i64, String, NaiveDateTime, String)> = admin_sessions::table
        .inner_join(api_tokens::table)
        .filter(admin_sessions::session_hash.eq(&hash))
        .filter(admin_sessions::expires_at.gt(now.naive_utc()))
        .filter(api_tokens::scope.eq(Scope::Admin.as_str()))
        .select((
            admin_sessions::id,
            api_tokens::name,
            admin_sessions::expires_at,
            admin_sessions::session_hash,
        ))
        .first(conn)
        .optional()?;
    Ok(row
        .filter(|r| constant_time_eq(r.3.as_bytes(), hash.as_bytes()))
        .map(|(id, token, expires, _)| Session {
            id,
            token,
            expires_at: expires.and_utc(),
        }))
}

/// Ends session `sid` (logout); an unknown one is already ended.
pub fn close(conn: &mut DbConn, sid: &str) -> Result<()> {
    if sid.len() > MAX_SECRET || !sid.starts_with(SESSION_PREFIX) {
        return Ok(());
    }
    let hash = hash_secret(sid);
    conn.write_tx(|c| {
        diesel::delete(admin_sessions::table.filter(admin_sessions::session_hash.eq(&hash)))
            .execute(c)?;
        Ok(())
    })
}
