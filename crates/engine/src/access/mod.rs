//! Who may use the HTTP face: API tokens (a name, a scope, a secret) and
//! collection read tickets (a secret that opens one collection's feeds).
//!
//! A secret is 32 random bytes, written as URL-safe text with a prefix that
//! says what it is (`dgt_` token, `dgk_` ticket). It is shown once, when it
//! is made; only its SHA-256 is stored. A presented secret is hashed and
//! looked up by that hash (the index sees a hash, never the secret), and the
//! stored hash is compared with the computed one in constant time.
//! This module owns `api_tokens` and `collection_tickets`, and through
//! [`session`] the operator's page sessions (`admin_sessions`).

pub mod session;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::db::schema::{api_tokens, collection_tickets};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::CollectionId;
use crate::validate;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read `/metrics` and nothing else (a scraper's token).
    Metrics,
    /// Read feeds, requests, the queue, users and `/metrics`; never a
    /// contact address (those are `admin`'s).
    Read,
    /// Write modifications and items.
    Ingest,
    /// Everything.
    Admin,
}

impl Scope {
    pub fn parse(s: &str) -> Result<Scope> {
        match s {
            "metrics" => Ok(Scope::Metrics),
            "read" => Ok(Scope::Read),
            "ingest" => Ok(Scope::Ingest),
            "admin" => Ok(Scope::Admin),
            other => {
                // A name is short: a long one is cut, not echoed whole.
                let shown: String = other.chars().take(32).collect();
                let cut = if shown.len() < other.len() { "…" } else { "" };
                Err(Error::invalid(format!(
                    "scope: {}{cut} is not one of admin, ingest, metrics, read",
                    validate::escape_for_line(&shown)
                )))
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Metrics => "metrics",
            Scope::Read => "read",
            Scope::Ingest => "ingest",
            Scope::Admin => "admin",
        }
    }

    /// True when a token of this scope may do what `needed` names.
    /// `admin` may do everything; `read` may also read `/metrics`; `ingest`
    /// and `metrics` only their own.
    pub fn allows(self, needed: Scope) -> bool {
        self == Scope::Admin || self == needed || (self, needed) == (Scope::Read, Scope::Metrics)
    }

    /// Whether this scope sees contact addresses (emails, phone numbers,
    /// JIDs): only `admin`.
    pub fn sees_addresses(self) -> bool {
        self == Scope::Admin
    }
}

/// A token as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Token {
    pub id: i64,
    pub name: String,
    pub scope: Scope,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

const TOKEN_PREFIX: &str = "dgt_";
const TICKET_PREFIX: &str = "dgk_";
/// The longest secret looked up; anything longer is refused unhashed.
const MAX_SECRET: usize = 128;

fn new_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", crate::text::hex(&bytes))
}

/// The stored form of a secret: its SHA-256, in hex.
pub fn hash_secret(secret: &str) -> String {
    crate::text::hex(&Sha256::digest(secret.as_bytes()))
}

/// Equal contents, in time that depends only on the lengths (`subtle`).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}

/// Makes a token; returns it and its secret (the only time it is seen).
pub fn add_token(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    name: &str,
    scope: Scope,
) -> Result<(Token, String)> {
    let name = validate::name("token", name)?;
    let secret = new_secret(TOKEN_PREFIX);
    let hash = hash_secret(&secret);
    let id = conn.write_tx(|c| {
        let taken = api_tokens::table
            .filter(api_tokens::name.eq(&name))
            .count()
            .get_result::<i64>(c)?;
        if taken > 0 {
            return Err(Error::conflict(format!("a token named {name} exists")));
        }
        Ok(diesel::insert_into(api_tokens::table)
            .values((
                api_tokens::name.eq(&name),
                api_tokens::scope.eq(scope.as_str()),
                api_tokens::secret_hash.eq(&hash),
                api_tokens::created_at.eq(now.naive_utc()),
            ))
            .returning(api_tokens::id)
            .get_result::<i64>(c)?)
    })?;
    Ok((
        Token {
            id,
            name,
            scope,
            created_at: now,
            last_used_at: None,
        },
        secret,
    ))
}

type TokenRow = (i64, String, String, NaiveDateTime, Option<NaiveDateTime>);

fn token_of(row: TokenRow) -> Result<Token> {
    let (id, name, scope, created, used) = row;
    Ok(Token {
        id,
        name,
        scope: Scope::parse(&scope).map_err(|e| Error::Storage(e.to_string()))?,
        created_at: utc(created),
        last_used_at: used.map(utc),
    })
}

/// Every token, by name.
pub fn list_tokens(conn: &mut DbConn) -> Result<Vec<Token>> {
    let rows: Vec<TokenRow> = api_tokens::table
        .select((
            api_tokens::id,
            api_tokens::name,
            api_tokens::scope,
            api_tokens::created_at,
            api_tokens::last_used_at,
        ))
        .order(api_tokens::name.asc())
        .load(conn)?;
    rows.into_iter().map(token_of).collect()
}

/// Deletes a token: its secret stops working at once.
pub fn revoke_token(conn: &mut DbConn, name: &str) -> Result<()> {
    let name = validate::name("token", name)?;
    let n = conn.write_tx(|c| {
        Ok(diesel::delete(api_tokens::table.filter(api_tokens::name.eq(&name))).execute(c)?)
    })?;
    if n == 0 {
        return Err(Error::not_found(format!("no token named {name}")));
    }
    Ok(())
}

/// The token a secret belongs to, or `None`. Marks it used at `now`
/// (at most once a minute, so that reads do not write on every request);
/// the token returned says when it was last marked.
pub fn authenticate(conn: &mut DbConn, now: DateTime<Utc>, secret: &str) -> Result<Option<Token>> {
    if secret.len() > MAX_SECRET || !secret.starts_with(TOKEN_PREFIX) {
        return Ok(None);
    }
    let hash = hash_secret(secret);
    let row: Option<(TokenRow, String)> = api_tokens::table
        .filter(api_tokens::secret_hash.eq(&hash))
        .select((
            (
                api_tokens::id,
                api_tokens::name,
                api_tokens::scope,
                api_tokens::created_at,
                api_tokens::last_used_at,
            ),
            api_tokens::secret_hash,
        ))
        .first(conn)
        .optional()?;
    let Some((row, stored)) = row else {
        return Ok(None);
    };
    if !constant_time_eq(stored.as_bytes(), hash.as_bytes()) {
        return Ok(None);
    }
    let mut token = token_of(row)?;
    let stale = token
        .last_used_at
        .is_none_or(|t| now - t >= chrono::Duration::minutes(1));
    if stale {
        diesel::update(api_tokens::table.find(token.id))
            .set(api_tokens::last_used_at.eq(now.naive_utc()))
            .execute(conn)?;
        token.last_used_at = Some(now);
    }
    Ok(Some(token))
}

/// A read ticket as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ticket {
    pub id: i64,
    pub collection: String,
    pub created_at: DateTime<Utc>,
}

/// Makes a read ticket for one collection; returns its id and secret.
pub fn add_ticket(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    collection: CollectionId,
) -> Result<(i64, String)> {
    let secret = new_secret(TICKET_PREFIX);
    let hash = hash_secret(&secret);
    let id = conn.write_tx(|c| {
        Ok(diesel::insert_into(collection_tickets::table)
            .values((
                collection_tickets::collection_id.eq(collection.0),
                collection_tickets::secret_hash.eq(&hash),
                collection_tickets::created_at.eq(now.naive_utc()),
            ))
            .returning(collection_tickets::id)
            .get_result::<i64>(c)?)
    })?;
    Ok((id, secret))
}

/// The tickets of one collection, oldest first.
pub fn list_tickets(
    conn: &mut DbConn,
    collection: CollectionId,
) -> Result<Vec<(i64, DateTime<Utc>)>> {
    let rows: Vec<(i64, NaiveDateTime)> = collection_tickets::table
        .filter(collection_tickets::collection_id.eq(collection.0))
        .select((collection_tickets::id, collection_tickets::created_at))
        .order(collection_tickets::id.asc())
        .load(conn)?;
    Ok(rows.into_iter().map(|(id, t)| (id, utc(t))).collect())
}

/// Deletes a ticket by id.
pub fn revoke_ticket(conn: &mut DbConn, id: i64) -> Result<()> {
    let n =
        conn.write_tx(|c| Ok(diesel::delete(collection_tickets::table.find(id)).execute(c)?))?;
    if n == 0 {
        return Err(Error::not_found(format!("no ticket {id}")));
    }
    Ok(())
}

/// The collection a ticket opens, or `None` for an unknown secret: lets a
/// caller tell "no such ticket" (401) from "a ticket for another
/// collection" (403).
pub fn ticket_collection(conn: &mut DbConn, secret: &str) -> Result<Option<CollectionId>> {
    if secret.len() > MAX_SECRET || !secret.starts_with(TICKET_PREFIX) {
        return Ok(None);
    }
    let hash = hash_secret(secret);
    let stored: Option<(i64, String)> = collection_tickets::table
        .filter(collection_tickets::secret_hash.eq(&hash))
        .select((
            collection_tickets::collection_id,
            collection_tickets::secret_hash,
        ))
        .first(conn)
        .optional()?;
    Ok(stored
        .filter(|(_, h)| constant_time_eq(h.as_bytes(), hash.as_bytes()))
        .map(|(c, _)| CollectionId(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_allow_their_own_and_admin_all() {
        assert!(Scope::Admin.allows(Scope::Ingest));
        assert!(Scope::Admin.allows(Scope::Read));
        assert!(Scope::Ingest.allows(Scope::Ingest));
        assert!(!Scope::Ingest.allows(Scope::Read));
        assert!(!Scope::Read.allows(Scope::Ingest));
        assert!(!Scope::Read.allows(Scope::Admin));
        assert!(Scope::Read.allows(Scope::Metrics));
        assert!(Scope::Admin.allows(Scope::Metrics));
        assert!(!Scope::Metrics.allows(Scope::Read));
        assert!(!Scope::Metrics.allows(Scope::Ingest));
        assert!(!Scope::Ingest.allows(Scope::Metrics));
        assert!(Scope::Admin.sees_addresses());
        assert!(!Scope::Read.sees_addresses());
        assert_eq!(Scope::parse("metrics").unwrap(), Scope::Metrics);
        for hostile in [
            "root",
            "Admin",
            "METRICS",
            "metrics ",
            " read",
            "read\r\nX: 1",
            "admin\0",
            "",
            &"m".repeat(100_000),
        ] {
            let e = Scope::parse(hostile).unwrap_err().to_string();
            assert!(!e.contains('\n') && !e.contains('\r'), "{e:?}");
            assert!(e.len() < 200, "{e:?}");
        }
    }

    #[test]
    fn secrets_differ_and_hash_stably() {
        let a = new_secret(TOKEN_PREFIX);
        let b = new_secret(TOKEN_PREFIX);
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 64);
        assert_eq!(hash_secret(&a), hash_secret(&a));
        assert_ne!(hash_secret(&a), hash_secret(&b));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
