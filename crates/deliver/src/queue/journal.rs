//! The sent journal: what the far end accepted, written down the moment
//! each acceptance is read, so that a process killed before it wrote its
//! outcomes does not send those messages again.
//!
//! A queue pass writes its outcomes to the database a chunk at a time
//! (`queue::email`), after the chunk came back from the listener; a crash
//! in between used to send the whole chunk again once the claims expired.
//! Now each listener tells of each acceptance at once
//! ([`crate::listener::Accepted`]: an SMTP session after reading a `250`
//! and before writing the next body), and the queue appends one line for
//! it here: the message's queue rows, the reply code and the far end's id.
//! A `write(2)` to a file survives the process's death (it is in the page
//! cache; only a machine crash can lose it, and `fsync` per message would
//! cost more than the message), and costs a few microseconds, so no session
//! waits for the database. What a crash can still send twice is what was
//! on the wire: one message per SMTP session, the one SMS text in flight,
//! the XMPP stanzas the server has not yet acknowledged (at most `[xmpp]
//! ack_window`).
//!
//! Each process has its own file, `<tag>-<pid>-<random>.sent` in the
//! journal directory (`[queue] journal_dir`: by default beside an SQLite
//! database, `PATH.journal/`, or `data/journal/` for PostgreSQL; never in
//! the `dir` transport's outbox, which is output), locked for the
//! process's life (an OS file lock, which the kernel frees when the
//! process dies). `<tag>` names the database ([`MessageKey::installation_tag`],
//! from its own secret): a directory shared by processes of two databases
//! never has one database's journal replayed into the other, where its row
//! keys would name other people's messages. Before a round claims rows,
//! the process replays every journal of its database in the directory
//! whose lock it can take — a dead process's — into the database: each
//! line's rows that are not yet delivered or given up are written
//! delivered, as the dead process would have written them (one
//! `delivery_log` row each, final statuses), then the file is removed.
//! A row the dead process had written already is not touched, so a
//! journal read twice (or one whose outcomes did reach the database)
//! writes nothing twice. Its claims on the rows it never sent still
//! expire as before, and those rows are sent then.
//!
//! Journals of the release before, `<pid>-<random>.sent` in `[email]
//! dir`/`journal/`, are replayed the same way while that directory exists
//! (the upgrade's first pass after a crash; a process of the old release
//! still running holds its lock and is left alone), and the directory is
//! removed once empty. That fallback is for one release.
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
use crate::error::{Error, Result};
use crate::listener::Delivered;
#[cfg(doc)]
use crate::msgid::MessageKey;
use crate::sink::Outcome;

/// One queue row: request, party, channel.
pub type RowKey = (i64, i64, String);

/// This process's journal: an append-only file it holds locked.
pub struct Journal {
    file: Mutex<File>,
    path: PathBuf,
    dir: PathBuf,
    /// The database's tag, which starts the names of its journals.
    tag: String,
    /// Where the release before kept journals (`[email] dir`/`journal`).
    legacy: Option<PathBuf>,
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

/// How the names of [`check_dir`]'s probes begin, which the sweep matches.
const PROBE_PREFIX: &str = ".probe-";

/// Makes `dir` (with its parents) and checks that a file can be made in
/// it: what a process that delivers checks at start, so that a journal
/// directory it cannot use stops it with one line (exit 2) before it sends
/// anything.
pub(crate) fn check_dir(dir: &Path) -> Result<()> {
    let bad = |e: std::io::Error| {
        Error::invalid(format!(
            "config: queue.journal_dir {}: {}",
            crate::validate::escape_for_line(&dir.display().to_string()),
            crate::validate::escape_for_line(&e.to_string())
        ))
    };
    fs::create_dir_all(dir).map_err(bad)?;
    let probe = dir.join(format!(
        "{PROBE_PREFIX}{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(bad)?;
    let _ = fs::remove_file(&probe);
    sweep_probes(dir);
    Ok(())
}

/// Removes the probes that processes killed inside [`check_dir`] left
/// behind. A probe lives only between its create and its remove, so one
/// found here is litter, or a live process's that its own remove no longer
/// finds (which it ignores).
fn sweep_probes(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let is_probe = name.to_str().is_some_and(|n| n.starts_with(PROBE_PREFIX));
        if is_probe && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(e.path());
        }
    }
}

impl Journal {
    /// Creates this process's journal for the database tagged `tag` in
    /// `dir` (made if missing) and locks it for the journal's life;
    /// `legacy` is where the release before kept its journals.
    pub fn open(dir: &Path, tag: &str, legacy: Option<PathBuf>) -> Result<Journal> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let name = format!(
            "{tag}-{}-{:016x}.sent",
            std::process::id(),
            rand::random::<u64>()
        );
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
            tag: tag.to_string(),
            // The same directory is not read twice.
            legacy: legacy.filter(|l| l != dir),
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
    pub policy: super::settle::Policy,
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
            // Not read here: the settle reads what its events need.
            of: vec![None; rows.len()],
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

/// Replays every dead process's journal of this database in the
/// directory of `own`, and every dead one of the release before in its
/// directory, into the database; returns the messages written. Called
/// before each claim.
pub(super) fn replay_dead(conn: &mut DbConn, own: &Journal, r: &mut Replay<'_>) -> Result<usize> {
    let listing = fs::read_dir(&own.dir).map_err(io(&own.dir))?;
    let mut n = 0;
    for entry in listing.flatten() {
        let path = entry.path();
        if path == own.path || !is_journal(&path, Some(&own.tag)) {
            continue;
        }
        n += replay_file(conn, &path, r)?;
    }
    if let Some(legacy) = &own.legacy {
        n += replay_legacy(conn, legacy, r)?;
    }
    Ok(n)
}

/// Whether `path` is a journal: `<tag>-<pid>-<random>.sent` of the
/// database tagged `tag`, or with `None` the release before's
/// `<pid>-<random>.sent`.
fn is_journal(path: &Path, tag: Option<&str>) -> bool {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".sent"))
    else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    match (tag, parts.as_slice()) {
        (Some(tag), [t, _, _]) => *t == tag,
        (None, [_, _]) => true,
        _ => false,
    }
}

/// The release before's journals in `dir` (`[email] dir`/`journal`),
/// while that directory exists; the directory is removed once empty.
fn replay_legacy(conn: &mut DbConn, dir: &Path, r: &mut Replay<'_>) -> Result<usize> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut n = 0;
    for entry in listing.flatten() {
        let path = entry.path();
        if is_journal(&path, None) {
            n += replay_file(conn, &path, r)?;
        }
    }
    // Fails, and is left, while anything is still in it.
    let _ = fs::remove_dir(dir);
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
mod tests;
