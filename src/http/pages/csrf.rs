//! Form tokens: every state-changing form on a person's pages carries
//! `csrf`, an HMAC-SHA256 of their subscriber code under a key derived from
//! this installation's own secret (the `message_id` row of `site_keys`,
//! which its migration made), so a page elsewhere cannot make a visitor's
//! browser change anything. The RFC 8058 one-click POST is the one
//! exception (`unsubscribe`).

use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::db::schema::site_keys;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::text::hex;

/// Hex digits of a token (128 bits).
const TOKEN_HEX: usize = 32;

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let (mut ipad, mut opad) = ([0x36u8; 64], [0x5cu8; 64]);
    for i in 0..64 {
        ipad[i] ^= k[i];
        opad[i] ^= k[i];
    }
    let inner = Sha256::new()
        .chain_update(ipad)
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(opad)
        .chain_update(inner)
        .finalize()
        .into()
}

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
    fn hmac_matches_rfc_4231() {
        let mac = hmac(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let long = [0xaau8; 131];
        let mac = hmac(
            &long,
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex(&mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

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
