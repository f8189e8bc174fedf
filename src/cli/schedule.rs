//! `subscribe`, `tick`, `preview`, `simulate` and `grid`: when digests
//! are due.

use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::Args;

use super::Ctx;
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::ids::SubscriptionId;
use crate::{parties, schedule, subscriptions, validate};

#[derive(Args, Debug)]
pub struct SubscribeArgs {
    /// A user or group name.
    pub party: String,
    /// hourly, daily or weekly.
    #[arg(long)]
    pub frequency: String,
    /// modification or forward.
    #[arg(long)]
    pub kind: String,
    /// One collection's UUID.
    #[arg(long, conflicts_with = "all", required_unless_present = "all")]
    pub collection: Option<String>,
    /// Every collection.
    #[arg(long)]
    pub all: bool,
    /// Comma-separated: email, xmpp, sms, webhook, slack, discord, teams, ntfy, matrix (default email).
    #[arg(long, value_delimiter = ',')]
    pub channel: Vec<String>,
    /// Local hour 0-23 (default: the user's daily hour).
    #[arg(long, allow_negative_numbers = true)]
    pub hour: Option<i64>,
    /// Local day mon..sun for weekly (default: the user's first day of week).
    #[arg(long)]
    pub day: Option<String>,
    /// Include the subscriber's own changes (left out by default).
    #[arg(long)]
    pub include_own: bool,
    /// Send a digest even when nothing changed (not sent by default; the run is recorded either way).
    #[arg(long)]
    pub send_empty: bool,
}

#[derive(Args, Debug)]
pub struct TickArgs {
    /// The tick's instant (RFC 3339 or +/-DURATION from now; default now).
    /// Refused when more than one tick interval ahead of now: a tick moves
    /// every schedule past it (use `digestd simulate` for a what-if).
    #[arg(long, allow_hyphen_values = true)]
    at: Option<String>,
    /// Tick at an --at far ahead of now anyway.
    #[arg(long)]
    force: bool,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("part").args(["html", "chat", "sms", "webhook", "preset", "matrix", "ics"]))]
pub struct PreviewArgs {
    /// The subscription's id (`digestd subscription list`).
    id: i64,
    /// The tick's instant (RFC 3339 or +/-DURATION from now; default now).
    #[arg(long, allow_hyphen_values = true)]
    at: Option<String>,
    /// The email's HTML part instead of its text.
    #[arg(long)]
    html: bool,
    /// The XMPP message body.
    #[arg(long)]
    chat: bool,
    /// The SMS body.
    #[arg(long)]
    sms: bool,
    /// The webhook's JSON document (as posted, less the request's id).
    #[arg(long)]
    webhook: bool,
    /// What a preset posts (slack, discord, teams or ntfy): its headers
    /// (less user-agent), a blank line, its body.
    #[arg(long, value_name = "CHANNEL")]
    preset: Option<String>,
    /// The Matrix message's content (`m.room.message`: plain text and HTML).
    #[arg(long)]
    matrix: bool,
    /// A forward digest's calendar (iCalendar, as its email attaches it).
    #[arg(long)]
    ics: bool,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// First tick (RFC 3339 or +/-DURATION from now, inclusive).
    #[arg(long, allow_hyphen_values = true)]
    from: String,
    /// End (RFC 3339 or +/-DURATION from now, exclusive).
    #[arg(long, allow_hyphen_values = true)]
    to: String,
    /// Interval between ticks, e.g. 1h, 15m (default: the instants of
    /// `[schedule] tick`, as `serve` ticks).
    #[arg(long)]
    every: Option<String>,
}

#[derive(Args, Debug)]
pub struct GridArgs {
    /// Only this user's subscriptions.
    #[arg(long)]
    user: Option<String>,
    /// Also write an SVG heat map here.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// The clock of the SVG's hours: `local` (each subscriber's zone) or
    /// `server` (UTC).
    #[arg(long, value_name = "local|server", default_value = "server")]
    svg_time: String,
    /// Any instant in the week to show (RFC 3339 or +/-DURATION from now;
    /// default: this week).
    #[arg(long, allow_hyphen_values = true)]
    week: Option<String>,
}

pub fn subscribe(a: SubscribeArgs, ctx: &mut Ctx) -> Result<()> {
    let mut conn = ctx.conn()?;
    let id = crate::manage::subscribe(
        &mut conn,
        ctx.now(),
        &subscriptions::SubscribeRequest {
            party: a.party,
            frequency: a.frequency,
            kind: a.kind,
            collection: if a.all { None } else { a.collection },
            channels: a.channel,
            hour: a.hour,
            day: a.day,
            include_own: a.include_own,
            send_empty: a.send_empty,
        },
    )?;
    if let subscriptions::Subscribed::Merged { id, channels } = &id {
        let names: Vec<&str> = channels.iter().map(|c| c.as_str()).collect();
        writeln!(
            ctx.out,
            "merged into subscription {id}: channels {}",
            names.join(",")
        )?;
    }
    // The id stays the last line, for scripts.
    writeln!(ctx.out, "{}", id.id())?;
    Ok(())
}

/// `tick` composes and posts each digest, and records its runs.
pub fn tick(a: TickArgs, ctx: &mut Ctx) -> Result<()> {
    let now = ctx.now();
    let at = match &a.at {
        Some(t) => validate::cli_instant("--at", t, ctx.now())?,
        None => now,
    };
    if !a.force {
        check_not_ahead(ctx, at, now)?;
    }
    let mut conn = ctx.conn()?;
    let mut composer = Composer::new(&ctx.cfg.digest, &ctx.cfg.email)?;
    composer.workers = ctx.cfg.schedule.compose_workers;
    if let Some(db) = &ctx.db {
        composer.read_through(db);
    }
    let owner = schedule::lease::owner_name();
    let runs = schedule::run_tick(
        &mut conn,
        at,
        &owner,
        ctx.cfg.schedule.lease_for(),
        &mut composer,
    )?
    .ok_or_else(|| Error::conflict(format!("another process holds the tick lease at {at}")))?;
    for r in &runs {
        r.write_line(ctx.out)?;
    }
    // The operator's daily report, when due; `queue run` delivers it.
    if let Some(id) = crate::report::post_if_due(&mut conn, ctx.cfg, at)? {
        eprintln!("digestd: daily report posted as request {id}");
    }
    Ok(())
}

/// `preview` composes and renders one digest and posts nothing. Whatever
/// a tick would not send (paused, empty) is said on stderr, so stdout is
/// the digest alone.
pub fn preview(a: PreviewArgs, ctx: &mut Ctx) -> Result<()> {
    let preset = match a.preset.as_deref().map(crate::parties::Channel::parse) {
        Some(Ok(ch)) if ch.is_preset() => Some(ch),
        Some(Ok(_)) | Some(Err(_)) => {
            return Err(Error::invalid(
                "preview: --preset takes slack, discord, teams or ntfy",
            ))
        }
        None => None,
    };
    let at = match &a.at {
        Some(t) => validate::cli_instant("--at", t, ctx.now())?,
        None => ctx.now(),
    };
    let mut conn = ctx.conn()?;
    let p = crate::digest::preview(
        &mut conn,
        &ctx.cfg.digest,
        &ctx.cfg.email,
        SubscriptionId(a.id),
        at,
    )?;
    let r = p.rendered;
    let body = if let Some(ch) = preset {
        let doc = r.webhook.unwrap_or_default();
        let q = crate::deliver::webhook::presets::request(ch, doc.as_bytes())
            .map_err(Error::invalid)?;
        let head: String = q
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        format!("{head}\n{}", String::from_utf8_lossy(&q.body))
    } else if a.html {
        r.html.unwrap_or_default()
    } else if a.chat {
        r.chat.unwrap_or_default()
    } else if a.sms {
        r.sms.unwrap_or_default()
    } else if a.webhook {
        r.webhook.unwrap_or_default()
    } else if a.ics {
        r.calendar.ok_or_else(|| {
            Error::invalid(format!(
                "preview --ics: subscription {} gets no calendar: only a forward digest listing an item with a start does, with [email] calendar = true",
                a.id
            ))
        })?
    } else if a.matrix {
        let doc = r.webhook.unwrap_or_default();
        let content =
            crate::deliver::matrix::body::content(doc.as_bytes()).map_err(Error::invalid)?;
        format!("{content:#}")
    } else {
        format!("{}\n\n{}", r.subject, r.text.unwrap_or_default())
    };
    write!(ctx.out, "{body}")?;
    if !body.ends_with('\n') {
        writeln!(ctx.out)?;
    }
    let (start, end) = (p.run.window_start, p.run.window_end);
    if p.paused {
        eprintln!(
            "digestd: note: subscription {} is paused: a tick sends nothing; this is what it would get",
            a.id
        );
    }
    if p.empty {
        eprintln!(
            "digestd: note: nothing in the window {} to {}: a tick posts an empty digest only with --send-empty",
            start.to_rfc3339(),
            end.to_rfc3339()
        );
    }
    Ok(())
}

/// A tick far ahead of the clock records every period up to it as run, so
/// the periods in between collapse into one digest: refused beyond one
/// interval of `[schedule] tick` after `now`.
fn check_not_ahead(ctx: &Ctx, at: DateTime<Utc>, now: DateTime<Utc>) -> Result<()> {
    let schedule = ctx.cfg.schedule.cron()?;
    let mut next = schedule.after(&now);
    let interval = match (next.next(), next.next()) {
        (Some(a), Some(b)) => b - a,
        _ => chrono::Duration::hours(1),
    };
    if at > now + interval {
        return Err(Error::invalid(format!(
            "--at {} is more than one tick interval ({} min) after now ({}): a tick moves every \
             schedule past it; use digestd simulate for a what-if, or --force",
            at.to_rfc3339(),
            interval.num_minutes(),
            now.to_rfc3339()
        )));
    }
    Ok(())
}

/// `simulate` is a what-if: it delivers nothing and writes nothing. A year
/// is millions of lines: buffered, not a write per line.
pub fn simulate(a: SimulateArgs, ctx: &mut Ctx) -> Result<()> {
    let (from, to) = (
        validate::cli_instant("--from", &a.from, ctx.now())?,
        validate::cli_instant("--to", &a.to, ctx.now())?,
    );
    if to <= from {
        return Err(Error::invalid("--to must be after --from"));
    }
    let ticks = match &a.every {
        Some(every) => schedule::Ticks::Every(validate::duration(every)?),
        None => schedule::Ticks::Schedule(Box::new(ctx.cfg.schedule.cron()?)),
    }
    .instants(from, to)?;
    let mut conn = ctx.conn()?;
    let owner = schedule::lease::owner_name();
    let lease_for = ctx.cfg.schedule.lease_for();
    let mut w = std::io::BufWriter::new(ctx.out.lock());
    schedule::simulate(&mut conn, &ticks, &owner, lease_for, &mut |r| {
        r.write_line(&mut w)
    })?;
    w.flush()?;
    Ok(())
}

pub fn grid(a: GridArgs, ctx: &mut Ctx) -> Result<()> {
    let time = schedule::grid::GridTime::parse(&a.svg_time)?;
    let week = match &a.week {
        Some(w) => validate::cli_instant("--week", w, ctx.now())?,
        None => ctx.now(),
    };
    let mut conn = ctx.conn()?;
    let party = a
        .user
        .as_deref()
        .map(|u| parties::find(&mut conn, u))
        .transpose()?
        .map(|(id, _)| id);
    let (local, server) = schedule::grid::build(&mut conn, week, party)?;
    let start = schedule::grid::week_start_utc(week);
    let scope = a
        .user
        .as_deref()
        .map_or("all users".to_string(), |u| format!("user {u}"));
    // The file first: an --svg that cannot be written is refused before
    // anything is printed.
    if let Some(path) = &a.svg {
        let title = format!(
            "digestd: digests in the week of {} ({scope})",
            start.format("%Y-%m-%d")
        );
        let g = match time {
            schedule::grid::GridTime::Local => &local,
            schedule::grid::GridTime::Server => &server,
        };
        std::fs::write(path, g.to_svg(&title, time)).map_err(|e| {
            let name = validate::quoted(&path.display().to_string());
            Error::invalid(format!("cannot write the SVG {name}: {e}"))
        })?;
    }
    writeln!(
        ctx.out,
        "{}",
        local.to_text(&format!(
            "digests in the week of {} ({scope}), by local time",
            start.format("%Y-%m-%d")
        ))
    )?;
    writeln!(
        ctx.out,
        "{}",
        server.to_text("the same digests by server time (UTC)")
    )?;
    if let Some(path) = &a.svg {
        // A name may hold CR/LF: one line on the terminal, escaped.
        let shown = validate::escape_for_line(&path.display().to_string());
        writeln!(ctx.out, "wrote {shown}")?;
    }
    Ok(())
}
