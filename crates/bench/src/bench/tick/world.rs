//! The tick bench's world, loaded through a bulk path of its own (COPY on
//! PostgreSQL, prepared INSERTs in one transaction on SQLite): users over
//! every zone with one subscription each, then the idle subscriptions.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use crate::bench::PARTY0;
use crate::db::schema::{parties, subscriptions, users};
use crate::db::DbConn;
use crate::error::Result;
use crate::schedule::tick::{first_due, rule_for};
use crate::subscriptions::Frequency;

#[derive(Insertable)]
#[diesel(table_name = parties, treat_none_as_default_value = false)]
struct PartyRow {
    id: i64,
    kind: &'static str,
    name: String,
    created_at: NaiveDateTime,
}

#[derive(Insertable)]
#[diesel(table_name = users, treat_none_as_default_value = false)]
struct UserRow {
    party_id: i64,
    timezone: &'static str,
    week_start: i32,
    daily_hour: i32,
    locale: &'static str,
    subscriber_code: String,
}

#[derive(Insertable)]
#[diesel(table_name = subscriptions, treat_none_as_default_value = false)]
struct SubRow {
    id: i64,
    party_id: i64,
    collection_id: Option<i64>,
    kind: &'static str,
    frequency: &'static str,
    day_of_week: Option<i32>,
    hour_of_day: Option<i32>,
    channels: &'static str,
    paused: bool,
    include_own: bool,
    send_empty: bool,
    created_at: NaiveDateTime,
    active_since: NaiveDateTime,
    next_due_at: Option<NaiveDateTime>,
    last_scheduled_at: Option<NaiveDateTime>,
    last_period: Option<String>,
    last_window_end: Option<NaiveDateTime>,
}

/// A cheap deterministic hash, to spread hours without a RNG.
pub(in crate::bench) fn mix(i: usize) -> usize {
    let mut x = i as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as usize
}

/// 70% daily, 20% weekly, 10% hourly; half of the hours at 08:00 local.
fn sub_row(
    i: usize,
    id: i64,
    party: i64,
    tz: &str,
    week_start: i32,
    t0: DateTime<Utc>,
    idle_until: Option<DateTime<Utc>>,
) -> Result<SubRow> {
    let h = mix(i);
    let (frequency, freq) = match h % 10 {
        0..=6 => ("daily", Frequency::Daily),
        7 | 8 => ("weekly", Frequency::Weekly),
        _ => ("hourly", Frequency::Hourly),
    };
    let hour = if (h >> 8).is_multiple_of(2) {
        8
    } else {
        ((h >> 16) % 24) as i32
    };
    let (hour, day) = match freq {
        Frequency::Hourly => (None, None),
        Frequency::Daily => (Some(hour), None),
        Frequency::Weekly => (Some(hour), Some(((h >> 24) % 7) as i32)),
    };
    let next = match idle_until {
        Some(t) => t,
        None => first_due(&rule_for(freq, hour, day, Some((tz, week_start)))?, t0),
    };
    let t0n = t0.naive_utc();
    Ok(SubRow {
        id,
        party_id: party,
        collection_id: None,
        kind: "modification",
        frequency,
        day_of_week: day,
        hour_of_day: hour,
        channels: "email",
        paused: false,
        include_own: false,
        send_empty: false,
        created_at: t0n,
        active_since: t0n,
        next_due_at: Some(next.naive_utc()),
        last_scheduled_at: None,
        last_period: None,
        last_window_end: None,
    })
}

const BATCH: usize = 50_000;

macro_rules! bulk_insert {
    ($conn:expr, $table:expr, $rows:expr) => {{
        let rows = $rows;
        match $conn {
            DbConn::Sqlite(c) => {
                c.batch_execute("BEGIN IMMEDIATE")?;
                for r in &rows {
                    diesel::insert_into($table).values(r).execute(c)?;
                }
                c.batch_execute("COMMIT")?;
            }
            DbConn::Postgres(c) => {
                diesel::copy_from($table)
                    .from_insertable(&rows)
                    .execute(c)?;
            }
        }
    }};
}

/// `n` users over every zone, each with one subscription due as its
/// `Rule` says from `t0`.
pub(super) fn build_world(c: &mut DbConn, n: usize, t0: DateTime<Utc>) -> Result<()> {
    let zones = chrono_tz::TZ_VARIANTS;
    let t0n = t0.naive_utc();
    for start in (0..n).step_by(BATCH) {
        let range = start..(start + BATCH).min(n);
        let ps: Vec<PartyRow> = range
            .clone()
            .map(|i| PartyRow {
                id: PARTY0 + i as i64,
                kind: "user",
                name: format!("b{i:07}"),
                created_at: t0n,
            })
            .collect();
        bulk_insert!(c, parties::table, ps);
        let us: Vec<UserRow> = range
            .clone()
            .map(|i| UserRow {
                party_id: PARTY0 + i as i64,
                timezone: zones[i % zones.len()].name(),
                week_start: (i % 7) as i32,
                daily_hour: 8,
                locale: "en-US",
                subscriber_code: format!("{i:064x}"),
            })
            .collect();
        bulk_insert!(c, users::table, us);
        let ss = range
            .map(|i| {
                sub_row(
                    i,
                    i as i64 + 1,
                    PARTY0 + i as i64,
                    zones[i % zones.len()].name(),
                    (i % 7) as i32,
                    t0,
                    None,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        bulk_insert!(c, subscriptions::table, ss);
    }
    Ok(())
}

/// Adds `extra` subscriptions that are not due before `idle_until`.
pub(super) fn add_idle(
    c: &mut DbConn,
    n: usize,
    extra: usize,
    t0: DateTime<Utc>,
    idle_until: DateTime<Utc>,
) -> Result<()> {
    for start in (0..extra).step_by(BATCH) {
        let ss = (start..(start + BATCH).min(extra))
            .map(|k| {
                let mut row = sub_row(
                    k,
                    (n + k) as i64 + 1,
                    PARTY0 + (k % n) as i64,
                    "UTC",
                    0,
                    t0,
                    Some(idle_until),
                )?;
                // A user's r-th idle row is a weekly forward digest at a
                // (day, hour) of its own: a user has each digest once
                // (`subscriptions_digest`), and the base row is always a
                // modification digest. Never due here, so which digest it
                // is does not change what the tick reads.
                let r = k / n;
                row.kind = "forward";
                row.frequency = "weekly";
                row.hour_of_day = Some((r % 24) as i32);
                row.day_of_week = Some((r / 24) as i32);
                Ok(row)
            })
            .collect::<Result<Vec<_>>>()?;
        bulk_insert!(c, subscriptions::table, ss);
    }
    if let DbConn::Postgres(pg) = c {
        pg.batch_execute("ANALYZE subscriptions; ANALYZE users; ANALYZE parties;")?;
    }
    Ok(())
}
