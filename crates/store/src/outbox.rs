//! Writing rows of the operators' event outbox (`events`, owned by the
//! engine's `events`), each back end its fastest way: on SQLite
//! multi-row INSERTs kept prepared (`sqlite_insert_kept`), on PostgreSQL
//! one `INSERT … SELECT FROM unnest(…)` per 10,000 (a bulk import records
//! one event per subscription it makes).

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::Result;
use crate::schema::events;
use crate::DbConn;

/// One event to insert; the rest of its row is the table's defaults
/// (pending, no attempts, due at `occurred_at`).
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: &'static str,
    pub order_key: String,
    pub subscription_id: Option<i64>,
    pub party_id: Option<i64>,
    pub occurred_at: NaiveDateTime,
    pub data: String,
}

/// Rows per multi-row INSERT on SQLite (7 values each).
const SQLITE_ROWS: usize = 64;

/// One row as SQLite takes it, owned (a kept statement's id is a type).
#[derive(Insertable)]
#[diesel(table_name = events, treat_none_as_default_value = false)]
struct SqliteRow {
    kind: &'static str,
    order_key: String,
    subscription_id: Option<i64>,
    party_id: Option<i64>,
    occurred_at: NaiveDateTime,
    data: String,
    next_attempt_at: NaiveDateTime,
}

/// Inserts `rows` in the caller's transaction.
pub fn insert_events(conn: &mut DbConn, rows: &[NewEvent]) -> Result<()> {
    match conn {
        DbConn::Sqlite(lite) => {
            let rows: Vec<SqliteRow> = rows
                .iter()
                .map(|e| SqliteRow {
                    kind: e.kind,
                    order_key: e.order_key.clone(),
                    subscription_id: e.subscription_id,
                    party_id: e.party_id,
                    occurred_at: e.occurred_at,
                    data: e.data.clone(),
                    next_attempt_at: e.occurred_at,
                })
                .collect();
            crate::sqlite_insert_kept!(lite, events::table, rows, SQLITE_ROWS);
        }
        DbConn::Postgres(pg) => {
            use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};
            for chunk in rows.chunks(10_000) {
                let col = |f: fn(&NewEvent) -> String| chunk.iter().map(f).collect::<Vec<_>>();
                let ids = |f: fn(&NewEvent) -> Option<i64>| chunk.iter().map(f).collect::<Vec<_>>();
                diesel::sql_query(
                    "INSERT INTO events (type, order_key, subscription_id, party_id, \
                         occurred_at, data, next_attempt_at) \
                     SELECT v.kind, v.key, v.sub, v.party, v.at, v.data, v.at \
                     FROM unnest($1, $2, $3, $4, $5, $6) AS v(kind, key, sub, party, at, data)",
                )
                .bind::<Array<Text>, _>(col(|e| e.kind.to_string()))
                .bind::<Array<Text>, _>(col(|e| e.order_key.clone()))
                .bind::<Array<Nullable<BigInt>>, _>(ids(|e| e.subscription_id))
                .bind::<Array<Nullable<BigInt>>, _>(ids(|e| e.party_id))
                .bind::<Array<Timestamp>, _>(
                    chunk.iter().map(|e| e.occurred_at).collect::<Vec<_>>(),
                )
                .bind::<Array<Text>, _>(col(|e| e.data.clone()))
                .execute(pg)?;
            }
        }
    }
    Ok(())
}
