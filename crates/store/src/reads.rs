//! Reads each back end runs its own way, for a query the caller types:
//! rows locked until the end of the caller's transaction
//! ([`lock_rows!`](crate::lock_rows)) and rows taken one at a time as the
//! back end hands them ([`stream_rows!`](crate::stream_rows)). Macros for
//! the reason [`crate::rows`] gives: diesel's locking and loading types are
//! not nameable outside diesel.

/// Loads the rows `$query` selects (as `$row`), locked `FOR UPDATE` until
/// the end of the caller's transaction, and evaluates to
/// `QueryResult<Option<Vec<$row>>>`: on PostgreSQL `Some` of the rows, with
/// `skip_locked = true` passing over rows another transaction holds
/// (`SKIP LOCKED`), else waiting for them; on SQLite `None`, and nothing
/// is read: its write transaction holds the whole database, so there is
/// nothing to lock and no other writer to pass over.
#[macro_export]
macro_rules! lock_rows {
    ($conn:expr, $query:expr, $row:ty, skip_locked = $skip:expr) => {
        match $conn {
            $crate::DbConn::Sqlite(_) => Ok(None),
            $crate::DbConn::Postgres(pg) => {
                let locked = diesel::QueryDsl::for_update($query);
                if $skip {
                    diesel::RunQueryDsl::load::<$row>(diesel::QueryDsl::skip_locked(locked), pg)
                } else {
                    diesel::RunQueryDsl::load::<$row>(locked, pg)
                }
                .map(Some)
            }
        }
    };
}

/// Runs `$query`, a query typed for one back end (`$backend`, the
/// back end's type, names it inside the expression: build it with
/// `.into_boxed::<$backend>()`), and evaluates `$body` with `$rows`, an
/// iterator of `QueryResult<$row>` that takes the rows as the database
/// hands them, so that no more than one is held at a time: on SQLite a
/// statement stepped row by row, on PostgreSQL libpq's single-row mode.
/// Errors of the query `?` in the caller.
#[macro_export]
macro_rules! stream_rows {
    ($conn:expr, $backend:ident => $query:expr, $row:ty, $rows:ident => $body:expr) => {
        match $conn {
            $crate::DbConn::Sqlite(lite) => {
                type $backend = diesel::sqlite::Sqlite;
                let $rows = diesel::RunQueryDsl::load_iter::<
                    $row,
                    diesel::connection::DefaultLoadingMode,
                >($query, lite)?;
                $body
            }
            $crate::DbConn::Postgres(pg) => {
                type $backend = diesel::pg::Pg;
                let $rows = diesel::RunQueryDsl::load_iter::<
                    $row,
                    diesel::pg::PgRowByRowLoadingMode,
                >($query, pg)?;
                $body
            }
        }
    };
}

/// The locking clause of a raw `SELECT` whose rows of `alias` (the
/// caller's constant) a writer claims: on PostgreSQL `FOR UPDATE OF alias
/// SKIP LOCKED`, so that concurrent writers claim different rows; on
/// SQLite nothing, its write transaction holding the whole database.
pub fn skip_locked_sql(conn: &crate::DbConn, alias: &'static str) -> String {
    match conn {
        crate::DbConn::Postgres(_) => format!("FOR UPDATE OF {alias} SKIP LOCKED"),
        crate::DbConn::Sqlite(_) => String::new(),
    }
}
