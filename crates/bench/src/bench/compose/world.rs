//! The compose bench's world, generated inside the database engine:
//! users in six zones, collections, one daily subscription each, and the
//! modification log; and the floor of the hand-off's writes.

use chrono::{DateTime, Utc};
use diesel::connection::SimpleConnection;
use diesel::RunQueryDsl;

use super::ComposeArgs;
use crate::bench::sql::Dialect;
use crate::bench::PARTY0;
use crate::db::DbConn;
use crate::error::Result;
use crate::schedule::tick::{first_due, rule_for};
use crate::subscriptions::Frequency;

/// (zone, locale, local hour that is due at the 09:00Z tick in November).
const ZONES: [(&str, &str, i32); 6] = [
    ("Etc/UTC", "en-GB", 9),
    ("Europe/Paris", "fr-FR", 10),
    ("America/New_York", "en-US", 4),
    ("Asia/Kolkata", "en-IN", 14),
    ("Australia/Sydney", "en-AU", 20),
    ("Asia/Tokyo", "ja-JP", 18),
];

fn case(i: &str, arms: impl Iterator<Item = String>) -> String {
    let arms: Vec<String> = arms
        .enumerate()
        .map(|(k, v)| format!("WHEN {k} THEN {v}"))
        .collect();
    format!("CASE {i} % {} {} END", ZONES.len(), arms.join(" "))
}

/// Loads the world `a` describes, every window ending at `at`.
pub(super) fn build_world(c: &mut DbConn, a: &ComposeArgs, at: DateTime<Utc>) -> Result<()> {
    let d = Dialect(c.backend());
    let since = at - chrono::Duration::days(1);
    let zone = case("i", ZONES.iter().map(|z| format!("'{}'", z.0)));
    let ok = |t: &str| {
        (1..=35).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let locale = match a.locale.as_str() {
        "" => case("i", ZONES.iter().map(|z| format!("'{}'", z.1))),
        // Checked to letters, digits and hyphens: safe inside the quotes.
        t if ok(t) => format!("'{t}'"),
        t => {
            return Err(crate::error::Error::invalid(format!(
                "--locale {}: a BCP 47 tag such as de-DE",
                crate::validate::quoted(t)
            )))
        }
    };
    let hour = case("i", ZONES.iter().map(|z| z.2.to_string()));
    let mut next = Vec::new();
    for (tz, _, h) in ZONES {
        let rule = rule_for(Frequency::Daily, Some(h), None, Some((tz, 0)))?;
        next.push(d.ts_lit(first_due(&rule, since)));
    }
    let next = case("i", next.into_iter());
    let (t0, since_l) = (d.ts_lit(since), d.ts_lit(since));
    let n = a.subs;
    let mut sql = vec![
        format!(
            "INSERT INTO parties (id, kind, name, created_at) SELECT {PARTY0} + i, 'user', 'u' || i, {t0} FROM {}",
            d.series(n)
        ),
        format!(
            "INSERT INTO users (party_id, timezone, week_start, daily_hour, locale, subscriber_code) \
             SELECT {PARTY0} + i, {zone}, 0, 8, {locale}, 'code' || i FROM {}",
            d.series(n)
        ),
        format!(
            "INSERT INTO collections (id, uuid, name, created_at) \
             SELECT i + 1, {}, 'Collection ' || (i + 1), {t0} FROM {}",
            d.uuid("900000000 + i"),
            d.series(a.collections)
        ),
        format!(
            "INSERT INTO subscriptions (id, party_id, collection_id, kind, frequency, day_of_week, hour_of_day, \
             channels, paused, include_own, send_empty, created_at, active_since, next_due_at) \
             SELECT i + 1, {PARTY0} + i, i % {nc} + 1, 'modification', 'daily', NULL, {hour}, '{ch}', \
             false, false, false, {since_l}, {since_l}, {next} FROM {}",
            d.series(n),
            nc = a.collections,
            ch = a.channels,
        ),
    ];
    // The log: evenly spread over `days` up to the tick.
    let span = (a.days * 86_400) as f64;
    let step = span / a.mods as f64;
    let start = (at.timestamp() as f64 - span) as i64;
    let item = format!("(i / {nc}) % {ni}", nc = a.collections, ni = a.items);
    // What happened before the subscriptions' windows was recorded before
    // them (position 0, seen at every cut); what happened in them, after
    // the cut they start at: the window's read goes by log position, as a
    // tick's does in steady state. SQLite's position is the counter (1,
    // then the clock moves to 2); PostgreSQL's the inserting transaction's
    // id, and the subscriptions' cut sees everything below it.
    let ts = d.ts_at(&format!("{start} + CAST(i * {step} AS BIGINT)"));
    let (pos, cut) = match c.backend() {
        crate::db::Backend::Sqlite => ("1", "'1'"),
        crate::db::Backend::Postgres => (
            "pg_current_xact_id()::text::bigint",
            "(SELECT max(log_pos)::text || ':' || max(log_pos)::text || ':' FROM modifications)",
        ),
    };
    sql.push(format!(
        "INSERT INTO modifications (id, tx_id, occurred_at, collection_id, item_uuid, actor_id, action, item_kind, item_title, log_pos) \
         SELECT i + 1, 't' || i, {ts}, i % {nc} + 1, {uuid}, {PARTY0} + (i * 7919) % {n}, 'edited', 'event', 'Event ' || ({item}), \
         CASE WHEN {ts} >= {since_l} THEN {pos} ELSE 0 END FROM {series}",
        nc = a.collections,
        uuid = d.uuid(&format!("(i % {}) * 100000 + {item}", a.collections)),
        series = d.series(a.mods),
    ));
    sql.push(format!("UPDATE subscriptions SET last_log_cut = {cut}"));
    if c.backend() == crate::db::Backend::Sqlite {
        sql.push("UPDATE log_clock SET next = 2".into());
    }
    sql.push(
        "INSERT INTO modification_values (modification_id, attribute, old_value, new_value) \
         SELECT id, 'status', 'rev ' || id, 'rev ' || (id + 1) FROM modifications"
            .into(),
    );
    // Rows written past `modlog::record`: move the feeds' version by hand.
    sql.push("UPDATE collections SET feed_version = feed_version + 1".into());
    sql.push("ANALYZE".into());
    for s in sql {
        c.batch_execute(&s)?;
    }
    Ok(())
}

/// The floor of the hand-off's writes: the engine's own `INSERT … SELECT`
/// of one request and one message per subscription, of the shape a shared
/// digest has (subject, links), with no composing and no client in between.
/// Seen marks for `--seen` of the subscribers (every 1000 subscribers,
/// the first `seen × 1000`): on the ten items whose changes open their
/// window (the ones a digest shows first), seen at the tick, after every
/// change. How many marks.
pub(super) fn add_seen(c: &mut DbConn, a: &ComposeArgs, at: DateTime<Utc>) -> Result<usize> {
    let permille = (a.seen * 1000.0).round() as usize;
    if permille == 0 {
        return Ok(0);
    }
    let d = Dialect(c.backend());
    // The modification that opens the window, and its item.
    let span = (a.days * 86_400) as f64;
    let step = span / a.mods as f64;
    let first = ((86_400f64.min(span) - span).abs() / step).ceil() as usize;
    let first_item = (first / a.collections.max(1)) % a.items.max(1);
    let mut n = 0;
    for j in 0..10.min(a.items) {
        let item = (first_item + j) % a.items;
        let uuid = d.uuid(&format!("(i % {}) * 100000 + {item}", a.collections));
        n += diesel::sql_query(format!(
            "INSERT INTO seen (party_id, item_uuid, seen_at) SELECT {PARTY0} + i, {uuid}, {} FROM {} \
             WHERE i % 1000 < {permille}",
            d.ts_lit(at),
            d.series(a.subs)
        ))
        .execute(c)?;
    }
    c.batch_execute("ANALYZE")?;
    Ok(n)
}

pub(super) fn write_floor(c: &mut DbConn, at: DateTime<Utc>) -> Result<()> {
    let d = Dialect(c.backend());
    let ts = d.ts_lit(at);
    c.batch_execute(&format!(
        "INSERT INTO nt_requests (request_id, party_to, expand_group, party_from, subject, channels, \
             request_date, status, max_retries, kind, subscription_id, period, unsubscribe_url) \
         SELECT 1000000000 + s.id, s.party_id, false, {PARTY0}, \
             '47 changes in Collection 12 since Sunday 09:00', s.channels, {ts}, 'pending', 3, 'digest', \
             s.id, '2026-11-23', 'http://localhost:8080/s/code' || s.id || '/unsubscribe/' || s.id \
         FROM subscriptions s; \
         INSERT INTO nt_messages (request_id, message, manage_url, full_url) \
         SELECT 1000000000 + s.id, '', 'http://localhost:8080/s/code' || s.id, \
             'http://localhost:8080/d/' || s.id || '/2026-11-23/0123456789abcdef0123456789abcdef' \
         FROM subscriptions s"
    ))?;
    Ok(())
}
