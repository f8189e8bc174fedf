//! `digestd bench …`: performance measured beside a floor taken in the same
//! run on the same database, because these machines are shared and noisy.
//!
//! `bench ingest` feeds N generated JSON lines through the real `record`
//! path (parse, validate, resolve, batched transactions) and, in the same
//! run, loads the same rows into the same table the fastest raw way the
//! back end has: one prepared INSERT in one transaction on SQLite, text
//! COPY on PostgreSQL. The raw load runs twice (before and after) and the
//! faster run is the floor.

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text, Timestamp};

use crate::db::{Backend, Db, DbConn, DbUrl};
use crate::error::{Error, Result};
use crate::{ingest, items, parties};

#[derive(Args, Debug, Clone)]
pub struct IngestArgs {
    /// Modifications to record.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: usize,
    /// Changed attributes per modification (0 compares like with like).
    #[arg(long, default_value_t = 0)]
    pub changes: usize,
    /// Rows per transaction on the record path.
    #[arg(long, default_value_t = 10_000)]
    pub batch: usize,
}

/// Where `bench ingest` runs when no --db is given (recreated each run).
const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-ingest.db";

fn rate(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

/// The bench database: the given URL (which must hold no parties), or a
/// fresh SQLite file.
fn open_empty(url: Option<&str>) -> Result<Db> {
    let url = match url {
        Some(u) => u.to_string(),
        None => {
            let path = DbUrl::parse(DEFAULT_BENCH_DB)?.target;
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
            DEFAULT_BENCH_DB.to_string()
        }
    };
    let db = Db::open(&url, 2)?;
    let mut c = db.conn()?;
    if !parties::list_users(&mut c)?.is_empty() || crate::modlog::count(&mut c)? > 0 {
        return Err(Error::invalid(
            "bench needs an empty database (it deletes what it loads)",
        ));
    }
    Ok(db)
}

fn generate(n: usize, changes: usize, collection: &str, base: DateTime<Utc>) -> Vec<u8> {
    const ACTIONS: [&str; 4] = ["edited", "edited", "created", "now"];
    let mut out = Vec::with_capacity(n * (260 + changes * 60));
    for i in 0..n {
        let item =
            uuid::Uuid::from_u128(0x5eed_0000_0000_0000_0000_0000_0000_0000 + (i % 50_000) as u128);
        let at = base + chrono::Duration::milliseconds(i as i64 * 250);
        let ch: Vec<String> = (0..changes)
            .map(|k| {
                format!(
                    r#"{{"attribute":"attr{k}","old":"value {i}","new":"value {}"}}"#,
                    i + 1
                )
            })
            .collect();
        let _ = writeln!(
            out,
            r#"{{"collection":"{collection}","item":"{item}","actor":"bench","action":"{}","at":"{}","title":"Item number {}","kind":"event","changes":[{}]}}"#,
            ACTIONS[i % ACTIONS.len()],
            at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            i % 50_000,
            ch.join(",")
        );
    }
    out
}

/// One row as the raw load writes it (no id: the database assigns it).
struct RawRow {
    tx_id: String,
    at: chrono::NaiveDateTime,
    item_uuid: String,
    action: &'static str,
    title: String,
}

fn raw_rows(n: usize, base: DateTime<Utc>) -> Vec<RawRow> {
    (0..n)
        .map(|i| RawRow {
            tx_id: format!("raw:{i}"),
            at: (base + chrono::Duration::milliseconds(i as i64 * 250)).naive_utc(),
            item_uuid: uuid::Uuid::from_u128(i as u128 % 50_000)
                .hyphenated()
                .to_string(),
            action: "edited",
            title: format!("Item number {}", i % 50_000),
        })
        .collect()
}

fn raw_load(conn: &mut DbConn, rows: &[RawRow], coll: i64, actor: i64) -> Result<Duration> {
    let t = Instant::now();
    match conn {
        DbConn::Sqlite(c) => {
            c.batch_execute("BEGIN IMMEDIATE")?;
            for r in rows {
                diesel::sql_query(
                    "INSERT INTO modifications (tx_id, occurred_at, collection_id, item_uuid, actor_id, action, item_kind, item_title) \
                     VALUES (?, ?, ?, ?, ?, ?, 'event', ?)",
                )
                .bind::<Text, _>(&r.tx_id)
                .bind::<Timestamp, _>(r.at)
                .bind::<BigInt, _>(coll)
                .bind::<Text, _>(&r.item_uuid)
                .bind::<BigInt, _>(actor)
                .bind::<Text, _>(r.action)
                .bind::<Text, _>(&r.title)
                .execute(c)?;
            }
            c.batch_execute("COMMIT")?;
        }
        DbConn::Postgres(c) => {
            use crate::db::schema::modifications as m;
            diesel::copy_from(m::table)
                .from_raw_data(
                    (
                        m::tx_id,
                        m::occurred_at,
                        m::collection_id,
                        m::item_uuid,
                        m::actor_id,
                        m::action,
                        m::item_kind,
                        m::item_title,
                    ),
                    |w| -> std::result::Result<(), diesel::result::Error> {
                        for r in rows {
                            writeln!(
                                w,
                                "{}\t{}\t{coll}\t{}\t{actor}\t{}\tevent\t{}",
                                r.tx_id,
                                r.at.format("%Y-%m-%d %H:%M:%S%.6f"),
                                r.item_uuid,
                                r.action,
                                r.title
                            )
                            .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
                        }
                        Ok(())
                    },
                )
                .with_format(diesel::pg::CopyFormat::Text)
                .execute(c)?;
        }
    }
    Ok(t.elapsed())
}

fn clear(conn: &mut DbConn) -> Result<()> {
    match conn {
        DbConn::Sqlite(c) => {
            c.batch_execute("DELETE FROM modification_values; DELETE FROM modifications;")?
        }
        DbConn::Postgres(c) => c.batch_execute("TRUNCATE modification_values, modifications")?,
    }
    Ok(())
}

/// `digestd bench ingest`.
pub fn ingest(args: &IngestArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.rows == 0 {
        return Err(Error::invalid("--rows must be at least 1"));
    }
    let db = open_empty(url)?;
    let mut conn = db.conn()?;
    let base = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let actor = parties::create_user(
        &mut conn,
        base,
        &parties::NewUser {
            name: "bench".into(),
            timezone: "UTC".into(),
            ..Default::default()
        },
    )?;
    let coll = items::create_collection(&mut conn, base, "Bench", Some(actor))?;
    let input = generate(args.rows, args.changes, &coll.uuid, base);
    let raw = raw_rows(args.rows, base);
    let backend = match db.backend() {
        Backend::Sqlite => "sqlite (one prepared INSERT, one transaction)",
        Backend::Postgres => "postgres (COPY, text format)",
    };
    writeln!(
        out,
        "bench ingest: {} modifications, {} changed attributes each, batches of {}",
        args.rows, args.changes, args.batch
    )?;

    let raw1 = raw_load(&mut conn, &raw, coll.id.0, actor.0)?;
    clear(&mut conn)?;
    let t = Instant::now();
    let mods = ingest::parse_all(&mut conn, &input[..])?;
    let parsed = t.elapsed();
    let n = ingest::write_batched(&mut conn, &mods, args.batch, &mut |_| {})?;
    let real = t.elapsed();
    drop(mods);
    clear(&mut conn)?;
    let raw2 = raw_load(&mut conn, &raw, coll.id.0, actor.0)?;
    clear(&mut conn)?;
    let floor = raw1.min(raw2);

    let floor_rate = rate(args.rows, floor);
    let real_rate = rate(n, real);
    writeln!(
        out,
        "floor  {backend}: {:>8.2} s  {:>10.0} rows/s  (runs: {:.2} s, {:.2} s)",
        floor.as_secs_f64(),
        floor_rate,
        raw1.as_secs_f64(),
        raw2.as_secs_f64()
    )?;
    writeln!(
        out,
        "record (parse+validate {:.2} s, write {:.2} s):    {:>8.2} s  {:>10.0} rows/s",
        parsed.as_secs_f64(),
        (real - parsed).as_secs_f64(),
        real.as_secs_f64(),
        real_rate
    )?;
    if args.changes > 0 {
        writeln!(
            out,
            "record wrote {} value rows as well ({:.0} rows/s over both tables)",
            n * args.changes,
            rate(n * (1 + args.changes), real)
        )?;
    }
    writeln!(
        out,
        "ratio record/floor: {:.2} (goal >= 0.50)",
        real_rate / floor_rate
    )?;
    Ok(())
}
