//! Whether the database may have changed since a value was read from it,
//! without asking the database: the generation number that a process's
//! in-memory caches tag their entries with (`http::cache`). An entry read
//! under generation `g` may be served only while [`Watch::generation`] is
//! still `Some(g)`; `None` means "cannot tell": serve nothing from memory.
//!
//! - SQLite: `PRAGMA data_version` on a connection of the watch's own,
//!   which moves when any other connection, in this process or another,
//!   commits. Read on every call: a local read of the WAL index, no I/O.
//! - PostgreSQL: a listener thread with its own connection `LISTEN`s on
//!   [`CHANNEL`], where a statement trigger on every table a cached value
//!   is read from (collections, their owners, tokens, tickets; migration
//!   `change_notify`) notifies in the writer's transaction, so the
//!   notification is sent when it commits, from any process. A caller
//!   waits for one sync of that connection (`SELECT 1`, after which every
//!   notification of a transaction committed before it has arrived) that
//!   began after it asked: a change committed before a request arrived
//!   has always been seen. The listener syncs as soon as it is woken, and
//!   one sync answers every caller that asked while the one before was
//!   on the wire, so under load it is one statement for many requests,
//!   never one per request, and never through the pool. While the
//!   listener has no connection the generation is `None`; when it
//!   reconnects, after `LISTEN`, the generation moves, so nothing read
//!   before the gap is served.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;

use super::{Backend, Db, DbConn, DbUrl};
use crate::error::Result;

/// The channel the PostgreSQL triggers notify on.
pub const CHANNEL: &str = "digestd_changed";

/// The listener connection's `application_name` (`pg_stat_activity`).
pub const APPLICATION: &str = "digestd change listener";

/// How long the listener sleeps between polls when nobody asks, and
/// between attempts to reconnect.
const IDLE: Duration = Duration::from_millis(200);
const RECONNECT: Duration = Duration::from_secs(1);

/// See the module documentation.
pub struct Watch {
    inner: Inner,
}

enum Inner {
    Sqlite(Mutex<SqliteSeen>),
    Postgres(Arc<Listener>),
}

struct SqliteSeen {
    conn: SqliteConnection,
    data_version: i64,
    generation: u64,
}

/// What one poll of the listener's connection found.
#[derive(Debug, Clone, Copy)]
struct Polled {
    /// The poll's number; a poll numbered `n` began after `seq` was `n - 1`.
    seq: u64,
    generation: Option<u64>,
}

struct Listener {
    seq: AtomicU64,
    polled: tokio::sync::watch::Sender<Polled>,
    stop: AtomicBool,
    thread: Mutex<Option<thread::Thread>>,
}

// `PRAGMA data_version` as its table-valued function, so the query is a
// typed one that diesel keeps prepared: the per-request read is a step of
// a prepared statement, not a parse (a `sql_query` is prepared anew each
// time, which cost about what the cache saves).
diesel::table! {
    pragma_data_version (data_version) {
        data_version -> BigInt,
    }
}

fn data_version(conn: &mut SqliteConnection) -> Result<i64> {
    Ok(pragma_data_version::table
        .select(pragma_data_version::data_version)
        .get_result(conn)?)
}

impl Watch {
    /// Starts watching `db`'s database: on SQLite opens a connection, on
    /// PostgreSQL starts the listener thread (which retries until it can
    /// connect; until then, [`Watch::generation`] is `None`).
    pub fn start(db: &Db) -> Result<Watch> {
        let url = db.url().clone();
        let inner = match url.backend {
            Backend::Sqlite => {
                // Another connection to `:memory:` is another database,
                // which never changes: it could not see a write.
                if url.is_memory() {
                    return Err(crate::error::Error::Storage(
                        "an in-memory SQLite database cannot be watched".into(),
                    ));
                }
                let DbConn::Sqlite(mut conn) = url.connect()? else {
                    unreachable!("an sqlite URL connects to SQLite")
                };
                let data_version = data_version(&mut conn)?;
                Inner::Sqlite(Mutex::new(SqliteSeen {
                    conn,
                    data_version,
                    generation: 0,
                }))
            }
            Backend::Postgres => {
                let (polled, _) = tokio::sync::watch::channel(Polled {
                    seq: 0,
                    generation: None,
                });
                let l = Arc::new(Listener {
                    seq: AtomicU64::new(0),
                    polled,
                    stop: AtomicBool::new(false),
                    thread: Mutex::new(None),
                });
                let run = l.clone();
                let handle = thread::Builder::new()
                    .name("digestd-watch".into())
                    .spawn(move || run.run(&url))
                    .map_err(|e| crate::error::Error::Storage(format!("watch thread: {e}")))?;
                *l.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle.thread().clone());
                Inner::Postgres(l)
            }
        };
        Ok(Watch { inner })
    }

    /// The current generation, or `None` when changes cannot be seen
    /// (PostgreSQL's listener has no connection). A cache that read a
    /// value after this call returned `Some(g)` tags it `g`.
    pub async fn generation(&self) -> Option<u64> {
        match &self.inner {
            Inner::Sqlite(m) => {
                let mut s = m.lock().unwrap_or_else(|p| p.into_inner());
                let v = data_version(&mut s.conn).ok()?;
                if v != s.data_version {
                    s.data_version = v;
                    s.generation += 1;
                }
                Some(s.generation)
            }
            Inner::Postgres(l) => {
                let mut rx = l.polled.subscribe();
                let target = l.seq.load(Ordering::SeqCst) + 1;
                l.wake();
                let p = *rx.wait_for(|p| p.seq >= target).await.ok()?;
                p.generation
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Inner::Postgres(l) = &self.inner {
            l.stop.store(true, Ordering::SeqCst);
            l.wake();
        }
    }
}

impl Listener {
    fn wake(&self) {
        if let Some(t) = &*self.thread.lock().unwrap_or_else(|p| p.into_inner()) {
            t.unpark();
        }
    }

    /// Publishes one poll's finding under the next number.
    fn publish(&self, generation: Option<u64>) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.polled.send_replace(Polled { seq, generation });
    }

    fn run(&self, url: &DbUrl) {
        let mut generation = 0u64;
        let mut last_try: Option<Instant> = None;
        while !self.stop.load(Ordering::SeqCst) {
            // Disconnected: answer "cannot tell" to whoever asks, and try
            // again at most once a RECONNECT.
            if last_try.is_some_and(|t| t.elapsed() < RECONNECT) {
                self.publish(None);
                thread::park_timeout(IDLE);
                continue;
            }
            last_try = Some(Instant::now());
            let mut conn = match url.connect() {
                Ok(DbConn::Postgres(c)) => c,
                Ok(DbConn::Sqlite(_)) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "change listener cannot connect; feed caches off");
                    continue;
                }
            };
            let listen = format!("SET application_name = '{APPLICATION}'; LISTEN {CHANNEL}");
            if let Err(e) = conn.batch_execute(&listen) {
                tracing::warn!(error = %e, "change listener cannot LISTEN; feed caches off");
                continue;
            }
            // Whatever was read before LISTEN may have changed unseen.
            generation += 1;
            tracing::debug!("change listener connected");
            loop {
                if self.stop.load(Ordering::SeqCst) {
                    return;
                }
                // The number is taken before reading, so a caller that
                // asked before this poll began waits for the next one.
                let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
                // A statement on the listening connection is the barrier:
                // the server sends every notification of a transaction
                // that committed before it began ahead of its answer
                // (the committing backend signals the listeners before its
                // COMMIT returns). Its failure is the connection's loss.
                let mut changed = false;
                let mut lost = conn.batch_execute("SELECT 1").err();
                if lost.is_none() {
                    for n in conn.notifications_iter() {
                        match n {
                            Ok(_) => changed = true,
                            Err(e) => {
                                lost = Some(e);
                                break;
                            }
                        }
                    }
                }
                if let Some(e) = &lost {
                    tracing::warn!(error = %e, "change listener lost its connection; feed caches off");
                }
                let lost = lost.is_some();
                if changed {
                    generation += 1;
                }
                let found = (!lost).then_some(generation);
                self.polled.send_replace(Polled {
                    seq,
                    generation: found,
                });
                if lost {
                    generation += 1;
                    break;
                }
                thread::park_timeout(IDLE);
            }
        }
    }
}
