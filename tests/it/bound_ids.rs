//! Id lists are bound as one parameter (`digestd::db::Ids`), never written
//! into SQL: a raw statement with `in_bound`, a query builder's filter with
//! `column_in`, on both back ends. More ids than SQLite allows parameters
//! in one statement (32,766) still work, because they are one parameter.

use diesel::sql_types::BigInt;
use diesel::RunQueryDsl;
use digestd::db::{column_in, in_bound, DbConn, IdList, Ids};

use crate::common::TestDb;

#[derive(diesel::QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The numbers 1..=n that are in `ids`, by a raw statement.
fn picked(c: &mut DbConn, n: i64, ids: &[i64]) -> Vec<i64> {
    let sql = format!(
        "WITH RECURSIVE n(id) AS (SELECT CAST(1 AS BIGINT) UNION ALL \
             SELECT id + 1 FROM n WHERE id < $1) \
         SELECT id FROM n WHERE id {} ORDER BY id",
        in_bound(c, "$2")
    );
    let rows: Vec<Id> = diesel::sql_query(sql)
        .bind::<BigInt, _>(n)
        .bind::<IdList, _>(Ids(ids.to_vec()))
        .load(c)
        .unwrap();
    rows.into_iter().map(|r| r.id).collect()
}

fn a_raw_statement_takes_exactly_the_bound_ids(db: &TestDb) {
    let mut c = db.conn();
    assert_eq!(picked(&mut c, 10, &[]), Vec::<i64>::new());
    assert_eq!(picked(&mut c, 10, &[3, 3, 7, -1, 11, 0]), vec![3, 7]);
    // 40,000 ids, half of them outside 1..=50,000: one parameter, where
    // a list of literals or of parameters would be 40,000.
    let ids: Vec<i64> = (0..40_000i64).map(|i| i * 3 - 30_000).collect();
    let want: Vec<i64> = ids
        .iter()
        .copied()
        .filter(|i| (1..=50_000).contains(i))
        .collect();
    assert_eq!(want.len(), 16_666);
    assert_eq!(picked(&mut c, 50_000, &ids), want);
}

fn the_extremes_of_i64_survive_the_binding(db: &TestDb) {
    let mut c = db.conn();
    let sql = format!(
        "SELECT CAST(v AS BIGINT) AS id FROM (SELECT $1 AS v UNION ALL SELECT $2) t \
         WHERE v {} ORDER BY v",
        in_bound(&c, "$3")
    );
    let rows: Vec<Id> = diesel::sql_query(sql)
        .bind::<BigInt, _>(i64::MIN)
        .bind::<BigInt, _>(i64::MAX)
        .bind::<IdList, _>(Ids(vec![i64::MAX, i64::MIN, 0]))
        .load(&mut c)
        .unwrap();
    let got: Vec<i64> = rows.into_iter().map(|r| r.id).collect();
    assert_eq!(got, vec![i64::MIN, i64::MAX]);
}

fn a_query_builder_filter_takes_exactly_the_bound_ids(db: &TestDb) {
    let mut c = db.conn();
    for (ids, want) in [
        (vec![], false),
        (vec![1, 2], false),
        (vec![6, 7, 8], true),
        ((0..40_000).collect(), true),
    ] {
        let got: bool = diesel::select(column_in(&c, "CAST(7 AS BIGINT)", ids.clone()))
            .get_result(&mut c)
            .unwrap();
        assert_eq!(got, want, "{} ids", ids.len());
    }
}

crate::backend_tests!(
    a_raw_statement_takes_exactly_the_bound_ids,
    the_extremes_of_i64_survive_the_binding,
    a_query_builder_filter_takes_exactly_the_bound_ids,
);
