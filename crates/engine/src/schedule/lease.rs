//! A lease per job name: of two processes racing for the same tick (or
//! queue pass) exactly one runs it, and a holder that dies frees it at once.
//!
//! The exclusion is what the engines give, freed by someone other than the
//! holder when it dies: on PostgreSQL a session-level advisory lock
//! (`pg_try_advisory_lock`) on the connection the run uses, released by the
//! server the moment that connection drops; on SQLite an OS file lock
//! (`flock`) on `DB.JOB.lock` beside the database file, released by the
//! kernel when the process exits, however it exits (the file is opened
//! once per process and kept, so taking the lease needs no new
//! descriptor). So after `kill -9` of a `tick` the next one takes over at
//! once, and no expiry lets a second live process in while a slow first
//! one still runs.
//!
//! The `nt_job` row is only the record of who holds it and when it last
//! ran (`/readyz`, `digestd status`, the metrics): written after the lock is
//! taken, cleared on release. A row left by a dead holder is overwritten by
//! the next one. An in-memory SQLite database (tests) has no file to lock:
//! there, and only there, the row itself is the lease, taken by
//! compare-and-set and expiring after its time to live.
//!
//! Within one process a lease is held by one owner name at a time (a map of
//! held leases per database and job), so a second owner in the same process
//! is refused as a second process would be. The PostgreSQL lock lives on
//! the connection that took it: [`acquire`] and [`release`] are called on
//! the same connection, kept for the run (as `run_tick` and `run_queue` do).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool};

use crate::db::schema::nt_job;
use crate::db::DbConn;
use crate::error::{Error, Result};

/// What keeps a held lease exclusive.
enum Lock {
    /// The lock file, locked; unlocked on release (or by dying), and kept
    /// open for the next time ([`lock_file`]).
    File(Arc<File>),
    /// A session advisory lock on the connection that took it.
    Advisory(i64),
}

struct Held {
    owner: String,
    _lock: Lock,
}

/// Leases this process holds, by database and job.
fn held() -> MutexGuard<'static, BTreeMap<String, Held>> {
    static HELD: Mutex<BTreeMap<String, Held>> = Mutex::new(BTreeMap::new());
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// Who of this process holds the lease under `key`, if anyone does.
fn holder_here(key: &str) -> Option<String> {
    held().get(key).map(|h| h.owner.clone())
}

/// Where the lock for `job` lives on this connection's database.
enum Place {
    /// The lock file's path (also the map key).
    File(String),
    /// The database's name and server, and the advisory key.
    Advisory(String, i64),
    /// An in-memory SQLite database: the row is the lease.
    Row,
}

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    ok: bool,
}

fn place(conn: &mut DbConn, job: &str) -> Result<Place> {
    if let Some(server) = conn.postgres_server()? {
        return Ok(Place::Advisory(
            format!("pg:{server}:{job}"),
            advisory_key(job),
        ));
    }
    Ok(match conn.sqlite_file()? {
        Some(file) => Place::File(format!("{file}.{job}.lock")),
        None => Place::Row,
    })
}

/// The advisory lock's key: the first eight bytes of SHA-256 of the job's
/// name under a prefix, so it does not collide with another program's keys
/// by accident.
pub(crate) fn advisory_key(job: &str) -> i64 {
    use sha2::Digest;
    let h = sha2::Sha256::digest(format!("digestd.lease.{job}").as_bytes());
    i64::from_be_bytes(h[..8].try_into().expect("8 bytes"))
}

/// Tries to take `job` for `owner`, recording it in `nt_job` with an
/// expiry of `now + ttl` (only an in-memory database honours the expiry).
/// True when taken, or already held by `owner` (which renews the record).
pub fn acquire(
    conn: &mut DbConn,
    job: &str,
    owner: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<bool> {
    let (key, lock) = match place(conn, job)? {
        Place::Row => return acquire_row(conn, job, owner, now, ttl),
        Place::File(path) => {
            if let Some(h) = holder_here(&path) {
                return if h == owner {
                    record(conn, job, owner, now, ttl).map(|()| true)
                } else {
                    Ok(false)
                };
            }
            let file = lock_file(&path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Ok(false),
                Err(TryLockError::Error(e)) => {
                    return Err(Error::Storage(format!("lease: cannot lock {path}: {e}")))
                }
            }
            (path, Lock::File(file))
        }
        Place::Advisory(name, key) => {
            if let Some(h) = holder_here(&name) {
                return if h == owner {
                    record(conn, job, owner, now, ttl).map(|()| true)
                } else {
                    Ok(false)
                };
            }
            let f: Flag = diesel::sql_query("SELECT pg_try_advisory_lock($1) AS ok")
                .bind::<BigInt, _>(key)
                .get_result(conn)?;
            if !f.ok {
                return Ok(false);
            }
            (name, Lock::Advisory(key))
        }
    };
    {
        let mut map = held();
        if map.contains_key(&key) {
            // Another owner of this process took it meanwhile (possible only
            // on PostgreSQL over one session, whose advisory locks nest).
            drop(map);
            unlock(conn, lock);
            return Ok(false);
        }
        map.insert(
            key.clone(),
            Held {
                owner: owner.to_string(),
                _lock: lock,
            },
        );
    }
    if let Err(e) = record(conn, job, owner, now, ttl) {
        if let Some(h) = held().remove(&key) {
            unlock(conn, h._lock);
        }
        return Err(e);
    }
    Ok(true)
}

/// The lock file at `path`, opened the first time this process asks for
/// it and kept open after: a tick or a queue pass needs no new descriptor
/// to take its lease, however many the HTTP face holds.
fn lock_file(path: &str) -> Result<Arc<File>> {
    static FILES: Mutex<BTreeMap<String, Arc<File>>> = Mutex::new(BTreeMap::new());
    let mut files = FILES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = files.get(path) {
        // Still the file at that path (a database removed and made again
        // in this process has a new lock file, which is the one to lock).
        use std::os::unix::fs::MetadataExt;
        let same = match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            return Ok(f.clone());
        }
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::Storage(format!("lease: cannot open {path}: {e}")))?;
    let file = Arc::new(file);
    files.insert(path.to_string(), file.clone());
    Ok(file)
}

fn unlock(conn: &mut DbConn, lock: Lock) {
    match lock {
        Lock::File(f) => {
            // Never seen to fail on an open file; if it did, this process
            // would keep the lease until it exits, and take it again at
            // once (a lock held through this same open file).
            if let Err(e) = f.unlock() {
                tracing::warn!(error = %e, "lease: cannot unlock a lock file");
            }
        }
        Lock::Advisory(key) => {
            // A connection that fails here is gone, and its lock with it.
            let _ = diesel::sql_query("SELECT pg_advisory_unlock($1) AS ok")
                .bind::<BigInt, _>(key)
                .get_result::<Flag>(conn);
        }
    }
}

/// Writes who holds `job` (the lock is ours: whatever the row said was a
/// dead holder's).
fn record(
    conn: &mut DbConn,
    job: &str,
    owner: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<()> {
    conn.write_tx(|c| {
        diesel::update(nt_job::table.filter(nt_job::job_name.eq(job)))
            .set((
                nt_job::owner.eq(owner),
                nt_job::lease_expires_at.eq((now + ttl).naive_utc()),
            ))
            .execute(c)?;
        Ok(())
    })
}

/// The row as the lease (in-memory SQLite): compare-and-set with expiry.
fn acquire_row(
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

/// Releases `job` if `owner` holds it, recording the run; the lock is
/// freed after the record is written.
pub fn release(conn: &mut DbConn, job: &str, owner: &str, now: DateTime<Utc>) -> Result<()> {
    let written = conn.write_tx(|c| {
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
    });
    let key = match place(conn, job) {
        Ok(Place::File(k)) | Ok(Place::Advisory(k, _)) => Some(k),
        Ok(Place::Row) => None,
        Err(e) => {
            written?;
            return Err(e);
        }
    };
    if let Some(key) = key {
        let mine = {
            let mut map = held();
            match map.get(&key) {
                Some(h) if h.owner == owner => map.remove(&key),
                _ => None,
            }
        };
        if let Some(h) = mine {
            unlock(conn, h._lock);
        }
    }
    written
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
