//! `collection`, `item put`, `record`, `seen` and `purge`: what digests are made of.

use std::io::Write;

use clap::{Args, Subcommand};

use super::{read_stdin_limited, Ctx};
use crate::error::{Error, Result};
use crate::{ingest, items, modlog, seen, validate};

#[derive(Subcommand, Debug)]
pub enum CollectionCmd {
    /// Add a collection; prints its UUID as the last line.
    Add { name: String },
    /// Delete a collection: its subscriptions end (unsent digests cancelled),
    /// items in no other collection and its modification log are deleted.
    Delete { uuid: String },
    /// Rename a collection.
    Rename { uuid: String, name: String },
    /// Offer a collection on the public sign-up page (`/subscribe`), or
    /// stop offering it; who signed up stays subscribed.
    Set {
        uuid: String,
        /// Offer it on the sign-up page.
        #[arg(
            long,
            conflicts_with = "no_public",
            required_unless_present = "no_public"
        )]
        public: bool,
        /// Stop offering it.
        #[arg(long)]
        no_public: bool,
    },
    /// List collections ("public" after the ones on the sign-up page).
    List {
        /// A JSON array of collections (id, uuid, name, public).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum ItemCmd {
    /// Upsert one item (JSON on stdin) and record its diff.
    Put,
}

#[derive(Args, Debug)]
pub struct SeenArgs {
    /// The user who saw the item.
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub party: Option<String>,
    /// The item's UUID.
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub item: Option<String>,
    /// When they saw it: RFC 3339, now, or +/-DURATION from now (default now).
    #[arg(
        long,
        value_name = "TIME",
        allow_hyphen_values = true,
        conflicts_with = "file"
    )]
    pub at: Option<String>,
    /// Marks as JSON lines {"party", "item", "at"} from a file (- for stdin),
    /// all checked before any is written, in one transaction.
    #[arg(long, value_name = "FILE")]
    pub file: Option<String>,
}

/// Largest `digestd seen --file` accepted.
const MAX_SEEN_FILE: usize = 16 << 20;

#[derive(Args, Debug)]
pub struct PurgeArgs {
    /// A whole number and a unit s, m, h, d or w, e.g. 90d, 12h, 2w.
    #[arg(long, value_name = "DURATION")]
    pub older_than: String,
}

pub fn collection(cmd: CollectionCmd, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    match cmd {
        CollectionCmd::Add { name } => {
            let c = items::create_collection(&mut conn, ctx.now(), &name, None)?;
            writeln!(ctx.out, "{}", c.uuid)?;
        }
        CollectionCmd::Delete { uuid } => {
            let r = crate::remove::collection(&mut conn, ctx.now(), &uuid)?;
            writeln!(ctx.out, "deleted collection {uuid}: {}", r.summary())?;
        }
        CollectionCmd::Rename { uuid, name } => {
            let c = items::rename_collection(&mut conn, &uuid, &name)?;
            writeln!(ctx.out, "renamed collection {} to {}", c.uuid, c.name)?;
        }
        CollectionCmd::Set { uuid, public, .. } => {
            let c = items::set_public(&mut conn, &uuid, public)?;
            let now = if public { "public" } else { "not public" };
            writeln!(ctx.out, "collection {} ({}) is {now}", c.uuid, c.name)?;
        }
        CollectionCmd::List { json } => {
            let cs = items::list_collections(&mut conn)?;
            let public = items::public_ids(&mut conn)?;
            if json {
                let rows: Vec<serde_json::Value> = cs
                    .iter()
                    .map(|c| {
                        let mut v = serde_json::to_value(c).expect("serialisable");
                        v["public"] = public.contains(&c.id).into();
                        v
                    })
                    .collect();
                writeln!(
                    ctx.out,
                    "{}",
                    serde_json::to_string(&rows).expect("serialisable")
                )?;
            } else {
                for c in cs {
                    let mark = if public.contains(&c.id) {
                        "  public"
                    } else {
                        ""
                    };
                    writeln!(ctx.out, "{}  {}{mark}", c.uuid, c.name)?;
                }
            }
        }
    }
    Ok(())
}

pub fn item(cmd: ItemCmd, ctx: &mut Ctx) -> Result<()> {
    match cmd {
        ItemCmd::Put => {
            let text = read_stdin_limited(1 << 20)?;
            let input: items::ItemInput = serde_json::from_str(&text)
                .map_err(|e| Error::invalid(format!("item: bad JSON: {e}")))?;
            let mut conn = ctx.conn()?;
            let at = ctx.cfg.record.at_bounds(ctx.now());
            let outcome = items::put_item_within(&mut conn, ctx.now(), &input, &at)?;
            writeln!(
                ctx.out,
                "{}",
                serde_json::to_string(&outcome).expect("serialisable")
            )?;
        }
    }
    Ok(())
}

pub fn record(ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    let at = ctx.cfg.record.at_bounds(ctx.now());
    let mods = ingest::parse_all(&mut conn, std::io::stdin().lock(), &at)?;
    let bar = super::progress(mods.len());
    let n = ingest::write_batched(&mut conn, &mods, ctx.cfg.record.batch_size, &mut |done| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    writeln!(ctx.out, "{n}")?;
    Ok(())
}

/// The marks of `digestd seen`: the arguments, or the file's lines.
fn seen_marks(a: SeenArgs, now: chrono::DateTime<chrono::Utc>) -> Result<Vec<seen::MarkInput>> {
    let Some(file) = a.file else {
        let at = validate::cli_instant("--at", a.at.as_deref().unwrap_or("now"), now)?;
        return Ok(vec![seen::MarkInput {
            party: a.party.unwrap_or_default(),
            item: a.item.unwrap_or_default(),
            at: at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        }]);
    };
    let text = match file.as_str() {
        "-" => read_stdin_limited(MAX_SEEN_FILE)?,
        path => {
            let bytes =
                std::fs::read(path).map_err(|e| Error::invalid(format!("--file {path}: {e}")))?;
            if bytes.len() > MAX_SEEN_FILE {
                return Err(Error::invalid(format!(
                    "--file {path} is larger than {MAX_SEEN_FILE} bytes"
                )));
            }
            String::from_utf8(bytes)
                .map_err(|_| Error::invalid(format!("--file {path} is not valid UTF-8")))?
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::invalid(format!(
                    "line {}: bad mark: {e}; nothing was written",
                    n + 1
                ))
            })
        })
        .collect()
}

/// `digestd seen`: every mark checked, then all written in one transaction.
pub fn seen(a: SeenArgs, ctx: &mut Ctx) -> Result<()> {
    let marks = seen_marks(a, ctx.now())?;
    if marks.is_empty() {
        return Err(Error::invalid("no marks: the file holds no line"));
    }
    let bounds = ctx.cfg.record.at_bounds(ctx.now());
    let mut conn = ctx.conn()?;
    let mut checked = Vec::with_capacity(marks.len());
    for (k, batch) in marks.chunks(seen::MAX_BATCH).enumerate() {
        match seen::check(&mut conn, batch, &bounds)? {
            Ok(m) => checked.push(m),
            Err(mut r) => {
                r.index += k * seen::MAX_BATCH;
                return Err(r.into_error());
            }
        }
    }
    let n = conn.write_tx(|c| {
        checked
            .iter()
            .map(|m| seen::record_in_tx(c, m))
            .sum::<Result<usize>>()
    })?;
    let s = if n == 1 { "" } else { "s" };
    writeln!(ctx.out, "recorded {n} seen mark{s}")?;
    Ok(())
}

pub fn purge(a: PurgeArgs, ctx: &mut Ctx) -> Result<()> {
    let cutoff = ctx.now() - validate::duration(&a.older_than)?;
    let mut conn = ctx.conn()?;
    let p = modlog::purge(&mut conn, cutoff)?;
    let marks = seen::purge_before(&mut conn, cutoff)?;
    writeln!(
        ctx.out,
        "purged {} modifications, {} values and {marks} seen marks older than {}",
        p.modifications,
        p.values,
        cutoff.to_rfc3339()
    )?;
    if p.waiting > 0 {
        writeln!(
            ctx.out,
            "kept {} older modifications that were recorded late and are not yet in every digest that owes them",
            p.waiting
        )?;
    }
    Ok(())
}
