//! `queue`, `notify`, `cancel`, `request`, `inbound` and `test-alert`: the
//! nt queue and the channels behind it.

use std::io::Write;

use clap::{Args, Subcommand};

use super::{read_stdin_bytes, read_stdin_limited, Ctx};
use crate::deliver::bounce::{self, Inbound};
use crate::deliver::queue::{self, Delivery};
use crate::error::Result;
use crate::ids::RequestId;
use crate::{parties, schedule, validate};

#[derive(Subcommand, Debug)]
pub enum QueueCmd {
    /// One pass at an instant (default now): expansion, delivery, status update.
    Run {
        /// The pass's instant (RFC 3339 or +/-DURATION from now).
        #[arg(long, allow_hyphen_values = true)]
        at: Option<String>,
    },
    /// Requests by status and queue rows by state.
    Status {
        /// The same, as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Delete requests that finished (sent, partial_failure, failed,
    /// cancelled) longer ago than a duration, with their queue rows and
    /// delivery log. Open requests stay.
    Purge {
        /// A whole number and a unit s, m, h, d or w, e.g. 90d, 12h, 2w.
        #[arg(long, value_name = "DURATION")]
        older_than: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum RequestCmd {
    /// One request and each recipient's delivery state.
    Show {
        id: i64,
        /// The request and every recipient's state as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct NotifyArgs {
    /// The sender: a user or group name.
    #[arg(long)]
    pub from: String,
    /// The recipient: a user or group name.
    #[arg(long)]
    pub to: String,
    /// Send to every user inside the group (recursively) instead of the group's own address.
    #[arg(long)]
    pub expand_group: bool,
    #[arg(long)]
    pub subject: String,
    /// The text; "-" reads it from stdin (UTF-8, at most 256 KiB).
    #[arg(long)]
    pub message: String,
    /// Attempts before giving up (default: [email] max_retries).
    #[arg(long, allow_negative_numbers = true)]
    pub max_retries: Option<i64>,
    /// Comma-separated: email, xmpp, sms, webhook, slack, discord, teams, ntfy, matrix (default email).
    #[arg(long, value_delimiter = ',')]
    pub channel: Vec<String>,
    /// Send at once, even to recipients inside their quiet hours.
    #[arg(long)]
    pub urgent: bool,
}

#[derive(Args, Debug)]
pub struct TestAlertArgs {
    /// The address: an email address, a JID for xmpp, an E.164 number for
    /// sms; for webhook, its presets and matrix, the user or group whose
    /// contact point to use.
    #[arg(long)]
    to: String,
    /// email, xmpp, sms, webhook, slack, discord, teams, ntfy or matrix.
    #[arg(long, default_value = "email")]
    channel: String,
}

pub fn queue(cmd: QueueCmd, ctx: &mut Ctx) -> Result<()> {
    match cmd {
        QueueCmd::Run { at } => {
            let at = match at {
                Some(a) => validate::cli_instant("--at", &a, ctx.now())?,
                None => ctx.now(),
            };
            // The database first: one that is not there stops the pass
            // before the journal directory beside it is made.
            let mut conn = ctx.conn()?;
            let mut delivery = Delivery::from_config(ctx.cfg, &ctx.handle()?)?;
            let owner = schedule::lease::owner_name();
            let report = queue::run_queue(
                &mut conn,
                &mut delivery,
                at,
                &owner,
                ctx.cfg.schedule.lease_for(),
            );
            delivery.shutdown();
            let report = report?;
            writeln!(ctx.out, "{report}")?;
        }
        QueueCmd::Purge { older_than } => {
            let cutoff = ctx.now() - validate::duration(&older_than)?;
            let mut conn = ctx.conn()?;
            let p = queue::purge(&mut conn, cutoff)?;
            // Pending events stay while [events] posts them.
            let keep_pending = ctx.cfg.events.posts();
            let events = crate::events::purge_before(&mut conn, cutoff, keep_pending)?;
            writeln!(
                ctx.out,
                "purged {} finished requests, {} queue rows, {} delivery log rows and {events} events from before {}",
                p.requests,
                p.rows,
                p.log,
                cutoff.to_rfc3339()
            )?;
        }
        QueueCmd::Status { json } => {
            let mut conn = ctx.conn()?;
            let s = queue::status(&mut conn)?;
            if json {
                writeln!(
                    ctx.out,
                    "{}",
                    serde_json::to_string(&s).expect("serialisable")
                )?;
            } else {
                for (status, n) in &s.requests {
                    writeln!(ctx.out, "requests {status:<16} {n}")?;
                }
                writeln!(
                    ctx.out,
                    "queue rows: {} open, {} retrying, {} delivered, {} given up",
                    s.rows_open, s.rows_retrying, s.rows_delivered, s.rows_given_up
                )?;
            }
        }
    }
    Ok(())
}

pub fn notify(a: NotifyArgs, ctx: &mut Ctx) -> Result<()> {
    let message = match a.message.as_str() {
        "-" => read_stdin_limited(queue::MAX_MESSAGE)?,
        _ => a.message,
    };
    let mut conn = ctx.conn()?;
    let id = queue::post_request(
        &mut conn,
        &ctx.cfg.email,
        &queue::NewNotification {
            from: a.from,
            to: a.to,
            expand_group: a.expand_group,
            subject: a.subject,
            message,
            max_retries: a.max_retries,
            channels: a.channel,
            urgent: a.urgent,
        },
        ctx.now(),
    )?;
    writeln!(ctx.out, "{id}")?;
    Ok(())
}

pub fn cancel(id: i64, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    queue::cancel_request(&mut conn, RequestId(id), ctx.now())?;
    writeln!(ctx.out, "cancelled {id}")?;
    Ok(())
}

pub fn request(cmd: RequestCmd, ctx: &mut Ctx) -> Result<()> {
    let RequestCmd::Show { id, json } = cmd;
    let mut conn = ctx.conn()?;
    let v = queue::show(&mut conn, RequestId(id))?;
    let out = &mut *ctx.out;
    if json {
        writeln!(out, "{}", serde_json::to_string(&v).expect("serialisable"))?;
        return Ok(());
    }
    // What came from outside (a server's reply) is printed escaped: one
    // line per recipient, no terminal escapes.
    let esc = crate::validate::escape_for_line;
    writeln!(
        out,
        "request {} ({}): {} — {}",
        v.id,
        v.kind,
        v.status,
        esc(&v.subject)
    )?;
    for r in &v.recipients {
        writeln!(
            out,
            "  {:<16} {:<5} {:<32} {} retries {} {}",
            r.party,
            r.channel,
            esc(r.address.as_deref().unwrap_or("-")),
            if r.successful {
                "delivered"
            } else if r.gave_up {
                "given up"
            } else {
                "pending"
            },
            r.retry_count,
            match (r.reply_code, &r.reply_message) {
                (Some(c), Some(m)) => format!("{c} {}", esc(m)),
                (None, Some(m)) => esc(m),
                _ => String::new(),
            }
        )?;
    }
    Ok(())
}

pub fn inbound(ctx: &mut Ctx) -> Result<()> {
    let raw = read_stdin_bytes(bounce::MAX_INBOUND)?;
    let mut conn = ctx.conn()?;
    match bounce::inbound(&mut conn, &raw, ctx.cfg.email.bounce_limit, ctx.now())? {
        Inbound::Ignored(why) => {
            tracing::info!("inbound: ignored: {why}");
            writeln!(ctx.out, "ignored: {why}")?;
        }
        Inbound::Recorded { recorded, ignored } => {
            for (addr, hard, disabled) in recorded {
                writeln!(
                    ctx.out,
                    "bounce {} {addr}{}",
                    if hard { "hard" } else { "soft" },
                    if disabled { " (address disabled)" } else { "" }
                )?;
            }
            for why in ignored {
                writeln!(ctx.out, "ignored: {why}")?;
            }
        }
    }
    Ok(())
}

/// One message now, through the channel's transport: no queue, and no
/// database but a webhook's or Matrix contact point (and the Matrix room
/// it opens).
pub fn test_alert(a: TestAlertArgs, ctx: &mut Ctx) -> Result<()> {
    let cfg = ctx.cfg;
    let now = ctx.now();
    let report = match parties::Channel::parse(&a.channel)? {
        parties::Channel::Email => queue::test_alert(&cfg.email, &ctx.handle()?, &a.to, now)?,
        parties::Channel::Sms => {
            queue::test_alert_sms(&cfg.sms, &cfg.email, &ctx.handle()?, &a.to, now)?
        }
        parties::Channel::Xmpp => {
            queue::test_alert_xmpp(&cfg.xmpp, &cfg.email, &ctx.handle()?, &a.to, now)?
        }
        parties::Channel::Matrix => {
            let rt = ctx.handle()?;
            let mut conn = ctx.conn()?;
            queue::test_alert_matrix(&mut conn, &cfg.matrix, &cfg.email, &rt, &a.to, now)
                .map_err(|e| named_not_addressed(e, &a))?
        }
        url => {
            let rt = ctx.handle()?;
            let mut conn = ctx.conn()?;
            queue::test_alert_webhook(&mut conn, url, &cfg.webhook, &cfg.email, &rt, &a.to, now)
                .map_err(|e| named_not_addressed(e, &a))?
        }
    };
    writeln!(ctx.out, "{report}")?;
    Ok(())
}

/// For Matrix and the webhooks `--to` names a user or group, whose contact
/// point is used: one given a Matrix ID or a URL is told so.
fn named_not_addressed(e: crate::error::Error, a: &TestAlertArgs) -> crate::error::Error {
    let address = a.to.starts_with(['@', '!']) || a.to.contains("://");
    match e {
        crate::error::Error::NotFound(m) if address => crate::error::Error::NotFound(format!(
            "{m}: with --channel {}, --to names the user or group whose contact point is used \
             (set with digestd contact), not the address",
            a.channel
        )),
        e => e,
    }
}

/// `report`: the operator's daily report as of now, as text (in `[i18n]
/// operator_locale`'s language) or one JSON object; nothing is posted.
pub fn report(json: bool, ctx: &mut Ctx) -> Result<()> {
    let now = ctx.now();
    let mut conn = ctx.conn()?;
    let r = crate::report::read(&mut conn, now)?;
    let out = &mut *ctx.out;
    if json {
        writeln!(out, "{}", serde_json::to_string(&r).expect("serialisable"))?;
    } else {
        write!(out, "{}", r.text(ctx.cfg.i18n.operator_lang()))?;
    }
    Ok(())
}
