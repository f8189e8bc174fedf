//! Atom feeds of one collection: Cosmo's `changed` projection (what the
//! log says changed in a window, collapsed per item exactly as a digest
//! collapses it) and `range` projection (what starts or reminds in a
//! window, recurring events expanded), with the validators that let a
//! polling widget be answered 304 from the collection's row alone.
//!
//! - this file: what a feed needs from the database ([`head`], read without
//!   the log; [`changed`] and [`range`], the digest's own queries), the
//!   request ([`Query`]) and the validators ([`etag`], [`not_modified`]);
//! - [`atom`]: the Atom 1.0 document, pure (data in, XML out);
//! - [`page`]: the cursors of a feed's pages (RFC 5005).
//!
//! Reads `collections`, `users` and `parties`; writes nothing.

pub mod atom;
pub mod page;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;
use sha2::{Digest, Sha256};

use crate::db::schema::{collections, group_prefs, parties, users};
use crate::db::DbConn;
use crate::digest::compose::{self, Changes, Upcoming};
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId};
use crate::modlog;
use crate::validate;

/// Which projection a feed is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Projection {
    /// `findModifiedItems`: one entry per item changed in the window.
    Changed,
    /// `findItemsInRange`: one entry per start or reminder in the window.
    Range,
}

impl Projection {
    pub fn as_str(self) -> &'static str {
        match self {
            Projection::Changed => "changed",
            Projection::Range => "range",
        }
    }
}

/// A collection as its feeds see it before reading any content: enough to
/// authorise, to compute the validators and to title the feed.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub collection: CollectionId,
    pub uuid: String,
    pub name: String,
    /// Moved by every write of the collection's log (`modlog::touch_feeds`).
    pub version: i64,
    /// The last change of the log, or the collection's creation.
    pub changed_at: DateTime<Utc>,
    /// The owner's name, zone and locale, when the collection has an owner
    /// (a user's preferences, or a group's).
    pub owner: Option<String>,
    pub owner_tz: Option<String>,
    pub owner_locale: Option<String>,
}

/// The columns of `collections` a [`Head`] reads.
#[derive(Queryable, Selectable)]
#[diesel(table_name = collections)]
struct HeadRow {
    id: i64,
    uuid: String,
    name: String,
    owner_id: Option<i64>,
    created_at: NaiveDateTime,
    feed_version: i64,
    feed_changed_at: Option<NaiveDateTime>,
}

/// The collection `uuid` names, with its feed version. Reads the
/// collection's row and its owner's, never the modification log: this is
/// all a conditional GET costs.
pub fn head(conn: &mut DbConn, uuid: &str) -> Result<Head> {
    let uuid = validate::uuid("collection", uuid)?;
    let row: Option<HeadRow> = collections::table
        .filter(collections::uuid.eq(&uuid))
        .select(HeadRow::as_select())
        .first(conn)
        .optional()?;
    let row = row.ok_or_else(|| Error::not_found(format!("no collection {uuid}")))?;
    let (mut owner, mut owner_tz, mut owner_locale) = (None, None, None);
    if let Some(o) = row.owner_id {
        owner = parties::table
            .find(o)
            .select(parties::name)
            .first::<String>(conn)
            .optional()?;
        let user = users::table
            .find(o)
            .select((users::timezone, users::locale))
            .first::<(String, String)>(conn)
            .optional()?;
        let prefs = match user {
            Some(p) => Some(p),
            None => group_prefs::table
                .find(o)
                .select((group_prefs::timezone, group_prefs::locale))
                .first::<(String, String)>(conn)
                .optional()?,
        };
        if let Some((tz, locale)) = prefs {
            owner_tz = Some(tz);
            owner_locale = Some(locale);
        }
    }
    Ok(Head {
        collection: CollectionId(row.id),
        uuid: row.uuid,
        name: row.name,
        version: row.feed_version,
        changed_at: row.feed_changed_at.unwrap_or(row.created_at).and_utc(),
        owner,
        owner_tz,
        owner_locale,
    })
}

/// One feed request, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub projection: Projection,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// The `tz` the caller named, if any (it is part of the self link).
    pub tz_param: Option<String>,
    /// The zone times are written in: `tz`, else the owner's, else UTC.
    pub tz: Tz,
    /// The convention times are written in: the owner's locale, else "en".
    pub locale: String,
    /// Entries per document at most (`[http] max_feed_entries`).
    pub limit: usize,
    /// Where this page starts (after this entry), and the cursor that
    /// said so (part of the self link and the tag); `None`: the first page.
    pub after: Option<(page::After, String)>,
}

impl Query {
    /// Validates the parameters: `start` and `end` RFC 3339, `end` after
    /// `start` and at most `max_days` later, `tz` an IANA zone.
    pub fn new(
        projection: Projection,
        start: Option<&str>,
        end: Option<&str>,
        tz: Option<&str>,
        max_days: u32,
        head: &Head,
    ) -> Result<Query> {
        let start = validate::instant(
            "start",
            start.ok_or_else(|| Error::invalid("start is required (RFC 3339)"))?,
        )?;
        let end = validate::instant(
            "end",
            end.ok_or_else(|| Error::invalid("end is required (RFC 3339)"))?,
        )?;
        if end <= start {
            return Err(Error::invalid("end must be after start"));
        }
        if end - start > chrono::Duration::days(i64::from(max_days)) {
            return Err(Error::invalid(format!(
                "the range is longer than {max_days} days (http.max_feed_days)"
            )));
        }
        let tz_param = tz.map(validate::timezone).transpose()?;
        // A stored zone the validator refuses now reads as UTC, not as a 500.
        let owner_tz = head
            .owner_tz
            .as_deref()
            .and_then(|z| validate::timezone(z).ok());
        Ok(Query {
            projection,
            start,
            end,
            tz_param: tz_param.map(|z| z.name().to_string()),
            tz: tz_param.or(owner_tz).unwrap_or(Tz::UTC),
            locale: head.owner_locale.clone().unwrap_or_else(|| "en".into()),
            limit: usize::MAX,
            after: None,
        })
    }

    /// This query as one page of at most `limit` entries, after the entry
    /// `after` (a cursor from this feed's `next` link) names.
    pub fn paged(mut self, head: &Head, limit: usize, after: Option<&str>) -> Result<Query> {
        self.limit = limit.max(1);
        if let Some(raw) = after {
            let at = self.page_of(head).decode(raw)?;
            self.after = Some((at, raw.to_string()));
        }
        Ok(self)
    }

    /// The feed this query's cursors belong to.
    pub fn page_of<'a>(&self, head: &'a Head) -> page::Feed<'a> {
        page::Feed {
            head,
            projection: self.projection,
            start: self.start,
            end: self.end,
        }
    }
}

/// The feed's strong entity tag: a hash of everything the document is made
/// of that is not its content (the collection's row, its owner, the
/// request, the base URL, this build) plus the log's version, which moves
/// whenever the content would. Equal tags, equal bytes.
pub fn etag(head: &Head, q: &Query, base_url: &str) -> String {
    tag(head, q, base_url, true)
}

/// The feed `q` names, whatever its version: its [`etag`] without the
/// collection's version and time of change (what a feed cache keys the
/// feed's newest version by).
pub fn feed_key(head: &Head, q: &Query, base_url: &str) -> String {
    tag(head, q, base_url, false)
}

fn tag(head: &Head, q: &Query, base_url: &str, versioned: bool) -> String {
    let mut h = Sha256::new();
    let t = |d: DateTime<Utc>| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    let (version, changed) = match versioned {
        true => (head.version.to_string(), t(head.changed_at)),
        false => (String::new(), String::new()),
    };
    for part in [
        env!("CARGO_PKG_VERSION"),
        q.projection.as_str(),
        &t(q.start),
        &t(q.end),
        q.tz_param.as_deref().unwrap_or(""),
        q.tz.name(),
        &q.locale,
        base_url,
        &head.uuid,
        &head.name,
        head.owner.as_deref().unwrap_or(""),
        &version,
        &changed,
        &q.limit.to_string(),
        q.after.as_ref().map_or("", |(_, raw)| raw.as_str()),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let hex = crate::text::hex(&h.finalize()[..16]);
    format!("\"{hex}\"")
}

/// An instant as an HTTP date (`Last-Modified`), to the second.
pub fn http_date(t: DateTime<Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// RFC 9110's answer to a conditional GET: true when the caller's copy is
/// current. `If-None-Match` decides when present (weak comparison, `*`
/// matches); otherwise `If-Modified-Since`, to the second. Neither present,
/// or a date that does not parse: false.
pub fn not_modified(
    etag: &str,
    changed_at: DateTime<Utc>,
    if_none_match: Option<&str>,
    if_modified_since: Option<&str>,
) -> bool {
    if let Some(inm) = if_none_match {
        let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
        let ours = bare(etag);
        return inm.split(',').any(|t| t.trim() == "*" || bare(t) == ours);
    }
    match if_modified_since.and_then(|s| DateTime::parse_from_rfc2822(s.trim()).ok()) {
        Some(since) => changed_at.timestamp() <= since.timestamp(),
        None => false,
    }
}

/// One page of a feed, and where the next one starts.
pub struct Page<T> {
    pub entries: T,
    pub next: Option<page::After>,
}

/// `findModifiedItems` for one collection, one page: the log of `q`'s
/// window collapsed per item as a digest collapses it, for the first
/// `q.limit` items after `q.after` by (first change, UUID), and the
/// actors' names. Reads the log of those items only.
pub fn changed(
    conn: &mut DbConn,
    head: &Head,
    q: &Query,
) -> Result<(Page<Changes>, BTreeMap<PartyId, String>)> {
    let after = match &q.after {
        Some((page::After::Changed { at, item }, _)) => Some((*at, item.as_str())),
        _ => None,
    };
    let want = q.limit.saturating_add(1);
    let mut items = modlog::changed_items(conn, head.collection, q.start, q.end, after, want)?;
    let next = (items.len() > q.limit).then(|| {
        items.truncate(q.limit);
        let (item, at) = items.last().cloned().expect("limit is at least 1");
        page::After::Changed { at, item }
    });
    let uuids: Vec<String> = items.into_iter().map(|(u, _)| u).collect();
    let mods = modlog::find_items_in_window(conn, head.collection, &uuids, q.start, q.end)?;
    let mut changes = compose::collapse(&mods, None)?;
    // In the page key's order (a digest breaks ties by the order recorded).
    changes.sort_by(|a, b| (a.first_at, &a.item_uuid).cmp(&(b.first_at, &b.item_uuid)));
    let mut names = BTreeMap::new();
    for a in changes.iter().flat_map(|c| &c.actors) {
        if !names.contains_key(a) {
            names.insert(*a, crate::parties::name_of(conn, *a)?);
        }
    }
    Ok((
        Page {
            entries: changes,
            next,
        },
        names,
    ))
}

/// `findItemsInRange` for one collection, recurring events expanded, one
/// page: the first `q.limit` entries after `q.after` by (instant, start
/// before reminder, UUID).
pub fn range(conn: &mut DbConn, head: &Head, q: &Query) -> Result<Page<Vec<Upcoming>>> {
    let after = match &q.after {
        Some((page::After::Range { at, what, item }, _)) => Some((*at, *what, item.clone())),
        _ => None,
    };
    let want = q.limit.saturating_add(1);
    let mut entries =
        crate::digest::range_page::page(conn, head.collection, q.start, q.end, after, want)?;
    let next = (entries.len() > q.limit).then(|| {
        entries.truncate(q.limit);
        let u = entries.last().expect("limit is at least 1");
        page::After::Range {
            at: u.at,
            what: u.what,
            item: u.item_uuid.clone(),
        }
    });
    Ok(Page { entries, next })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn head() -> Head {
        Head {
            collection: CollectionId(1),
            uuid: "c".into(),
            name: "Calendar".into(),
            version: 3,
            changed_at: Utc.with_ymd_and_hms(2026, 11, 16, 9, 0, 30).unwrap(),
            owner: None,
            owner_tz: Some("Europe/Paris".into()),
            owner_locale: None,
        }
    }

    fn query(h: &Head, tz: Option<&str>) -> Query {
        Query::new(
            Projection::Changed,
            Some("2026-11-16T00:00:00Z"),
            Some("2026-11-17T00:00:00+01:00"),
            tz,
            366,
            h,
        )
        .unwrap()
    }

    #[test]
    fn the_zone_is_the_callers_then_the_owners_then_utc() {
        let mut h = head();
        assert_eq!(query(&h, Some("Asia/Tokyo")).tz, chrono_tz::Asia::Tokyo);
        assert_eq!(query(&h, None).tz, chrono_tz::Europe::Paris);
        h.owner_tz = None;
        assert_eq!(query(&h, None).tz, Tz::UTC);
    }

    #[test]
    fn the_etag_moves_with_the_version_and_the_request_only() {
        let h = head();
        let q = query(&h, None);
        let e = etag(&h, &q, "http://x");
        assert_eq!(e, etag(&h, &q, "http://x"));
        assert!(e.starts_with('"') && e.ends_with('"'));
        let bumped = Head {
            version: 4,
            ..h.clone()
        };
        assert_ne!(e, etag(&bumped, &q, "http://x"));
        assert_ne!(e, etag(&h, &query(&h, Some("UTC")), "http://x"));
        let range = Query {
            projection: Projection::Range,
            ..q.clone()
        };
        assert_ne!(e, etag(&h, &range, "http://x"));
        assert_ne!(e, etag(&h, &q, "http://y"));
    }

    #[test]
    fn conditions_follow_rfc_9110() {
        let at = head().changed_at;
        let e = "\"abc\"";
        assert!(not_modified(e, at, Some("\"abc\""), None));
        assert!(not_modified(e, at, Some("\"x\", W/\"abc\""), None));
        assert!(not_modified(e, at, Some("*"), None));
        assert!(!not_modified(e, at, Some("\"x\""), None));
        let same = http_date(at);
        assert_eq!(same, "Mon, 16 Nov 2026 09:00:30 GMT");
        assert!(not_modified(e, at, None, Some(&same)));
        assert!(!not_modified(
            e,
            at,
            None,
            Some("Mon, 16 Nov 2026 09:00:29 GMT")
        ));
        // If-None-Match wins over a date that alone would say "unchanged".
        assert!(!not_modified(e, at, Some("\"x\""), Some(&same)));
        assert!(!not_modified(e, at, None, Some("yesterday")));
        assert!(!not_modified(e, at, None, None));
    }

    #[test]
    fn bad_ranges_are_refused() {
        let h = head();
        let q = |s: Option<&str>, e: Option<&str>, tz: Option<&str>| {
            Query::new(Projection::Range, s, e, tz, 366, &h)
        };
        let ok = Some("2026-11-16T00:00:00Z");
        assert!(q(None, ok, None).is_err());
        assert!(q(ok, None, None).is_err());
        assert!(q(Some("2026-11-16"), ok, None).is_err());
        assert!(q(ok, ok, None).is_err());
        assert!(q(ok, Some("2027-11-18T00:00:00Z"), None).is_err());
        assert!(q(ok, Some("2027-11-17T00:00:00Z"), None).is_ok());
        assert!(q(ok, Some("2026-11-17T00:00:00Z"), Some("Mars/Base")).is_err());
        assert!(q(ok, Some("2027-11-16T00:00:00Z"), None).is_ok());
    }
}
