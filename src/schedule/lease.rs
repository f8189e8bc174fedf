//! A lease per job name in `nt_job` (the seed's "never scheduled twice"
//! table): taken by compare-and-set, so of two processes racing for the
//! same tick exactly one runs it. A lease that is not released (the holder
//! crashed) expires and can be taken over.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;

use crate::db::schema::nt_job;
use crate::db::DbConn;
use crate::error::Result;

/// Tries to take `job` for `owner` until `now + ttl`. True when taken (or
/// already held by `owner`, which renews it).
pub fn acquire(
    conn: &mut DbConn,
    job: &str,
    owner: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<bool> {
    let now_n = now.naive_utc();
    let n = conn.write_tx(|c| {
        Ok(diesel::update(
            nt_job::table.filter(nt_job::job_name.eq(job)).filter(
                nt_job::owner
                    .is_null()
                    .or(nt_job::lease_expires_at.lt(now_n))
                    .or(nt_job::owner.eq(owner)),
            ),
        )
        .set((
            nt_job::owner.eq(owner),
            nt_job::lease_expires_at.eq((now + ttl).naive_utc()),
        ))
        .execute(c)?)
    })?;
    Ok(n == 1)
}

/// Releases `job` if `owner` holds it, recording the run.
pub fn release(conn: &mut DbConn, job: &str, owner: &str, now: DateTime<Utc>) -> Result<()> {
    conn.write_tx(|c| {
        diesel::update(
            nt_job::table
                .filter(nt_job::job_name.eq(job))
                .filter(nt_job::owner.eq(owner)),
        )
        .set((
            nt_job::owner.eq(None::<String>),
            nt_job::lease_expires_at.eq(None::<chrono::NaiveDateTime>),
            nt_job::last_run_date.eq(Some(now.naive_utc())),
            nt_job::run_count.eq(nt_job::run_count + 1),
        ))
        .execute(c)?;
        Ok(())
    })
}

/// A name for this process, unique enough across hosts: host, pid, random.
pub fn owner_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    format!(
        "{}:{}:{:08x}",
        host.trim(),
        std::process::id(),
        rand::random::<u32>()
    )
}

/// When `job` last finished (the instant its holder released it), if ever.
pub fn last_run(conn: &mut DbConn, job: &str) -> Result<Option<DateTime<Utc>>> {
    let t: Option<Option<chrono::NaiveDateTime>> = nt_job::table
        .filter(nt_job::job_name.eq(job))
        .select(nt_job::last_run_date)
        .first(conn)
        .optional()?;
    Ok(t.flatten().map(|t| t.and_utc()))
}
