//! `digestd bench compose`: digests composed and rendered per second, on
//! one core (digestd composes on the tick's one thread), with 100,000
//! subscribers and a modification log of 10,000,000 rows.
//!
//! The world is generated inside the database engine (a recursive CTE on
//! SQLite, `generate_series` on PostgreSQL): the log spans `--days` days
//! before the tick, spread over `--collections` collections of `--items`
//! items each, every modification by a random user, one changed attribute
//! each. Every subscriber follows one collection daily, at the local hour
//! that falls on the same UTC tick in six zones (UTC, Paris, New York,
//! Kolkata at +5:30, Sydney, Tokyo), with locales of both clock
//! conventions; each window covers the last day.
//!
//! Measured in one run, each inside a transaction that is rolled back:
//! - **plan**: the tick with nothing handed on (find and claim the runs);
//! - **compose + render as posted**: the hand-off without its writes
//!   (`Composer::draft_all`): every digest composed and rendered as the
//!   tick posts it (shared renderings once, each recipient's links and
//!   SMS), caches cold — what the tick's figure is compared with;
//! - **compose + render each whole**: every digest rendered in full for its
//!   recipient, for the channels it uses (what `preview` does) — the
//!   per-core compose rate, as measured before shared renderings;
//! - **tick**: the whole tick with the real hand-off (plan, compose, render
//!   and post each digest as an nt request), then what the posted digests
//!   store, by column, and the time to fill their holes as the queue does;
//! - **window reads**, for information: the log of every collection's window
//!   read once, the least any composition must do.

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;
use diesel::connection::SimpleConnection;

use super::sql::Dialect;
use super::{open_empty, peak_rss_mib, rate, AnonPeak, PARTY0};
use crate::config::{DigestConfig, EmailConfig};
use crate::db::DbConn;
use crate::digest::render::Parts;
use crate::digest::Composer;
use crate::error::Result;
use crate::ids::CollectionId;
use crate::parties::Channel;
use crate::schedule::tick::{first_due, rule_for, tick, Discard};
use crate::schedule::HandOff;
use crate::subscriptions::Frequency;

#[derive(Args, Debug, Clone)]
pub struct ComposeArgs {
    /// Subscribers (one daily subscription each).
    #[arg(long, default_value_t = 100_000)]
    pub subs: usize,
    /// Rows in the modification log.
    #[arg(long, default_value_t = 10_000_000)]
    pub mods: usize,
    /// Collections the log and the subscriptions spread over.
    #[arg(long, default_value_t = 100)]
    pub collections: usize,
    /// Items per collection.
    #[arg(long, default_value_t = 500)]
    pub items: usize,
    /// Days the log spans.
    #[arg(long, default_value_t = 100)]
    pub days: usize,
    /// The channels every subscription uses (comma-separated): the goal
    /// for stored size is about email-only digests.
    #[arg(long, default_value = "email")]
    pub channels: String,
    /// Threads the hand-off composes and renders on (`[schedule]
    /// compose_workers`); above 1, the hand-off without its writes is also
    /// timed on one thread in the same run, shared and from scratch.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Pairs of runs on 1 and on `--workers` threads, each way round in
    /// turn; the ratio reported is the median pair's (these machines'
    /// speed moves within seconds).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-compose.db";

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

fn build_world(c: &mut DbConn, a: &ComposeArgs, at: DateTime<Utc>) -> Result<()> {
    let d = Dialect(c.backend());
    let since = at - chrono::Duration::days(1);
    let zone = case("i", ZONES.iter().map(|z| format!("'{}'", z.0)));
    let locale = case("i", ZONES.iter().map(|z| format!("'{}'", z.1)));
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

/// Bytes stored by the digests a tick posted, by column.
struct Stored {
    digests: i64,
    /// (column, bytes in all).
    columns: Vec<(String, i64)>,
    /// Shared renderings written.
    bodies: i64,
    /// PostgreSQL: the rows' size as stored (`pg_column_size`, after TOAST
    /// compression) of the digests' messages and the shared renderings.
    on_disk: Option<i64>,
}

#[derive(diesel::QueryableByName)]
struct Sum {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// The text a digest stores: its request's subject and links, its
/// message's columns, and the shared renderings (`nt_bodies`, the bench's
/// only ones, counted whole and spread over the digests).
const STORED_COLUMNS: [(&str, &str); 11] = [
    ("nt_requests", "subject"),
    ("nt_requests", "unsubscribe_url"),
    ("nt_messages", "message"),
    ("nt_messages", "message_html"),
    ("nt_messages", "message_chat"),
    ("nt_messages", "message_sms"),
    ("nt_messages", "manage_url"),
    ("nt_messages", "full_url"),
    ("nt_bodies", "message"),
    ("nt_bodies", "message_html"),
    ("nt_bodies", "message_chat"),
];

/// What the digests posted (requests of kind `digest`) store.
fn stored(c: &mut DbConn) -> Result<Stored> {
    use diesel::RunQueryDsl;
    let d = Dialect(c.backend());
    let where_ = |table: &str| match table {
        "nt_bodies" => "",
        _ => " WHERE request_id IN (SELECT request_id FROM nt_requests WHERE kind = 'digest')",
    };
    let mut sum =
        |sql: String| -> Result<i64> { Ok(diesel::sql_query(sql).get_result::<Sum>(c)?.n) };
    let n = sum("SELECT COUNT(*) AS n FROM nt_requests WHERE kind = 'digest'".into())?;
    let bodies = sum("SELECT COUNT(*) AS n FROM nt_bodies".into())?;
    let mut columns = Vec::new();
    for (table, col) in STORED_COLUMNS {
        let bytes = sum(format!(
            "SELECT CAST(COALESCE(SUM({}), 0) AS BIGINT) AS n FROM {table}{}",
            d.octets(col),
            where_(table)
        ))?;
        let short = match table {
            "nt_requests" => "request",
            "nt_messages" => "message",
            _ => "body",
        };
        columns.push((format!("{short}.{col}"), bytes));
    }
    let on_disk = match d.0 {
        crate::db::Backend::Postgres => Some(
            sum(format!(
                "SELECT CAST(COALESCE(SUM(pg_column_size(m.*)), 0) AS BIGINT) AS n FROM nt_messages m{}",
                where_("nt_messages")
            ))? + sum(
                "SELECT CAST(COALESCE(SUM(pg_column_size(b.*)), 0) AS BIGINT) AS n FROM nt_bodies b"
                    .into(),
            )?,
        ),
        crate::db::Backend::Sqlite => None,
    };
    Ok(Stored {
        digests: n,
        columns,
        bodies,
        on_disk,
    })
}

/// The posted digests' stored renderings filled with each one's links, as
/// the queue does before it sends: (digests filled, bytes out, time spent
/// filling alone). Each rendering is read once, not once per digest.
fn fill_all(c: &mut DbConn) -> Result<(usize, usize, Duration)> {
    use crate::db::schema::{nt_bodies, nt_messages, nt_requests};
    use crate::digest::render::{fill, Links};
    use diesel::prelude::*;
    type Body = (i64, String, Option<String>, Option<String>);
    let bodies: std::collections::HashMap<i64, Body> = nt_bodies::table
        .select((
            nt_bodies::body_id,
            nt_bodies::message,
            nt_bodies::message_html,
            nt_bodies::message_chat,
        ))
        .load::<Body>(c)?
        .into_iter()
        .map(|b| (b.0, b))
        .collect();
    type Row = (Option<i64>, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Row> = nt_requests::table
        .inner_join(nt_messages::table)
        .filter(nt_messages::body_id.is_not_null())
        .select((
            nt_messages::body_id,
            nt_requests::unsubscribe_url,
            nt_messages::manage_url,
            nt_messages::full_url,
        ))
        .load(c)?;
    let t = Instant::now();
    let mut bytes = 0;
    for (body, unsub, manage, full) in &rows {
        let Some((_, text, html, chat)) = body.and_then(|b| bodies.get(&b)) else {
            continue;
        };
        let links = Links {
            manage_url: manage.as_deref().unwrap_or(""),
            unsubscribe_url: unsub.as_deref(),
            full_url: full.as_deref().unwrap_or(""),
        };
        bytes += fill(text, &links, false).len();
        for (b, is_html) in [(html, true), (chat, false)] {
            if let Some(b) = b {
                bytes += fill(b, &links, is_html).len();
            }
        }
    }
    Ok((rows.len(), bytes, t.elapsed()))
}

/// The floor of the hand-off's writes: the engine's own `INSERT … SELECT`
/// of one request and one message per subscription, of the shape a shared
/// digest has (subject, links), with no composing and no client in between.
fn write_floor(c: &mut DbConn, at: DateTime<Utc>) -> Result<()> {
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

/// Times `f`, returning its value.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

pub fn compose(args: &ComposeArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let mut args = args.clone();
    args.channels = args
        .channels
        .split(',')
        .map(|c| Channel::parse(c).map(Channel::as_str))
        .collect::<Result<Vec<_>>>()?
        .join(",");
    let args = &args;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let anon = AnonPeak::start();
    let at = Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap();
    let (_, load) = timed(|| build_world(&mut c, args, at))?;
    writeln!(
        out,
        "bench compose on {:?}: {} subscribers (daily, one of {} collections each, 6 zones, on {}), \
         {} modifications over {} days on {} items per collection; loaded in {:.1} s",
        c.backend(),
        args.subs,
        args.collections,
        args.channels,
        args.mods,
        args.days,
        args.items,
        load.as_secs_f64()
    )?;
    let digest = DigestConfig::default();
    let email = EmailConfig::default();

    // Window reads: each collection's last day, once.
    let (rows, reads) = timed(|| {
        let mut rows = 0;
        for k in 1..=args.collections as i64 {
            rows += crate::modlog::find_in_window(
                &mut c,
                Some(&[CollectionId(k)]),
                at - chrono::Duration::days(1),
                at,
            )?
            .len();
        }
        Ok(rows)
    })?;

    // Every run of the plan composed and rendered whole for its recipient
    // (what `preview` does), caches cold; `share` as in production or every
    // body built from scratch.
    let compose_all = |c: &mut DbConn, runs: &[crate::schedule::DueRun], share: bool| {
        let mut composer = Composer::new(&digest, &email)?;
        composer.share_bodies = share;
        timed(|| {
            composer.prepare(c, runs)?;
            let (mut n, mut bytes) = (0usize, 0usize);
            for r in runs {
                let parts = Parts::for_channels(&r.channels);
                let (content, rendered) = composer.compose(c, r, parts)?;
                if !content.is_empty() {
                    n += 1;
                }
                bytes += rendered.bytes();
            }
            Ok((n, bytes))
        })
    };
    // The hand-off without its writes on `workers` threads, caches cold.
    let draft_on = |c: &mut DbConn, runs: &[crate::schedule::DueRun], workers, share| {
        let mut composer = Composer::new(&digest, &email)?;
        (composer.workers, composer.share_bodies) = (workers, share);
        composer.read_through(&db);
        timed(|| composer.draft_all(c, runs))
    };
    let mut on_workers = Vec::new();
    let ((runs, composed, bytes), plan, drafted, draft, comp, unshared) = c.rolled_back(|c| {
        let (runs, plan) = timed(|| tick(c, at, &mut Discard))?;
        // The hand-off without its writes: the goal's "compose + render".
        let (drafted, draft) = draft_on(c, &runs, args.workers, true)?;
        if args.workers > 1 {
            for (share, what) in [(true, "as posted"), (false, "from scratch")] {
                let mut pairs = Vec::new();
                for round in 0..args.rounds.max(1) {
                    let (one, many) = if round % 2 == 0 {
                        let one = draft_on(c, &runs, 1, share)?;
                        (one, draft_on(c, &runs, args.workers, share)?)
                    } else {
                        let many = draft_on(c, &runs, args.workers, share)?;
                        (draft_on(c, &runs, 1, share)?, many)
                    };
                    pairs.push((one.1, one.0.first_plan, many.1, many.0.first_plan));
                }
                on_workers.push((what, pairs));
            }
        }
        let ((n, bytes), comp) = compose_all(c, &runs, true)?;
        let (_, unshared) = compose_all(c, &runs, false)?;
        Ok(((runs.len(), n, bytes), plan, drafted, draft, comp, unshared))
    })?;
    let ((), floor) = c.rolled_back(|c| timed(|| write_floor(c, at)))?;
    let ((ticked, posted, kept, filled), full) = c.rolled_back(|c| {
        let mut composer = Composer::new(&digest, &email)?;
        composer.workers = args.workers;
        composer.read_through(&db);
        let (runs, d) = timed(|| tick(c, at, &mut composer))?;
        Ok(((runs.len(), composer.posted, stored(c)?, fill_all(c)?), d))
    })?;

    let line = |out: &mut dyn Write, what: &str, n: usize, d: Duration, unit: &str| {
        writeln!(
            out,
            "{what:<62} {:>8.2} s {:>10.0} {unit}/s",
            d.as_secs_f64(),
            rate(n, d)
        )
    };
    line(
        out,
        &format!("window reads ({rows} modifications, information)"),
        rows,
        reads,
        "rows",
    )?;
    line(
        out,
        &format!("plan: find and claim {runs} due runs"),
        runs,
        plan,
        "runs",
    )?;
    line(
        out,
        &format!(
            "compose + render as posted, no writes ({} posts, {} workers)",
            drafted.posts, args.workers
        ),
        runs,
        draft,
        "digests",
    )?;
    for (what, pairs) in on_workers {
        let (mut ratios, mut bounds) = (Vec::new(), Vec::new());
        for (round, (one, first_one, many, first_many)) in pairs.into_iter().enumerate() {
            let first = if round % 2 == 0 {
                "1 first"
            } else {
                "1 second"
            };
            line(
                out,
                &format!("  {what}, no writes, 1 worker ({first})"),
                runs,
                one,
                "digests",
            )?;
            line(
                out,
                &format!("  {what}, no writes, {} workers", args.workers),
                runs,
                many,
                "digests",
            )?;
            ratios.push(one.as_secs_f64() / many.as_secs_f64());
            // The first batch's plan as it ran on N workers (its windows
            // read on as many connections), the rest at best spread evenly.
            let t1 = one.as_secs_f64();
            let (first1, first_n) = (first_one.as_secs_f64(), first_many.as_secs_f64());
            bounds.push((
                t1 / (first_n + (t1 - first1) / args.workers as f64),
                first1 / t1,
                first_n / first1,
            ));
        }
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (bound, serial, shrunk) = bounds[bounds.len() / 2];
        writeln!(
            out,
            "  {what}: the first batch's plan (its windows read and collapsed) is {:.0}% of 1 worker's time, {shrunk:.2}x of it on {} workers: at most {bound:.2}x on {} workers (median pair)",
            serial * 100.0,
            args.workers,
            args.workers
        )?;
        writeln!(
            out,
            "  {what}: {:.2}x from 1 to {} workers, median of {} pairs ({}) (goal >= 1.6x at 2)",
            super::median_of(ratios),
            args.workers,
            each.len(),
            each.join(", ")
        )?;
    }
    line(
        out,
        &format!("compose + render each whole ({composed} non-empty)"),
        runs,
        comp,
        "digests",
    )?;
    line(
        out,
        "compose + render, every body from scratch (no sharing)",
        runs,
        unshared,
        "digests",
    )?;
    line(
        out,
        &format!("tick with the real hand-off ({ticked} runs, {posted} posted)"),
        ticked,
        full,
        "digests",
    )?;
    line(
        out,
        "writes floor: INSERT … SELECT of as many requests and messages",
        runs,
        floor,
        "digests",
    )?;
    let beyond = full.as_secs_f64() - plan.as_secs_f64() - draft.as_secs_f64();
    writeln!(
        out,
        "  the tick beyond plan + compose as posted: {beyond:.2} s ({:.1}x the writes' floor)",
        beyond / floor.as_secs_f64()
    )?;
    line(
        out,
        &format!(
            "fill the stored holes at send time ({} digests, information)",
            filled.0
        ),
        filled.0,
        filled.2,
        "digests",
    )?;
    writeln!(
        out,
        "average size rendered whole {} bytes per digest; filled at send time {}",
        bytes / runs.max(1),
        filled.1 / filled.0.max(1)
    )?;
    let per = |b: i64| b / kept.digests.max(1);
    let total: i64 = kept.columns.iter().map(|(_, b)| b).sum();
    let cols: Vec<String> = kept
        .columns
        .iter()
        .filter(|(_, b)| *b > 0)
        .map(|(c, b)| format!("{c} {}", per(*b)))
        .collect();
    writeln!(
        out,
        "stored per digest ({} digests, {} shared renderings): {} bytes ({}); goal <= 4096 for email: {}",
        kept.digests,
        kept.bodies,
        per(total),
        cols.join(", "),
        if per(total) <= 4096 { "met" } else { "not met" }
    )?;
    if let Some(b) = kept.on_disk {
        writeln!(
            out,
            "  as PostgreSQL stores them (pg_column_size of the messages and renderings): {} bytes",
            per(b)
        )?;
    }
    let ratio = rate(ticked, full) / rate(runs, draft);
    writeln!(
        out,
        "tick with the real hand-off at {ratio:.2}x compose + render as posted (goal >= 0.5: {})",
        if ratio >= 0.5 { "met" } else { "not met" }
    )?;
    let goal = rate(runs, comp);
    writeln!(
        out,
        "compose rate {goal:.0} digests/s on one core, each whole (goal >= 20000: {})",
        if goal >= 20_000.0 { "met" } else { "not met" }
    )?;
    let anon = anon.stop();
    let met = |m: f64| if m <= 300.0 { "met" } else { "not met" };
    if let Some(m) = peak_rss_mib() {
        writeln!(
            out,
            "peak memory {m:.0} MiB resident (VmHWM; goal <= 300: {}), \
             {anon:.0} MiB anonymous (RssAnon sampled every 5 ms; goal <= 300: {})",
            met(m),
            met(anon)
        )?;
    }
    Ok(())
}
