//! The link to the whole digest (the "and N more" link, and the SMS's):
//! `{base_url}/d/{subscription}/{period}/{mac}`, where `mac` is an
//! HMAC-SHA256 of `subscription|period` under a key derived from this
//! installation's secret (the `message_id` row of `site_keys`), 128 bits
//! as hex. Without the key nobody can make the link of another
//! subscription or period, so the pages cannot be enumerated; the link
//! needs no subscriber code, so the one digest rendered for a group opens
//! for each of its members.

use diesel::prelude::*;

use crate::db::schema::site_keys;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::SubscriptionId;
use crate::text::hex;
use crate::text::hmac::{hmac, Keyed};

/// Hex digits of a link's MAC (128 bits).
pub const MAC_HEX: usize = 32;

/// The whole-digest links' key, derived from the site secret for this one
/// purpose.
#[derive(Clone)]
pub struct LinkKey(Keyed);

impl std::fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKey(…)")
    }
}

impl LinkKey {
    pub fn load(conn: &mut DbConn) -> Result<LinkKey> {
        let v: Option<String> = site_keys::table
            .filter(site_keys::name.eq("message_id"))
            .select(site_keys::value)
            .first(conn)
            .optional()?;
        let v = v.ok_or_else(|| Error::Storage("site_keys has no message_id key".into()))?;
        Ok(LinkKey::from_secret(v.as_bytes()))
    }

    /// A key from a secret given outright (tests).
    pub fn from_secret(secret: &[u8]) -> LinkKey {
        LinkKey(Keyed::new(&hmac(secret, b"digestd whole digest v1")))
    }

    /// The MAC of subscription `id`'s digest of `period`.
    pub fn mac(&self, id: SubscriptionId, period: &str) -> String {
        let id = id.0.to_string();
        let mac = self.0.mac(&[id.as_bytes(), b"|", period.as_bytes()]);
        hex(&mac[..MAC_HEX / 2])
    }

    /// The link under `base` (no trailing slash).
    pub fn url(&self, base: &str, id: SubscriptionId, period: &str) -> String {
        format!("{base}/d/{}/{period}/{}", id.0, self.mac(id, period))
    }

    /// Whether `given` is the MAC of (`id`, `period`) (constant time).
    pub fn verify(&self, id: SubscriptionId, period: &str, given: &str) -> bool {
        crate::access::constant_time_eq(given.as_bytes(), self.mac(id, period).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MAC is HMAC-SHA256 under the derived key, cut to its first
    /// [`MAC_HEX`] hex digits, as links already sent carry it: the kept
    /// key's states and the message given in parts change nothing.
    #[test]
    fn a_mac_is_the_plain_hmac_of_id_and_period_cut() {
        let raw = hmac(b"site", b"digestd whole digest v1");
        let plain = hex(&hmac(&raw, b"1234|2026-11-22"));
        let k = LinkKey::from_secret(b"site");
        assert_eq!(k.mac(SubscriptionId(1234), "2026-11-22"), plain[..MAC_HEX]);
    }

    /// A link's MAC as the hand-written HMAC made it: links already sent
    /// keep opening.
    #[test]
    fn a_link_sent_before_keeps_its_mac() {
        let k = LinkKey::from_secret(b"site");
        let want = "68cba5ee611fd836fe05e9ebe045acae";
        assert_eq!(k.mac(SubscriptionId(1234), "2026-11-22"), want);
        assert!(k.verify(SubscriptionId(1234), "2026-11-22", want));
    }

    #[test]
    fn a_mac_names_one_subscription_one_period_one_key() {
        let k = LinkKey::from_secret(b"site");
        let m = k.mac(SubscriptionId(1), "2026-11-22");
        assert_eq!(m.len(), MAC_HEX);
        assert!(k.verify(SubscriptionId(1), "2026-11-22", &m));
        assert!(!k.verify(SubscriptionId(2), "2026-11-22", &m));
        assert!(!k.verify(SubscriptionId(1), "2026-11-23", &m));
        assert!(!k.verify(SubscriptionId(1), "2026-11-22", ""));
        // "1|2" must not collide with "12|" and the like.
        assert_ne!(
            k.mac(SubscriptionId(1), "2|x"),
            k.mac(SubscriptionId(12), "x")
        );
        let other = LinkKey::from_secret(b"other");
        assert!(!other.verify(SubscriptionId(1), "2026-11-22", &m));
        assert_eq!(
            k.url("https://d.example", SubscriptionId(1), "2026-11-22"),
            format!("https://d.example/d/1/2026-11-22/{m}")
        );
    }
}
