//! `bench ingest` feeds N generated JSON lines through the real `record`
//! path (parse, validate, resolve, batched transactions) and, in the same
//! run, loads the same rows into the same table the fastest raw ways the
//! back end has: on SQLite one prepared INSERT in one transaction, and rows
//! generated inside the engine (no client at all); on PostgreSQL text COPY.
//! Each raw load runs before and after the record run. The goal compares
//! against the fastest prepared-INSERT / COPY run; the in-engine load is
//! printed beside it for information.

use std::io::Write;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use clap::Args;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::{open_empty, rate};
use crate::db::{Backend, DbConn};
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

#[derive(Insertable)]
#[diesel(table_name = crate::db::schema::modifications, treat_none_as_default_value = false)]
struct RawInsert<'a> {
    tx_id: &'a str,
    occurred_at: chrono::NaiveDateTime,
    collection_id: i64,
    item_uuid: &'a str,
    actor_id: Option<i64>,
    action: &'a str,
    item_kind: &'a str,
    item_title: &'a str,
}

/// The raw loads each back end offers, fastest first in spirit; the bench
/// runs every one and takes the fastest as the floor.
#[derive(Debug, Clone, Copy)]
enum Floor {
    /// SQLite: one prepared INSERT (cached by type), one transaction.
    PreparedInsert,
    /// SQLite: the engine generates the rows itself (INSERT … SELECT over a
    /// recursive CTE): no client work at all, only the table and indexes.
    InEngine,
    /// PostgreSQL: COPY in text format, one statement.
    CopyText,
}

impl Floor {
    fn for_backend(b: Backend) -> &'static [Floor] {
        match b {
            Backend::Sqlite => &[Floor::PreparedInsert, Floor::InEngine],
            Backend::Postgres => &[Floor::CopyText],
        }
    }
    fn label(self) -> &'static str {
        match self {
            Floor::PreparedInsert => "sqlite: one prepared INSERT, one transaction",
            Floor::InEngine => "sqlite: INSERT ... SELECT generated in the engine",
            Floor::CopyText => "postgres: COPY, text format",
        }
    }
}

fn raw_load(
    conn: &mut DbConn,
    how: Floor,
    rows: &[RawRow],
    coll: i64,
    actor: i64,
) -> Result<Duration> {
    let t = Instant::now();
    match (conn, how) {
        (DbConn::Sqlite(c), Floor::PreparedInsert) => {
            c.batch_execute("BEGIN IMMEDIATE")?;
            for r in rows {
                diesel::insert_into(crate::db::schema::modifications::table)
                    .values(RawInsert {
                        tx_id: &r.tx_id,
                        occurred_at: r.at,
                        collection_id: coll,
                        item_uuid: &r.item_uuid,
                        actor_id: Some(actor),
                        action: r.action,
                        item_kind: "event",
                        item_title: &r.title,
                    })
                    .execute(c)?;
            }
            c.batch_execute("COMMIT")?;
        }
        (DbConn::Sqlite(c), Floor::InEngine) => {
            c.batch_execute(&format!(
                "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {last}) \
                 INSERT INTO modifications (tx_id, occurred_at, collection_id, item_uuid, actor_id, action, item_kind, item_title) \
                 SELECT 'raw:' || i, strftime('%Y-%m-%d %H:%M:%f', '2026-01-01', '+' || (i / 4) || ' seconds'), {coll}, \
                        printf('00000000-0000-0000-0000-%012d', i % 50000), {actor}, 'edited', 'event', 'Item number ' || (i % 50000) \
                 FROM s",
                last = rows.len() - 1
            ))?;
        }
        (DbConn::Postgres(c), _) => {
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
        (DbConn::Sqlite(_), Floor::CopyText) => unreachable!("COPY is PostgreSQL only"),
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
    // The log changed under every feed (see `modlog::touch_feeds`).
    conn.batch_execute("UPDATE collections SET feed_version = feed_version + 1")?;
    Ok(())
}

/// `digestd bench ingest`.
pub fn ingest(args: &IngestArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.rows == 0 {
        return Err(Error::invalid("--rows must be at least 1"));
    }
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
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
    writeln!(
        out,
        "bench ingest: {} modifications, {} changed attributes each, batches of {}",
        args.rows, args.changes, args.batch
    )?;

    // Floors before and after the record run; the fastest run is the floor.
    let floors = Floor::for_backend(db.backend());
    let mut runs: Vec<(Floor, Duration)> = Vec::new();
    for how in floors {
        runs.push((*how, raw_load(&mut conn, *how, &raw, coll.id.0, actor.0)?));
        clear(&mut conn)?;
    }
    let t = Instant::now();
    let mods = ingest::parse_all(&mut conn, &input[..], &ingest::AtBounds::ANY)?;
    let parsed = t.elapsed();
    let n = ingest::write_batched(&mut conn, &mods, args.batch, &mut |_| {})?;
    let real = t.elapsed();
    drop(mods);
    clear(&mut conn)?;
    for how in floors {
        runs.push((*how, raw_load(&mut conn, *how, &raw, coll.id.0, actor.0)?));
        clear(&mut conn)?;
    }
    // Leave the database as it was found, so the bench can run again.
    conn.batch_execute("DELETE FROM collections; DELETE FROM users; DELETE FROM contact_points; DELETE FROM parties;")?;

    report(out, args, &runs, n, parsed, real)
}

/// The floor runs, the fastest, the record run and the ratios.
fn report(
    out: &mut dyn Write,
    args: &IngestArgs,
    runs: &[(Floor, Duration)],
    n: usize,
    parsed: Duration,
    real: Duration,
) -> Result<()> {
    for (how, d) in runs {
        writeln!(
            out,
            "floor run   {:<52} {:>7.2} s {:>10.0} rows/s",
            how.label(),
            d.as_secs_f64(),
            rate(args.rows, *d)
        )?;
    }
    // The goal is set against the raw-load floor (prepared INSERT on
    // SQLite, COPY on PostgreSQL); the in-engine load is shown beside it as
    // the absolute limit of the table and its indexes.
    let best_of = |want: fn(Floor) -> bool| {
        runs.iter()
            .filter(|(f, _)| want(*f))
            .map(|(f, d)| (*f, *d))
            .min_by_key(|(_, d)| *d)
    };
    let (best, floor) = best_of(|f| !matches!(f, Floor::InEngine)).expect("a goal floor ran");
    let floor_rate = rate(args.rows, floor);
    let real_rate = rate(n, real);
    writeln!(
        out,
        "floor       {:<52} {:>7.2} s {:>10.0} rows/s",
        best.label(),
        floor.as_secs_f64(),
        floor_rate
    )?;
    writeln!(
        out,
        "record      {:<52} {:>7.2} s {:>10.0} rows/s",
        format!(
            "parse+validate {:.2} s, write {:.2} s",
            parsed.as_secs_f64(),
            (real - parsed).as_secs_f64()
        ),
        real.as_secs_f64(),
        real_rate
    )?;
    if args.changes > 0 {
        writeln!(
            out,
            "record also wrote {} value rows ({:.0} rows/s over both tables)",
            n * args.changes,
            rate(n * (1 + args.changes), real)
        )?;
    }
    writeln!(
        out,
        "ratio record/floor: {:.2} (goal >= 0.50)",
        real_rate / floor_rate
    )?;
    if let Some((_, engine)) = best_of(|f| matches!(f, Floor::InEngine)) {
        writeln!(
            out,
            "ratio record/in-engine load: {:.2} (for information)",
            real_rate / rate(args.rows, engine)
        )?;
    }
    Ok(())
}
