//! A chunk's claims written on SQLite with bound values, through
//! multi-row `INSERT`s of a fixed number of rows that diesel keeps
//! prepared (a fixed-size array's batch insert has a static query id), so
//! a chunk of 20,000 is about 160 executions of one prepared statement:
//!
//! - the runs straight into `subscription_runs`;
//! - the subscriptions' new values into the keyed temporary table
//!   `temp.claim_next`, which one row-value `UPDATE` then reads
//!   (`UPDATE … FROM` a list copies the whole join into an ephemeral
//!   table first, and a statement per row spends more in diesel than the
//!   update costs SQLite).
//!
//! The values are bound as text already rendered ([`crate::db::sqlite_stamp`]):
//! the tables below view the timestamp columns as `Text`, which is what
//! SQLite stores for diesel's `Timestamp`, so no value goes through
//! chrono's format interpreter. Sent as one JSON array each, parsed back
//! by `json_each` and `json_extract`, the runs of a 20,000 chunk took
//! 105 ms against 70 ms bound, the whole write 254 against 212 ms (`bench tick --subs 300000`).

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;

use crate::db::sqlite_insert_kept;
use crate::error::Result;

/// Rows per multi-row statement: 1,152 parameters for a run's nine
/// columns, well under SQLite's limit. The rest of a chunk goes in one
/// row at a time, through a one-row statement kept prepared as well.
const ROWS: usize = 128;

diesel::table! {
    /// `subscription_runs`, its timestamps seen as the text SQLite keeps.
    #[sql_name = "subscription_runs"]
    runs_as_text (id) {
        id -> BigInt,
        subscription_id -> BigInt,
        period -> Text,
        scheduled_at -> Text,
        window_start -> Text,
        window_end -> Text,
        ran_at -> Text,
        request_id -> Nullable<BigInt>,
        log_from -> Nullable<Text>,
        log_to -> Nullable<Text>,
    }
}

diesel::table! {
    /// The temporary table [`move_on`] fills (unqualified names find the
    /// `temp` schema first).
    claim_next (id) {
        id -> BigInt,
        next -> Text,
        sched -> Nullable<Text>,
        key -> Nullable<Text>,
        wend -> Nullable<Text>,
        lcut -> Nullable<Text>,
    }
}

/// A run to insert, its timestamps rendered. Owned throughout: a kept
/// statement's id is a type, which cannot borrow.
#[derive(Insertable)]
#[diesel(table_name = runs_as_text, treat_none_as_default_value = false)]
pub struct Run {
    pub subscription_id: i64,
    pub period: String,
    pub scheduled_at: String,
    pub window_start: String,
    pub window_end: String,
    pub ran_at: String,
    pub request_id: Option<i64>,
    pub log_from: Option<String>,
    pub log_to: Option<String>,
}

/// A subscription's new `next_due_at` and, when it ran, its last period.
#[derive(Insertable)]
#[diesel(table_name = claim_next, treat_none_as_default_value = false)]
pub struct Next {
    pub id: i64,
    pub next: String,
    pub sched: Option<String>,
    pub key: Option<String>,
    pub wend: Option<String>,
    pub lcut: Option<String>,
}

/// Inserts `rows` into `subscription_runs`.
pub fn insert_runs(c: &mut SqliteConnection, rows: &[Run]) -> Result<()> {
    sqlite_insert_kept!(c, runs_as_text::table, rows, ROWS);
    Ok(())
}

/// Moves each subscription of `rows` on: its `next_due_at`, and its last
/// period where it ran.
pub fn move_on(c: &mut SqliteConnection, rows: &[Next]) -> Result<()> {
    c.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS claim_next (id INTEGER PRIMARY KEY, \
             next TEXT NOT NULL, sched TEXT, key TEXT, wend TEXT, lcut TEXT); \
         DELETE FROM temp.claim_next;",
    )?;
    sqlite_insert_kept!(c, claim_next::table, rows, ROWS);
    // `OR IGNORE`: no row is ever ignored (no column set here is in a
    // unique index or a CHECK, and `last_log_cut`, the one NOT NULL, gets
    // itself when the chunk has no new cut), but without it SQLite must be
    // ready to abort the statement on a NOT NULL violation, and keeps a
    // statement journal (a temporary file) of every page the update
    // changes: 15% of the whole claim's time in `bench tick`.
    c.batch_execute(
        "UPDATE OR IGNORE subscriptions SET (next_due_at, last_scheduled_at, last_period, \
             last_window_end, last_log_cut) = (SELECT v.next, \
                 COALESCE(v.sched, subscriptions.last_scheduled_at), \
                 COALESCE(v.key, subscriptions.last_period), \
                 COALESCE(v.wend, subscriptions.last_window_end), \
                 COALESCE(v.lcut, subscriptions.last_log_cut) \
             FROM temp.claim_next AS v WHERE v.id = subscriptions.id) \
         WHERE id IN (SELECT id FROM temp.claim_next); \
         DELETE FROM temp.claim_next;",
    )?;
    Ok(())
}
