//! Opening a database: [`Db::open`] creates one that is not there (for
//! `digestd init`, the demo, the benches and the tests), and
//! [`Db::open_existing`] refuses it, so that a command run in the wrong
//! directory or with a mistyped URL does not leave an empty database
//! behind. Either way, a database that cannot be opened (a file that is
//! not SQLite, a directory that cannot be made, a server nobody answers
//! for) is the operator's setting to fix: one line, exit code 2.

use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};

use super::{Backend, Db, DbConn, DbUrl};
use crate::error::{Error, Result};

/// The table diesel keeps the applied migrations in: a database without
/// it was not made by `digestd init`.
const MIGRATIONS_TABLE: &str = "__diesel_schema_migrations";

impl Db {
    /// Opens the database at `url` with a pool of `max_size` connections
    /// and applies pending migrations; a database that does not exist is
    /// refused (`run digestd init`), and so is one without digestd's
    /// tables.
    pub fn open_existing(url: &str, max_size: u32) -> Result<Self> {
        let u = DbUrl::parse(url)?;
        let shown = digestd_core::text::redact_url(url);
        let no_tables = || {
            Error::invalid(format!(
                "{shown} has no digestd tables: run `digestd init` to create them, or pass --db with the database to use"
            ))
        };
        if u.backend == Backend::Sqlite && !u.is_memory() {
            let path = sqlite_path(&u.target);
            if !path.is_file() {
                let looked = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
                return Err(Error::invalid(format!(
                    "no database at {} ({shown}): run `digestd init` to create it, or pass --db with the database to use",
                    digestd_core::validate::escape_for_line(&looked.display().to_string())
                )));
            }
            // Looked at before the connection's pragmas, which would write
            // to the file (an empty one becomes a database in WAL mode).
            let mut probe = SqliteConnection::establish(&u.target)
                .map(DbConn::Sqlite)
                .map_err(|e| cannot_open(&shown, &Error::Storage(e.to_string())))?;
            if !has_tables(&mut probe).map_err(|e| cannot_open(&shown, &e))? {
                return Err(no_tables());
            }
        }
        let mut first = u.connect().map_err(|e| cannot_open(&shown, &e))?;
        if u.backend == Backend::Postgres
            && !has_tables(&mut first).map_err(|e| cannot_open(&shown, &e))?
        {
            return Err(no_tables());
        }
        Self::start(u, first, max_size)
    }

    /// Opens the database at `url` with a pool of `max_size` connections,
    /// creating it (and an SQLite file's directory) when it does not
    /// exist, and applies pending migrations.
    pub fn open(url: &str, max_size: u32) -> Result<Self> {
        let u = DbUrl::parse(url)?;
        let shown = digestd_core::text::redact_url(url);
        // Fail fast with the driver's own message rather than r2d2's timeout.
        let first = u.connect().map_err(|e| cannot_open(&shown, &e))?;
        Self::start(u, first, max_size)
    }

    /// Migrates through `first`, then starts the pool.
    fn start(u: DbUrl, mut first: DbConn, max_size: u32) -> Result<Self> {
        first.migrate()?;
        drop(first);
        Self::pool(u, max_size)
    }
}

/// The file an SQLite target names: a plain path, or the path of a
/// `file:` URI without its query.
fn sqlite_path(target: &str) -> &std::path::Path {
    let path = match target.strip_prefix("file:") {
        Some(uri) => uri.split(['?', '#']).next().unwrap_or(uri),
        None => target,
    };
    std::path::Path::new(path)
}

/// Whether digestd's migrations were ever applied to this database.
fn has_tables(conn: &mut DbConn) -> Result<bool> {
    use diesel::dsl::sql;
    use diesel::sql_types::Bool;
    let found = match conn {
        DbConn::Sqlite(c) => diesel::select(sql::<Bool>(&format!(
            "EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{MIGRATIONS_TABLE}')"
        )))
        .get_result::<bool>(c)?,
        DbConn::Postgres(c) => diesel::select(sql::<Bool>(&format!(
            "to_regclass('{MIGRATIONS_TABLE}') IS NOT NULL"
        )))
        .get_result::<bool>(c)?,
    };
    Ok(found)
}

/// A database that cannot be opened, on one line: the URL (without its
/// password) and the driver's words.
fn cannot_open(shown: &str, e: &Error) -> Error {
    let driver = |s: &str| s.strip_prefix("postgres: ").unwrap_or(s).to_string();
    let why = match e {
        Error::Storage(s) => driver(s),
        Error::Invalid(e) => driver(e.line()),
        other => other.to_string(),
    };
    let why: Vec<&str> = why
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Error::invalid(format!(
        "cannot open the database {shown}: {}",
        digestd_core::validate::escape_for_line(&why.join("; "))
    ))
}
