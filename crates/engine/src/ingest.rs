//! `digestd record`: JSON lines of modifications from another system.
//!
//! Every line is parsed, validated and resolved (collection UUID, actor
//! name) before anything is written; one bad line means nothing is written
//! and the error names every bad line. Then the lines go to
//! [`modlog::record_in_tx`] in batches inside one transaction.
//!
//! [`check_lines`] and [`check_values`] do the validation and hand back
//! every bad line as data (`POST /api/v1/modifications` lists them);
//! [`parse_all`] turns them into the CLI's one-line error.

use std::collections::BTreeSet;
use std::io::BufRead;

use serde::Deserialize;

use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::items;
use crate::modlog::{self, Action, Change, NewModification};
use crate::parties;
use crate::validate;

/// Longest input line accepted.
pub const MAX_LINE: usize = 1 << 20;
/// Longest attribute value accepted, in bytes.
pub const MAX_VALUE: usize = 64 * 1024;
/// How many bad lines the error message lists before "and N more".
const MAX_LISTED: usize = 10;
/// Bad lines kept (the first by line number); the rest are only counted,
/// so a flood of bad input costs no more memory than a little of it.
pub const MAX_BAD_KEPT: usize = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    collection: String,
    item: String,
    actor: String,
    action: String,
    at: String,
    title: String,
    kind: String,
    /// The item's address in its source system (http or https).
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    changes: Vec<LineChange>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineChange {
    attribute: String,
    old: Option<String>,
    new: Option<String>,
}

pub use crate::validate::AtBounds;

/// A validated line whose names are not yet resolved.
struct Parsed {
    collection: String,
    actor: String,
    m: NewModification,
}

fn value(what: &str, v: Option<String>) -> Result<Option<String>> {
    if let Some(s) = &v {
        validate::value(what, s, MAX_VALUE)?;
    }
    Ok(v)
}

fn parse_line(raw: &[u8], tx_prefix: &str, lineno: usize, at: &AtBounds) -> Result<Parsed> {
    if raw.len() > MAX_LINE {
        return Err(Error::invalid(format!("longer than {MAX_LINE} bytes")));
    }
    let text = std::str::from_utf8(raw).map_err(|_| Error::invalid("not valid UTF-8"))?;
    let line: Line =
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("bad JSON: {e}")))?;
    check_line(line, tx_prefix, lineno, at)
}

fn check_line(line: Line, tx_prefix: &str, lineno: usize, at: &AtBounds) -> Result<Parsed> {
    let mut seen = BTreeSet::new();
    let mut changes = Vec::with_capacity(line.changes.len());
    for ch in line.changes {
        let attribute = validate::text("attribute", &ch.attribute)?;
        if attribute.len() > 100 {
            return Err(Error::invalid("attribute name longer than 100 bytes"));
        }
        if !seen.insert(attribute.clone()) {
            return Err(Error::invalid(format!(
                "attribute {attribute:?} changed twice"
            )));
        }
        changes.push(Change {
            attribute,
            old: value("old value", ch.old)?,
            new: value("new value", ch.new)?,
        });
    }
    Ok(Parsed {
        collection: validate::uuid("collection", &line.collection)?,
        actor: line.actor,
        m: NewModification {
            tx_id: format!("{tx_prefix}:{lineno}"),
            occurred_at: at.check(validate::instant("at", &line.at)?)?,
            collection: crate::ids::CollectionId(0),
            item_uuid: validate::uuid("item", &line.item)?,
            actor: None,
            action: Action::parse(&line.action)?,
            item_kind: validate::text("kind", &line.kind)?,
            item_title: validate::text("title", &line.title)?,
            item_url: line.url.as_deref().map(validate::item_url).transpose()?,
            changes,
        },
    })
}

/// Every bad line of a refused batch: its number (1-based) and why, in order.
pub type BadLines = Vec<(usize, String)>;

/// What validating a batch found: every line good, or the bad ones.
#[derive(Debug)]
pub enum Checked {
    Good(Vec<NewModification>),
    /// The first [`MAX_BAD_KEPT`] bad lines; `bad_total` counts them all,
    /// `total` every line that was not blank.
    Bad {
        bad: BadLines,
        bad_total: usize,
        total: usize,
    },
}

/// Bad lines as they are found: the first [`MAX_BAD_KEPT`] kept, all counted.
#[derive(Default)]
pub struct Bad {
    pub kept: BadLines,
    pub count: usize,
}

impl Bad {
    pub fn push(&mut self, line: usize, why: String) {
        self.count += 1;
        if self.kept.len() < MAX_BAD_KEPT {
            self.kept.push((line, why));
        }
    }
}

/// Line `i` (from 1) of an input without the UTF-8 byte order mark some
/// editors put at the start of a file, and without its `\r`.
pub fn line_text(i: usize, buf: &[u8]) -> &[u8] {
    let raw = buf.strip_suffix(b"\r").unwrap_or(buf);
    match i {
        1 => raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw),
        _ => raw,
    }
}

/// Reads one line (without its `\n`) into `buf`, keeping at most
/// `MAX_LINE + 1` bytes: a longer line is read through to its end and
/// dropped, so one huge line costs no memory. `None` at the end of input.
pub fn read_line_bounded(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<()>> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any.then_some(()));
        }
        any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1),
            None => (chunk, chunk.len()),
        };
        let room = (MAX_LINE + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&part[..part.len().min(room)]);
        let ended = done > part.len();
        input.consume(done);
        if ended {
            return Ok(Some(()));
        }
    }
}

/// Reads, validates and resolves every line of `input`. Blank lines are
/// skipped. Either every line is good, or the error lists the bad ones.
pub fn parse_all(
    conn: &mut DbConn,
    input: impl BufRead,
    at: &AtBounds,
) -> Result<Vec<NewModification>> {
    match check_lines(conn, input, at)? {
        Checked::Good(mods) => Ok(mods),
        Checked::Bad {
            bad,
            bad_total,
            total,
        } => Err(refusal(&bad, bad_total, total)),
    }
}

/// [`parse_all`] without the verdict: every bad line comes back as data.
/// `Err` only for a failed read or a storage error.
pub(crate) fn check_lines(
    conn: &mut DbConn,
    mut input: impl BufRead,
    at: &AtBounds,
) -> Result<Checked> {
    let mut scan = Scan::new(at);
    let mut buf = Vec::new();
    while read_line_bounded(&mut input, &mut buf)?.is_some() {
        scan.push(&buf);
    }
    scan.resolve(conn)
}

/// [`check_lines`] a line at a time, for input that arrives in pieces
/// (`POST /api/v1/modifications` as NDJSON): each line is checked as it is
/// pushed and only what it yields is kept (its modification, or why it is
/// bad), never the line itself. [`Scan::resolve`] then needs the database.
pub struct Scan {
    tx_prefix: String,
    at: AtBounds,
    parsed: Vec<(usize, Parsed)>,
    bad: Bad,
    total: usize,
    lines: usize,
}

impl Scan {
    pub fn new(at: &AtBounds) -> Scan {
        Scan {
            tx_prefix: new_prefix(),
            at: *at,
            parsed: Vec::new(),
            bad: Bad::default(),
            total: 0,
            lines: 0,
        }
    }

    /// How many lines were pushed, blank ones included.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// The next line, as [`read_line_bounded`] leaves it: without its
    /// `\n`, at most [`MAX_LINE`] + 1 bytes (more is refused as too long).
    pub fn push(&mut self, buf: &[u8]) {
        self.lines += 1;
        let i = self.lines;
        let raw = line_text(i, buf);
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.total += 1;
        match parse_line(raw, &self.tx_prefix, i, &self.at) {
            Ok(p) => self.parsed.push((i, p)),
            Err(e) => self.bad.push(i, e.to_string()),
        }
    }

    /// Resolves the good lines' names; the verdict on the whole input.
    pub fn resolve(self, conn: &mut DbConn) -> Result<Checked> {
        resolve(conn, self.parsed, self.bad, self.total)
    }
}

/// [`check_lines`] over the elements of a JSON array: element `i` is line
/// `i + 1`, held to the same rules as a line of `digestd record`.
pub fn check_values(
    conn: &mut DbConn,
    values: Vec<serde_json::Value>,
    at: &AtBounds,
) -> Result<Checked> {
    let total = values.len();
    let lines = values.into_iter().map(|v| {
        serde_json::from_value::<Line>(v).map_err(|e| Error::invalid(format!("bad JSON: {e}")))
    });
    check_all(conn, lines, total, at)
}

/// [`check_values`] for `text` when it is a JSON array whose every element
/// has the shape of a line: parsed straight into lines, not through a tree
/// of values first. `None` when it is not: the caller goes through
/// [`check_values`], which names each element that is not a line.
pub fn check_array(conn: &mut DbConn, text: &str, at: &AtBounds) -> Result<Option<Checked>> {
    let Ok(lines) = serde_json::from_str::<Vec<Line>>(text) else {
        return Ok(None);
    };
    let total = lines.len();
    check_all(conn, lines.into_iter().map(Ok), total, at).map(Some)
}

/// Checks each of `total` lines (numbered from 1) and resolves the good ones.
fn check_all(
    conn: &mut DbConn,
    lines: impl Iterator<Item = Result<Line>>,
    total: usize,
    at: &AtBounds,
) -> Result<Checked> {
    let tx_prefix = new_prefix();
    let mut parsed = Vec::new();
    let mut bad = Bad::default();
    for (i, line) in lines.enumerate() {
        match line.and_then(|line| check_line(line, &tx_prefix, i + 1, at)) {
            Ok(p) => parsed.push((i + 1, p)),
            Err(e) => bad.push(i + 1, e.to_string()),
        }
    }
    resolve(conn, parsed, bad, total)
}

fn new_prefix() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Resolves the parsed lines' collections and actors; the lines that name
/// nothing stored join the bad ones.
fn resolve(
    conn: &mut DbConn,
    parsed: Vec<(usize, Parsed)>,
    parse_bad: Bad,
    total: usize,
) -> Result<Checked> {
    // Lines are parsed in order, so each phase keeps its lowest-numbered
    // bad lines; the lowest of both are among those kept.
    let mut bad = Bad::default();
    let colls: BTreeSet<&str> = parsed.iter().map(|(_, p)| p.collection.as_str()).collect();
    let colls = items::collection_ids(conn, &colls.into_iter().collect::<Vec<_>>())?;
    let actors: BTreeSet<&str> = parsed.iter().map(|(_, p)| p.actor.as_str()).collect();
    let actors = parties::ids_by_name(conn, &actors.into_iter().collect::<Vec<_>>())?;
    let mut out = Vec::with_capacity(parsed.len());
    for (n, p) in parsed {
        match (colls.get(&p.collection), actors.get(&p.actor)) {
            (Some(c), Some(a)) => {
                let mut m = p.m;
                m.collection = *c;
                m.actor = Some(*a);
                out.push(m);
            }
            (None, _) => bad.push(n, format!("no collection {}", p.collection)),
            (_, None) => bad.push(n, format!("no user or group named {:?}", p.actor)),
        }
    }
    let bad_total = bad.count + parse_bad.count;
    if bad_total == 0 {
        return Ok(Checked::Good(out));
    }
    let mut kept = bad.kept;
    kept.extend(parse_bad.kept);
    kept.sort();
    kept.truncate(MAX_BAD_KEPT);
    Ok(Checked::Bad {
        bad: kept,
        bad_total,
        total,
    })
}

/// The CLI's one-line refusal: the first bad lines, then "and N more".
pub fn refusal(bad: &[(usize, String)], bad_total: usize, total: usize) -> Error {
    let mut msg = format!("{bad_total} of {total} lines are invalid, nothing was written: ");
    let listed: Vec<String> = bad
        .iter()
        .take(MAX_LISTED)
        .map(|(n, e)| format!("line {n}: {e}"))
        .collect();
    msg.push_str(&listed.join("; "));
    if bad_total > MAX_LISTED {
        msg.push_str(&format!("; and {} more", bad_total - MAX_LISTED));
    }
    Error::invalid(msg)
}

/// Writes validated modifications in one transaction, in statements of
/// `batch` rows, calling `progress` with the running count after each: a
/// storage error anywhere leaves nothing behind.
pub fn write_batched(
    conn: &mut DbConn,
    mods: &[NewModification],
    batch: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<usize> {
    conn.write_tx(|c| {
        // Every collection's feed row first, in id order: the chunks below
        // then lock nothing new (see `modlog::touch_feeds`).
        modlog::touch_feeds(c, mods.iter().map(|m| m.collection))?;
        let mut done = 0;
        for chunk in mods.chunks(batch.max(1)) {
            modlog::record_in_tx(c, chunk)?;
            done += chunk.len();
            progress(done);
        }
        Ok(done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut r = std::io::BufReader::with_capacity(7, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while read_line_bounded(&mut r, &mut buf).unwrap().is_some() {
            out.push(buf.clone());
        }
        out
    }

    #[test]
    fn lines_are_read_whole_up_to_the_limit_and_no_further() {
        assert_eq!(
            lines(b"a\nbc\n\nd"),
            vec![b"a".to_vec(), b"bc".to_vec(), vec![], b"d".to_vec()]
        );
        assert!(lines(b"").is_empty());
        // The audit's finding 9: a 1.5 GB line was read whole before it was
        // refused. A line past the limit keeps MAX_LINE + 1 bytes at most.
        let mut big = vec![b'x'; 3 * MAX_LINE];
        big.extend_from_slice(b"\nnext\n");
        let got = lines(&big);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE + 1);
        assert_eq!(got[1], b"next");
    }

    #[test]
    fn a_flood_of_bad_lines_keeps_the_first_hundred_and_counts_all() {
        let mut bad = Bad::default();
        for i in 1..=100_000 {
            bad.push(i, format!("bad {i}"));
        }
        assert_eq!((bad.kept.len(), bad.count), (MAX_BAD_KEPT, 100_000));
        assert_eq!(bad.kept.last().unwrap().0, MAX_BAD_KEPT);
    }
}
