//! Pages of a feed (RFC 5005, paged feeds): a document holds at most
//! `[http] max_feed_entries` entries, and its `next` link carries a cursor
//! to the entries after its last one.
//!
//! A cursor is the sort key of the last entry of its page, not an offset,
//! so a page does not shift when entries are recorded before it: for the
//! `changed` projection the item's first change in the window and its
//! UUID, for `range` the instant, start or reminder, and the item's UUID.
//! It is bound to its feed (collection, projection, window) by a check
//! (a SHA-256 of both): a cursor edited by hand or taken from another
//! feed is refused, 400, rather than read as some other page.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::{Head, Projection};
use crate::digest::compose::When;
use crate::error::{Error, Result};
use crate::validate;

/// Longest cursor accepted, in bytes (an issued one is about 80).
const MAX_CURSOR: usize = 200;

/// Where a page starts: after the entry with this sort key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum After {
    /// `changed`: the item's first change in the window, and its UUID.
    Changed { at: DateTime<Utc>, item: String },
    /// `range`: the entry's instant, what it is, and the item's UUID.
    Range {
        at: DateTime<Utc>,
        what: When,
        item: String,
    },
}

/// What a cursor is checked against: the feed it was issued for.
pub struct Feed<'a> {
    pub head: &'a Head,
    pub projection: Projection,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Feed<'_> {
    fn check(&self, payload: &str) -> String {
        let t = |d: DateTime<Utc>| d.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
        let mut h = Sha256::new();
        for part in [
            "digestd feed cursor v1",
            &self.head.uuid,
            self.projection.as_str(),
            &t(self.start),
            &t(self.end),
            payload,
        ] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        crate::text::hex(&h.finalize()[..12])
    }

    /// The cursor of the page after `after`.
    pub fn encode(&self, after: &After) -> String {
        let (kind, at, item) = match after {
            After::Changed { at, item } => ('c', at, item),
            After::Range {
                at,
                what: When::Starts,
                item,
            } => ('s', at, item),
            After::Range {
                at,
                what: When::Reminder,
                item,
            } => ('r', at, item),
        };
        let payload = format!(
            "{kind}~{}~{}~{item}",
            at.timestamp(),
            at.timestamp_subsec_nanos()
        );
        let check = self.check(&payload);
        format!("{payload}~{check}")
    }

    /// The position a cursor names, when it is one this feed issued.
    pub fn decode(&self, s: &str) -> Result<After> {
        let bad = |why: &str| Error::invalid(format!("invalid after cursor: {why}"));
        if s.len() > MAX_CURSOR || !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad("not a cursor this feed gave out"));
        }
        let Some((payload, check)) = s.rsplit_once('~') else {
            return Err(bad("not a cursor this feed gave out"));
        };
        if !crate::access::constant_time_eq(check.as_bytes(), self.check(payload).as_bytes()) {
            return Err(bad(
                "altered, or from another feed (follow the feed's own next link)",
            ));
        }
        let parts: Vec<&str> = payload.split('~').collect();
        let [kind, secs, nanos, item] = parts[..] else {
            return Err(bad("not a cursor this feed gave out"));
        };
        let at = secs
            .parse::<i64>()
            .ok()
            .zip(nanos.parse::<u32>().ok().filter(|n| *n < 1_000_000_000))
            .and_then(|(s, n)| DateTime::from_timestamp(s, n))
            .filter(|at| *at >= self.start && *at < self.end)
            .ok_or_else(|| bad("its instant is not in the feed's window"))?;
        let item = validate::uuid("item", item)?;
        match (self.projection, kind) {
            (Projection::Changed, "c") => Ok(After::Changed { at, item }),
            (Projection::Range, "s" | "r") => Ok(After::Range {
                at,
                what: if kind == "s" {
                    When::Starts
                } else {
                    When::Reminder
                },
                item,
            }),
            _ => Err(bad("not a cursor of this projection")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CollectionId;
    use chrono::TimeZone;

    fn head(uuid: &str) -> Head {
        Head {
            collection: CollectionId(1),
            uuid: uuid.into(),
            name: "C".into(),
            version: 1,
            changed_at: Utc.with_ymd_and_hms(2026, 11, 16, 0, 0, 0).unwrap(),
            owner: None,
            owner_tz: None,
            owner_locale: None,
        }
    }

    #[test]
    fn a_cursor_reads_back_only_in_its_own_feed() {
        let (h, other) = (head("a"), head("b"));
        let start = Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap();
        let end = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let feed = |head, projection| Feed {
            head,
            projection,
            start,
            end,
        };
        let at = Utc
            .with_ymd_and_hms(2026, 11, 16, 9, 0, 0)
            .unwrap()
            .checked_add_signed(chrono::Duration::nanoseconds(123_456_789))
            .unwrap();
        let item = "6a2f41a3-c54c-fce8-32d2-0324e1c32e22".to_string();
        let changed = After::Changed {
            at,
            item: item.clone(),
        };
        let f = feed(&h, Projection::Changed);
        let c = f.encode(&changed);
        assert_eq!(f.decode(&c).unwrap(), changed);
        let reminder = After::Range {
            at,
            what: When::Reminder,
            item,
        };
        let r = feed(&h, Projection::Range).encode(&reminder);
        assert_eq!(feed(&h, Projection::Range).decode(&r).unwrap(), reminder);
        // Another collection, projection or window: refused.
        assert!(feed(&other, Projection::Changed).decode(&c).is_err());
        assert!(feed(&h, Projection::Range).decode(&c).is_err());
        assert!(f.decode(&r).is_err());
        let later = Feed {
            end: end + chrono::Duration::days(1),
            ..feed(&h, Projection::Changed)
        };
        assert!(later.decode(&c).is_err());
        // Edited, cut, garbage, oversized, control characters, non-ASCII.
        let edited = c.replacen("~1", "~2", 1);
        assert_ne!(edited, c);
        for bad in [
            edited.as_str(),
            &c[..c.len() - 1],
            "",
            "~",
            "garbage",
            "c~1~2~x~y",
            &"a".repeat(MAX_CURSOR + 1),
            &format!("{c}\r\n"),
            &c.replace('~', "\u{0}"),
            &format!("é{c}"),
        ] {
            let e = f.decode(bad).expect_err(bad).to_string();
            assert!(!e.contains('\n'), "{e:?}");
        }
    }
}
