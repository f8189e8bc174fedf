//! Reads a tick makes before it composes, spread over the tick's own
//! connection and idle connections of the pool: a chunk's recipients and
//! the log's windows its first batch reads. On the tick's connection
//! alone each was serial time no number of compose workers shortened.
//!
//! The other connections read outside the tick's transaction. What they
//! read the tick does not write (the log, in windows that have closed;
//! parties and their preferences), and on SQLite nothing else can commit
//! while the tick holds the write lock, so they see what the tick sees.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::db::{Db, DbConn, PooledConn};
use crate::error::Result;

/// `parts` read by `read`, on `c` alone or, given `readers`, on `c` and
/// up to `workers - 1` connections the pool has idle (never waited for),
/// each thread taking the next part. The results come in no set order.
pub(super) fn read_parts<P: Sync, T: Send>(
    c: &mut DbConn,
    readers: Option<&Db>,
    workers: usize,
    parts: &[P],
    read: impl Fn(&mut DbConn, &P) -> Result<Vec<T>> + Sync,
) -> Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let take = |c: &mut DbConn| -> Result<Vec<T>> {
        let mut out = Vec::new();
        while let Some(part) = parts.get(next.fetch_add(1, Ordering::Relaxed)) {
            out.extend(read(c, part)?);
        }
        Ok(out)
    };
    // None for one worker or one part.
    let more: Vec<PooledConn> = match readers {
        Some(db) => (1..workers.min(parts.len()))
            .map_while(|_| db.try_conn())
            .collect(),
        None => Vec::new(),
    };
    if more.is_empty() {
        return take(c);
    }
    std::thread::scope(|s| {
        let helpers: Vec<_> = more
            .into_iter()
            .map(|mut conn| s.spawn(move || take(&mut conn)))
            .collect();
        let mut out = take(c);
        for h in helpers {
            let theirs = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            out = out.and_then(|mut v| {
                v.extend(theirs?);
                Ok(v)
            });
        }
        out
    })
}
