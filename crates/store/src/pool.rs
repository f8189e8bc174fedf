//! The pool: r2d2 over [`DbConn`], connecting by URL scheme with the
//! SQLite pragmas, dropping broken connections as they come back, and
//! [`Db`], the pool with its checkpointer, change watch and queue bell.

use super::*;

/// A connection taken from a [`Db`]'s pool; back to the pool when dropped.
pub type PooledConn = PooledConnection<Manager>;

/// r2d2 manager that connects by URL scheme and sets the SQLite pragmas.
#[derive(Debug, Clone)]
pub struct Manager {
    url: DbUrl,
    /// This pool's share of [`SQLITE_POOL_CACHE_KIB`] per connection.
    cache_kib: u32,
}

impl ManageConnection for Manager {
    type Connection = DbConn;
    type Error = Error;

    fn connect(&self) -> std::result::Result<DbConn, Error> {
        self.url.connect_with_cache(self.cache_kib)
    }

    fn is_valid(&self, conn: &mut DbConn) -> std::result::Result<(), Error> {
        conn.batch_execute("SELECT 1").map_err(Error::from)
    }

    /// Checked as a connection goes back to the pool, instead of a
    /// `SELECT 1` round trip each time one is taken out: a connection left
    /// in a transaction, or whose server went away (its last statement
    /// failed with the connection closed: [`Severed`]), is dropped, and the
    /// pool opens a new one.
    fn has_broken(&self, conn: &mut DbConn) -> bool {
        use diesel::r2d2::R2D2Connection;
        match conn {
            DbConn::Sqlite(c) => c.is_broken(),
            DbConn::Postgres(c) => {
                c.is_broken()
                    || c.instrumentation()
                        .downcast_ref::<Severed>()
                        .is_some_and(|s| s.0)
            }
        }
    }
}

/// Remembers that a statement on this PostgreSQL connection failed because
/// the connection is gone (the server closed it, or a command could not be
/// sent): libpq does not reconnect, so such a connection only ever fails
/// again, and [`Manager::has_broken`] drops it.
#[derive(Debug, Default)]
pub(crate) struct Severed(bool);

impl diesel::connection::Instrumentation for Severed {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        use diesel::result::{DatabaseErrorKind as K, Error as E};
        if let diesel::connection::InstrumentationEvent::FinishQuery {
            error: Some(E::DatabaseError(K::ClosedConnection | K::UnableToSendCommand, _)),
            ..
        } = event
        {
            self.0 = true;
        }
    }
}

/// The shared handle: a pool of connections to one database, and on an
/// SQLite file its checkpoint thread (stopped with the last clone).
#[derive(Clone)]
pub struct Db {
    pool: Pool<Manager>,
    url: DbUrl,
    checkpoints: Option<std::sync::Arc<checkpoint::Checkpoints>>,
    /// Rung when a message that should not wait for the next queue pass
    /// was posted (a sign-up's verification); `serve`'s loop listens.
    /// Within this process: another process finds the row on its next pass.
    queue_bell: std::sync::Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("url", &self.url.backend)
            .finish()
    }
}

impl Db {
    /// A pool (`max_size` connections) over a database already opened and
    /// migrated ([`Db::open`], [`Db::open_existing`]).
    pub(crate) fn pool(url: DbUrl, max_size: u32) -> Result<Self> {
        let pool = Pool::builder()
            .max_size(max_size.max(1))
            // No `SELECT 1` per checkout (a round trip on PostgreSQL, a
            // third of a conditional feed GET's): a dead connection shows
            // as an error on use and is dropped on return (`has_broken`).
            .test_on_check_out(false)
            .connection_timeout(Duration::from_secs(30))
            .build(Manager {
                url: url.clone(),
                cache_kib: (SQLITE_POOL_CACHE_KIB / max_size.max(1)).max(SQLITE_MIN_CACHE_KIB),
            })
            .map_err(|e| Error::Storage(format!("connection pool: {e}")))?;
        let checkpoints = match url.backend {
            Backend::Sqlite if !url.is_memory() => {
                Some(std::sync::Arc::new(checkpoint::Checkpoints::start(&url)?))
            }
            _ => None,
        };
        Ok(Db {
            pool,
            url,
            checkpoints,
            queue_bell: Default::default(),
        })
    }

    /// The checkpoint thread (SQLite files only).
    pub fn checkpoints(&self) -> Option<&checkpoint::Checkpoints> {
        self.checkpoints.as_deref()
    }

    pub fn backend(&self) -> Backend {
        self.url.backend
    }

    /// The URL the pool connects to.
    pub fn url(&self) -> &DbUrl {
        &self.url
    }

    /// Takes a connection from the pool.
    /// No connection free within the pool's wait is [`Error::Busy`].
    pub fn conn(&self) -> Result<PooledConn> {
        self.pool
            .get()
            .map_err(|e| Error::Busy(format!("connection pool: {e}")))
    }

    /// Asks for a queue pass now rather than at the next scheduled one.
    /// Asked while no one listens, the next listen returns at once.
    pub fn wake_queue(&self) {
        self.queue_bell.notify_one();
    }

    /// Returns when [`Db::wake_queue`] was called (since the last return).
    pub async fn queue_woken(&self) {
        self.queue_bell.notified().await;
    }

    /// A connection the pool has idle, or `None` (never waits).
    pub fn try_conn(&self) -> Option<PooledConn> {
        self.pool.try_get()
    }
}
