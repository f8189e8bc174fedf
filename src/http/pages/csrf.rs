//! Form tokens: every state-changing form on a person's pages carries
//! `csrf`, an HMAC-SHA256 of their subscriber code under a key derived from
//! this installation's own secret (the `message_id` row of `site_keys`,
//! which its migration made), so a page elsewhere cannot make a visitor's
//! browser change anything. The RFC 8058 one-click POST is the one
//! exception (`unsubscribe`).

use diesel::prelude::*;

use crate::db::schema::site_keys;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::text::hex;
use crate::text::hmac::hmac;

/// Hex digits of a token (128 bits).
const TOKEN_HEX: usize = 32;

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
    pub fn for_tests(secret: &[u8]) -> FormKey {
        FormKey(hmac(secret, b"digestd pages csrf v1"))
    }

    /// The token the forms of `code`'s pages carry.
    pub fn token(&self, code: &str) -> String {
        hex(&hmac(&self.0, code.as_bytes()))[..TOKEN_HEX].to_string()
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
}
