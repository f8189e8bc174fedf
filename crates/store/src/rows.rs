//! Rows written in bulk, each back end its fastest way in, behind one
//! interface: [`insert_rows!`](crate::insert_rows) (a binary `COPY` on
//! PostgreSQL; on SQLite `INSERT`s that diesel keeps prepared, a row or a
//! block of rows at a time), [`insert_returning_ids!`](crate::insert_returning_ids)
//! (the new rows' ids, in the rows' order), and [`Stamp`], a timestamp
//! bound as each back end takes it fastest.
//!
//! Macros rather than functions: diesel's `COPY` and the types of its
//! insert statements are not nameable outside diesel, so a function cannot
//! be generic over a caller's table and rows; a macro is this crate's code
//! instantiated with the caller's types. The caller chooses only how its
//! rows are shaped (borrowed, large, owned), never the back end.

use chrono::NaiveDateTime;
use diesel::pg::Pg;
use diesel::serialize::{IsNull, Output, ToSql};
use diesel::sql_types::Timestamp;
use diesel::sqlite::Sqlite;

use crate::stamp::sqlite_stamp;
use crate::MultiBackend;

/// A timestamp in a row written in bulk: on SQLite bound as the text
/// diesel binds for a `Timestamp`, rendered by hand ([`sqlite_stamp`]:
/// chrono's format interpreter was a tenth of a tick's claims); on
/// PostgreSQL as chrono's `NaiveDateTime` (binary in a `COPY`). So one row
/// type serves both back ends, with no second table viewing its
/// timestamps as text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, diesel::expression::AsExpression,
)]
#[diesel(sql_type = Timestamp)]
pub struct Stamp(pub NaiveDateTime);

impl ToSql<Timestamp, Sqlite> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> diesel::serialize::Result {
        out.set_value(sqlite_stamp(self.0));
        Ok(IsNull::No)
    }
}

impl ToSql<Timestamp, Pg> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> diesel::serialize::Result {
        <NaiveDateTime as ToSql<Timestamp, Pg>>::to_sql(&self.0, out)
    }
}

impl ToSql<Timestamp, MultiBackend> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> diesel::serialize::Result {
        out.set_value((Timestamp, self));
        Ok(IsNull::No)
    }
}

/// Inserts the rows `$rows` (a slice or `&Vec` of `Insertable` rows of
/// `$table`) in the caller's transaction, in as few statements as the back
/// end takes them; nothing for no rows. On PostgreSQL always one binary
/// `COPY` (no statement of thousands of parameters to parse; the rows'
/// structs must not treat `None` as a default value). On SQLite, by how
/// the rows are shaped:
///
/// - `insert_rows!(conn, table, rows)`: one one-row `INSERT` a row, kept
///   prepared by diesel (small rows; one writer's fastest way in);
/// - `insert_rows!(conn, table, rows, per_insert = N)`: multi-row `INSERT`s
///   of `N` rows (a constant), prepared per statement, so that rows
///   holding large borrowed values (rendered bodies) are bound without a
///   copy;
/// - `insert_rows!(conn, table, rows, kept = N)`: multi-row `INSERT`s of
///   `N` rows kept prepared ([`sqlite_insert_kept!`](crate::sqlite_insert_kept)),
///   the rest one at a time; the rows must own their values (a kept
///   statement's id is a type, which cannot borrow);
/// - `insert_rows!(conn, table, rows, kept = N, owned = F)`: the same
///   with each row turned into one that owns its values by `F` first (the
///   `COPY` takes the borrowed rows as they are).
///
/// `N` rows times the row's columns must stay under SQLite's 32,766
/// parameters. Expands to statements that `?` their errors in the caller.
#[macro_export]
macro_rules! insert_rows {
    ($conn:expr, $table:expr, $rows:expr) => {
        $crate::insert_rows!(@copy $conn, $table, $rows, |lite, rows| {
            for row in rows.iter() {
                diesel::RunQueryDsl::execute(diesel::insert_into($table).values(row), lite)?;
            }
        })
    };
    ($conn:expr, $table:expr, $rows:expr, per_insert = $n:expr) => {
        $crate::insert_rows!(@copy $conn, $table, $rows, |lite, rows| {
            for block in rows.chunks($n) {
                diesel::RunQueryDsl::execute(diesel::insert_into($table).values(block), lite)?;
            }
        })
    };
    ($conn:expr, $table:expr, $rows:expr, kept = $n:expr) => {
        $crate::insert_rows!(@copy $conn, $table, $rows, |lite, rows| {
            $crate::sqlite_insert_kept!(lite, $table, rows, $n);
        })
    };
    ($conn:expr, $table:expr, $rows:expr, kept = $n:expr, owned = $owned:expr) => {
        $crate::insert_rows!(@copy $conn, $table, $rows, |lite, rows| {
            let owned: Vec<_> = rows.iter().map($owned).collect();
            $crate::sqlite_insert_kept!(lite, $table, owned, $n);
        })
    };
    (@copy $conn:expr, $table:expr, $rows:expr, |$lite:ident, $all:ident| $sqlite:block) => {{
        let $all = $rows;
        if !$all.is_empty() {
            match $conn {
                $crate::DbConn::Sqlite($lite) => $sqlite,
                $crate::DbConn::Postgres(pg) => {
                    diesel::prelude::ExecuteCopyFromDsl::execute(
                        diesel::copy_from($table).from_insertable($all),
                        pg,
                    )?;
                }
            }
        }
    }};
}

/// Inserts the rows `$rows` (a slice or `&Vec` of `Insertable` rows of
/// `$table`) and evaluates to their new ids (`$id`, a `BigInt` column) in
/// the rows' order, as a `QueryResult<Vec<i64>>`: on PostgreSQL one
/// multi-row `INSERT … RETURNING`, whose rows come back in no promised
/// order, so each is matched to its row by the columns `$cols` (a tuple,
/// unique among the rows: a unique key) against `$key`, a closure giving
/// row `i`'s values of them; on SQLite one `INSERT … RETURNING` a row,
/// kept prepared, in order (`$cols` and `$key` unused).
///
/// `insert_returning_ids!(conn, table, rows, table::id, (table::name,) => |i| (names[i].clone(),))`
#[macro_export]
macro_rules! insert_returning_ids {
    ($conn:expr, $table:expr, $rows:expr, $id:expr, $cols:expr => $key:expr) => {{
        let rows = $rows;
        match $conn {
            $crate::DbConn::Sqlite(lite) => rows
                .iter()
                .map(|row| {
                    diesel::RunQueryDsl::get_result::<i64>(
                        diesel::insert_into($table).values(row).returning($id),
                        lite,
                    )
                })
                .collect::<diesel::QueryResult<Vec<i64>>>(),
            $crate::DbConn::Postgres(_) if rows.is_empty() => Ok(Vec::new()),
            $crate::DbConn::Postgres(pg) => diesel::RunQueryDsl::get_results(
                diesel::insert_into($table)
                    .values(rows)
                    .returning(($id, $cols)),
                pg,
            )
            .and_then(|got| $crate::ids_by_key(got, rows.len(), $key)),
        }
    }};
}

/// The ids of `got` (each with its row's key) in the order of the rows,
/// whose keys `key` gives by index: for [`insert_returning_ids!`](crate::insert_returning_ids).
#[doc(hidden)]
pub fn ids_by_key<K: std::hash::Hash + Eq>(
    got: Vec<(i64, K)>,
    n: usize,
    key: impl Fn(usize) -> K,
) -> diesel::QueryResult<Vec<i64>> {
    let by_key: std::collections::HashMap<K, i64> =
        got.into_iter().map(|(id, k)| (k, id)).collect();
    (0..n)
        .map(|i| {
            by_key.get(&key(i)).copied().ok_or_else(|| {
                diesel::result::Error::DeserializationError(
                    "an inserted row came back with a key none of the rows has".into(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returned_ids_come_back_in_the_rows_order_or_not_at_all() {
        let got = vec![
            (12, "b".to_string()),
            (10, "c".to_string()),
            (11, "a".to_string()),
        ];
        let keys = ["a", "b", "c"];
        let ids = ids_by_key(got.clone(), 3, |i| keys[i].to_string()).unwrap();
        assert_eq!(ids, vec![11, 12, 10]);
        // A row whose key came back with no id is an error, not a guess.
        assert!(ids_by_key(got, 3, |i| ["a", "b", "d"][i].to_string()).is_err());
    }
}
