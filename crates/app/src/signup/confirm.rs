//! Following a verification link: [`pending`] (what it would confirm, for
//! the page's GET) and [`confirm`] (the button), once.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use rand::RngCore;

use super::{is_token_shaped, token_hash, Wish};
use crate::db::schema::signups;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::events::{self, Event, Kind};
use crate::i18n::Locale;
use crate::ids::PartyId;
use crate::parties::{self, Channel, ContactChange, NewUser};
use crate::subscriptions::SubscribeRequest;
use crate::text::hex;
use crate::{items, manage};

/// A pending sign-up as its confirm page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub wish: Wish,
    /// The collections' names (a collection deleted since is left out).
    pub names: Vec<String>,
}

/// What a verification link is now.
#[derive(Debug, Clone, PartialEq)]
pub enum Link {
    /// Not confirmed and not expired: what it would confirm.
    Open(Pending),
    /// Confirmed before: it says so, and nothing of what or whose.
    Used,
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

/// The sign-up `token` names: `None` when unknown, malformed, or expired
/// unconfirmed. Reads only.
pub fn pending(c: &mut DbConn, token: &str, now: DateTime<Utc>) -> Result<Option<Link>> {
    let Some((_, _, wish, expires, confirmed)) = find(c, token)? else {
        return Ok(None);
    };
    if confirmed.is_some() {
        return Ok(Some(Link::Used));
    }
    if expires.and_utc() <= now {
        return Ok(None);
    }
    let wish = parse_wish(&wish)?;
    Ok(Some(Link::Open(Pending {
        names: names(c, &wish.collections)?,
        wish,
    })))
}

/// What [`confirm`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// The user (new, or the address's own) and their subscriptions now
    /// exist; `code` is their subscriber code (the manage link), shown
    /// this once.
    Done {
        party: PartyId,
        subscriptions: usize,
        code: String,
        /// The language the sign-up was made in (its answer's).
        lang: Locale,
    },
    /// Confirmed before: nothing was done and nothing is told.
    Already,
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
            return Ok(Confirmed::Already);
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
            return Ok(Confirmed::Already);
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
                    locale: wish.locale.clone(),
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
        let e = Event::new(Kind::SignupConfirmed)
            .party(party)
            .with("email", email.as_str())
            .with("collections", wish.collections.clone())
            .with("subscriptions", n);
        events::record_one_in_tx(c, now, e)?;
        Ok(Confirmed::Done {
            party,
            subscriptions: n,
            code,
            lang: Locale::resolve(wish.locale.as_deref().unwrap_or("")),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_names_are_valid_user_names() {
        assert!(new_name().starts_with("subscriber-"));
        assert!(crate::validate::name("user", &new_name()).is_ok());
    }
}
