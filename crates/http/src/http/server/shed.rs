//! Making room when every connection slot is taken.
//!
//! A cap on open connections alone lets a slow client hold a slot for the
//! whole header timeout: a thousand of them, each sending a byte every few
//! seconds, keep everyone else in the kernel's backlog. So when a new
//! connection finds no free slot, the connection that has waited longest
//! for a request — reading a head that does not end, or idle between
//! kept-alive requests — is closed to make room, if it has waited at
//! least [`SHED_AFTER`]. A connection whose request is being answered is
//! never closed. Each new connection sheds at most one, so a flood of slow
//! clients churns among itself while a client that sends its request at
//! once gets a slot within a round.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::Watch;

/// How long a connection must have waited for its next request before a
/// new one may take its slot.
pub const SHED_AFTER: Duration = Duration::from_secs(1);

/// The open connections, by a number of their own.
#[derive(Default)]
pub struct Open {
    next: AtomicU64,
    conns: Mutex<HashMap<u64, Weak<Watch>>>,
    shed: AtomicU64,
}

/// A connection's place in [`Open`], given up when it ends.
pub struct Entry {
    open: Arc<Open>,
    id: u64,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.open.lock().remove(&self.id);
    }
}

impl Open {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Watch>>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts `watch`'s connection among the open ones.
    pub fn enter(self: &Arc<Self>, watch: &Arc<Watch>) -> Entry {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, Arc::downgrade(watch));
        Entry {
            open: self.clone(),
            id,
        }
    }

    /// Tells the connection that has waited longest for a request, at
    /// least `min`, to close. True when one was told.
    pub(crate) fn shed_longest_waiting(&self, min: Duration) -> bool {
        let now = Instant::now();
        let oldest = self
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .filter_map(|w| w.waiting_since().map(|t| (t, w)))
            .filter(|(t, _)| now.saturating_duration_since(*t) >= min)
            .min_by_key(|(t, _)| *t);
        match oldest {
            Some((_, w)) => {
                w.shed();
                self.shed.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Connections closed to make room, since start.
    pub(crate) fn shed_count(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }
}
