//! A rehearsal: real statements run over the database as it is, which is
//! left as it was afterwards (`digestd simulate` ticks a year this way).
//!
//! - SQLite: the rehearsal runs inside one transaction that is rolled
//!   back. It holds the write lock while it runs (a year over 3,100
//!   subscriptions: about 20 s).
//! - PostgreSQL: the same would keep every superseded version of every
//!   rewritten row alive to the end (a year over 3,100 subscriptions had
//!   not finished after nine minutes). Instead the rehearsal runs against
//!   temporary copies of the tables it writes: a temporary table is looked
//!   up before the real one of the same name, so the caller's own queries
//!   run unchanged, each of its transactions commits there, and a `VACUUM`
//!   now and then clears the dead rows (autovacuum never visits temporary
//!   tables). The copies are dropped at the end, and only this connection
//!   ever sees them.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};

use crate::error::{Error, Result};
use crate::DbConn;

/// A table a rehearsal writes, and what its copy starts with where copies
/// are made (PostgreSQL). Names are the caller's constants, never input.
#[derive(Debug, Clone, Copy)]
pub enum Scratch {
    /// Every row, the copy analysed; the rows the rehearsal rewrites are
    /// counted ([`Rehearsal::rewrote`]) to vacuum the copy.
    Rows(&'static str),
    /// Every row, with these columns set to NULL (a lease held by a
    /// running process is not the rehearsal's to wait for).
    Cleared(&'static str, &'static [&'static str]),
    /// No rows.
    Empty(&'static str),
}

impl Scratch {
    fn table(self) -> &'static str {
        match self {
            Scratch::Rows(t) | Scratch::Cleared(t, _) | Scratch::Empty(t) => t,
        }
    }
}

/// A rehearsal in progress: see [`rehearse`].
pub struct Rehearsal {
    /// The copies to vacuum, and after how many rewritten rows (none on
    /// SQLite).
    vacuum: Option<(Vec<&'static str>, usize)>,
    since_vacuum: usize,
}

impl Rehearsal {
    /// Tells the rehearsal that `rows` rows of the [`Scratch::Rows`]
    /// tables were rewritten; on PostgreSQL their copies are vacuumed once
    /// about half their rows are dead.
    pub fn rewrote(&mut self, conn: &mut DbConn, rows: usize) -> Result<()> {
        let (Some((tables, every)), DbConn::Postgres(pg)) = (&self.vacuum, conn) else {
            return Ok(());
        };
        self.since_vacuum += rows;
        if self.since_vacuum >= *every {
            for t in tables {
                pg.batch_execute(&format!("VACUUM pg_temp.{t}"))?;
            }
            self.since_vacuum = 0;
        }
        Ok(())
    }
}

/// Runs `f` over the database as it is and leaves the database as it was
/// (see the module's documentation); `tables` are every table `f` writes.
pub fn rehearse<T>(
    conn: &mut DbConn,
    tables: &[Scratch],
    f: impl FnOnce(&mut DbConn, &mut Rehearsal) -> Result<T>,
) -> Result<T> {
    let DbConn::Postgres(pg) = conn else {
        let mut none = Rehearsal {
            vacuum: None,
            since_vacuum: 0,
        };
        return conn.rolled_back(|c| f(c, &mut none));
    };
    // A connection must never be left with the copies in place: its next
    // real statement would write into them.
    let rows = match shadow(pg, tables) {
        Ok(n) => n,
        Err(e) => {
            let _ = unshadow(pg, tables);
            return Err(e);
        }
    };
    let rewritten = tables
        .iter()
        .filter_map(|t| match t {
            Scratch::Rows(t) => Some(*t),
            _ => None,
        })
        .collect();
    // Each rewrite leaves one dead row: vacuum once about half the copies'
    // rows are dead.
    let mut rehearsal = Rehearsal {
        vacuum: Some((rewritten, (rows / 2).max(1_000))),
        since_vacuum: 0,
    };
    let out = f(conn, &mut rehearsal);
    let dropped = match conn {
        DbConn::Postgres(pg) => unshadow(pg, tables),
        DbConn::Sqlite(_) => Ok(()),
    };
    let out = out?;
    dropped?;
    Ok(out)
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Shadowed {
    #[diesel(sql_type = Bool)]
    ok: bool,
    #[diesel(sql_type = BigInt)]
    rows: i64,
}

/// Makes the temporary copies and checks that they do shadow the real
/// tables. Returns the number of rows of the [`Scratch::Rows`] copies.
fn shadow(pg: &mut PgConnection, tables: &[Scratch]) -> Result<usize> {
    let schema: Vec<Name> = diesel::sql_query("SELECT current_schema() AS name").load(pg)?;
    let schema = schema
        .into_iter()
        .next()
        .map(|s| s.name.replace('"', "\"\""))
        .ok_or_else(|| Error::Storage("rehearsal: no current schema".into()))?;
    let mut sql = String::new();
    for t in tables.iter().map(|t| t.table()) {
        sql += &format!("CREATE TEMP TABLE {t} (LIKE \"{schema}\".{t} INCLUDING ALL); ");
    }
    for t in tables {
        match *t {
            Scratch::Rows(t) | Scratch::Cleared(t, _) => {
                sql += &format!("INSERT INTO pg_temp.{t} SELECT * FROM \"{schema}\".{t}; ")
            }
            Scratch::Empty(_) => {}
        }
    }
    for t in tables {
        if let Scratch::Cleared(t, columns) = *t {
            let set: Vec<String> = columns.iter().map(|c| format!("{c} = NULL")).collect();
            sql += &format!("UPDATE pg_temp.{t} SET {}; ", set.join(", "));
        }
    }
    let mut counted = Vec::new();
    for t in tables {
        if let Scratch::Rows(t) = *t {
            sql += &format!("ANALYZE pg_temp.{t}; ");
            counted.push(format!("(SELECT count(*) FROM pg_temp.{t})"));
        }
    }
    // DISCARD PLANS: statements prepared earlier on this connection named
    // the real tables; they must look the names up again.
    sql += "DISCARD PLANS;";
    pg.batch_execute(&sql)?;
    let same: Vec<String> = tables
        .iter()
        .map(|t| {
            let t = t.table();
            format!("to_regclass('{t}') = to_regclass('pg_temp.{t}')")
        })
        .collect();
    let rows = match counted.is_empty() {
        true => "0::bigint".to_string(),
        false => counted.join(" + "),
    };
    let check: Shadowed = diesel::sql_query(format!(
        "SELECT {} AS ok, {rows} AS rows",
        same.join(" AND ")
    ))
    .get_result(pg)?;
    if !check.ok {
        unshadow(pg, tables)?;
        return Err(Error::Storage(
            "rehearsal: the temporary tables do not shadow the real ones".into(),
        ));
    }
    Ok(check.rows as usize)
}

fn unshadow(pg: &mut PgConnection, tables: &[Scratch]) -> Result<()> {
    let names: Vec<String> = tables
        .iter()
        .map(|t| format!("pg_temp.{}", t.table()))
        .collect();
    pg.batch_execute(&format!(
        "DROP TABLE IF EXISTS {}; DISCARD PLANS;",
        names.join(", ")
    ))?;
    Ok(())
}
