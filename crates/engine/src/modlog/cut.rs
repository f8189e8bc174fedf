//! Positions and cuts of the log: where each recording transaction's rows
//! stand, and where a reader may cut the log so that windows neither skip
//! nor repeat a change (the module's documentation says how, per back end).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::read::seen_at;
use crate::db::schema::modifications;
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::CollectionId;

/// A position in the log: the `log_pos` of the rows one transaction
/// recorded (see the module's documentation).
pub type LogPos = i64;

/// The position of the rows the caller's write transaction records
/// ([`crate::db::log_position`]: on SQLite the counter moved on, on
/// PostgreSQL the transaction's id).
pub(super) fn write_position(conn: &mut DbConn) -> Result<LogPos> {
    crate::db::log_position(conn)
}

/// A cut of the log: which recording transactions a reader saw as
/// committed. On SQLite the next position `log_clock` hands out (every row
/// below it committed, none at or above it yet); on PostgreSQL the
/// reader's snapshot (`pg_current_snapshot()` as text, `xmin:xmax:xip…`):
/// a row is seen when its transaction is below `xmin`, or below `xmax` and
/// not in the list still running. A transaction in flight at a cut is on
/// neither side of it, it is seen at the first cut after it commits. Empty:
/// the log's beginning, before every row.
/// Held as a shared string: a run's window is a key of the composer's
/// caches, cloned several times per run, and a clone is a count, not a
/// copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cut(Arc<str>);

impl Default for Cut {
    fn default() -> Cut {
        Cut::beginning()
    }
}

impl Cut {
    /// The log's beginning: every row is after it.
    pub(crate) fn beginning() -> Cut {
        Cut(Arc::from(""))
    }

    /// A cut as stored (`subscriptions.last_log_cut`, `subscription_runs`).
    pub(crate) fn from_stored(s: String) -> Cut {
        Cut(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The lowest position not seen at this cut (SQLite: the counter; on
    /// PostgreSQL `xmin`): every row below it is seen. 0 for the beginning.
    pub(super) fn floor(&self) -> LogPos {
        self.0
            .split(':')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    /// The lowest position no row seen at this cut reaches (SQLite: the
    /// counter; PostgreSQL: `xmax`).
    pub(super) fn ceiling(&self) -> LogPos {
        let mut it = self.0.split(':');
        let first = it.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        it.next().and_then(|n| n.parse().ok()).unwrap_or(first)
    }

    /// Whether a row at `pos` was seen at this cut (committed before it).
    pub(super) fn sees(&self, pos: LogPos) -> bool {
        if !self.is_snapshot() {
            return pos < self.floor();
        }
        let mut it = self.0.split(':');
        let (xmin, xmax) = (self.floor(), self.ceiling());
        let running = it.nth(2).unwrap_or("");
        pos < xmin || (pos < xmax && !running.split(',').any(|x| x.parse() == Ok(pos)))
    }

    pub(super) fn is_snapshot(&self) -> bool {
        self.0.contains(':')
    }

    /// The later of two cuts of one back end (a SQLite counter never goes
    /// back; a later PostgreSQL snapshot sees all an earlier one saw).
    /// Snapshots are ordered by `xmax`, then `xmin`, then by fewer
    /// transactions still running: of two snapshots taken one after the
    /// other, the later is never lower in any of them, and two that tie on
    /// all three see the same transactions. A flush stores a cut between
    /// a tick's cut and its claim, so the tick must not go back to its own.
    pub fn later(self, other: &Cut) -> Cut {
        if other.0.is_empty() || self.order() >= other.order() {
            self
        } else {
            other.clone()
        }
    }

    /// What [`Cut::later`] compares.
    fn order(&self) -> (LogPos, LogPos, std::cmp::Reverse<usize>) {
        let running = match self.0.split(':').nth(2) {
            Some(r) if !r.is_empty() => r.split(',').count(),
            _ => 0,
        };
        (self.ceiling(), self.floor(), std::cmp::Reverse(running))
    }
}

/// Where a reader may cut the log now (see [`Cut`]). On PostgreSQL a
/// `record` transaction held open across a tick is never skipped: it is
/// running in the tick's snapshot, so it falls in the next window.
pub fn cut(conn: &mut DbConn) -> Result<Cut> {
    Ok(Cut::from_stored(crate::db::log_cut(conn)?))
}

/// Where a new subscription's windows start: a cut of the log now, or,
/// where cuts are snapshots (PostgreSQL), the cut the latest subscription
/// stored when nothing of `collection` was recorded since it: the same rows are seen at both, and
/// subscriptions made one after another then share their first window
/// (read once, its digest's body built once) as they would on SQLite,
/// where the counter does not move without a recording. A subscription of
/// every collection takes a cut of its own.
pub fn start_cut(conn: &mut DbConn, collection: Option<CollectionId>) -> Result<Cut> {
    use crate::db::schema::subscriptions;
    let now = cut(conn)?;
    let (true, Some(coll)) = (now.is_snapshot(), collection) else {
        return Ok(now);
    };
    let latest: Option<String> = subscriptions::table
        .order(subscriptions::id.desc())
        .select(subscriptions::last_log_cut)
        .first(conn)
        .optional()?;
    let Some(latest) = latest.map(Cut::from_stored).filter(Cut::is_snapshot) else {
        return Ok(now);
    };
    let recorded_since = modifications::table
        .filter(modifications::collection_id.eq(coll.0))
        .filter(modifications::log_pos.ge(latest.floor()))
        .filter(diesel::dsl::not(seen_at(&latest)))
        .select(modifications::id)
        .first::<i64>(conn)
        .optional()?
        .is_some();
    Ok(if recorded_since { now } else { latest })
}

/// A modification digest's window of the log: what was recorded between
/// the cuts `from` and `to` (seen at `to`, not at `from`) and happened
/// before `end`, and what was seen at `from` (recorded with an `at` ahead
/// of its recording) and happened in `[start, end)`. Windows that chain
/// (one's `to` and `end` the next one's `from` and `start`) hold each
/// modification exactly once: one recorded late is in the first window cut
/// after it committed, one dated ahead in the window its time falls in.
/// Without cuts (`log: None`), a window by time alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub log: Option<(Cut, Cut)>,
}

impl Span {
    /// A window by time alone, `start <= occurred_at < end` (a run
    /// recorded before the log had positions).
    pub fn by_time(start: DateTime<Utc>, end: DateTime<Utc>) -> Span {
        Span {
            start,
            end,
            log: None,
        }
    }
}
