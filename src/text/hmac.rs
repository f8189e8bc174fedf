//! HMAC-SHA256 (RFC 2104), for the keys derived from the site secret: the
//! pages' form tokens and the whole-digest links.

use sha2::{Digest, Sha256};

/// HMAC-SHA256 of `msg` under `key`.
pub fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    Keyed::new(key).mac(&[msg])
}

/// A key made ready for many MACs: the hash states after its inner and
/// outer pads, so each MAC hashes its message and the inner digest only
/// (two of the four compressions a fresh [`hmac`] does for a short
/// message).
#[derive(Clone)]
pub struct Keyed {
    inner: Sha256,
    outer: Sha256,
}

impl Keyed {
    pub fn new(key: &[u8]) -> Keyed {
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
        Keyed {
            inner: Sha256::new().chain_update(ipad),
            outer: Sha256::new().chain_update(opad),
        }
    }

    /// The MAC of the concatenation of `parts`.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut inner = self.inner.clone();
        for p in parts {
            inner.update(p);
        }
        self.outer
            .clone()
            .chain_update(inner.finalize())
            .finalize()
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::hex;

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
        // A kept key, the message in parts: the same MAC.
        let k = Keyed::new(b"Jefe");
        assert_eq!(
            hex(&k.mac(&[b"what do ya ", b"", b"want for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            k.mac(&[b"x"]),
            k.clone().mac(&[b"x"]),
            "a mac leaves the key as it was"
        );
    }
}
