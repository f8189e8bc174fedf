//! The modification log's clock on each back end (the engine's `modlog`
//! owns the log and says what its positions and cuts mean): the position a
//! recording transaction writes its rows at, the cut a reader takes, and
//! whether a row's position is seen at a cut. Also the database's own
//! clock, as SQL.
//!
//! - SQLite: one writer at a time, so a counter in `log_clock` orders the
//!   recording transactions: each moves it on by one, and a cut is the
//!   next value it hands out (as text).
//! - PostgreSQL: writers overlap, so a position is the recording
//!   transaction's id and a cut is the reader's snapshot
//!   (`pg_current_snapshot()` as text, `xmin:xmax:xip…`).

use diesel::dsl::AsExprOf;
use diesel::expression::{SqlLiteral, UncheckedBind};
use diesel::sql_types::{BigInt, Bool, Text};
use diesel::RunQueryDsl;

use crate::error::Result;
use crate::DbConn;

#[derive(diesel::QueryableByName)]
struct PosRow {
    #[diesel(sql_type = BigInt)]
    pos: i64,
}

#[derive(diesel::QueryableByName)]
struct CutRow {
    #[diesel(sql_type = Text)]
    cut: String,
}

/// The position of the rows the caller's write transaction records: on
/// SQLite `log_clock` moved on by one (the write lock orders recording
/// transactions, so positions commit in order); on PostgreSQL the
/// transaction's id (assigned now if it has none yet).
pub fn log_position(conn: &mut DbConn) -> Result<i64> {
    let sql = match conn {
        DbConn::Sqlite(_) => "UPDATE log_clock SET next = next + 1 RETURNING next - 1 AS pos",
        DbConn::Postgres(_) => "SELECT pg_current_xact_id()::text::bigint AS pos",
    };
    Ok(diesel::sql_query(sql).get_result::<PosRow>(conn)?.pos)
}

/// A cut of the log now, as stored: on SQLite the next position
/// `log_clock` hands out (every row below it committed, none at or above
/// it yet), on PostgreSQL the snapshot (a snapshot's text holds `:`).
pub fn log_cut(conn: &mut DbConn) -> Result<String> {
    let sql = match conn {
        DbConn::Sqlite(_) => "SELECT CAST(next AS TEXT) AS cut FROM log_clock",
        DbConn::Postgres(_) => "SELECT pg_current_snapshot()::text AS cut",
    };
    Ok(diesel::sql_query(sql).get_result::<CutRow>(conn)?.cut)
}

/// What [`visible_in_snapshot`] gives.
pub type VisibleIn = SqlLiteral<Bool, UncheckedBind<SqlLiteral<Bool>, AsExprOf<String, Text>>>;

/// Whether the log position in `column` (a constant of the caller's, never
/// input) is seen at the PostgreSQL snapshot `snapshot` (a cut with `:`),
/// as a condition for any query's `filter`; the snapshot is bound, not
/// written into the statement. A SQLite cut (a counter) needs none: a
/// position is seen when it is below it.
pub fn visible_in_snapshot(column: &'static str, snapshot: &str) -> VisibleIn {
    diesel::dsl::sql::<Bool>(&format!("pg_visible_in_snapshot({column}::text::xid8, "))
        .bind::<Text, _>(snapshot.to_string())
        .sql("::pg_snapshot)")
}

/// The database's clock now, as SQL for a statement on `conn`'s back end
/// (UTC, without a zone, as timestamps are stored): for what the
/// database, not the caller, dates (a layer without an injected clock).
pub fn now_sql(conn: &DbConn) -> &'static str {
    match conn {
        DbConn::Sqlite(_) => "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        DbConn::Postgres(_) => "(clock_timestamp() AT TIME ZONE 'UTC')",
    }
}
