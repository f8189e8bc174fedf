//! Set statements over a batch of keyed values, for the hot writes whose
//! statements differ by back end in form, not in a fragment: the tick's
//! claims moving subscriptions on ([`move_subscriptions_on`]) and the
//! queue's outcomes ([`settle_queue_rows`]). The engine says what the
//! values are; these say how they reach the tables.
//!
//! - PostgreSQL: the values bound as one array a column, read by
//!   `UPDATE … FROM unnest(…)` (and `INSERT … SELECT FROM unnest(…)`), with
//!   the planner told that index look-ups are cheap ([`prefer_index_lookups`]).
//! - SQLite: the values in a keyed temporary table, filled by multi-row
//!   `INSERT`s that diesel keeps prepared ([`sqlite_insert_kept!`](crate::sqlite_insert_kept)),
//!   which the statements then read. The same values in one JSON array
//!   that `json_each` parses took longer: each statement reading it parsed
//!   it again (3.8 ms against 2.0 ms for 256 outcomes), and the runs of a
//!   20,000 chunk took 105 ms against 70 ms bound (`bench tick --subs 300000`).

use chrono::NaiveDateTime;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text, Timestamp};
use diesel::sqlite::SqliteConnection;

use crate::bulk::prefer_index_lookups;
use crate::error::Result;
use crate::rows::Stamp;
use crate::DbConn;

/// Rows per kept multi-row statement into the temporary tables (SQLite).
/// A claim's six columns: 768 parameters.
const NEXT_ROWS: usize = 128;
/// An outcome's thirteen columns: 832 parameters.
const OUTCOME_ROWS: usize = 64;
/// Outcomes per pair of statements on PostgreSQL.
const PG_OUTCOMES: usize = 10_000;

diesel::table! {
    /// The temporary table [`move_subscriptions_on`] fills on SQLite
    /// (unqualified names find the `temp` schema first).
    claim_next (id) {
        id -> BigInt,
        next -> Timestamp,
        sched -> Nullable<Timestamp>,
        key -> Nullable<Text>,
        wend -> Nullable<Timestamp>,
        lcut -> Nullable<Text>,
    }
}

/// A claimed subscription moved on: its new `next_due_at` and, when it
/// ran, its last run's period (`last_period`), instant
/// (`last_scheduled_at`), window end (`last_window_end`) and log cut
/// (`last_log_cut`); a `None` keeps the stored value.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = claim_next, treat_none_as_default_value = false)]
pub struct MovedOn {
    pub id: i64,
    #[diesel(column_name = next)]
    pub next_due_at: Stamp,
    #[diesel(column_name = sched)]
    pub last_scheduled_at: Option<Stamp>,
    #[diesel(column_name = key)]
    pub last_period: Option<String>,
    #[diesel(column_name = wend)]
    pub last_window_end: Option<Stamp>,
    #[diesel(column_name = lcut)]
    pub last_log_cut: Option<String>,
}

/// Writes each subscription's scheduler columns of `rows`, in the
/// caller's transaction, in a few statements for the whole batch.
pub fn move_subscriptions_on(conn: &mut DbConn, rows: &[MovedOn]) -> Result<()> {
    match conn {
        DbConn::Sqlite(lite) => move_on_sqlite(lite, rows),
        DbConn::Postgres(pg) => {
            prefer_index_lookups(pg)?;
            diesel::sql_query(
                "UPDATE subscriptions AS s SET next_due_at = v.next, \
                     last_scheduled_at = COALESCE(v.sched, s.last_scheduled_at), \
                     last_period = COALESCE(v.key, s.last_period), \
                     last_window_end = COALESCE(v.wend, s.last_window_end), \
                     last_log_cut = COALESCE(v.lcut, s.last_log_cut) \
                 FROM unnest($1, $2, $3, $4, $5, $6) AS v(id, next, sched, key, wend, lcut) \
                 WHERE s.id = v.id",
            )
            .bind::<Array<BigInt>, _>(rows.iter().map(|r| r.id).collect::<Vec<_>>())
            .bind::<Array<Timestamp>, _>(rows.iter().map(|r| r.next_due_at.0).collect::<Vec<_>>())
            .bind::<Array<Nullable<Timestamp>>, _>(
                rows.iter()
                    .map(|r| r.last_scheduled_at.map(|s| s.0))
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Nullable<Text>>, _>(
                rows.iter()
                    .map(|r| r.last_period.as_deref())
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Nullable<Timestamp>>, _>(
                rows.iter()
                    .map(|r| r.last_window_end.map(|s| s.0))
                    .collect::<Vec<_>>(),
            )
            .bind::<Array<Nullable<Text>>, _>(
                rows.iter()
                    .map(|r| r.last_log_cut.as_deref())
                    .collect::<Vec<_>>(),
            )
            .execute(pg)?;
            Ok(())
        }
    }
}

/// [`move_subscriptions_on`] on SQLite: the values into `temp.claim_next`,
/// read by one row-value `UPDATE` (`UPDATE … FROM` a list copies the whole
/// join into an ephemeral table first, and a statement per row spends more
/// in diesel than the update costs SQLite).
fn move_on_sqlite(c: &mut SqliteConnection, rows: &[MovedOn]) -> Result<()> {
    c.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS claim_next (id INTEGER PRIMARY KEY, \
             next TEXT NOT NULL, sched TEXT, key TEXT, wend TEXT, lcut TEXT); \
         DELETE FROM temp.claim_next;",
    )?;
    crate::sqlite_insert_kept!(c, claim_next::table, rows, NEXT_ROWS);
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

diesel::table! {
    /// The temporary table [`settle_queue_rows`] fills on SQLite.
    settle_rows (req, party, ch) {
        req -> BigInt,
        party -> BigInt,
        ch -> Text,
        ok -> Bool,
        gave_up -> Bool,
        retries -> Integer,
        next -> Timestamp,
        code -> Nullable<Integer>,
        text -> Text,
        address -> Nullable<Text>,
        outcome -> Text,
        remote -> Nullable<Text>,
        held -> Bool,
    }
}

/// A queue row's new state after an attempt (or a give-up), and what its
/// `delivery_log` row says. Owned throughout: the kept statements that
/// take it on SQLite have a type for an id, which cannot borrow.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = settle_rows, treat_none_as_default_value = false)]
pub struct Settled {
    #[diesel(column_name = req)]
    pub request_id: i64,
    #[diesel(column_name = party)]
    pub party_to: i64,
    #[diesel(column_name = ch)]
    pub channel: String,
    #[diesel(column_name = ok)]
    pub is_successful: bool,
    pub gave_up: bool,
    #[diesel(column_name = retries)]
    pub retry_count: i32,
    #[diesel(column_name = next)]
    pub next_attempt_at: Stamp,
    /// The reply's code and text (`smtp_reply_code`, `smtp_reply_message`;
    /// `reply_code`, `reply_message` in the log).
    pub code: Option<i32>,
    pub text: String,
    /// For `delivery_log`: where it went, what happened, the far end's id.
    pub address: Option<String>,
    pub outcome: &'static str,
    #[diesel(column_name = remote)]
    pub remote_id: Option<String>,
    /// Held for the recipient's quiet hours (`nt_queue.held`): false for
    /// every other outcome, which clears the mark.
    pub held: bool,
}

/// Writes each row's new state into `nt_queue` (its claim released, its
/// last attempt `now`) and its `delivery_log` row (attempted `now`), in
/// the caller's transaction: two statements for the whole batch (on
/// PostgreSQL, per 10,000 rows).
pub fn settle_queue_rows(conn: &mut DbConn, rows: &[Settled], now: NaiveDateTime) -> Result<()> {
    match conn {
        DbConn::Sqlite(lite) => settle_sqlite(lite, rows, now),
        DbConn::Postgres(pg) => {
            prefer_index_lookups(pg)?;
            for chunk in rows.chunks(PG_OUTCOMES) {
                settle_pg(pg, chunk, now)?;
            }
            Ok(())
        }
    }
}

fn settle_pg(pg: &mut PgConnection, chunk: &[Settled], now: NaiveDateTime) -> Result<()> {
    let col = |f: fn(&Settled) -> &str| chunk.iter().map(f).collect::<Vec<_>>();
    let opt = |f: fn(&Settled) -> Option<&str>| chunk.iter().map(f).collect::<Vec<_>>();
    let reqs = chunk.iter().map(|u| u.request_id).collect::<Vec<_>>();
    let parties = chunk.iter().map(|u| u.party_to).collect::<Vec<_>>();
    let codes = chunk.iter().map(|u| u.code).collect::<Vec<_>>();
    diesel::sql_query(
        "UPDATE nt_queue AS q SET is_successful = v.ok, gave_up = v.gave_up, \
             retry_count = v.retries, next_attempt_at = v.next, last_attempt_at = $10, \
             smtp_reply_code = v.code, smtp_reply_message = v.text, \
             claimed_by = NULL, claimed_until = NULL, held = v.held \
         FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $11) \
             AS v(req, party, ch, ok, gave_up, retries, next, code, text, held) \
         WHERE q.request_id = v.req AND q.party_to = v.party AND q.channel = v.ch",
    )
    .bind::<Array<BigInt>, _>(&reqs)
    .bind::<Array<BigInt>, _>(&parties)
    .bind::<Array<Text>, _>(col(|u| &u.channel))
    .bind::<Array<Bool>, _>(chunk.iter().map(|u| u.is_successful).collect::<Vec<_>>())
    .bind::<Array<Bool>, _>(chunk.iter().map(|u| u.gave_up).collect::<Vec<_>>())
    .bind::<Array<Integer>, _>(chunk.iter().map(|u| u.retry_count).collect::<Vec<_>>())
    .bind::<Array<Timestamp>, _>(
        chunk
            .iter()
            .map(|u| u.next_attempt_at.0)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Nullable<Integer>>, _>(&codes)
    .bind::<Array<Text>, _>(col(|u| &u.text))
    .bind::<Timestamp, _>(now)
    .bind::<Array<Bool>, _>(chunk.iter().map(|u| u.held).collect::<Vec<_>>())
    .execute(pg)?;
    diesel::sql_query(
        "INSERT INTO delivery_log (request_id, party_to, channel, address, attempted_at, \
             outcome, reply_code, reply_message, remote_id) \
         SELECT v.req, v.party, v.ch, v.address, $9, v.outcome, v.code, v.text, v.remote \
         FROM unnest($1, $2, $3, $4, $5, $6, $7, $8) \
             AS v(req, party, ch, address, outcome, code, text, remote)",
    )
    .bind::<Array<BigInt>, _>(&reqs)
    .bind::<Array<BigInt>, _>(&parties)
    .bind::<Array<Text>, _>(col(|u| &u.channel))
    .bind::<Array<Nullable<Text>>, _>(opt(|u| u.address.as_deref()))
    .bind::<Array<Text>, _>(col(|u| u.outcome))
    .bind::<Array<Nullable<Integer>>, _>(&codes)
    .bind::<Array<Text>, _>(col(|u| &u.text))
    .bind::<Array<Nullable<Text>>, _>(opt(|u| u.remote_id.as_deref()))
    .bind::<Timestamp, _>(now)
    .execute(pg)?;
    Ok(())
}

/// [`settle_queue_rows`] on SQLite: the rows into `temp.settle_rows`, read
/// by one `UPDATE … FROM` of `nt_queue` and one `INSERT … SELECT` into
/// `delivery_log`.
fn settle_sqlite(c: &mut SqliteConnection, rows: &[Settled], now: NaiveDateTime) -> Result<()> {
    c.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS settle_rows (req INTEGER NOT NULL, \
             party INTEGER NOT NULL, ch TEXT NOT NULL, ok INTEGER NOT NULL, \
             gave_up INTEGER NOT NULL, retries INTEGER NOT NULL, next TEXT NOT NULL, \
             code INTEGER, text TEXT NOT NULL, address TEXT, outcome TEXT NOT NULL, \
             remote TEXT, held INTEGER NOT NULL); \
         DELETE FROM temp.settle_rows;",
    )?;
    crate::sqlite_insert_kept!(c, settle_rows::table, rows, OUTCOME_ROWS);
    let now = Stamp(now);
    diesel::sql_query(
        "UPDATE nt_queue SET is_successful = v.ok, gave_up = v.gave_up, \
             retry_count = v.retries, next_attempt_at = v.next, last_attempt_at = ?, \
             smtp_reply_code = v.code, smtp_reply_message = v.text, \
             claimed_by = NULL, claimed_until = NULL, held = v.held \
         FROM temp.settle_rows AS v \
         WHERE nt_queue.request_id = v.req AND nt_queue.party_to = v.party \
             AND nt_queue.channel = v.ch",
    )
    .bind::<Timestamp, _>(now)
    .execute(c)?;
    diesel::sql_query(
        "INSERT INTO delivery_log (request_id, party_to, channel, address, attempted_at, \
             outcome, reply_code, reply_message, remote_id) \
         SELECT v.req, v.party, v.ch, v.address, ?, v.outcome, v.code, v.text, v.remote \
         FROM temp.settle_rows AS v",
    )
    .bind::<Timestamp, _>(now)
    .execute(c)?;
    c.batch_execute("DELETE FROM temp.settle_rows")?;
    Ok(())
}
