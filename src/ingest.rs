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

fn parse_line(raw: &[u8], tx_prefix: &str, lineno: usize) -> Result<Parsed> {
    if raw.len() > MAX_LINE {
        return Err(Error::invalid(format!("longer than {MAX_LINE} bytes")));
    }
    let text = std::str::from_utf8(raw).map_err(|_| Error::invalid("not valid UTF-8"))?;
    let line: Line =
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("bad JSON: {e}")))?;
    check_line(line, tx_prefix, lineno)
}

fn check_line(line: Line, tx_prefix: &str, lineno: usize) -> Result<Parsed> {
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
            occurred_at: validate::instant("at", &line.at)?,
            collection: crate::ids::CollectionId(0),
            item_uuid: validate::uuid("item", &line.item)?,
            actor: None,
            action: Action::parse(&line.action)?,
            item_kind: validate::text("kind", &line.kind)?,
            item_title: validate::text("title", &line.title)?,
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
    /// `total` counts the lines that were not blank.
    Bad {
        bad: BadLines,
        total: usize,
    },
}

/// Reads, validates and resolves every line of `input`. Blank lines are
/// skipped. Either every line is good, or the error lists the bad ones.
pub fn parse_all(conn: &mut DbConn, input: impl BufRead) -> Result<Vec<NewModification>> {
    match check_lines(conn, input)? {
        Checked::Good(mods) => Ok(mods),
        Checked::Bad { bad, total } => Err(refusal(&bad, total)),
    }
}

/// [`parse_all`] without the verdict: every bad line comes back as data.
/// `Err` only for a failed read or a storage error.
pub fn check_lines(conn: &mut DbConn, input: impl BufRead) -> Result<Checked> {
    let tx_prefix = new_prefix();
    let mut parsed = Vec::new();
    let mut bad: BadLines = Vec::new();
    let mut total = 0usize;
    for (i, raw) in input.split(b'\n').enumerate() {
        let raw = raw?;
        let raw = raw.strip_suffix(b"\r").unwrap_or(&raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        total += 1;
        match parse_line(raw, &tx_prefix, i + 1) {
            Ok(p) => parsed.push((i + 1, p)),
            Err(e) => bad.push((i + 1, e.to_string())),
        }
    }
    resolve(conn, parsed, bad, total)
}

/// [`check_lines`] over the elements of a JSON array: element `i` is line
/// `i + 1`, held to the same rules as a line of `digestd record`.
pub fn check_values(conn: &mut DbConn, values: Vec<serde_json::Value>) -> Result<Checked> {
    let tx_prefix = new_prefix();
    let total = values.len();
    let mut parsed = Vec::new();
    let mut bad: BadLines = Vec::new();
    for (i, v) in values.into_iter().enumerate() {
        let line = serde_json::from_value::<Line>(v)
            .map_err(|e| Error::invalid(format!("bad JSON: {e}")))
            .and_then(|line| check_line(line, &tx_prefix, i + 1));
        match line {
            Ok(p) => parsed.push((i + 1, p)),
            Err(e) => bad.push((i + 1, e.to_string())),
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
    mut bad: BadLines,
    total: usize,
) -> Result<Checked> {
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
            (None, _) => bad.push((n, format!("no collection {}", p.collection))),
            (_, None) => bad.push((n, format!("no user or group named {:?}", p.actor))),
        }
    }
    if bad.is_empty() {
        return Ok(Checked::Good(out));
    }
    bad.sort();
    Ok(Checked::Bad { bad, total })
}

/// The CLI's one-line refusal: the first bad lines, then "and N more".
fn refusal(bad: &[(usize, String)], total: usize) -> Error {
    let mut msg = format!(
        "{} of {} lines are invalid, nothing was written: ",
        bad.len(),
        total
    );
    let listed: Vec<String> = bad
        .iter()
        .take(MAX_LISTED)
        .map(|(n, e)| format!("line {n}: {e}"))
        .collect();
    msg.push_str(&listed.join("; "));
    if bad.len() > MAX_LISTED {
        msg.push_str(&format!("; and {} more", bad.len() - MAX_LISTED));
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
        let mut done = 0;
        for chunk in mods.chunks(batch.max(1)) {
            modlog::record_in_tx(c, chunk)?;
            done += chunk.len();
            progress(done);
        }
        Ok(done)
    })
}
