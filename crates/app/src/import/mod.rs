//! Bulk import: `digestd user import`, `subscription import` and
//! `group import` read JSON lines on stdin. As `digestd record` does, every
//! line is parsed and validated before anything is written; one bad line
//! means nothing is written and the error names the bad lines (the first
//! [`ingest::MAX_BAD_KEPT`], and how many in all). Good input is written in
//! one transaction, in multi-row statements where the rows are new.
//!
//! [`users`] upserts users by name, [`subs`] stores subscriptions with the
//! same rules as `subscription add`, [`groups`] adds members to groups.

pub mod groups;
pub mod subs;
pub mod users;

use std::io::BufRead;

use serde::de::DeserializeOwned;

use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ingest::{self, Bad};

/// Every non-blank line of `input` parsed as a `T`, with its 1-based line
/// number; the lines that are not a `T` (or too long, or not UTF-8) in
/// `bad`. Returns the number of non-blank lines too.
pub(crate) fn read_lines<T: DeserializeOwned>(
    mut input: impl BufRead,
    bad: &mut Bad,
) -> Result<(Vec<(usize, T)>, usize)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let (mut i, mut total) = (0usize, 0usize);
    while ingest::read_line_bounded(&mut input, &mut buf)?.is_some() {
        i += 1;
        let raw = ingest::line_text(i, &buf);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        total += 1;
        if raw.len() > ingest::MAX_LINE {
            bad.push(i, format!("longer than {} bytes", ingest::MAX_LINE));
            continue;
        }
        match serde_json::from_slice::<T>(raw) {
            Ok(v) => out.push((i, v)),
            Err(e) => bad.push(i, format!("bad JSON: {e}")),
        }
    }
    Ok((out, total))
}

/// The one-line refusal when `bad` holds anything.
pub fn verdict(bad: Bad, total: usize) -> Result<()> {
    if bad.count == 0 {
        return Ok(());
    }
    let mut kept = bad.kept;
    kept.sort();
    Err(ingest::refusal(&kept, bad.count, total))
}

/// Runs `each` on every line, in input order, in one write transaction.
/// A line's bad-input error joins `bad`; when any line is bad (here or
/// before), the transaction rolls back and the refusal names them all.
/// `progress` gets the running count every 1,000 lines.
fn each_line<L, T>(
    conn: &mut DbConn,
    lines: &[(usize, L)],
    bad: Bad,
    total: usize,
    progress: &mut dyn FnMut(usize),
    mut each: impl FnMut(&mut DbConn, &L) -> Result<T>,
) -> Result<Vec<T>> {
    let mut bad = bad;
    let out = conn.write_tx(|c| {
        let mut out = Vec::with_capacity(lines.len());
        for (i, (n, line)) in lines.iter().enumerate() {
            match each(c, line) {
                Ok(v) => out.push(v),
                Err(e) if e.is_bad_input() => bad.push(*n, e.to_string()),
                Err(e) => return Err(e),
            }
            if i % 1000 == 999 {
                progress(i + 1);
            }
        }
        if bad.count > 0 {
            // Rolls back; the refusal below says why.
            return Err(Error::invalid("import refused"));
        }
        Ok(out)
    });
    verdict(bad, total)?;
    out
}
