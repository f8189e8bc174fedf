//! A batch's outcomes written on SQLite: the rows go into the temporary
//! table `temp.settle_rows` through multi-row `INSERT`s that diesel keeps
//! prepared ([`crate::db::sqlite_insert_kept`]), which one `UPDATE … FROM`
//! of `nt_queue` and one `INSERT … SELECT` into `delivery_log` then read.
//! Both statements reading one JSON array through `json_each`, each
//! parsing it again, took 3.8 ms for 256 outcomes in a copy of `bench
//! burst`'s database, against 2.0 ms through the table
//! (`docs/benchmarks-history.md`, the burst, 2026-11-27).

use chrono::NaiveDateTime;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;

use super::RowUpdate;
use crate::db::{sqlite_insert_kept, sqlite_stamp};
use crate::error::Result;

/// Rows per multi-row statement: 768 parameters.
const ROWS: usize = 64;

diesel::table! {
    /// The temporary table a batch's outcomes go through (unqualified
    /// names find the `temp` schema first).
    settle_rows (req, party, ch) {
        req -> BigInt,
        party -> BigInt,
        ch -> Text,
        ok -> Bool,
        gave_up -> Bool,
        retries -> Integer,
        next -> Text,
        code -> Nullable<Integer>,
        text -> Text,
        address -> Nullable<Text>,
        outcome -> Text,
        remote -> Nullable<Text>,
    }
}

/// One row's outcome, owned or static (a kept statement's id is a type).
#[derive(Insertable)]
#[diesel(table_name = settle_rows, treat_none_as_default_value = false)]
struct Row {
    req: i64,
    party: i64,
    ch: String,
    ok: bool,
    gave_up: bool,
    retries: i32,
    next: String,
    code: Option<i32>,
    text: String,
    address: Option<String>,
    outcome: &'static str,
    remote: Option<String>,
}

/// Each row's new state in `nt_queue`, and its `delivery_log` row.
pub(super) fn write_rows(
    c: &mut SqliteConnection,
    ups: &[RowUpdate],
    now_n: NaiveDateTime,
) -> Result<()> {
    let rows: Vec<Row> = ups
        .iter()
        .map(|u| Row {
            req: u.request_id,
            party: u.party_to,
            ch: u.channel.clone(),
            ok: u.is_successful,
            gave_up: u.gave_up,
            retries: u.retry_count,
            next: sqlite_stamp(u.next_attempt_at),
            code: u.code,
            text: u.text.clone(),
            address: u.address.clone(),
            outcome: u.logged.as_str(),
            remote: u.remote_id.clone(),
        })
        .collect();
    c.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS settle_rows (req INTEGER NOT NULL, \
             party INTEGER NOT NULL, ch TEXT NOT NULL, ok INTEGER NOT NULL, \
             gave_up INTEGER NOT NULL, retries INTEGER NOT NULL, next TEXT NOT NULL, \
             code INTEGER, text TEXT NOT NULL, address TEXT, outcome TEXT NOT NULL, \
             remote TEXT); \
         DELETE FROM temp.settle_rows;",
    )?;
    sqlite_insert_kept!(c, settle_rows::table, rows, ROWS);
    let now = sqlite_stamp(now_n);
    diesel::sql_query(
        "UPDATE nt_queue SET is_successful = v.ok, gave_up = v.gave_up, \
             retry_count = v.retries, next_attempt_at = v.next, last_attempt_at = ?, \
             smtp_reply_code = v.code, smtp_reply_message = v.text, \
             claimed_by = NULL, claimed_until = NULL \
         FROM temp.settle_rows AS v \
         WHERE nt_queue.request_id = v.req AND nt_queue.party_to = v.party \
             AND nt_queue.channel = v.ch",
    )
    .bind::<Text, _>(&now)
    .execute(c)?;
    diesel::sql_query(
        "INSERT INTO delivery_log (request_id, party_to, channel, address, attempted_at, \
             outcome, reply_code, reply_message, remote_id) \
         SELECT v.req, v.party, v.ch, v.address, ?, v.outcome, v.code, v.text, v.remote \
         FROM temp.settle_rows AS v",
    )
    .bind::<Text, _>(&now)
    .execute(c)?;
    c.batch_execute("DELETE FROM temp.settle_rows")?;
    Ok(())
}
