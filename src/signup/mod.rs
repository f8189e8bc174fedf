//! Sign-up with double opt-in (Fossil's `/subscribe`), for the collections
//! an operator offers (`collection set UUID --public`). Owns `signups`.
//!
//! [`request`] validates a visitor's wish (address, collections,
//! frequency, hour and day, zone), records it as a *pending* sign-up and
//! posts one verification message through the nt queue
//! ([`crate::deliver::queue::post_to_address`]), holding
//! `{base_url}/subscribe/confirm/{token}`. Nothing else is written and no
//! user exists yet. The token is 32 random bytes; only its SHA-256 is
//! kept. [`confirm`] (the link followed, the button pressed) makes the
//! user — a generated name, the address as a verified email contact
//! point — and the subscriptions, through the calls the CLI makes
//! (`parties::create_user`, `manage::subscribe`), once: a second confirm
//! finds the row confirmed and does nothing.
//!
//! **A known address** gets the same answer and the same verification
//! message as a new one (the page never says whether an address is
//! known); confirming adds the subscriptions to that user (their own zone
//! stays; the hour is read in it) and marks the address verified.
//!
//! **Limits**: at most `signup.per_client_per_hour` sign-ups from one
//! client address in the last hour and `signup.per_address_per_day` to one
//! email address in the last day; beyond them nothing is written or sent
//! ([`Requested::Limited`], a 429 on the page). Counted in `signups`, so
//! they hold across processes, and counted under a lock per client and
//! per address, so they hold against sign-ups that arrive at once
//! ([`lock_limits`]). Rows older than a week are deleted when a
//! new one is written.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{EmailConfig, SignupConfig};
use crate::db::schema::signups;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::parties::{self, Channel, ContactChange, NewUser};
use crate::subscriptions::SubscribeRequest;
use crate::text::hex;
use crate::{deliver, items, manage, validate};

/// Collections one sign-up may ask for at most.
pub const MAX_COLLECTIONS: usize = 50;
/// How long sign-up rows are kept (they count towards the limits).
const KEEP_DAYS: i64 = 7;

/// What a visitor sent, as the form's fields (untrusted).
#[derive(Debug, Clone, Default)]
pub struct SignupInput {
    pub email: String,
    /// Collection UUIDs.
    pub collections: Vec<String>,
    /// `hourly`, `daily` or `weekly`.
    pub frequency: String,
    /// 0-23 (daily and weekly).
    pub hour: String,
    /// `mon`..`sun` (weekly).
    pub day: String,
    /// An IANA zone.
    pub timezone: String,
}

/// What a pending sign-up asks for, stored as JSON in `signups.wish`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wish {
    pub collections: Vec<String>,
    pub frequency: String,
    pub hour: Option<i64>,
    pub day: Option<String>,
    pub timezone: String,
}

/// A sign-up that passed [`validate_input`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidSignup {
    pub email: String,
    pub wish: Wish,
    /// The collections' names, in the order asked.
    pub names: Vec<String>,
}

/// Checks every field; the one-line error says which is wrong.
pub fn validate_input(c: &mut DbConn, i: &SignupInput) -> Result<ValidSignup> {
    if i.email.len() > 254 {
        return Err(Error::invalid("the email address is too long"));
    }
    let email = validate::email(i.email.trim())?;
    let frequency = match i.frequency.as_str() {
        f @ ("hourly" | "daily" | "weekly") => f.to_string(),
        _ => return Err(Error::invalid("choose hourly, daily or weekly")),
    };
    let hour = match frequency.as_str() {
        "hourly" => None,
        _ => {
            let h = i.hour.as_str();
            let ok = !h.is_empty() && h.len() <= 2 && h.bytes().all(|b| b.is_ascii_digit());
            match h.parse::<i64>() {
                Ok(n) if ok && (0..=23).contains(&n) => Some(n),
                _ => return Err(Error::invalid("choose an hour from 0 to 23")),
            }
        }
    };
    let day = match frequency.as_str() {
        "weekly" => {
            if i.day.len() > 9 {
                return Err(Error::invalid("choose a day of the week"));
            }
            let d = validate::weekday(&i.day)
                .map_err(|_| Error::invalid("choose a day of the week"))?;
            Some(validate::weekday_name(d).to_string())
        }
        _ => None,
    };
    let timezone = validate::timezone(&i.timezone)
        .map_err(|_| Error::invalid("choose a time zone from the list"))?
        .name()
        .to_string();
    if i.collections.is_empty() {
        return Err(Error::invalid("choose at least one collection"));
    }
    if i.collections.len() > MAX_COLLECTIONS {
        return Err(Error::invalid("too many collections"));
    }
    let offered = items::public_collections(c)?;
    let mut collections = Vec::new();
    let mut names = Vec::new();
    for u in &i.collections {
        let Some(k) = offered.iter().find(|k| k.uuid == *u) else {
            return Err(Error::invalid("choose collections from the list"));
        };
        if !collections.contains(&k.uuid) {
            collections.push(k.uuid.clone());
            names.push(k.name.clone());
        }
    }
    Ok(ValidSignup {
        email,
        wish: Wish {
            collections,
            frequency,
            hour,
            day,
            timezone,
        },
        names,
    })
}

/// What [`request`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// Recorded, and the verification message posted.
    Sent,
    /// Over a limit: nothing written, nothing sent.
    Limited,
}

fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Whether `token` has the shape a verification token has (64 lowercase
/// hex digits); anything else is not looked up.
pub fn is_token_shaped(token: &str) -> bool {
    token.len() == 64
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Makes the limits' count-then-insert in [`request`] one step per client
/// and per address. Without it two sign-ups at once each count the rows
/// committed before either began and both insert, past the limit (24 at
/// once to one address with a limit of 3 all passed on PostgreSQL).
///
/// - **SQLite**: nothing to do. `write_tx` is `BEGIN IMMEDIATE`: the
///   write lock is taken before the first count, so writers run one after
///   another and each counts what the one before it committed.
/// - **PostgreSQL**: a transaction-level advisory lock on the client and
///   one on the address (`pg_advisory_xact_lock`, freed at commit or
///   rollback), taken before counting. Under READ COMMITTED each count is
///   a new snapshot, so the second sign-up, once it has the locks, sees
///   the first one's committed row. Chosen over SERIALIZABLE because that
///   would fail whole transactions (the verification message's queue
///   rows included) on unrelated conflicts and need a retry loop; the
///   locks wait only on sign-ups for the same client or address. The two
///   keys are taken in numeric order so two sign-ups cannot each hold one
///   and wait for the other.
fn lock_limits(c: &mut DbConn, client: &str, email: &str) -> Result<()> {
    if !matches!(c, DbConn::Postgres(_)) {
        return Ok(());
    }
    let key = |what: &str, v: &str| {
        let h = Sha256::digest(format!("digestd.signup.{what}.{v}").as_bytes());
        i64::from_be_bytes(h[..8].try_into().expect("8 bytes"))
    };
    let mut keys = [key("client", client), key("email", email)];
    keys.sort_unstable();
    for k in keys {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<diesel::sql_types::BigInt, _>(k)
            .execute(c)?;
    }
    Ok(())
}

/// Records the pending sign-up `v` from `client` and posts its
/// verification message, unless a limit is reached.
pub fn request(
    c: &mut DbConn,
    cfg: &SignupConfig,
    email: &EmailConfig,
    base_url: &str,
    v: &ValidSignup,
    client: &str,
    now: DateTime<Utc>,
) -> Result<Requested> {
    let client: String = client.chars().take(64).collect();
    let wish =
        serde_json::to_string(&v.wish).map_err(|e| Error::Storage(format!("sign-up wish: {e}")))?;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = hex(&bytes);
    let expires = now + Duration::hours(i64::from(cfg.expiry_hours));
    let link = format!(
        "{}/subscribe/confirm/{token}",
        base_url.trim_end_matches('/')
    );
    let subject = "Confirm your digest subscription";
    let message = format!(
        "Someone, hopefully you, asked for digests of {} at this address.\n\n\
         To confirm, open this link and press Confirm:\n\n{link}\n\n\
         The link works until {} UTC. If you did not ask for this, ignore \
         this message: nothing more will be sent.\n",
        v.names.join(", "),
        expires.format("%Y-%m-%d %H:%M"),
    );
    c.write_tx(|c| {
        lock_limits(c, &client, &v.email)?;
        let count = |c: &mut DbConn, by_client: bool, since: DateTime<Utc>| -> Result<i64> {
            let q = signups::table
                .filter(signups::created_at.gt(since.naive_utc()))
                .count();
            Ok(if by_client {
                q.filter(signups::client.eq(&client)).get_result(c)?
            } else {
                q.filter(signups::email.eq(&v.email)).get_result(c)?
            })
        };
        if count(c, true, now - Duration::hours(1))? >= i64::from(cfg.per_client_per_hour)
            || count(c, false, now - Duration::days(1))? >= i64::from(cfg.per_address_per_day)
        {
            return Ok(Requested::Limited);
        }
        diesel::delete(
            signups::table
                .filter(signups::created_at.lt((now - Duration::days(KEEP_DAYS)).naive_utc())),
        )
        .execute(c)?;
        let id: i64 = diesel::insert_into(signups::table)
            .values((
                signups::token_hash.eq(token_hash(&token)),
                signups::email.eq(&v.email),
                signups::client.eq(&client),
                signups::wish.eq(&wish),
                signups::created_at.eq(now.naive_utc()),
                signups::expires_at.eq(expires.naive_utc()),
            ))
            .returning(signups::id)
            .get_result(c)?;
        deliver::queue::post_to_address(c, email, -id, &v.email, subject, &message, now)?;
        Ok(Requested::Sent)
    })
}

/// A pending sign-up as its confirm page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub wish: Wish,
    /// The collections' names (a collection deleted since is left out).
    pub names: Vec<String>,
    pub confirmed: bool,
}

type Row = (
    i64,
    String,
    String,
    chrono::NaiveDateTime,
    Option<chrono::NaiveDateTime>,
);

fn find(c: &mut DbConn, token: &str) -> Result<Option<Row>> {
    if !is_token_shaped(token) {
        return Ok(None);
    }
    Ok(signups::table
        .filter(signups::token_hash.eq(token_hash(token)))
        .select((
            signups::id,
            signups::email,
            signups::wish,
            signups::expires_at,
            signups::confirmed_at,
        ))
        .first(c)
        .optional()?)
}

fn parse_wish(s: &str) -> Result<Wish> {
    serde_json::from_str(s).map_err(|e| Error::Storage(format!("sign-up wish: {e}")))
}

fn names(c: &mut DbConn, uuids: &[String]) -> Result<Vec<String>> {
    let all = items::list_collections(c)?;
    Ok(uuids
        .iter()
        .filter_map(|u| all.iter().find(|k| k.uuid == *u).map(|k| k.name.clone()))
        .collect())
}

/// The sign-up `token` names, if it is known and (unless confirmed
/// already) not expired. Reads only.
pub fn pending(c: &mut DbConn, token: &str, now: DateTime<Utc>) -> Result<Option<Pending>> {
    let Some((_, _, wish, expires, confirmed)) = find(c, token)? else {
        return Ok(None);
    };
    if confirmed.is_none() && expires.and_utc() <= now {
        return Ok(None);
    }
    let wish = parse_wish(&wish)?;
    Ok(Some(Pending {
        names: names(c, &wish.collections)?,
        wish,
        confirmed: confirmed.is_some(),
    }))
}

/// What [`confirm`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// The user (new, or the address's own) and their subscriptions now
    /// exist; `code` is their subscriber code (the manage link).
    Done {
        party: PartyId,
        subscriptions: usize,
        code: String,
    },
    /// Confirmed before: nothing more was done.
    Already { code: Option<String> },
    /// Unknown, malformed or expired token.
    Invalid,
}

/// A fresh user name for a sign-up: `subscriber-` and 12 random hex digits.
fn new_name() -> String {
    let mut b = [0u8; 6];
    rand::rng().fill_bytes(&mut b);
    format!("subscriber-{}", hex(&b))
}

/// Confirms sign-up `token`: makes the user and the subscriptions, once.
pub fn confirm(c: &mut DbConn, token: &str, now: DateTime<Utc>) -> Result<Confirmed> {
    c.write_tx(|c| {
        let Some((id, email, wish, expires, confirmed)) = find(c, token)? else {
            return Ok(Confirmed::Invalid);
        };
        if confirmed.is_some() {
            let party: Option<i64> = signups::table.find(id).select(signups::party_id).first(c)?;
            let code = match party {
                Some(p) => parties::code_of(c, PartyId(p))?,
                None => None,
            };
            return Ok(Confirmed::Already { code });
        }
        if expires.and_utc() <= now {
            return Ok(Confirmed::Invalid);
        }
        // Claimed first: of two confirms at once, one updates the row.
        let claimed = diesel::update(
            signups::table
                .find(id)
                .filter(signups::confirmed_at.is_null()),
        )
        .set(signups::confirmed_at.eq(now.naive_utc()))
        .execute(c)?;
        if claimed == 0 {
            return Ok(Confirmed::Already { code: None });
        }
        let wish = parse_wish(&wish)?;
        let party = match parties::user_by_email(c, &email)? {
            Some(p) => p,
            None => parties::create_user(
                c,
                now,
                &NewUser {
                    name: new_name(),
                    timezone: wish.timezone.clone(),
                    email: Some(email.clone()),
                    ..Default::default()
                },
            )?,
        };
        let name = parties::name_of(c, party)?;
        parties::change_contact(c, now, &name, Channel::Email, &ContactChange::Verify)?;
        let mut n = 0;
        for uuid in &wish.collections {
            // A collection deleted since the sign-up is skipped.
            if items::find_collection(c, uuid).is_err() {
                continue;
            }
            let req = SubscribeRequest {
                party: name.clone(),
                frequency: wish.frequency.clone(),
                kind: "modification".into(),
                collection: Some(uuid.clone()),
                hour: wish.hour,
                day: wish.day.clone(),
                ..Default::default()
            };
            match manage::subscribe(c, now, &req) {
                Ok(_) => n += 1,
                // A known address that has this digest already keeps it.
                Err(Error::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        diesel::update(signups::table.find(id))
            .set(signups::party_id.eq(party.0))
            .execute(c)?;
        let code = parties::code_of(c, party)?
            .ok_or_else(|| Error::Storage(format!("user {party} has no code")))?;
        Ok(Confirmed::Done {
            party,
            subscriptions: n,
            code,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_hashed_and_shaped() {
        let t = "ab".repeat(32);
        assert!(is_token_shaped(&t));
        assert!(!is_token_shaped(&t.to_uppercase()));
        assert!(!is_token_shaped(&t[..62]));
        assert_eq!(token_hash(&t).len(), 64);
        assert_ne!(token_hash(&t), t);
        assert!(new_name().starts_with("subscriber-"));
        assert!(validate::name("user", &new_name()).is_ok());
    }
}
