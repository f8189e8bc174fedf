//! The queue's history sweep: finished requests (sent, partial_failure,
//! failed, cancelled) whose fulfill date is before a cutoff go, with their
//! bodies, queue rows and delivery log. Nothing open is touched: a request
//! still pending or sending stays, whatever its age.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::{delivery_log, nt_messages, nt_queue, nt_requests};
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
}

/// Deletes the requests that finished before `cutoff`, with everything
/// that belongs to them, a chunk of requests per transaction.
pub fn purge(conn: &mut DbConn, cutoff: DateTime<Utc>) -> Result<QueuePurged> {
    let cutoff = cutoff.naive_utc();
    let mut done = QueuePurged::default();
    loop {
        let ids: Vec<i64> = nt_requests::table
            .filter(nt_requests::status.eq_any(["sent", "partial_failure", "failed", "cancelled"]))
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
            diesel::delete(nt_messages::table)
                .filter(nt_messages::request_id.eq_any(&ids))
                .execute(c)?;
            done.requests += diesel::delete(nt_requests::table)
                .filter(nt_requests::request_id.eq_any(&ids))
                .execute(c)?;
            Ok(())
        })?;
    }
}
