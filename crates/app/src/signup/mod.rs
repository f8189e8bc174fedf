//! Sign-up with double opt-in (Fossil's `/subscribe`), for the collections
//! an operator offers (`collection set UUID --public`). Owns `signups`.
//!
//! [`request`] validates a visitor's wish (address, collections,
//! frequency, hour and day, zone), records it as a *pending* sign-up and
//! posts one verification message through the nt queue
//! ([`crate::deliver::queue::post_to_address`]), holding
//! `{base_url}/subscribe/confirm/{token}` as text and as a button. Nothing
//! else is written and no user exists yet. The token is 32 random bytes;
//! only its SHA-256 is kept, and the queued message is scrubbed of the link
//! once it is sent or given up, so nothing stored opens the link.
//! [`confirm`] (the link followed, the button pressed) makes the user — a
//! generated name, the address as a verified email contact point — and the
//! subscriptions, through the calls the CLI makes (`parties::create_user`,
//! `manage::subscribe`), once. A link is single-use: confirmed, it answers
//! "already confirmed" and nothing else; it expires after
//! `signup.expiry_hours`.
//!
//! **A known address** gets the same answer and the same verification
//! message as a new one (the page never says whether an address is
//! known); confirming adds the subscriptions to that user (their own zone
//! and locale stay; the hour is read in it) and marks the address verified.
//! A new user gets the locale the sign-up's browser asked for
//! ([`Wish::locale`]), so their digests come in that language.
//!
//! **Limits** ([`limits`]): per mailbox, per client block and for all
//! sign-ups together; beyond one, nothing is written or sent and the
//! answer says when to try again ([`Requested::Limited`], a 429).
//!
//! [`send_new_link`]: the manage page's "send me a new link" — a new
//! subscriber code, mailed to the person's address.

mod confirm;
pub mod limits;
mod new_link;
mod request;

pub use confirm::{confirm, pending, Confirmed, Link, Pending};
pub use new_link::send_new_link;
pub use request::{request, Requested, SUBJECT};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::i18n::{catalogs, Locale};
use crate::text::hex;
use crate::{items, validate};

/// Collections one sign-up may ask for at most.
pub const MAX_COLLECTIONS: usize = 50;

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
    /// The locale the sign-up's browser asked for (`fr`, `pt-BR`), stored
    /// on the new person when confirmed; none: the default (`en-US`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// A sign-up that passed [`validate_input`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidSignup {
    pub email: String,
    pub wish: Wish,
    /// The collections' names, in the order asked.
    pub names: Vec<String>,
    /// The language of the verification message and of the confirm page
    /// (English unless the asker's browser says otherwise: the page sets
    /// it).
    pub lang: Locale,
}

/// Checks every field; the one-line error, in `lang`, says which is wrong
/// (an address's own line is the validator's, as the CLI gives it).
pub fn validate_input(c: &mut DbConn, i: &SignupInput, lang: Locale) -> Result<ValidSignup> {
    let no = |key: &str| Error::invalid(catalogs().format(lang, key, &[]));
    if i.email.len() > 254 {
        return Err(no("signup-refused-email-long"));
    }
    let email = validate::email(i.email.trim())?;
    let frequency = match i.frequency.as_str() {
        f @ ("hourly" | "daily" | "weekly") => f.to_string(),
        _ => return Err(no("signup-refused-frequency")),
    };
    let hour = match frequency.as_str() {
        "hourly" => None,
        _ => {
            let h = i.hour.as_str();
            let ok = !h.is_empty() && h.len() <= 2 && h.bytes().all(|b| b.is_ascii_digit());
            match h.parse::<i64>() {
                Ok(n) if ok && (0..=23).contains(&n) => Some(n),
                _ => return Err(no("signup-refused-hour")),
            }
        }
    };
    let day = match frequency.as_str() {
        "weekly" => {
            if i.day.len() > 9 {
                return Err(no("signup-refused-day"));
            }
            let d = validate::weekday(&i.day).map_err(|_| no("signup-refused-day"))?;
            Some(validate::weekday_name(d).to_string())
        }
        _ => None,
    };
    let timezone = validate::timezone(&i.timezone)
        .map_err(|_| no("signup-refused-zone"))?
        .name()
        .to_string();
    if i.collections.is_empty() {
        return Err(no("signup-refused-collections"));
    }
    if i.collections.len() > MAX_COLLECTIONS {
        return Err(no("signup-refused-too-many"));
    }
    let offered = items::public_collections(c)?;
    let mut collections = Vec::new();
    let mut names = Vec::new();
    for u in &i.collections {
        let Some(k) = offered.iter().find(|k| k.uuid == *u) else {
            return Err(no("signup-refused-unknown"));
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
            locale: None,
        },
        names,
        lang,
    })
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
    }
}
