//! Form tokens: every state-changing form on a person's pages carries
//! `csrf`, an HMAC-SHA256 of their subscriber code under a key derived from
//! this installation's own secret (the `message_id` row of `site_keys`,
//! which its migration made), so a page elsewhere cannot make a visitor's
//! browser change anything. The RFC 8058 one-click POST is the one
//! exception (`unsubscribe`).
//!
//! The forms that come before any code or session (the sign-up form, the
//! admin login) carry a [`FormKey::client_token`] instead: a MAC of the
//! form's purpose, the client's block (IPv4 /24, IPv6 /64) and the hour it
//! was served, good in that hour and the next. A token fetched from one
//! network does not work from another, and none lasts past two hours.

use diesel::prelude::*;

use crate::db::schema::site_keys;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::text::hex;
use crate::text::hmac::hmac;

/// Hex digits of a token (128 bits).
const TOKEN_HEX: usize = 32;

/// Hours after the one it was served in that a client token still works.
const CLIENT_TOKEN_HOURS: i64 = 1;

/// The pages' key, derived from the site secret for this one purpose.
#[derive(Clone)]
pub struct FormKey([u8; 32]);

impl FormKey {
    pub fn load(conn: &mut DbConn) -> Result<FormKey> {
        let v: Option<String> = site_keys::table
            .filter(site_keys::name.eq("message_id"))
            .select(site_keys::value)
            .first(conn)
            .optional()?;
        let v = v.ok_or_else(|| Error::Storage("site_keys has no message_id key".into()))?;
        Ok(FormKey(hmac(v.as_bytes(), b"digestd pages csrf v1")))
    }

    /// A key from a secret given outright (unit tests).
    #[cfg(test)]
    pub(crate) fn for_tests(secret: &[u8]) -> FormKey {
        FormKey(hmac(secret, b"digestd pages csrf v1"))
    }

    /// The token the forms of `code`'s pages carry.
    pub fn token(&self, code: &str) -> String {
        hex(&hmac(&self.0, code.as_bytes()))[..TOKEN_HEX].to_string()
    }

    /// The token of a form for `purpose` served to a client in `block` in
    /// `hour` (hours since the epoch): `{hour}.{mac}`.
    pub(crate) fn client_token(&self, purpose: &str, block: &str, hour: i64) -> String {
        format!(
            "{hour}.{}",
            self.token(&format!("{purpose} {block} {hour}"))
        )
    }

    /// Whether `given` is a token of `purpose` for `block`, served this
    /// hour or the one before (constant time).
    pub(crate) fn client_token_ok(
        &self,
        purpose: &str,
        block: &str,
        given: Option<&str>,
        now_hour: i64,
    ) -> bool {
        let Some(given) = given else {
            return false;
        };
        let Some(h) = given
            .split_once('.')
            .and_then(|(h, _)| h.parse::<i64>().ok())
        else {
            return false;
        };
        (0..=CLIENT_TOKEN_HOURS).contains(&(now_hour - h))
            && crate::access::constant_time_eq(
                given.as_bytes(),
                self.client_token(purpose, block, h).as_bytes(),
            )
    }

    /// Whether `given` is `code`'s token (constant time).
    pub fn verify(&self, code: &str, given: Option<&str>) -> bool {
        let want = self.token(code);
        given.is_some_and(|g| crate::access::constant_time_eq(g.as_bytes(), want.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_belongs_to_one_code_and_one_key() {
        let k = FormKey(hmac(b"site", b"digestd pages csrf v1"));
        let t = k.token("ab");
        assert_eq!(t.len(), TOKEN_HEX);
        assert!(k.verify("ab", Some(&t)));
        assert!(!k.verify("ac", Some(&t)));
        assert!(!k.verify("ab", None));
        assert!(!k.verify("ab", Some("")));
        let other = FormKey(hmac(b"other", b"digestd pages csrf v1"));
        assert!(!other.verify("ab", Some(&t)));
    }

    #[test]
    fn a_client_token_belongs_to_one_block_one_purpose_and_an_hour() {
        let k = FormKey::for_tests(b"site");
        let net = "203.0.113.0/24";
        let t = k.client_token("signup", net, 100);
        assert!(k.client_token_ok("signup", net, Some(&t), 100));
        assert!(k.client_token_ok("signup", net, Some(&t), 101));
        assert!(!k.client_token_ok("signup", net, Some(&t), 102));
        assert!(!k.client_token_ok("signup", net, Some(&t), 99));
        assert!(!k.client_token_ok("signup", "198.51.100.0/24", Some(&t), 100));
        assert!(!k.client_token_ok("admin login", net, Some(&t), 100));
        let moved = t.replacen("100.", "101.", 1);
        assert!(!k.client_token_ok("signup", net, Some(&moved), 101));
        for bad in ["", "garbage", "100.", ".abc", "x.y", "100.\r\n"] {
            assert!(!k.client_token_ok("signup", net, Some(bad), 100), "{bad:?}");
        }
        assert!(!k.client_token_ok("signup", net, None, 100));
    }

    /// Tokens as the hand-written HMAC made them: forms already served
    /// stay good.
    #[test]
    fn tokens_served_before_stay_good() {
        let k = FormKey::for_tests(b"site");
        assert_eq!(k.token("ab"), "c770a29b0ff05db45450aa2ee30e0298");
        let t = "493000.dfbc2b8f1dde2428ed8906d33a415d62";
        assert_eq!(k.client_token("signup", "192.0.2.0/24", 493000), t);
        assert!(k.client_token_ok("signup", "192.0.2.0/24", Some(t), 493000));
    }
}
