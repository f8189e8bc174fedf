//! digestd-store: storage. One connection type that is either SQLite or
//! PostgreSQL, an r2d2 pool over it, the migrations embedded per back end,
//! the schema, the stored states and the error policy (its conversion from
//! diesel's errors is the storage's). The layers above reach it as
//! `digestd_engine::db` and `digestd_engine::error`.
//!
//! The back end is chosen from the URL scheme (`sqlite://…` or
//! `postgres://…`), never by trying each in turn. Every query goes through
//! [`DbConn`], and every path that differs by back end is here, behind an
//! interface that works on both: the crates above never match on
//! [`DbConn`]'s variants.
#![forbid(unsafe_code)]

mod batches;
mod bulk;
pub mod checkpoint;
pub mod error;
mod log;
mod open;
pub mod outbox;
mod pool;
mod reads;
mod rehearse;
mod rows;
pub mod schema;
mod stamp;
pub mod states;
pub mod watch;

pub use batches::{move_subscriptions_on, settle_queue_rows, MovedOn, Settled};
pub use bulk::{
    column_in, in_bound, insert_from_moved, prefer_index_lookups, refresh_statistics, reserve_ids,
    BoundSql, ColumnIn, IdList, Ids, Moving,
};
pub use log::{log_cut, log_position, now_sql, visible_in_snapshot, VisibleIn};
use pool::Severed;
pub use pool::{Db, Manager, PooledConn};
pub use reads::skip_locked_sql;
pub use rehearse::{rehearse, Rehearsal, Scratch};
#[doc(hidden)]
pub use rows::ids_by_key;
pub use rows::Stamp;
pub use stamp::sqlite_stamp;
pub use watch::Watch;

use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::pg::PgConnection;
use diesel::r2d2::{ManageConnection, Pool, PooledConnection};
use diesel::sqlite::SqliteConnection;
use diesel::Connection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

pub use crate::error::{Error, Result};

/// The migrations for each back end, compiled into the binary.
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
/// See [`SQLITE_MIGRATIONS`].
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// How long SQLite waits for another writer before giving up.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 10_000;
/// Page cache of a pool's SQLite connections together, split evenly among
/// them (`cache_size` per connection = this / pool size): 16 MiB each in
/// the default pool of four (SQLite's default, 2 MiB, sends a tick over a
/// large subscriptions table back to the kernel for most page reads), and
/// no more in all however large the pool is set.
const SQLITE_POOL_CACHE_KIB: u32 = 65_536;
/// Page cache of a connection outside the pool (the first one, which
/// migrates; the change watch and the checkpointer, which read a page or
/// two).
const SQLITE_SIDE_CACHE_KIB: u32 = 1_024;
/// The least cache a pooled connection gets, however large the pool.
const SQLITE_MIN_CACHE_KIB: u32 = 1_024;
/// No memory map: pages are read into the connection's cache. With a map
/// of 1 GiB every page of the file a read touched counted in the
/// process's resident memory (`bench tick` at 1,000,000 subscriptions:
/// 1.19 GiB against 191 MiB without; `bench burst` at 100,000: 201–558 MiB
/// from one run to the next against 202 MiB), and neither ran faster
/// with it (ticks 33.1 and 32.7 s against 32.5 and 33.8 s; bursts within
/// the noise).
const SQLITE_MMAP_BYTES: u64 = 0;
/// Page size of a database created here; an existing one keeps its own
/// (`docs/operations.md` says how to convert one). With SQLite's default,
/// 4 KiB, a page held one digest's stored rendering (text and HTML: 3.0 KB
/// for nine digests in ten in `bench burst`, 6.5 KB for the busiest, which
/// ran into overflow pages), and the rows a tick's claims update were
/// spread over four times as many pages. With 16 KiB, `bench burst` took
/// 8.8–9.5 s against 9.4–10.0 s in alternated runs
/// (`docs/benchmarks-history.md`, 2026-11-27).
pub const SQLITE_PAGE_BYTES: u32 = 16_384;
/// WAL pages past which a commit checkpoints itself: the safety net behind
/// each [`Db`]'s checkpoint thread ([`checkpoint`]), which keeps the WAL
/// well below it. 256 MiB of pages, more than one tick chunk writes, so a
/// chunk's commit does not pay for a checkpoint (SQLite's default, 1,000
/// pages, made it pay for one nearly every time).
pub const SQLITE_AUTOCHECKPOINT_PAGES: u32 = (256 << 20) / SQLITE_PAGE_BYTES;
/// The WAL file is cut back to this size when it starts over, so one big
/// transaction does not leave a big file behind.
const SQLITE_WAL_LIMIT_BYTES: u64 = 64 << 20;

/// A connection to either back end; all library queries take `&mut DbConn`.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

/// Which back end a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Whether several processes write at once, each under its own row
    /// locks (PostgreSQL: a tick's helpers claim chunks with `FOR UPDATE
    /// SKIP LOCKED`), rather than one writer at a time holding the whole
    /// database (SQLite).
    pub fn concurrent_writers(self) -> bool {
        matches!(self, Backend::Postgres)
    }
}

/// A parsed database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbUrl {
    pub backend: Backend,
    /// What the driver is given: a file path for SQLite, the URL for PostgreSQL.
    pub target: String,
}

impl DbUrl {
    /// Parses `sqlite://PATH`, `sqlite:PATH`, `postgres://…` or `postgresql://…`.
    pub fn parse(url: &str) -> Result<Self> {
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(Error::invalid("database URL: sqlite URL has no path"));
            }
            return Ok(DbUrl {
                backend: Backend::Sqlite,
                target: path.to_string(),
            });
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DbUrl {
                backend: Backend::Postgres,
                target: url.to_string(),
            });
        }
        Err(Error::invalid(format!(
            "database URL must start with sqlite:// or postgres://, got {:?}",
            digestd_core::text::redact_url(url)
        )))
    }

    /// For SQLite: deletes the database file and its WAL and shared-memory
    /// files, so the next open starts empty (demo and bench databases).
    pub fn remove_sqlite_files(&self) {
        if self.backend == Backend::Sqlite {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", self.target));
            }
        }
    }

    /// The file of an SQLite database, for files kept beside it (the sent
    /// journal); `None` on PostgreSQL and for `:memory:`.
    pub fn sqlite_path(&self) -> Option<&str> {
        (self.backend == Backend::Sqlite && self.target != ":memory:").then_some(&self.target)
    }

    /// An SQLite database in memory: each connection its own, none seen by
    /// another.
    pub fn is_memory(&self) -> bool {
        self.backend == Backend::Sqlite
            && (self.target.contains(":memory:") || self.target.contains("mode=memory"))
    }

    /// Opens one connection outside a pool, with the SQLite pragmas set
    /// and a small page cache.
    pub fn connect(&self) -> Result<DbConn> {
        self.connect_with_cache(SQLITE_SIDE_CACHE_KIB)
    }

    /// Opens one connection with the SQLite pragmas set and a page cache
    /// of `cache_kib` KiB.
    pub(crate) fn connect_with_cache(&self, cache_kib: u32) -> Result<DbConn> {
        match self.backend {
            Backend::Sqlite => {
                if self.target != ":memory:" {
                    if let Some(dir) = std::path::Path::new(&self.target).parent() {
                        if !dir.as_os_str().is_empty() {
                            std::fs::create_dir_all(dir).map_err(|e| {
                                Error::Storage(format!("cannot create {}: {e}", dir.display()))
                            })?;
                        }
                    }
                }
                let mut conn = SqliteConnection::establish(&self.target)
                    .map_err(|e| Error::Storage(format!("sqlite {}: {e}", self.target)))?;
                let pragmas = format!(
                    "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};
                     PRAGMA page_size = {SQLITE_PAGE_BYTES};
                     PRAGMA journal_mode = WAL;
                     PRAGMA synchronous = NORMAL;
                     PRAGMA foreign_keys = ON;
                     PRAGMA cache_size = -{cache_kib};
                     PRAGMA mmap_size = {SQLITE_MMAP_BYTES};
                     PRAGMA wal_autocheckpoint = {SQLITE_AUTOCHECKPOINT_PAGES};
                     PRAGMA journal_size_limit = {SQLITE_WAL_LIMIT_BYTES};"
                );
                // Setting these on a new connection was once told "database
                // is locked" at once, busy timeout or not, with four
                // processes opening one file to tick together (SQLite
                // returns BUSY without its busy handler in some WAL states,
                // WAL recovery among them): try again for as long as the
                // busy timeout, then give up.
                let mut tries = SQLITE_BUSY_TIMEOUT_MS / 50;
                loop {
                    match conn.batch_execute(&pragmas).map_err(Error::from) {
                        Err(Error::Busy(_)) if tries > 0 => {
                            tries -= 1;
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        other => break other?,
                    }
                }
                Ok(DbConn::Sqlite(conn))
            }
            Backend::Postgres => {
                let mut conn = PgConnection::establish(&self.target)
                    .map_err(|e| Error::Storage(format!("postgres: {e}")))?;
                conn.set_instrumentation(Severed::default());
                Ok(DbConn::Postgres(conn))
            }
        }
    }
}

impl DbConn {
    pub fn backend(&self) -> Backend {
        match self {
            DbConn::Sqlite(_) => Backend::Sqlite,
            DbConn::Postgres(_) => Backend::Postgres,
        }
    }

    /// Applies every pending migration of this back end.
    pub fn migrate(&mut self) -> Result<usize> {
        let applied = match self {
            DbConn::Sqlite(c) => c.run_pending_migrations(SQLITE_MIGRATIONS).map(|v| v.len()),
            DbConn::Postgres(c) => c
                .run_pending_migrations(POSTGRES_MIGRATIONS)
                .map(|v| v.len()),
        }
        .map_err(|e| Error::Storage(format!("migration failed: {e}")))?;
        Ok(applied)
    }

    /// Runs `f` in a write transaction. On SQLite this is `BEGIN IMMEDIATE`,
    /// so two writers queue on the busy timeout instead of failing on the
    /// read-to-write lock upgrade; on PostgreSQL an ordinary transaction.
    /// Inside another transaction it is a savepoint.
    pub fn write_tx<T, F>(&mut self, f: F) -> Result<T>
    where
        F: FnOnce(&mut DbConn) -> Result<T>,
    {
        self.begin()?;
        let out = f(self);
        let end = if out.is_ok() {
            self.commit()
        } else {
            self.rollback()
        };
        match (out, end) {
            (Ok(v), Ok(())) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
        }
    }

    /// Serialises the transactions that take the same `key` until the end
    /// of this one: a check-then-write (a name not yet taken) that two
    /// PostgreSQL writers could otherwise both pass. On SQLite the write
    /// transaction's lock does that already.
    pub fn lock_in_tx(&mut self, key: &str) -> Result<()> {
        use sha2::Digest;
        let h = sha2::Sha256::digest(format!("digestd.tx.{key}").as_bytes());
        self.lock_key_in_tx(i64::from_be_bytes(h[..8].try_into().expect("8 bytes")))
    }

    /// [`DbConn::lock_in_tx`] with the advisory lock's key itself.
    pub fn lock_key_in_tx(&mut self, key: i64) -> Result<()> {
        if let DbConn::Postgres(c) = self {
            use diesel::RunQueryDsl;
            diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                .bind::<diesel::sql_types::BigInt, _>(key)
                .execute(c)?;
        }
        Ok(())
    }

    /// Locks the row of `table` whose `id` it is until the end of this
    /// transaction, so that two PostgreSQL writers that read it and then
    /// write take turns. On SQLite the write transaction's lock does that
    /// already. `table` is the caller's constant, never input.
    pub fn lock_row_in_tx(&mut self, table: &'static str, id: i64) -> Result<()> {
        if let DbConn::Postgres(c) = self {
            use diesel::RunQueryDsl;
            diesel::sql_query(format!("SELECT id FROM {table} WHERE id = $1 FOR UPDATE"))
                .bind::<diesel::sql_types::BigInt, _>(id)
                .execute(c)?;
        }
        Ok(())
    }

    /// The file of SQLite's main database, for files kept beside it (the
    /// sent journal, lease files); `None` on PostgreSQL and for a database
    /// in memory.
    pub fn sqlite_file(&mut self) -> Result<Option<String>> {
        let DbConn::Sqlite(c) = self else {
            return Ok(None);
        };
        let n: Named = diesel::RunQueryDsl::get_result(
            diesel::sql_query("SELECT file AS name FROM pragma_database_list WHERE name = 'main'"),
            c,
        )?;
        Ok(Some(n.name).filter(|f| !f.is_empty()))
    }

    /// The PostgreSQL database and server this connection talks to, as
    /// one name (`db@127.0.0.1:5432`), the same from every process that
    /// shares them; `None` on SQLite.
    pub fn postgres_server(&mut self) -> Result<Option<String>> {
        let DbConn::Postgres(c) = self else {
            return Ok(None);
        };
        let n: Named = diesel::RunQueryDsl::get_result(
            diesel::sql_query(
                "SELECT current_database() || '@' || coalesce(host(inet_server_addr()), 'local') \
                 || ':' || coalesce(inet_server_port(), 0)::text AS name",
            ),
            c,
        )?;
        Ok(Some(n.name))
    }

    /// Whether the server runs without autovacuum (PostgreSQL's `SHOW
    /// autovacuum`), so that nothing keeps its statistics fresh unless
    /// asked; `false` on SQLite, which has none to run.
    pub fn autovacuum_off(&mut self) -> Result<bool> {
        let DbConn::Postgres(c) = self else {
            return Ok(false);
        };
        let n: Named = diesel::RunQueryDsl::get_result(
            diesel::sql_query("SELECT current_setting('autovacuum') AS name"),
            c,
        )?;
        Ok(n.name == "off")
    }

    /// Runs `f` where reads should find rows by key: on PostgreSQL in a
    /// transaction whose planner prefers index look-ups
    /// ([`prefer_index_lookups`]), on SQLite as it is (its planner does).
    pub fn with_index_lookups<T, F>(&mut self, f: F) -> Result<T>
    where
        F: FnOnce(&mut DbConn) -> Result<T>,
    {
        match self {
            DbConn::Postgres(_) => self.write_tx(|c| {
                if let DbConn::Postgres(pg) = c {
                    prefer_index_lookups(pg)?;
                }
                f(c)
            }),
            DbConn::Sqlite(_) => f(self),
        }
    }

    /// Runs `f` in a transaction that is always rolled back: a what-if
    /// (`digestd simulate`) that leaves the database as it was.
    pub fn rolled_back<T, F>(&mut self, f: F) -> Result<T>
    where
        F: FnOnce(&mut DbConn) -> Result<T>,
    {
        self.begin()?;
        let out = f(self);
        self.rollback()?;
        out
    }

    fn depth(&mut self) -> Result<u32> {
        let status = match self {
            DbConn::Sqlite(c) => {
                AnsiTransactionManager::transaction_manager_status_mut(c).transaction_depth()
            }
            DbConn::Postgres(c) => {
                AnsiTransactionManager::transaction_manager_status_mut(c).transaction_depth()
            }
        };
        Ok(status?.map_or(0, |d| d.get()))
    }

    fn begin(&mut self) -> Result<()> {
        let outer = self.depth()? == 0;
        match self {
            DbConn::Sqlite(c) if outer => {
                AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?
            }
            DbConn::Sqlite(c) => AnsiTransactionManager::begin_transaction(c)?,
            DbConn::Postgres(c) => AnsiTransactionManager::begin_transaction(c)?,
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        match self {
            DbConn::Sqlite(c) => AnsiTransactionManager::commit_transaction(c)?,
            DbConn::Postgres(c) => AnsiTransactionManager::commit_transaction(c)?,
        }
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        match self {
            DbConn::Sqlite(c) => AnsiTransactionManager::rollback_transaction(c)?,
            DbConn::Postgres(c) => AnsiTransactionManager::rollback_transaction(c)?,
        }
        Ok(())
    }
}

/// One text column named `name`, for the lookups above.
#[derive(diesel::QueryableByName)]
struct Named {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
}
