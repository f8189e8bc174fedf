//! The queue's history sweep: finished requests (sent, partial_failure,
//! failed, cancelled) whose fulfill date is before a cutoff go, with their
//! bodies, queue rows and delivery log, and the shared digest renderings
//! (`nt_bodies`) no request points at any more. Nothing open is touched: a
//! request still pending or sending stays, whatever its age, and so does
//! every rendering it points at.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::{delivery_log, nt_bodies, nt_messages, nt_queue, nt_requests};
use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::error::Result;

/// Requests deleted per transaction, so a large sweep never holds the
/// write lock (SQLite) or a huge transaction (PostgreSQL) for long.
const CHUNK: i64 = 10_000;

/// What [`purge`] deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueuePurged {
    pub requests: usize,
    pub rows: usize,
    pub log: usize,
    /// Shared digest renderings no request points at any more.
    pub bodies: usize,
}

/// Deletes the requests that finished before `cutoff`, with everything
/// that belongs to them, a chunk of requests per transaction.
pub fn purge(conn: &mut DbConn, cutoff: DateTime<Utc>) -> Result<QueuePurged> {
    let cutoff = cutoff.naive_utc();
    let mut done = QueuePurged::default();
    loop {
        let ids: Vec<i64> = nt_requests::table
            .filter(nt_requests::status.eq_any(RequestStatus::strs(RequestStatus::FINAL)))
            .filter(nt_requests::fulfill_date.lt(cutoff))
            .select(nt_requests::request_id)
            .order(nt_requests::request_id.asc())
            .limit(CHUNK)
            .load(conn)?;
        if ids.is_empty() {
            return Ok(done);
        }
        conn.write_tx(|c| {
            done.log += diesel::delete(delivery_log::table)
                .filter(delivery_log::request_id.eq_any(&ids))
                .execute(c)?;
            done.rows += diesel::delete(nt_queue::table)
                .filter(nt_queue::request_id.eq_any(&ids))
                .execute(c)?;
            let mut bodies: Vec<i64> = nt_messages::table
                .filter(nt_messages::request_id.eq_any(&ids))
                .filter(nt_messages::body_id.is_not_null())
                .select(nt_messages::body_id.assume_not_null())
                .load(c)?;
            diesel::delete(nt_messages::table)
                .filter(nt_messages::request_id.eq_any(&ids))
                .execute(c)?;
            // A shared rendering goes with the last request that used it.
            // Every request that points at one is posted by the tick that
            // stored it (its later chunks may reuse it, one `Composer` a
            // tick), and is pending until sent: a rendering this sweep sees
            // through a finished request can gain no new pointer.
            bodies.sort_unstable();
            bodies.dedup();
            let mut still: Vec<i64> = nt_messages::table
                .filter(nt_messages::body_id.eq_any(&bodies))
                .select(nt_messages::body_id.assume_not_null())
                .distinct()
                .load(c)?;
            still.sort_unstable();
            bodies.retain(|b| still.binary_search(b).is_err());
            done.bodies += diesel::delete(nt_bodies::table)
                .filter(nt_bodies::body_id.eq_any(&bodies))
                .execute(c)?;
            done.requests += diesel::delete(nt_requests::table)
                .filter(nt_requests::request_id.eq_any(&ids))
                .execute(c)?;
            Ok(())
        })?;
    }
}
