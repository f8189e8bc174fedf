//! Requests cancelled while their rows are in flight. A round's rows are
//! claimed, then built and sent on other threads, the builder up to three
//! chunks ahead of the sender; a request cancelled in between would still
//! go out. The pass's own thread looks for cancelled requests among those
//! it handed out (every [`EVERY`], when it has nothing else to do: one
//! index look-up), and the builder leaves them out of every message it has
//! yet to build. A cancel that lands once its message is built, or while
//! it is being written to the server, is too late, as it would be for a
//! message already sent.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::prelude::*;

use super::round::Round;
use crate::db::schema::{nt_queue, nt_requests};
use crate::db::DbConn;
use crate::error::Result;

/// How often the pass's thread looks at most.
const EVERY: Duration = Duration::from_millis(10);

/// The requests found cancelled during a pass, read by the builder.
#[derive(Default)]
pub(super) struct Cancelled(Mutex<HashSet<i64>>);

impl Cancelled {
    /// Runs `f` on the set as it stands.
    pub(super) fn with<T>(&self, f: impl FnOnce(&HashSet<i64>) -> T) -> T {
        f(&self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The pass's thread's side: which requests it handed out, and when it
/// last looked.
pub(super) struct Watch<'a> {
    found: &'a Cancelled,
    /// The requests handed to the builder, and the lowest and highest id
    /// among them (the look-up's range).
    handed: HashSet<i64>,
    range: Option<(i64, i64)>,
    last: Option<Instant>,
}

impl<'a> Watch<'a> {
    pub(super) fn new(found: &'a Cancelled) -> Watch<'a> {
        Watch {
            found,
            handed: HashSet::new(),
            range: None,
            last: None,
        }
    }

    /// Notes the requests of a round handed to the builder.
    pub(super) fn handed(&mut self, round: &Round) {
        for r in &round.rows {
            let (lo, hi) = self.range.unwrap_or((r.request_id, r.request_id));
            self.range = Some((lo.min(r.request_id), hi.max(r.request_id)));
            self.handed.insert(r.request_id);
        }
    }

    /// Looks for requests cancelled among those handed out, unless it
    /// looked less than [`EVERY`] ago. The rows of one newly found are let
    /// go of, as if it had been cancelled before they were claimed.
    pub(super) fn check(&mut self, conn: &mut DbConn) -> Result<()> {
        let Some((lo, hi)) = self.range else {
            return Ok(());
        };
        if self.last.is_some_and(|t| t.elapsed() < EVERY) {
            return Ok(());
        }
        self.last = Some(Instant::now());
        let ids: Vec<i64> = nt_requests::table
            // A literal, so that even a generic plan reads only the
            // cancelled requests (`nt_requests_cancelled`).
            .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(
                "nt_requests.status = 'cancelled'",
            ))
            .filter(nt_requests::request_id.between(lo, hi))
            .select(nt_requests::request_id)
            .load(conn)?;
        let new: Vec<i64> = {
            let mut set = self.found.0.lock().unwrap_or_else(|e| e.into_inner());
            // Requests cancelled earlier may lie in the range too.
            ids.into_iter()
                .filter(|id| self.handed.contains(id) && set.insert(*id))
                .collect()
        };
        if new.is_empty() {
            return Ok(());
        }
        tracing::info!(requests = ?new, "left out of the pass: cancelled in flight");
        conn.write_tx(|c| {
            diesel::update(nt_queue::table)
                .filter(nt_queue::request_id.eq_any(&new))
                .filter(nt_queue::claimed_by.is_not_null())
                .filter(nt_queue::is_successful.eq(false))
                .filter(nt_queue::gave_up.eq(false))
                .set((
                    nt_queue::claimed_by.eq(None::<String>),
                    nt_queue::claimed_until.eq(None::<chrono::NaiveDateTime>),
                ))
                .execute(c)?;
            Ok(())
        })
    }
}
