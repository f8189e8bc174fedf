//! The sent journal: what the far end accepted, written down the moment
//! each acceptance is read, so that a process killed before it wrote its
//! outcomes does not send those messages again.
//!
//! A queue pass writes its outcomes to the database a chunk at a time
//! (`queue::email`), after the chunk came back from the listener; a crash
//! in between used to send the whole chunk again once the claims expired.
//! Now each listener tells of each acceptance at once
//! ([`crate::deliver::listener::Accepted`]: an SMTP session after reading a `250`
//! and before writing the next body), and the queue appends one line for
//! it here: the message's queue rows, the reply code and the far end's id.
//! A `write(2)` to a file survives the process's death (it is in the page
//! cache; only a machine crash can lose it, and `fsync` per message would
//! cost more than the message), and costs a few microseconds, so no session
//! waits for the database. What a crash can still send twice is what was
//! on the wire: one message per SMTP session, the one XMPP or SMS message
//! in flight.
//!
//! Each process has its own file, `<pid>-<random>.sent` in the journal
//! directory (`[email] dir`/`journal`), locked for the process's life
//! (an OS file lock, which the kernel frees when the process dies). Before
//! a round claims rows, the process replays every journal in the directory
//! whose lock it can take — a dead process's — into the database: each
//! line's rows that are not yet delivered or given up are written
//! delivered, as the dead process would have written them (one
//! `delivery_log` row each, final statuses), then the file is removed.
//! A row the dead process had written already is not touched, so a
//! journal read twice (or one whose outcomes did reach the database)
//! writes nothing twice. Its claims on the rows it never sent still
//! expire as before, and those rows are sent then.
//!
//! Processes that deliver from one database must share the journal
//! directory (one machine, or one shared file system): a process that
//! cannot see a dead process's journal sends its accepted messages again
//! when their claims expire, as before the journal.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::settle::{write_outcomes, Settle};
use super::PassReport;
use crate::db::schema::{nt_queue, nt_requests};
use crate::db::DbConn;
use crate::deliver::listener::Delivered;
use crate::deliver::sink::Outcome;
use crate::error::{Error, Result};

/// One queue row: request, party, channel.
pub type RowKey = (i64, i64, String);

/// This process's journal: an append-only file it holds locked.
pub struct Journal {
    file: Mutex<File>,
    path: PathBuf,
    dir: PathBuf,
}

/// One line: a message the far end accepted.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub code: Option<u16>,
    pub remote_id: Option<String>,
    pub rows: Vec<RowKey>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Storage(format!("journal {}: {e}", path.display()))
}

impl Journal {
    /// Creates this process's journal in `dir` (made if missing) and locks
    /// it for the journal's life.
    pub fn open(dir: &Path) -> Result<Journal> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let name = format!("{}-{:016x}.sent", std::process::id(), rand::random::<u64>());
        let path = dir.join(name);
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        file.try_lock()
            .map_err(|e| Error::Storage(format!("journal {}: cannot lock: {e}", path.display())))?;
        Ok(Journal {
            file: Mutex::new(file),
            path,
            dir: dir.to_path_buf(),
        })
    }

    /// Appends that the far end accepted the message of `rows`, in one
    /// write. A failed write is logged, not fatal: the message has gone,
    /// and its outcome still reaches the database with its chunk.
    pub fn note(&self, rows: &[RowKey], d: &Delivered) {
        let e = Entry {
            code: d.code,
            remote_id: d.remote_id.clone(),
            rows: rows.to_vec(),
        };
        let mut line = serde_json::to_vec(&e).expect("serialisable");
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(err) = f.write_all(&line) {
            tracing::warn!(path = %self.path.display(), error = %err, "journal: cannot append");
        }
    }

    /// Empties the journal once everything in it is in the database.
    pub fn clear(&self) -> Result<()> {
        let f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.set_len(0).map_err(io(&self.path))
    }

    /// What this journal holds (a pass that failed before writing all its
    /// outcomes leaves lines for the next pass of the same process).
    fn entries(&self) -> Result<Vec<Entry>> {
        read(&self.path)
    }
}

impl Drop for Journal {
    /// A process that ends in order has written everything down.
    fn drop(&mut self) {
        let empty = fs::metadata(&self.path).is_ok_and(|m| m.len() == 0);
        if empty {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The entries of the file at `path`; a last line cut short by the crash
/// is left out (its message counts as the one that was on the wire).
fn read(path: &Path) -> Result<Vec<Entry>> {
    let f = File::open(path).map_err(io(path))?;
    let mut out = Vec::new();
    for line in BufReader::new(f).split(b'\n') {
        let line = line.map_err(io(path))?;
        match serde_json::from_slice::<Entry>(&line) {
            Ok(e) => out.push(e),
            Err(_) => tracing::warn!(path = %path.display(), "journal: a line cut short, skipped"),
        }
    }
    Ok(out)
}

/// The rows of `entries` that are still open (not delivered, not given
/// up), with what settling them needs: address, retry count, the
/// request's retries and whether its rows are counted per channel.
type OpenRow = (Option<String>, i32, i32, bool, String);
type Open = HashMap<RowKey, OpenRow>;

fn open_rows(conn: &mut DbConn, entries: &[Entry]) -> Result<Open> {
    let mut ids: Vec<i64> = entries
        .iter()
        .flat_map(|e| e.rows.iter().map(|r| r.0))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut open = Open::new();
    for chunk in ids.chunks(5_000) {
        let rows: Vec<(RowKey, OpenRow)> = nt_queue::table
            .inner_join(nt_requests::table)
            .filter(nt_queue::request_id.eq_any(chunk))
            .filter(nt_queue::is_successful.eq(false))
            .filter(nt_queue::gave_up.eq(false))
            .select((
                (nt_queue::request_id, nt_queue::party_to, nt_queue::channel),
                (
                    nt_queue::address,
                    nt_queue::retry_count,
                    nt_requests::max_retries,
                    nt_requests::expand_group,
                    nt_requests::channels,
                ),
            ))
            .load(conn)?;
        open.extend(rows);
    }
    Ok(open)
}

/// What settling a replay needs of the queue: the retry policy, the
/// instant, the pass's report.
pub(super) struct Replay<'a> {
    pub policy: (chrono::Duration, chrono::Duration),
    pub now: DateTime<Utc>,
    pub report: &'a mut PassReport,
}

/// Writes `entries` delivered, in one transaction: only their rows still
/// open. Returns the messages written.
fn apply(conn: &mut DbConn, entries: Vec<Entry>, r: &mut Replay<'_>) -> Result<usize> {
    if entries.is_empty() {
        return Ok(0);
    }
    let open = open_rows(conn, &entries)?;
    let mut seen: HashSet<RowKey> = HashSet::new();
    let mut settles = Vec::new();
    for e in entries {
        let rows: Vec<(&RowKey, &OpenRow)> = e
            .rows
            .iter()
            .filter(|k| seen.insert((*k).clone()))
            .filter_map(|k| open.get(k).map(|o| (k, o)))
            .collect();
        let Some((_, first)) = rows.first() else {
            continue;
        };
        settles.push(Settle {
            attempted: true,
            address: first.0.clone(),
            keys: rows.iter().map(|(k, _)| (*k).clone()).collect(),
            retry_counts: rows.iter().map(|(_, o)| o.1).collect(),
            max_retries: rows.iter().map(|(_, o)| o.2).collect(),
            rows_of_request: rows
                .iter()
                .map(|(_, o)| (!o.3).then(|| o.4.split(',').filter(|c| !c.is_empty()).count()))
                .collect(),
            outcome: Outcome::Sent {
                code: e.code,
                text: "accepted before the sending process died (from its journal)".into(),
                remote_id: e.remote_id,
            },
        });
    }
    let n = settles.len();
    if n > 0 {
        let (policy, now) = (r.policy, r.now);
        let report = &mut *r.report;
        conn.write_tx(|c| write_outcomes(c, policy, &settles, now, report))?;
    }
    Ok(n)
}

/// Replays this process's own journal (what a pass that failed before
/// writing all its outcomes left) into the database, and empties it;
/// returns the messages written. Called when a pass starts.
pub(super) fn replay_own(conn: &mut DbConn, own: &Journal, r: &mut Replay<'_>) -> Result<usize> {
    let n = apply(conn, own.entries()?, r)?;
    own.clear()?;
    Ok(n)
}

/// Replays every dead process's journal in the directory of `own` into
/// the database; returns the messages written. Called before each claim.
pub(super) fn replay_dead(conn: &mut DbConn, own: &Journal, r: &mut Replay<'_>) -> Result<usize> {
    let listing = fs::read_dir(&own.dir).map_err(io(&own.dir))?;
    let mut n = 0;
    for entry in listing.flatten() {
        let path = entry.path();
        if path == own.path || path.extension().is_none_or(|x| x != "sent") {
            continue;
        }
        n += replay_file(conn, &path, r)?;
    }
    Ok(n)
}

/// One other process's journal, when that process is dead (its lock can
/// be taken): written, then removed. A live one is left alone.
fn replay_file(conn: &mut DbConn, path: &Path, r: &mut Replay<'_>) -> Result<usize> {
    let Ok(f) = OpenOptions::new().read(true).write(true).open(path) else {
        // Removed meanwhile by another process's replay.
        return Ok(0);
    };
    if f.try_lock().is_err() {
        return Ok(0);
    }
    let n = apply(conn, read(path)?, r)?;
    if n > 0 {
        tracing::warn!(
            path = %path.display(),
            messages = n,
            "journal: a dead process's accepted messages written delivered"
        );
    }
    // Removed while still locked, so a second replayer that opened it
    // before the removal finds its rows delivered and writes nothing.
    fs::remove_file(path).map_err(io(path))?;
    drop(f);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(code: u16) -> Delivered {
        Delivered {
            code: Some(code),
            text: "ok".into(),
            remote_id: Some("id 1".into()),
        }
    }

    #[test]
    fn lines_are_read_back_and_a_line_cut_short_or_garbled_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.note(&[(1000, 7, "email".into())], &accepted(250));
        j.note(
            &[(1001, 8, "sms".into()), (1002, 8, "sms".into())],
            &accepted(201),
        );
        // What a crash in the middle of a write, or a stray file, leaves.
        {
            let mut f = OpenOptions::new().append(true).open(&j.path).unwrap();
            f.write_all(b"not json\n\xff\xfe\n{\"code\":250,\"rem")
                .unwrap();
        }
        let got = j.entries().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].rows, vec![(1000, 7, "email".to_string())]);
        assert_eq!(got[1].code, Some(201));
        assert_eq!(got[1].remote_id.as_deref(), Some("id 1"));
        j.clear().unwrap();
        assert!(j.entries().unwrap().is_empty());
    }

    #[test]
    fn a_live_journal_is_locked_and_an_empty_one_goes_with_its_process() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        // Another open of a live journal cannot take its lock.
        let other = File::open(&j.path).unwrap();
        assert!(other.try_lock().is_err());
        drop(other);
        let path = j.path.clone();
        drop(j);
        assert!(!path.exists(), "an empty journal is removed");
    }
}
