//! `digestd record`: JSON lines of modifications from another system.
//!
//! Every line is parsed, validated and resolved (collection UUID, actor
//! name) before anything is written; one bad line means nothing is written
//! and the error names every bad line. Then the lines go to
//! [`modlog::record_in_tx`] in batches inside one transaction.

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

/// Reads, validates and resolves every line of `input`. Blank lines are
/// skipped. Either every line is good, or the error lists the bad ones.
pub fn parse_all(conn: &mut DbConn, input: impl BufRead) -> Result<Vec<NewModification>> {
    let tx_prefix = uuid::Uuid::new_v4().simple().to_string();
    let mut parsed = Vec::new();
    let mut bad: Vec<(usize, String)> = Vec::new();
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
        return Ok(out);
    }
    bad.sort();
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
    Err(Error::invalid(msg))
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
