//! Typed ids: no bare integers cross module borders.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A user or a group (the ACS "parties" model).
    PartyId
);
id_type!(CollectionId);
id_type!(ItemId);
id_type!(ModificationId);
id_type!(SubscriptionId);
id_type!(
    /// An `nt_requests` row.
    RequestId
);

/// A hasher for maps keyed by the ids here: FxHash's rotate, xor and
/// multiply over the `i64`, where std's SipHash showed in a profile of
/// the composer's name look-ups (several per line of every digest). Only
/// for ids the database assigned, never values a client chooses: it
/// offers no resistance to crafted collisions.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

const FX: u64 = 0x51_7c_c1_b7_27_22_0a_95;

// `#[inline]` throughout: the maps hashing with it are instantiated in the
// crates above, which cannot inline a function of this crate otherwise.
impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(FX);
    }

    #[inline]
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
}

/// A map keyed by ids, hashed by [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_map_finds_what_it_holds_and_nothing_else() {
        let mut m: IdMap<PartyId, i64> = IdMap::default();
        for i in (0..10_000).map(|i| i * 7 - 3_000) {
            m.insert(PartyId(i), i);
        }
        assert_eq!(m.len(), 10_000);
        for i in (0..10_000).map(|i| i * 7 - 3_000) {
            assert_eq!(m.get(&PartyId(i)), Some(&i));
            assert_eq!(m.get(&PartyId(i + 1)), None);
        }
    }
}
