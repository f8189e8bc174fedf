//! Helpers for set-based statements: multi-row inserts kept prepared on
//! SQLite, ids reserved for rows inserted with explicit ids, id lists bound as
//! one parameter, and PostgreSQL's planner told that index look-ups are cheap.

use diesel::connection::SimpleConnection;
use diesel::dsl::AsExprOf;
use diesel::expression::{SqlLiteral, UncheckedBind};
use diesel::pg::{Pg, PgConnection};
use diesel::serialize::{IsNull, Output, ToSql};
use diesel::sql_types::{Array, BigInt, Bool};
use diesel::sqlite::{Sqlite, SqliteType};

use super::{DbConn, MultiBackend};
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

/// A list of ids bound as ONE parameter of SQL type [`IdList`], never
/// written into the statement: on PostgreSQL a `bigint[]` (`= ANY($n)`),
/// on SQLite, which has no arrays, a JSON array its built-in `json_each`
/// reads (`IN (SELECT value FROM json_each($n))`). One parameter, so the
/// statement's text is the same for ten ids or ten thousand, and
/// PostgreSQL parses and plans no list of literals.
#[derive(Debug, Clone, PartialEq, Eq, diesel::expression::AsExpression)]
#[diesel(sql_type = IdList)]
pub struct Ids(pub Vec<i64>);

/// The SQL type of [`Ids`]: `bigint[]` on PostgreSQL, JSON text on SQLite.
#[derive(
    Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
)]
pub struct IdList;

impl diesel::sql_types::HasSqlType<IdList> for Pg {
    fn metadata(lookup: &mut Self::MetadataLookup) -> Self::TypeMetadata {
        <Pg as diesel::sql_types::HasSqlType<Array<BigInt>>>::metadata(lookup)
    }
}

impl diesel::sql_types::HasSqlType<IdList> for Sqlite {
    fn metadata(_: &mut ()) -> SqliteType {
        SqliteType::Text
    }
}

impl diesel::sql_types::HasSqlType<IdList> for MultiBackend {
    fn metadata(lookup: &mut Self::MetadataLookup) -> Self::TypeMetadata {
        MultiBackend::lookup_sql_type::<IdList>(lookup)
    }
}

impl ToSql<IdList, Pg> for Ids {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> diesel::serialize::Result {
        <Vec<i64> as ToSql<Array<BigInt>, Pg>>::to_sql(&self.0, out)
    }
}

impl ToSql<IdList, Sqlite> for Ids {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> diesel::serialize::Result {
        let list = self.0.iter().map(i64::to_string).collect::<Vec<_>>();
        out.set_value(format!("[{}]", list.join(",")));
        Ok(IsNull::No)
    }
}

impl ToSql<IdList, MultiBackend> for Ids {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> diesel::serialize::Result {
        out.set_value((IdList, self));
        Ok(IsNull::No)
    }
}

/// `IN` the [`Ids`] bound as parameter `param` (`"$3"`), as SQL to follow
/// a column in a raw statement: `= ANY($3)` on PostgreSQL, `IN (SELECT
/// value FROM json_each($3))` on SQLite. SQLite numbers `$N` parameters
/// in the order they first appear, so `param` must come where its number
/// says.
pub fn in_bound(conn: &DbConn, param: &str) -> String {
    let (open, close) = id_list_sql(matches!(conn, DbConn::Postgres(_)));
    format!("{open}{param}{close}")
}

/// `column` in `ids`, as a condition for a query builder's `filter` on
/// `conn`'s back end (a query typed for `DbConn`, or for that back end
/// alone), the ids bound as one parameter. A literal, so never
/// kept prepared: PostgreSQL plans it for the ids it is given each time,
/// where a kept statement may get a generic plan.
pub fn column_in(conn: &DbConn, column: &str, ids: Vec<i64>) -> ColumnIn {
    let (open, close) = id_list_sql(matches!(conn, DbConn::Postgres(_)));
    diesel::dsl::sql::<Bool>(&format!("{column} {open}"))
        .bind::<IdList, _>(Ids(ids))
        .sql(close)
}

/// What [`column_in`] gives.
pub type ColumnIn = SqlLiteral<Bool, UncheckedBind<SqlLiteral<Bool>, AsExprOf<Ids, IdList>>>;

/// What goes before and after the parameter of an id list.
fn id_list_sql(pg: bool) -> (&'static str, &'static str) {
    match pg {
        true => ("= ANY(", ")"),
        false => ("IN (SELECT value FROM json_each(", "))"),
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

/// Brings the planner's statistics of `tables` (the caller's constants,
/// never input) up to date after a large change, from a small sample: on
/// PostgreSQL an `ANALYZE` of each with a tenth of the default sample
/// (3,000 rows a table instead of 30,000: 13 ms instead of 138 ms for two
/// tables of 100,000 rows, `docs/benchmarks.md`), for plans that need
/// only the tables' gross shape (how many rows, how many of a kind);
/// autovacuum's next `ANALYZE` brings the full statistics back. On SQLite
/// nothing.
pub fn refresh_statistics(conn: &mut DbConn, tables: &[&'static str]) -> Result<()> {
    use diesel::Connection;
    let DbConn::Postgres(pg) = conn else {
        return Ok(());
    };
    let mut sql = String::from("SET LOCAL default_statistics_target = 10");
    for t in tables {
        sql += &format!("; ANALYZE {t}");
    }
    pg.transaction(|c| c.batch_execute(&sql))?;
    Ok(())
}

/// The rows an UPDATE moves (see [`insert_from_moved`]): those of `table`
/// whose `key` is in `ids` and that pass `cond`, set by `set`. `table`,
/// `key`, `cond`, `set` and `returning` are the caller's constants, never
/// input; `cond` reads the row as `r`.
pub struct Moving<'a> {
    pub table: &'static str,
    pub key: &'static str,
    pub ids: &'a [i64],
    /// What a row must be to move (SQL over `r`: `r.status = 'pending'`).
    pub cond: &'static str,
    /// What it becomes (a `SET` list: `status = 'sending'`).
    pub set: &'static str,
    /// The columns of each moved row the INSERT reads.
    pub returning: &'static str,
}

/// A raw statement with its parameters bound, on either back end.
pub type BoundSql =
    diesel::query_builder::BoxedSqlQuery<'static, MultiBackend, diesel::query_builder::SqlQuery>;

/// Moves the rows `moving` names and inserts what `insert` derives from
/// each of them, in the caller's transaction; returns the rows inserted.
/// `insert(from)` is an `INSERT … SELECT … FROM {from} … WHERE …` reading
/// each moved row as `r` (its `WHERE` last), with `params` parameters of its
/// own (`$1`…, the statement's first); `bind` binds them.
///
/// On PostgreSQL one statement, `WITH r AS (UPDATE … RETURNING …)
/// INSERT …`: a row another writer moved first is no longer what `cond`
/// asks when this UPDATE gets it (it waits for that writer to commit), so
/// it gives no rows here either. On SQLite, one writer at a time, two: the
/// INSERT, reading the rows the UPDATE is about to move, then the UPDATE.
pub fn insert_from_moved(
    conn: &mut DbConn,
    moving: &Moving<'_>,
    insert: &dyn Fn(&str) -> String,
    params: usize,
    bind: &dyn Fn(String) -> BoundSql,
) -> Result<usize> {
    use diesel::RunQueryDsl;
    let Moving {
        table,
        key,
        ids,
        cond,
        set,
        returning,
    } = *moving;
    let ids = Ids(ids.to_vec());
    let these = in_bound(conn, &format!("${}", params + 1));
    let update =
        |these: &str| format!("UPDATE {table} AS r SET {set} WHERE r.{key} {these} AND {cond}");
    match conn {
        DbConn::Postgres(_) => {
            let sql = format!(
                "WITH r AS ({} RETURNING {returning}) {}",
                update(&these),
                insert("r")
            );
            Ok(bind(sql).bind::<IdList, _>(ids).execute(conn)?)
        }
        DbConn::Sqlite(_) => {
            let sql = format!(
                "{} AND r.{key} {these} AND {cond}",
                insert(&format!("{table} r"))
            );
            let n = bind(sql).bind::<IdList, _>(ids.clone()).execute(conn)?;
            diesel::sql_query(update(&in_bound(conn, "$1")))
                .bind::<IdList, _>(ids)
                .execute(conn)?;
            Ok(n)
        }
    }
}
