//! SQLite's WAL checkpoints, off the writers' path.
//!
//! In WAL mode a commit appends pages to the `-wal` file; a checkpoint
//! copies them back into the database file and syncs it. By default the
//! connection whose commit takes the WAL past 1,000 pages does that itself,
//! inside its commit: a tick chunk of 10,000 digests spent about 400 ms of
//! its 1.5 s transaction there (`docs/benchmarks-history.md`, the burst,
//! 2026-11-26).
//!
//! So every [`super::Db`] on an SQLite file runs one thread of its own
//! that checkpoints passively ([`pass`]: never waits for a reader or a
//! writer, copies what no reader still needs) every [`INTERVAL`], on a
//! connection of its own, while the pool's connections checkpoint on
//! commit only past [`super::SQLITE_AUTOCHECKPOINT_PAGES`], the safety net
//! should the thread fall behind. A passive checkpoint that finds another
//! running returns at once, so the two never queue on each other.

use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::Integer;
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::{DbConn, DbUrl};
use crate::error::{Error, Result};

/// Time between two passes of the thread.
pub const INTERVAL: Duration = Duration::from_millis(200);

/// What one `PRAGMA wal_checkpoint(PASSIVE)` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, diesel::QueryableByName)]
pub struct Pass {
    /// 1 when another checkpoint (or a writer's reset of the WAL) was in
    /// the way and nothing was done.
    #[diesel(sql_type = Integer)]
    pub busy: i32,
    /// Frames in the WAL.
    #[diesel(sql_type = Integer, column_name = log)]
    pub frames: i32,
    /// Frames copied into the database file, by this pass or earlier ones.
    #[diesel(sql_type = Integer)]
    pub checkpointed: i32,
}

/// One passive checkpoint on `conn`.
pub fn pass(conn: &mut SqliteConnection) -> Result<Pass> {
    Ok(diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result(conn)?)
}

struct Shared {
    stop: Mutex<bool>,
    wake: Condvar,
    /// The last pass's answer ([`Checkpoints::last`]).
    last: Mutex<Option<Pass>>,
}

/// The checkpoint thread of one database; stops (after a last pass) when
/// dropped.
pub struct Checkpoints {
    shared: Arc<Shared>,
    thread: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints").finish_non_exhaustive()
    }
}

impl Checkpoints {
    /// Starts the thread on a connection of its own to `url`'s SQLite file.
    pub fn start(url: &DbUrl) -> Result<Checkpoints> {
        let DbConn::Sqlite(mut conn) = url.connect()? else {
            return Err(Error::Storage("checkpoints are SQLite's".into()));
        };
        // Its own commits (none) and the close at the end: never the net.
        conn.batch_execute("PRAGMA wal_autocheckpoint = 0")?;
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            last: Mutex::new(None),
        });
        let s = shared.clone();
        let thread = thread::Builder::new()
            .name("digestd-checkpoint".into())
            .spawn(move || run(&mut conn, &s))
            .map_err(|e| Error::Storage(format!("checkpoint thread: {e}")))?;
        Ok(Checkpoints {
            shared,
            thread: Some(thread),
        })
    }

    /// The last pass's answer (`None` before the first).
    pub fn last(&self) -> Option<Pass> {
        *self.shared.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn run(conn: &mut SqliteConnection, s: &Shared) {
    let mut stop = s.stop.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let done = *stop;
        drop(stop);
        match pass(conn) {
            Ok(p) => *s.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(p),
            // The next pass tries again; the net still holds meanwhile.
            Err(e) => tracing::warn!(error = %e, "WAL checkpoint failed"),
        }
        if done {
            return;
        }
        stop = s.stop.lock().unwrap_or_else(|p| p.into_inner());
        if !*stop {
            stop = s
                .wake
                .wait_timeout(stop, INTERVAL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        *self.shared.stop.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
