//! Helpers for set-based statements: multi-row inserts kept prepared on
//! SQLite, ids reserved for rows inserted with explicit ids, id lists as
//! SQL, and PostgreSQL's planner told that index look-ups are cheap.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;

use super::DbConn;
use crate::error::Result;

/// Inserts the slice `$rows` of owned `Insertable` rows of `$table` on a
/// `SqliteConnection`: multi-row statements of `$n` rows (a constant), the
/// rest one row at a time, both kept prepared by diesel (a fixed-size
/// array's batch insert has a static query id; a slice's is parsed anew
/// each time). Owned rows, because that id is a type and cannot borrow.
/// Expands to statements that `?` their errors in the caller.
#[macro_export]
macro_rules! sqlite_insert_kept {
    ($conn:expr, $table:expr, $rows:expr, $n:expr) => {{
        let mut blocks = $rows.chunks_exact($n);
        for block in &mut blocks {
            let block: &[_; $n] = block.try_into().expect("chunks_exact yields whole blocks");
            diesel::insert_into($table).values(block).execute($conn)?;
        }
        for row in blocks.remainder() {
            diesel::insert_into($table)
                .values(std::array::from_ref(row))
                .execute($conn)?;
        }
    }};
}

/// Takes `n` fresh ids of `table`'s AUTOINCREMENT / identity `column`, for
/// rows a caller inserts with explicit ids in set statements. Must run
/// inside the write transaction: on SQLite its write lock makes `max + 1..`
/// safe (past both the largest id and the AUTOINCREMENT sequence, which an
/// explicit id then moves past itself); on PostgreSQL the identity's
/// sequence hands them out, so concurrent writers never collide. `table`
/// and `column` are the caller's constants, never input.
pub fn reserve_ids(
    conn: &mut DbConn,
    table: &'static str,
    column: &'static str,
    n: usize,
) -> Result<Vec<i64>> {
    use diesel::sql_types::BigInt;
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct IdRow {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    match conn {
        DbConn::Sqlite(c) => {
            let top: IdRow = diesel::sql_query(format!(
                "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '{table}'), 0), \
                        COALESCE((SELECT MAX({column}) FROM {table}), 0)) AS id"
            ))
            .get_result(c)?;
            Ok((top.id + 1..=top.id + n as i64).collect())
        }
        DbConn::Postgres(c) => {
            let rows: Vec<IdRow> = diesel::sql_query(format!(
                "SELECT nextval(pg_get_serial_sequence('{table}', '{column}')) AS id \
                 FROM generate_series(1, $1)"
            ))
            .bind::<BigInt, _>(n as i64)
            .load(c)?;
            Ok(rows.into_iter().map(|r| r.id).collect())
        }
    }
}

/// `IN` the ids, as SQL for `WHERE column …`: on PostgreSQL one array
/// constant (`= ANY('{1,2,3}')`), because a list of thousands of literals
/// cost it more to parse and plan than to run the statement; on SQLite,
/// which has no arrays, the list.
pub fn in_ids(conn: &DbConn, ids: &[i64]) -> String {
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    match conn {
        DbConn::Postgres(_) => format!("= ANY('{{{list}}}'::bigint[])"),
        DbConn::Sqlite(_) => format!("IN ({list})"),
    }
}

/// For the rest of the transaction, tells PostgreSQL's planner that a
/// random page read costs little more than a sequential one (the default
/// assumes spinning disks). Without it, an `UPDATE … FROM unnest(…)` of a
/// 20,000-row chunk against a table of a million rows hashed the whole
/// table instead of looking 20,000 rows up by key: a tick's claims were
/// 25% slower with a tenth of the table's rows (EXPLAIN in
/// `docs/benchmarks.md`).
pub fn prefer_index_lookups(pg: &mut PgConnection) -> Result<()> {
    pg.batch_execute("SET LOCAL random_page_cost = 1.1")?;
    Ok(())
}
