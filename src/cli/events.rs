//! `events`: the operators' event outbox (`[events]`): list what was
//! recorded, post a span again, make a secret for the receiver.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use crate::error::Result;
use crate::events::{self, Kind};
use crate::text::one_line;
use crate::validate;

#[derive(Subcommand, Debug)]
pub enum EventsCmd {
    /// The recorded events, oldest first: id, when, type, status, attempts,
    /// last error (- for none), data.
    List {
        /// Only those that happened at or after this instant (RFC 3339, or
        /// -DURATION from now, e.g. -1d).
        #[arg(long, allow_hyphen_values = true)]
        since: Option<String>,
        /// Only this type (e.g. digest.delivered, unsubscribe).
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
        /// At most this many (default 1000).
        #[arg(long, default_value_t = 1000)]
        limit: i64,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Post again, with the same webhook-id, the events that happened at or
    /// after an instant (sent, given up or skipped ones; pending ones wait
    /// already): the next queue pass posts them.
    Replay {
        /// RFC 3339, or -DURATION from now.
        #[arg(long, allow_hyphen_values = true)]
        since: String,
        /// Only this type.
        #[arg(long = "type", value_name = "TYPE")]
        kind: Option<String>,
    },
    /// Print a new Standard Webhooks secret for [events] secret.
    Secret,
}

pub fn events(cmd: EventsCmd, ctx: &mut Ctx) -> Result<()> {
    match cmd {
        EventsCmd::List {
            since,
            kind,
            limit,
            json,
        } => {
            let since = since
                .map(|s| validate::cli_instant("--since", &s, ctx.now()))
                .transpose()?;
            let kind = kind.as_deref().map(Kind::parse).transpose()?;
            if !(1..=1_000_000).contains(&limit) {
                return Err(crate::Error::invalid("--limit must be 1-1000000"));
            }
            let mut conn = ctx.conn()?;
            for e in events::list(&mut conn, since, kind, limit)? {
                if json {
                    writeln!(ctx.out, "{}", serde_json::to_string(&e).expect("JSON"))?;
                } else {
                    writeln!(
                        ctx.out,
                        "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                        e.id,
                        e.occurred_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        e.kind,
                        e.status,
                        e.attempts,
                        e.last_error.as_deref().map_or("-".into(), one_line),
                        e.data
                    )?;
                }
            }
        }
        EventsCmd::Replay { since, kind } => {
            let since = validate::cli_instant("--since", &since, ctx.now())?;
            let kind = kind.as_deref().map(Kind::parse).transpose()?;
            let now = ctx.now();
            let mut conn = ctx.conn()?;
            let n = events::replay(&mut conn, since, kind, now)?;
            let posts = if ctx.cfg.events.posts() {
                "the next queue pass posts them"
            } else {
                "nothing posts them until [events] url is set"
            };
            writeln!(ctx.out, "{n} event(s) pending again; {posts}")?;
        }
        EventsCmd::Secret => {
            writeln!(ctx.out, "{}", crate::parties::new_webhook_secret())?;
        }
    }
    Ok(())
}
