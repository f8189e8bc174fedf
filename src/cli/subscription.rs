//! `subscription`: pause, resume, retime, flush, end, import, list and
//! opt-outs of subscriptions.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::ids::SubscriptionId;
use crate::{schedule, subscriptions};

#[derive(Subcommand, Debug)]
pub enum SubscriptionCmd {
    /// Stop a subscription's digests.
    Pause { id: i64 },
    /// Resume a paused subscription from now on (no burst for the paused time).
    Resume { id: i64 },
    /// Change a subscription's frequency, hour, day or channels, checked as
    /// `subscribe` checks them. Its next digest holds everything since its
    /// last one, whatever the cadence was; a period of the new cadence
    /// already begun since then is sent at the next tick.
    Retime {
        id: i64,
        /// hourly, daily or weekly: hourly takes neither --hour nor --day,
        /// daily an hour, weekly an hour and a day (each kept from before
        /// when not given, refused when there is none).
        #[arg(long)]
        frequency: Option<String>,
        /// Local hour 0-23.
        #[arg(long, allow_negative_numbers = true)]
        hour: Option<i64>,
        /// Local day mon..sun (weekly).
        #[arg(long)]
        day: Option<String>,
        /// Comma-separated channels, replacing the ones it has; a user
        /// needs an enabled address on each.
        #[arg(long, value_delimiter = ',')]
        channel: Vec<String>,
    },
    /// Send what is waiting for a modification subscription now: a digest
    /// of what its next one would hold so far, posted to the queue as a
    /// tick posts one; its next scheduled digest holds only what comes
    /// after. Prints the request's id, or "nothing waiting" (exit 0).
    Flush { id: i64 },
    /// End a subscription for good: unsent digests of it are cancelled,
    /// its run records go; digests already sent stay as history.
    End { id: i64 },
    /// Create many subscriptions from JSON lines on stdin: {"party",
    /// "frequency", "kind", "collection" | "all": true, "channels", "hour",
    /// "day", "include_own", "send_empty"}, the rules of `subscribe`. Prints
    /// each one's id, a line each, in input order. Any bad line: nothing is
    /// written.
    Import,
    /// List subscriptions: who, how often, of which collection.
    List {
        /// A JSON array: ids, and the party's and collection's names.
        #[arg(long)]
        json: bool,
    },
    /// List the members who opted out of a group subscription (of
    /// subscription ID, or of every one): its digests leave them out.
    Optouts {
        id: Option<i64>,
        /// A JSON array of {"subscription", "member", "created_at"}.
        #[arg(long)]
        json: bool,
    },
    /// Clear a member's opt-out from group subscription ID: its digests
    /// reach them again from its next one.
    Optin {
        id: i64,
        /// The member (a user's name).
        #[arg(long)]
        member: String,
    },
}

pub fn subscription(cmd: SubscriptionCmd, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    match cmd {
        SubscriptionCmd::Pause { id } => {
            subscriptions::pause(&mut conn, ctx.now(), SubscriptionId(id))?;
            writeln!(ctx.out, "paused {id}")?;
        }
        SubscriptionCmd::Resume { id } => {
            crate::manage::resume(&mut conn, SubscriptionId(id), ctx.now())?;
            writeln!(ctx.out, "resumed {id}")?;
        }
        SubscriptionCmd::Retime {
            id,
            frequency,
            hour,
            day,
            channel,
        } => {
            let retime = subscriptions::Retime {
                frequency,
                hour,
                day,
                channels: (!channel.is_empty()).then_some(channel),
            };
            retime_one(&mut conn, ctx, SubscriptionId(id), &retime)?;
        }
        SubscriptionCmd::Flush { id } => flush(&mut conn, ctx, SubscriptionId(id))?,
        SubscriptionCmd::End { id } => {
            let r = crate::remove::subscription(&mut conn, ctx.now(), SubscriptionId(id))?;
            writeln!(
                ctx.out,
                "ended subscription {id}: {} pending messages cancelled, {} runs forgotten",
                r.messages_cancelled(),
                r.runs_forgotten
            )?;
        }
        SubscriptionCmd::Import => {
            let bar = super::progress(0);
            let events = ctx.cfg.events.wants("subscription.created");
            let ids = crate::import::subs::import(
                &mut conn,
                ctx.now(),
                std::io::stdin().lock(),
                events,
                &mut |n| bar.set_position(n as u64),
            )?;
            bar.finish_and_clear();
            for id in ids {
                writeln!(ctx.out, "{id}")?;
            }
        }
        SubscriptionCmd::List { json } => {
            let subs = subscriptions::list_named(&mut conn)?;
            if json {
                writeln!(
                    ctx.out,
                    "{}",
                    serde_json::to_string(&subs).expect("serialisable")
                )?;
            } else {
                for s in subs {
                    writeln!(ctx.out, "{s}")?;
                }
            }
        }
        SubscriptionCmd::Optouts { id, json } => {
            let outs = subscriptions::list_optouts(&mut conn, id.map(SubscriptionId))?;
            if json {
                writeln!(
                    ctx.out,
                    "{}",
                    serde_json::to_string(&outs).expect("serialisable")
                )?;
            } else {
                for o in outs {
                    writeln!(
                        ctx.out,
                        "subscription {}: {} opted out at {}",
                        o.subscription,
                        o.member,
                        o.created_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    )?;
                }
            }
        }
        SubscriptionCmd::Optin { id, member } => {
            subscriptions::clear_optout(&mut conn, SubscriptionId(id), &member)?;
            writeln!(ctx.out, "cleared {member}'s opt-out from subscription {id}")?;
        }
    }
    Ok(())
}

/// `subscription retime`: the change, then the subscription as it is now.
fn retime_one(
    conn: &mut crate::db::DbConn,
    ctx: &mut Ctx,
    id: SubscriptionId,
    retime: &subscriptions::Retime,
) -> Result<()> {
    if retime.is_empty() {
        return Err(Error::invalid(
            "give --frequency, --hour, --day or --channel",
        ));
    }
    crate::manage::change_subscription(conn, ctx.now(), id, None, retime)?;
    let s = subscriptions::get(conn, id)?;
    writeln!(ctx.out, "{s}")?;
    Ok(())
}

/// `subscription flush`: the request posted (its id the last line, for
/// scripts), or "nothing waiting".
fn flush(conn: &mut crate::db::DbConn, ctx: &mut Ctx, id: SubscriptionId) -> Result<()> {
    let mut composer = Composer::new(&ctx.cfg.digest, &ctx.cfg.email)?;
    let now = ctx.now();
    match conn.write_tx(|c| schedule::flush_in_tx(c, id, now, &mut composer))? {
        schedule::Flushed::Sent { request, .. } => {
            writeln!(ctx.out, "subscription {id}: posted request {request}")?;
            writeln!(ctx.out, "{request}")?;
        }
        schedule::Flushed::Nothing => writeln!(ctx.out, "nothing waiting")?,
    }
    Ok(())
}
