//! HMAC-SHA256 (RFC 2104, through the `hmac` crate), for the keys derived
//! from the site secret: the pages' form tokens, the whole-digest links and
//! the Message-IDs.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// HMAC-SHA256 of `msg` under `key`.
pub fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    Keyed::new(key).mac(&[msg])
}

/// A key made ready for many MACs: the `hmac` crate keeps the hash states
/// after the key's inner and outer pads, so each MAC clones them and hashes
/// its message and the inner digest only.
#[derive(Clone)]
pub struct Keyed(HmacSha256);

impl Keyed {
    pub fn new(key: &[u8]) -> Keyed {
        // HMAC takes a key of any length (a long one is hashed first).
        Keyed(HmacSha256::new_from_slice(key).expect("HMAC accepts every key length"))
    }

    /// The MAC of the concatenation of `parts`.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut m = self.0.clone();
        for p in parts {
            m.update(p);
        }
        m.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::hex;

    /// RFC 4231 section 4: test cases 1-7 (case 5 compares the first 128
    /// bits, as the RFC does).
    #[test]
    fn hmac_matches_rfc_4231() {
        let long_key = [0xaau8; 131];
        let key_25: Vec<u8> = (1..=25).collect();
        let cases: [(&[u8], &[u8], &str); 7] = [
            (
                &[0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe",
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                &[0xaa; 20],
                &[0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                &key_25,
                &[0xcd; 50],
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            ),
            (
                &[0x0c; 20],
                b"Test With Truncation",
                "a3b6167473100ee06e0c796c2955552b",
            ),
            (
                &long_key,
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
            (
                &long_key,
                b"This is a test using a larger than block-size key and a larger \
                  than block-size data. The key needs to be hashed before being \
                  used by the HMAC algorithm.",
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            ),
        ];
        for (n, (key, msg, want)) in cases.iter().enumerate() {
            let got = hex(&hmac(key, msg));
            assert_eq!(&got[..want.len()], *want, "RFC 4231 test case {}", n + 1);
            let kept = hex(&Keyed::new(key).mac(&[msg]));
            assert_eq!(kept, got, "a kept key, test case {}", n + 1);
        }
    }

    /// The MAC the hand-written HMAC gave for a fixed key and message
    /// (computed with it before the `hmac` crate replaced it): the codes,
    /// links and tokens already given out stay valid.
    #[test]
    fn hmac_is_the_one_the_links_already_carry() {
        let want = "62f15fb148569226b4e8e28f2860745fec8d9ce6d53628030d3624b714c8779b";
        assert_eq!(
            hex(&hmac(b"digestd fixed key", b"digestd fixed message")),
            want
        );
        let k = Keyed::new(b"digestd fixed key");
        assert_eq!(
            hex(&k.mac(&[b"digestd ", b"", b"fixed message"])),
            want,
            "the message in parts"
        );
        assert_eq!(
            k.mac(&[b"x"]),
            k.clone().mac(&[b"x"]),
            "a mac leaves the key as it was"
        );
    }
}
