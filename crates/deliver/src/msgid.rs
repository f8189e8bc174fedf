//! Message-IDs that say whom a message was made for, and prove it:
//! `nt.REQUEST.PARTY.PARTS.MAC@host`, where MAC is an HMAC-SHA256 of the
//! request and party under a key derived from this installation's own
//! secret (`site_keys`, made by its migration). A bounce quoting such an id
//! can be traced to the message and its recipient party; nobody without
//! the key can make one. Ids made before the MAC was an HMAC (SHA-256 of
//! the secret and the names) still verify, so bounces of mail sent before
//! are still traced; none is made any more.
//!
//! A subscription's email digests to one party form a thread under a
//! root id of the same kind, `nt.thread.SUBSCRIPTION.PARTY.MAC@host`
//! ([`MessageKey::thread_root`]): computed, never stored, never sent.

use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::db::schema::site_keys;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::text::hmac::{hmac, Keyed};

/// Hex digits of MAC kept in an id (80 bits).
const MAC_HEX: usize = 20;

/// The installation's Message-ID key: the secret, and the HMAC key
/// derived from it for this one purpose.
#[derive(Clone)]
pub struct MessageKey {
    secret: String,
    key: Keyed,
}

impl std::fmt::Debug for MessageKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MessageKey(…)")
    }
}

/// What a verified id names: one message to one party.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MessageRef {
    /// The first request in the message.
    pub request: i64,
    pub party: i64,
}

impl MessageRef {
    /// How bounces store it.
    pub fn key(&self) -> String {
        format!("{}.{}", self.request, self.party)
    }
}

impl MessageKey {
    pub fn load(conn: &mut DbConn) -> Result<MessageKey> {
        let v: Option<String> = site_keys::table
            .filter(site_keys::name.eq("message_id"))
            .select(site_keys::value)
            .first(conn)
            .optional()?;
        v.as_deref()
            .map(MessageKey::from_secret)
            .ok_or_else(|| Error::Storage("site_keys has no message_id key".into()))
    }

    /// A key given outright (tests, benchmarks).
    pub fn from_secret(s: &str) -> MessageKey {
        MessageKey {
            secret: s.to_string(),
            key: Keyed::new(&hmac(s.as_bytes(), b"digestd message id v1")),
        }
    }

    /// A key derived from the installation's secret for one other
    /// `purpose` (`digestd matrix room alias v1`, say): what is made with
    /// it tells nothing of the secret nor of the Message-IDs' key.
    pub fn derived(&self, purpose: &str) -> Keyed {
        Keyed::new(&hmac(self.secret.as_bytes(), purpose.as_bytes()))
    }

    /// A name for this installation (the database the key belongs to):
    /// 64 bits of a keyed hash, which tells two databases' files apart
    /// on disk (the sent journals) and tells nothing of the key. It is a
    /// name, not a MAC: it keeps the form the journals already on disk
    /// were named with.
    pub(crate) fn installation_tag(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.secret.as_bytes());
        h.update(b"\0installation");
        let mut tag = crate::text::hex(&h.finalize());
        tag.truncate(16);
        tag
    }

    fn mac(&self, request: i64, party: i64) -> String {
        let names = format!("{request}.{party}");
        let mut mac = crate::text::hex(&self.key.mac(&[names.as_bytes()]));
        mac.truncate(MAC_HEX);
        mac
    }

    /// The MAC ids carried before it was an HMAC: SHA-256 of the secret, a
    /// NUL and the names. Only verified, never made.
    fn sent_before_mac(&self, request: i64, party: i64) -> String {
        let mut h = Sha256::new();
        h.update(self.secret.as_bytes());
        h.update(format!("\0{request}.{party}").as_bytes());
        let mut mac = crate::text::hex(&h.finalize());
        mac.truncate(MAC_HEX);
        mac
    }

    /// The id (without angle brackets) of a message holding `parts`
    /// requests, the first `request`, to `party`.
    pub fn message_id(&self, request: i64, party: i64, parts: usize, host: &str) -> String {
        let mac = self.mac(request, party);
        format!("nt.{request}.{party}.{parts}.{mac}@{host}")
    }

    /// The thread root (without angle brackets) of subscription
    /// `subscription`'s email digests to `party`: every such digest
    /// replies to it, so mail readers keep them in one thread. The same for
    /// the same subscription, party and key whenever it is computed (a
    /// message rebuilt after a crash carries the same headers); another
    /// party's (each member of a group) or subscription's is another
    /// thread. Its MAC is over `thread.SUBSCRIPTION.PARTY`, which no
    /// message's names can spell, and [`MessageKey::verify`] refuses it: a
    /// bounce quoting it names no message.
    pub(crate) fn thread_root(&self, subscription: i64, party: i64, host: &str) -> String {
        let names = format!("thread.{subscription}.{party}");
        let mut mac = crate::text::hex(&self.key.mac(&[names.as_bytes()]));
        mac.truncate(MAC_HEX);
        format!("nt.{names}.{mac}@{host}")
    }

    /// The message an id names, if it is one of ours with a true MAC.
    pub fn verify(&self, id: &str) -> Option<MessageRef> {
        let local = id.trim().trim_matches(|c| c == '<' || c == '>');
        let (local, _host) = local.split_once('@')?;
        let mut f = local.strip_prefix("nt.")?.split('.');
        let request: i64 = f.next()?.parse().ok()?;
        let party: i64 = f.next()?.parse().ok()?;
        let _parts: usize = f.next()?.parse().ok()?;
        let mac = f.next()?;
        if f.next().is_some() {
            return None;
        }
        let eq = |want: String| crate::access::constant_time_eq(mac.as_bytes(), want.as_bytes());
        // Both compared, whichever matches, so the time tells nothing.
        let now = eq(self.mac(request, party));
        let before = eq(self.sent_before_mac(request, party));
        (now | before).then_some(MessageRef { request, party })
    }

    /// Every verified id quoted anywhere in `text` (a bounce's returned
    /// headers, its References, a quoted original), without repeats.
    pub(crate) fn find_all(&self, text: &str) -> Vec<MessageRef> {
        let mut out: Vec<MessageRef> = text
            .match_indices("<nt.")
            .filter_map(|(i, _)| {
                let rest = &text[i..];
                let end = rest.find('>')?;
                (end < 200).then(|| self.verify(&rest[..=end])).flatten()
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_verifies_under_its_key_only() {
        let k = MessageKey::from_secret("k1");
        let id = k.message_id(1000, 7, 1, "example.org");
        assert!(
            id.starts_with("nt.1000.7.1.") && id.ends_with("@example.org"),
            "{id}"
        );
        let r = MessageRef {
            request: 1000,
            party: 7,
        };
        assert_eq!(k.verify(&format!("<{id}>")), Some(r));
        assert_eq!(MessageKey::from_secret("k2").verify(&id), None);
        // Another party or request with the same MAC: refused.
        let forged = id.replacen("nt.1000.7.", "nt.1000.8.", 1);
        assert_eq!(k.verify(&forged), None);
        let forged = id.replacen("nt.1000.", "nt.1001.", 1);
        assert_eq!(k.verify(&forged), None);
        // The old, predictable form and garbage.
        for bad in [
            "nt.1000.7@example.org",
            "nt.1000.7.3@x",
            "",
            "<>",
            "nt.a.b.c.d@x",
            "nt.1.2.3.4.5@x",
        ] {
            assert_eq!(k.verify(bad), None, "{bad}");
        }
    }

    /// An id as this key made it before its MAC was an HMAC, SHA-256 of
    /// the key and the names: bounces of messages already sent are still
    /// traced. The installation's tag names the sent journals on disk and
    /// keeps its value.
    #[test]
    fn ids_sent_before_still_verify() {
        let k = MessageKey::from_secret("k1");
        let r = MessageRef {
            request: 1000,
            party: 7,
        };
        let sent = "<nt.1000.7.1.9a1935f2e6c6f54def3d@example.org>";
        assert_eq!(k.verify(sent), Some(r));
        assert_eq!(MessageKey::from_secret("k2").verify(sent), None);
        assert_eq!(k.installation_tag(), "dd74c4c588b6160a");
    }

    /// A new id's MAC is HMAC-SHA256 of `REQUEST.PARTY` under the key
    /// derived from the secret for Message-IDs (computed apart, in
    /// Python's `hmac`).
    #[test]
    fn a_new_id_carries_an_hmac() {
        let k = MessageKey::from_secret("k1");
        assert_eq!(
            k.message_id(1000, 7, 1, "example.org"),
            "nt.1000.7.1.b2c5e6fe4415c8dc7671@example.org"
        );
    }

    /// A thread root depends on the subscription, the party and the key
    /// only: the same whenever it is made, another for another of them,
    /// and never taken for a message's id.
    #[test]
    fn a_thread_root_is_stable_and_names_no_message() {
        let k = MessageKey::from_secret("k1");
        let root = k.thread_root(42, 7, "example.org");
        assert!(
            root.starts_with("nt.thread.42.7.") && root.ends_with("@example.org"),
            "{root}"
        );
        assert_eq!(root.len(), "nt.thread.42.7.@example.org".len() + MAC_HEX);
        assert_eq!(
            root,
            MessageKey::from_secret("k1").thread_root(42, 7, "example.org")
        );
        let others = [
            k.thread_root(42, 8, "example.org"),
            k.thread_root(43, 7, "example.org"),
            MessageKey::from_secret("k2").thread_root(42, 7, "example.org"),
        ];
        for o in &others {
            assert_ne!(o.split('@').next(), root.split('@').next(), "{o}");
        }
        assert_eq!(k.verify(&root), None);
        assert!(k.find_all(&format!("References: <{root}>")).is_empty());
        // Computed apart, in Python's `hmac`, as the message ids' MAC.
        assert_eq!(root, "nt.thread.42.7.f3711f7dce0b477d3deb@example.org");
    }

    #[test]
    fn ids_are_found_anywhere_once() {
        let k = MessageKey::from_secret("k");
        let a = k.message_id(5, 9, 2, "h");
        let text =
            format!("Message-ID: <{a}>\r\nReferences: <{a}> <nt.6.9.1.00000000000000000000@h>\r\n");
        assert_eq!(
            k.find_all(&text),
            vec![MessageRef {
                request: 5,
                party: 9
            }]
        );
        assert!(k.find_all("nothing here <nt.").is_empty());
    }
}
