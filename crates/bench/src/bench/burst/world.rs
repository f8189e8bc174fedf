//! The bench's world, loaded through the product's own paths: people by
//! `import::users`, their daily digests by `import::subs`, the log by
//! `modlog::record` (collections, which have no bulk path, in one
//! statement).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::{timed, BurstArgs};
use crate::bench::sql::Dialect;
use crate::bench::tick::mix;
use crate::db::schema::{collections, parties};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId};
use crate::import;
use crate::modlog::{self, Action, Change, NewModification};
use crate::schedule::tick::{first_due, rule_for};
use crate::subscriptions::Frequency;

/// (zone, locale): UTC+0, +1 and +2 in November, interleaved so that the
/// first three already span the three offsets.
pub(super) const ZONES: [(&str, &str); 20] = [
    ("Europe/London", "en-GB"),
    ("Europe/Paris", "fr-FR"),
    ("Europe/Helsinki", "fi-FI"),
    ("Europe/Lisbon", "pt-PT"),
    ("Europe/Berlin", "de-DE"),
    ("Europe/Athens", "el-GR"),
    ("Europe/Dublin", "en-IE"),
    ("Europe/Madrid", "es-ES"),
    ("Europe/Bucharest", "ro-RO"),
    ("Atlantic/Canary", "es-ES"),
    ("Europe/Rome", "it-IT"),
    ("Europe/Sofia", "bg-BG"),
    ("Atlantic/Reykjavik", "is-IS"),
    ("Europe/Amsterdam", "nl-NL"),
    ("Africa/Johannesburg", "en-ZA"),
    ("Africa/Accra", "en-GH"),
    ("Europe/Warsaw", "pl-PL"),
    ("Africa/Cairo", "ar-EG"),
    ("Africa/Abidjan", "fr-CI"),
    ("Africa/Lagos", "en-NG"),
];

/// The local hour every digest is due at.
pub(super) const HOUR: i64 = 9;
/// Followers per collection, on average.
const PER_COLLECTION: usize = 20;
/// One collection in this many is busy.
pub(super) const BUSY_EVERY: usize = 10;
/// Changes in a busy collection's window, and in a quiet one's: with 20
/// followers each, (28 + 9 × 8) / 10 = 10 changes per 20 users, one per two.
pub(super) const BUSY_CHANGES: usize = 28;
pub(super) const QUIET_CHANGES: usize = 8;
/// Modifications per `modlog::record` call.
const RECORD_BATCH: usize = 10_000;

const TITLES: [&str; 8] = [
    "Design review",
    "Budget meeting",
    "Release planning",
    "Customer call",
    "Team offsite",
    "Quarterly report",
    "Hiring panel",
    "Security audit",
];

/// When the people and their subscriptions are imported: the day before
/// the burst, so each first window runs from here to its tick.
pub(super) fn imported_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

fn name(i: usize) -> String {
    format!("burst{i}")
}

/// The collection user `i` follows (a hash, so followers of one
/// collection spread over the zones as they happen to).
fn collection_of(i: usize, collections: usize) -> usize {
    mix(i) % collections
}

fn is_busy(k: usize) -> bool {
    k.is_multiple_of(BUSY_EVERY)
}

/// What the world holds, as the report states it.
pub(super) struct World {
    pub collections: usize,
    pub busy_digests: usize,
    pub mods: usize,
    /// Each tick instant with the number of digests due at it.
    pub ticks: BTreeMap<DateTime<Utc>, usize>,
}

pub(super) fn build_world(c: &mut DbConn, a: &BurstArgs, out: &mut dyn Write) -> Result<World> {
    let n = a.users;
    let zones = &ZONES[..a.zones];
    let nc = n.div_ceil(PER_COLLECTION);
    let t0 = imported_at();
    let colls = make_collections(c, nc, t0)?;
    // One buffer for both imports' lines, dropped after the second.
    let mut lines = Vec::with_capacity(n * 90);
    let users_d = import_users(c, zones, n, t0, &mut lines)?;
    let (busy_digests, subs_d) = import_subs(c, &colls, n, t0, lines)?;

    // The log, through `modlog::record`.
    let party = party_ids(c, n)?;
    let (mods, log_d) = timed(|| record_log(c, &colls, &party))?;
    let mut ticks = BTreeMap::new();
    for (k, (tz, _)) in zones.iter().enumerate() {
        let rule = rule_for(Frequency::Daily, Some(HOUR as i32), None, Some((tz, 0)))?;
        let users_here = (n + zones.len() - 1 - k) / zones.len();
        *ticks.entry(first_due(&rule, t0)).or_insert(0) += users_here;
    }
    writeln!(
        out,
        "loaded: users {:.1} s, subscriptions {:.1} s, {mods} modifications {:.1} s",
        users_d.as_secs_f64(),
        subs_d.as_secs_f64(),
        log_d.as_secs_f64()
    )?;
    Ok(World {
        collections: nc,
        busy_digests,
        mods,
        ticks,
    })
}

/// Collections: rows in one statement (the product has no bulk path for
/// them), read back by name; (id, uuid) by collection number.
fn make_collections(c: &mut DbConn, nc: usize, t0: DateTime<Utc>) -> Result<Vec<(i64, String)>> {
    let d = Dialect(c.backend());
    c.batch_execute(&format!(
        "INSERT INTO collections (uuid, name, created_at) \
         SELECT {}, 'Burst collection ' || i, {} FROM {}",
        d.uuid("i"),
        d.ts_lit(t0),
        d.series(nc)
    ))?;
    let rows: Vec<(i64, String, String)> = collections::table
        .filter(collections::name.like("Burst collection %"))
        .select((collections::id, collections::uuid, collections::name))
        .load(c)?;
    let mut colls = vec![(0i64, String::new()); nc];
    for (id, uuid, cname) in rows {
        let k: usize = cname
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Error::Storage(format!("unexpected collection {cname:?}")))?;
        colls[k] = (id, uuid);
    }
    Ok(colls)
}

/// People, through `user import`: `n` users spread over `zones`, their
/// lines written to `lines`; the import's time (checking and writing).
fn import_users(
    c: &mut DbConn,
    zones: &[(&str, &str)],
    n: usize,
    t0: DateTime<Utc>,
    lines: &mut Vec<u8>,
) -> Result<Duration> {
    for i in 0..n {
        let (tz, locale) = zones[i % zones.len()];
        writeln!(
            lines,
            r#"{{"name":"{}","tz":"{tz}","email":"{}@example.org","locale":"{locale}"}}"#,
            name(i),
            name(i)
        )?;
    }
    let ((), users_d) = timed(|| {
        let checked = import::users::check(c, &lines[..])?;
        let done = import::users::write(c, t0, &checked, &mut |_| {})?;
        if done.created != n {
            return Err(Error::Storage(format!(
                "imported {} of {n} users",
                done.created
            )));
        }
        Ok(())
    })?;
    Ok(users_d)
}

/// Their digests, through `subscription import`, their lines written to
/// `lines` (emptied first): (how many follow a busy collection, the
/// import's time).
fn import_subs(
    c: &mut DbConn,
    colls: &[(i64, String)],
    n: usize,
    t0: DateTime<Utc>,
    mut lines: Vec<u8>,
) -> Result<(usize, Duration)> {
    lines.clear();
    let mut busy_digests = 0;
    for i in 0..n {
        let k = collection_of(i, colls.len());
        busy_digests += usize::from(is_busy(k));
        writeln!(
            lines,
            r#"{{"party":"{}","frequency":"daily","kind":"modification","collection":"{}","hour":{HOUR}}}"#,
            name(i),
            colls[k].1
        )?;
    }
    let (subs, subs_d) = timed(|| import::subs::import(c, t0, &lines[..], false, &mut |_| {}))?;
    drop(lines);
    if subs.len() != n {
        return Err(Error::Storage(format!(
            "imported {} of {n} subscriptions",
            subs.len()
        )));
    }
    Ok((busy_digests, subs_d))
}

/// The party id of each of the `n` users, by number.
fn party_ids(c: &mut DbConn, n: usize) -> Result<Vec<i64>> {
    let mut party = vec![0i64; n];
    let users: Vec<(i64, String)> = parties::table
        .filter(parties::name.like("burst%"))
        .select((parties::id, parties::name))
        .load(c)?;
    for (id, pname) in users {
        if let Some(i) = pname
            .strip_prefix("burst")
            .and_then(|s| s.parse::<usize>().ok())
        {
            party[i] = id;
        }
    }
    Ok(party)
}

/// The database as autovacuum leaves it before the hour: statistics fresh
/// for the tables the import and the log filled (VACUUM cannot run inside
/// a transaction). Not for the empty queue tables: on PostgreSQL a table
/// analyzed while empty makes the foreign-key check of each `nt_messages`
/// row, planned once per session, scan `nt_requests` instead of using its
/// key, and the first tick's posting grows with the square of its digests
/// (81–109 s instead of 20–30 s for 30,000 here). Autovacuum never
/// analyzes a table nobody wrote.
pub(super) fn analyze(c: &mut DbConn) -> Result<()> {
    c.batch_execute(match c.backend() {
        crate::db::Backend::Postgres => {
            "VACUUM ANALYZE parties, users, contact_points, collections, subscriptions, \
             modifications, modification_values"
        }
        crate::db::Backend::Sqlite => "ANALYZE",
    })?;
    Ok(())
}

/// The log: each collection's changes, one item each, spread evenly from
/// an hour after the import to an hour before the first tick, each made
/// by a user who does not follow that collection.
fn record_log(c: &mut DbConn, colls: &[(i64, String)], party: &[i64]) -> Result<usize> {
    let nc = colls.len();
    let n = party.len();
    let per = |k: usize| {
        if is_busy(k) {
            BUSY_CHANGES
        } else {
            QUIET_CHANGES
        }
    };
    let total: usize = (0..nc).map(per).sum();
    let start = imported_at() + chrono::Duration::hours(1);
    let span = 17 * 3600 * 1_000_000i64; // to 06:00Z on the day of the burst
    let step = span / total.max(1) as i64;
    let actor = |k: usize, j: usize| {
        let mut a = (k * 31 + j * 7 + 1) % n;
        for _ in 0..n {
            if collection_of(a, nc) != k {
                return Some(PartyId(party[a]));
            }
            a = (a + 1) % n;
        }
        None
    };
    let mut batch = Vec::with_capacity(RECORD_BATCH.min(total));
    let mut g = 0usize;
    for j in 0..BUSY_CHANGES.max(QUIET_CHANGES) {
        for (k, (id, _)) in colls.iter().enumerate() {
            if j >= per(k) {
                continue;
            }
            let title = format!("{} {}", TITLES[(k + j) % TITLES.len()], j + 1);
            let created = j % 4 == 0;
            batch.push(NewModification {
                tx_id: format!("burst-{g}"),
                occurred_at: start + chrono::Duration::microseconds(g as i64 * step),
                collection: CollectionId(*id),
                item_uuid: format!("00000000-0000-4000-9000-{:012}", k * 100 + j),
                actor: actor(k, j),
                action: if created {
                    Action::Created
                } else {
                    Action::Edited
                },
                item_kind: "event".into(),
                item_title: title,
                item_url: None,
                changes: if created {
                    vec![]
                } else {
                    vec![Change {
                        attribute: "status".into(),
                        old: Some("tentative".into()),
                        new: Some("confirmed".into()),
                    }]
                },
            });
            g += 1;
            if batch.len() == RECORD_BATCH {
                modlog::record(c, &batch)?;
                batch.clear();
            }
        }
    }
    if !batch.is_empty() {
        modlog::record(c, &batch)?;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_span_three_offsets_from_the_first_three() {
        let t0 = imported_at();
        let due = |zs: &[(&str, &str)]| {
            let mut v: Vec<_> = zs
                .iter()
                .map(|(tz, _)| {
                    let r = rule_for(Frequency::Daily, Some(HOUR as i32), None, Some((tz, 0)));
                    first_due(&r.unwrap(), t0)
                })
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let day = |h| Utc.with_ymd_and_hms(2026, 11, 23, h, 0, 0).unwrap();
        assert_eq!(due(&ZONES[..3]), vec![day(7), day(8), day(9)]);
        assert_eq!(due(&ZONES), vec![day(7), day(8), day(9)]);
    }
}
