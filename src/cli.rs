//! The command line (clap). Thin: each command parses its arguments, calls
//! one library function and prints the result. Bad input gives a one-line
//! error on stderr and exit code 2 (clap's own usage errors too).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::clock::{Clock, FixedClock, SystemClock};
use crate::config::Config;
use crate::db::Db;
use crate::deliver::queue::{self, Delivery};
use crate::digest::Composer;
use crate::error::{Error, Result};
use crate::ids::{RequestId, SubscriptionId};
use crate::{bench, demo, ingest, items, modlog, parties, schedule, subscriptions, validate};

#[derive(Parser, Debug)]
#[command(
    name = "digestd",
    version,
    about = "Hourly, daily and weekly digests in each user's timezone, by email, XMPP and SMS"
)]
pub struct Cli {
    /// Settings file (default: config/digestd.toml when present).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Database URL: sqlite://PATH or postgres://… (overrides config and DIGESTD_DATABASE_URL).
    #[arg(long, global = true, value_name = "URL")]
    pub db: Option<String>,
    /// Pretend the current time is this instant (RFC 3339): for tests, demos
    /// and simulation. Everything that would read the clock reads this.
    #[arg(long, global = true, value_name = "RFC3339")]
    pub now: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create the database (if needed) and apply migrations.
    Init,
    /// Users: people with a timezone and contact points.
    #[command(subcommand)]
    User(UserCmd),
    /// Groups of users and groups.
    #[command(subcommand)]
    Group(GroupCmd),
    /// Collections of items.
    #[command(subcommand)]
    Collection(CollectionCmd),
    /// Items.
    #[command(subcommand)]
    Item(ItemCmd),
    /// Record modifications: JSON lines on stdin, all validated before any is written.
    Record,
    /// Subscribe a user or group to digests of a collection (or all). A digest the party
    /// already has is refused, naming that subscription, or gets the new channels merged in.
    Subscribe(SubscribeArgs),
    /// One tick at an instant: record the runs that are due and print them as JSON lines.
    Tick {
        /// The tick's instant (RFC 3339).
        #[arg(long)]
        at: String,
    },
    /// The nt queue: expand pending requests, deliver what is due, settle statuses.
    #[command(subcommand)]
    Queue(QueueCmd),
    /// Post a notification; prints the request id as the last line.
    Notify(NotifyArgs),
    /// Cancel a pending or sending request: nothing more of it is sent.
    Cancel { id: i64 },
    /// Requests.
    #[command(subcommand)]
    Request(RequestCmd),
    /// Read one message on stdin: a bounce (RFC 3464 DSN) is recorded against the address; other mail is ignored.
    Inbound,
    /// Send one test message now through the channel's configured transport (not the queue).
    TestAlert {
        /// The address: an email address, a JID for xmpp, an E.164 number for sms.
        #[arg(long)]
        to: String,
        /// email, xmpp or sms.
        #[arg(long, default_value = "email")]
        channel: String,
    },
    /// Run the real tick at each instant of a range, delivering nothing; one JSON line per run.
    Simulate {
        /// First tick (RFC 3339, inclusive).
        #[arg(long)]
        from: String,
        /// End (RFC 3339, exclusive).
        #[arg(long)]
        to: String,
        /// Interval between ticks, e.g. 1h, 15m.
        #[arg(long, default_value = "1h")]
        every: String,
    },
    /// The 168-bucket week grid: digests per local and server-time hour of one week.
    Grid {
        /// Only this user's subscriptions.
        #[arg(long)]
        user: Option<String>,
        /// Also write an SVG heat map here.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Any instant in the week to show (RFC 3339; default: this week).
        #[arg(long)]
        week: Option<String>,
    },
    /// The daemon: tick on the [schedule] cron expression until SIGTERM or ctrl-c.
    Serve,
    /// A user's or group's address on one channel: set it, or mark it verified, disabled or enabled.
    Contact {
        /// The user or group.
        name: String,
        /// email, xmpp or sms.
        #[arg(long)]
        channel: String,
        /// A new address (checked for the channel): enabled, not verified, bounces reset.
        #[arg(long, value_name = "ADDRESS")]
        set: Option<String>,
        /// Its owner confirmed it.
        #[arg(long)]
        verify: bool,
        /// Send nothing more to it.
        #[arg(long)]
        disable: bool,
        /// Send to it again (bounce count reset).
        #[arg(long)]
        enable: bool,
    },
    /// Pause, resume or list subscriptions.
    #[command(subcommand)]
    Subscription(SubscriptionCmd),
    /// Delete modifications older than a duration.
    Purge {
        /// e.g. 90d, 12h, 2w.
        #[arg(long, value_name = "DURATION")]
        older_than: String,
    },
    /// Build a small demo world in SQLite and print what it holds.
    Demo,
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCmd),
}

#[derive(Subcommand, Debug)]
pub enum UserCmd {
    /// Add a user.
    Add {
        name: String,
        /// IANA timezone, e.g. Europe/Paris.
        #[arg(long)]
        tz: String,
        #[arg(long)]
        email: Option<String>,
        #[arg(long)]
        xmpp: Option<String>,
        /// E.164, e.g. +14155550123.
        #[arg(long)]
        phone: Option<String>,
        /// mon..sun (default mon).
        #[arg(long)]
        week_start: Option<String>,
        /// 0-23 (default 8).
        #[arg(long, allow_negative_numbers = true)]
        daily_hour: Option<i64>,
        /// e.g. en-US (default).
        #[arg(long)]
        locale: Option<String>,
    },
    /// List users.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Change a user's preferences (their subscriptions are rescheduled).
    Set {
        name: String,
        #[arg(long)]
        tz: Option<String>,
        #[arg(long)]
        week_start: Option<String>,
        #[arg(long, allow_negative_numbers = true)]
        daily_hour: Option<i64>,
        #[arg(long)]
        locale: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum QueueCmd {
    /// One pass at an instant (default now): expansion, delivery, status update.
    Run {
        /// The pass's instant (RFC 3339).
        #[arg(long)]
        at: Option<String>,
    },
    /// Requests by status and queue rows by state.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Delete requests that finished (sent, partial_failure, failed,
    /// cancelled) longer ago than a duration, with their queue rows and
    /// delivery log. Open requests stay.
    Purge {
        /// e.g. 90d, 12h, 2w.
        #[arg(long, value_name = "DURATION")]
        older_than: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum RequestCmd {
    /// One request and each recipient's delivery state.
    Show {
        id: i64,
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
    /// Comma-separated: email, xmpp, sms (default email).
    #[arg(long, value_delimiter = ',')]
    pub channel: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum SubscriptionCmd {
    /// Stop a subscription's digests.
    Pause { id: i64 },
    /// Resume a paused subscription from now on (no burst for the paused time).
    Resume { id: i64 },
    /// List subscriptions.
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum GroupCmd {
    /// Add a group.
    Add {
        name: String,
        /// The group's own address (used when a request is not expanded).
        #[arg(long)]
        email: Option<String>,
    },
    /// Put a user or group into a group.
    AddMember { group: String, member: String },
    /// The users in a group, recursively.
    Expand {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum CollectionCmd {
    /// Add a collection; prints its UUID as the last line.
    Add { name: String },
    /// List collections.
    List {
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
    /// Comma-separated: email, xmpp, sms (default email).
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

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Record modifications through the real `record` path beside the raw load floor.
    Ingest(bench::IngestArgs),
    /// Find and claim the due runs at several instants beside the fetch-only floor.
    Tick(bench::TickArgs),
    /// A year of `simulate` over a few thousand subscriptions, beside the periods computed alone.
    Simulate(bench::SimulateArgs),
    /// Compose and render the digests due at one tick, beside the plan and the full tick.
    Compose(bench::ComposeArgs),
    /// Messages through the real queue into smtp-sink, beside smtp-source into the same sink.
    Smtp(bench::SmtpArgs),
    /// Chat messages through the real queue into Prosody, beside a bare XMPP client.
    Xmpp(bench::XmppArgs),
}

/// Parses the process arguments, runs, prints errors; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.now.as_deref().map(|t| validate::instant("--now", t)) {
        None => run(cli, &SystemClock),
        Some(Ok(t)) => run(cli, &FixedClock::new(t)),
        Some(Err(e)) => Err(e),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let msg = validate::escape_for_line(&e.to_string());
            eprintln!("digestd: {msg}");
            e.exit_code()
        }
    }
}

fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs one parsed command with the given clock.
pub fn run(cli: Cli, clock: &dyn Clock) -> Result<()> {
    let mut cfg = Config::load(cli.config.as_deref(), std::env::vars())?;
    if let Some(url) = &cli.db {
        crate::db::DbUrl::parse(url)?;
        cfg.database.url = url.clone();
    }
    init_tracing(&cfg.log.level);
    // Not locked for the whole command: the stdout email transport writes
    // from the delivery thread.
    let out = &mut std::io::stdout();
    match cli.command {
        Command::Demo => return demo::run(&cfg, cli.db.is_some(), out),
        Command::Bench(BenchCmd::Ingest(args)) => {
            return bench::ingest(&args, cli.db.as_deref(), out)
        }
        Command::Bench(BenchCmd::Tick(args)) => return bench::tick(&args, cli.db.as_deref(), out),
        Command::Bench(BenchCmd::Simulate(args)) => {
            return bench::simulate(&args, cli.db.as_deref(), out)
        }
        Command::Bench(BenchCmd::Compose(args)) => {
            return bench::compose(&args, cli.db.as_deref(), out)
        }
        Command::Bench(BenchCmd::Smtp(args)) => return bench::smtp(&args, cli.db.as_deref(), out),
        Command::Bench(BenchCmd::Xmpp(args)) => return bench::xmpp(&args, cli.db.as_deref(), out),
        Command::Serve => return crate::serve::run(&cfg, clock),
        _ => {}
    }
    // Validate what needs no database before opening (and creating) it.
    let cutoff = match &cli.command {
        Command::Purge { older_than } | Command::Queue(QueueCmd::Purge { older_than }) => {
            Some(clock.now() - validate::duration(older_than)?)
        }
        _ => None,
    };
    let instants = match &cli.command {
        Command::Tick { at } => Some((validate::instant("--at", at)?, None)),
        Command::Simulate { from, to, every } => {
            let (f, t) = (
                validate::instant("--from", from)?,
                validate::instant("--to", to)?,
            );
            let step = validate::duration(every)?;
            if t <= f {
                return Err(Error::invalid("--to must be after --from"));
            }
            if (t - f).num_seconds() / step.num_seconds() > 2_000_000 {
                return Err(Error::invalid(
                    "simulate: more than 2,000,000 ticks; use a larger --every",
                ));
            }
            Some((f, Some((t, step))))
        }
        Command::Grid { week: Some(w), .. } => Some((validate::instant("--week", w)?, None)),
        Command::Queue(QueueCmd::Run { at: Some(a) }) => {
            Some((validate::instant("--at", a)?, None))
        }
        _ => None,
    };
    let stdin_text = match &cli.command {
        Command::Item(ItemCmd::Put) => Some(read_stdin_limited(1 << 20)?),
        Command::Notify(a) if a.message == "-" => Some(read_stdin_limited(queue::MAX_MESSAGE)?),
        _ => None,
    };
    let stdin_bytes = match &cli.command {
        Command::Inbound => Some(read_stdin_bytes(crate::deliver::bounce::MAX_INBOUND)?),
        _ => None,
    };
    let db = Db::open(&cfg.database.url, cfg.database.pool_size)?;
    let mut conn = db.conn()?;
    let now = clock.now();
    match cli.command {
        Command::Init => {
            writeln!(out, "database ready: {}", cfg.database.url)?;
        }
        Command::User(UserCmd::Add {
            name,
            tz,
            email,
            xmpp,
            phone,
            week_start,
            daily_hour,
            locale,
        }) => {
            let id = parties::create_user(
                &mut conn,
                now,
                &parties::NewUser {
                    name,
                    timezone: tz,
                    email,
                    xmpp,
                    phone,
                    week_start,
                    daily_hour,
                    locale,
                },
            )?;
            writeln!(out, "{id}")?;
        }
        Command::User(UserCmd::List { json }) => {
            let users = parties::list_users(&mut conn)?;
            print_users(out, &users, json)?;
        }
        Command::Group(GroupCmd::Add { name, email }) => {
            let id = parties::create_group(&mut conn, now, &name, email.as_deref())?;
            writeln!(out, "{id}")?;
        }
        Command::Group(GroupCmd::AddMember { group, member }) => {
            parties::add_member(&mut conn, &group, &member)?;
            writeln!(out, "{member} is in {group}")?;
        }
        Command::Group(GroupCmd::Expand { name, json }) => {
            let (id, _) = parties::find(&mut conn, &name)?;
            let users = parties::expand(&mut conn, id)?;
            print_users(out, &users, json)?;
        }
        Command::Collection(CollectionCmd::Add { name }) => {
            let c = items::create_collection(&mut conn, now, &name, None)?;
            writeln!(out, "{}", c.uuid)?;
        }
        Command::Collection(CollectionCmd::List { json }) => {
            let cs = items::list_collections(&mut conn)?;
            if json {
                writeln!(out, "{}", serde_json::to_string(&cs).expect("serialisable"))?;
            } else {
                for c in cs {
                    writeln!(out, "{}  {}", c.uuid, c.name)?;
                }
            }
        }
        Command::Item(ItemCmd::Put) => {
            let text = stdin_text.unwrap_or_default();
            let input: items::ItemInput = serde_json::from_str(&text)
                .map_err(|e| Error::invalid(format!("item: bad JSON: {e}")))?;
            let outcome = items::put_item(&mut conn, now, &input)?;
            writeln!(
                out,
                "{}",
                serde_json::to_string(&outcome).expect("serialisable")
            )?;
        }
        Command::Record => {
            let mods = ingest::parse_all(&mut conn, std::io::stdin().lock())?;
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(mods.len() as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let n = ingest::write_batched(&mut conn, &mods, cfg.record.batch_size, &mut |done| {
                bar.set_position(done as u64)
            })?;
            bar.finish_and_clear();
            writeln!(out, "{n}")?;
        }
        Command::Subscribe(a) => {
            let id = subscriptions::subscribe(
                &mut conn,
                now,
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
                    out,
                    "merged into subscription {id}: channels {}",
                    names.join(",")
                )?;
            }
            // The id stays the last line, for scripts.
            writeln!(out, "{}", id.id())?;
        }
        Command::User(UserCmd::Set {
            name,
            tz,
            week_start,
            daily_hour,
            locale,
        }) => {
            parties::update_user(
                &mut conn,
                &name,
                &parties::UserChanges {
                    timezone: tz,
                    week_start,
                    daily_hour,
                    locale,
                },
            )?;
            writeln!(out, "updated {name}")?;
        }
        Command::Contact {
            name,
            channel,
            set,
            verify,
            disable,
            enable,
        } => {
            let channel = parties::Channel::parse(&channel)?;
            let change =
                match (set, verify, disable, enable) {
                    (Some(a), false, false, false) => parties::ContactChange::Set(a),
                    (None, true, false, false) => parties::ContactChange::Verify,
                    (None, false, true, false) => parties::ContactChange::Disable,
                    (None, false, false, true) => parties::ContactChange::Enable,
                    _ => return Err(Error::invalid(
                        "contact: give exactly one of --set ADDRESS, --verify, --disable, --enable",
                    )),
                };
            let p = parties::change_contact(&mut conn, now, &name, channel, &change)?;
            writeln!(
                out,
                "{name} {} {} ({}, {}, {} bounces)",
                p.channel,
                p.address,
                if p.verified {
                    "verified"
                } else {
                    "not verified"
                },
                if p.disabled { "disabled" } else { "enabled" },
                p.bounce_count
            )?;
        }
        Command::Subscription(SubscriptionCmd::Pause { id }) => {
            subscriptions::pause(&mut conn, SubscriptionId(id))?;
            writeln!(out, "paused {id}")?;
        }
        Command::Subscription(SubscriptionCmd::Resume { id }) => {
            subscriptions::resume(&mut conn, SubscriptionId(id), now)?;
            writeln!(out, "resumed {id}")?;
        }
        Command::Subscription(SubscriptionCmd::List { json }) => {
            let subs = subscriptions::list(&mut conn)?;
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&subs).expect("serialisable")
                )?;
            } else {
                for s in subs {
                    writeln!(out, "{s}")?;
                }
            }
        }
        Command::Tick { .. } | Command::Simulate { .. } => {
            let (from, range) = instants.expect("validated above");
            let owner = schedule::lease::owner_name();
            let lease_for = chrono::Duration::seconds(i64::from(cfg.schedule.lease_seconds));
            match range {
                // `tick` composes and posts each digest, and records its runs.
                None => {
                    let mut composer = Composer::new(&cfg.digest, &cfg.email)?;
                    let runs =
                        schedule::run_tick(&mut conn, from, &owner, lease_for, &mut composer)?
                            .ok_or_else(|| {
                                Error::conflict(format!(
                                    "another process holds the tick lease at {from}"
                                ))
                            })?;
                    for r in &runs {
                        r.write_line(out)?;
                    }
                }
                // `simulate` is a what-if: it delivers nothing and writes
                // nothing. A year is millions of lines: buffered, not a
                // write per line.
                Some((to, step)) => {
                    let mut w = std::io::BufWriter::new(out.lock());
                    schedule::simulate(&mut conn, from, to, step, &owner, lease_for, &mut |r| {
                        r.write_line(&mut w)
                    })?;
                    w.flush()?;
                }
            }
        }
        Command::Queue(QueueCmd::Run { .. }) => {
            let at = instants.map_or(now, |(a, _)| a);
            let mut delivery = Delivery::new(&cfg.email)?.with_listeners(&cfg)?;
            let owner = schedule::lease::owner_name();
            let lease_for = chrono::Duration::seconds(i64::from(cfg.schedule.lease_seconds));
            let report = queue::run_queue(&mut conn, &mut delivery, at, &owner, lease_for)?;
            writeln!(out, "{report}")?;
        }
        Command::Queue(QueueCmd::Purge { .. }) => {
            let cutoff = cutoff.expect("computed above");
            let p = queue::purge(&mut conn, cutoff)?;
            writeln!(
                out,
                "purged {} finished requests, {} queue rows and {} delivery log rows from before {}",
                p.requests,
                p.rows,
                p.log,
                cutoff.to_rfc3339()
            )?;
        }
        Command::Queue(QueueCmd::Status { json }) => {
            let s = queue::status(&mut conn)?;
            if json {
                writeln!(out, "{}", serde_json::to_string(&s).expect("serialisable"))?;
            } else {
                for (status, n) in &s.requests {
                    writeln!(out, "requests {status:<16} {n}")?;
                }
                writeln!(
                    out,
                    "queue rows: {} open, {} retrying, {} delivered, {} given up",
                    s.rows_open, s.rows_retrying, s.rows_delivered, s.rows_given_up
                )?;
            }
        }
        Command::Notify(a) => {
            let id = queue::post_request(
                &mut conn,
                &cfg.email,
                &queue::NewNotification {
                    from: a.from,
                    to: a.to,
                    expand_group: a.expand_group,
                    subject: a.subject,
                    message: match stdin_text {
                        Some(t) => t,
                        None => a.message,
                    },
                    max_retries: a.max_retries,
                    channels: a.channel,
                },
                now,
            )?;
            writeln!(out, "{id}")?;
        }
        Command::Inbound => {
            let raw = stdin_bytes.expect("read above");
            match crate::deliver::bounce::inbound(&mut conn, &raw, cfg.email.bounce_limit, now)? {
                crate::deliver::bounce::Inbound::Ignored(why) => {
                    tracing::info!("inbound: ignored: {why}");
                    writeln!(out, "ignored: {why}")?;
                }
                crate::deliver::bounce::Inbound::Recorded { recorded, unknown } => {
                    for (addr, hard, disabled) in recorded {
                        writeln!(
                            out,
                            "bounce {} {addr}{}",
                            if hard { "hard" } else { "soft" },
                            if disabled { " (address disabled)" } else { "" }
                        )?;
                    }
                    for addr in unknown {
                        writeln!(out, "ignored: {addr} is no address of ours")?;
                    }
                }
            }
        }
        Command::TestAlert { to, channel } => {
            let report = match parties::Channel::parse(&channel)? {
                parties::Channel::Email => queue::test_alert(&cfg.email, &to, now)?,
                parties::Channel::Sms => queue::test_alert_sms(&cfg.sms, &to, now)?,
                parties::Channel::Xmpp => queue::test_alert_xmpp(&cfg.xmpp, &to, now)?,
            };
            writeln!(out, "{report}")?;
        }
        Command::Cancel { id } => {
            queue::cancel_request(&mut conn, RequestId(id), now)?;
            writeln!(out, "cancelled {id}")?;
        }
        Command::Request(RequestCmd::Show { id, json }) => {
            let v = queue::show(&mut conn, RequestId(id))?;
            if json {
                writeln!(out, "{}", serde_json::to_string(&v).expect("serialisable"))?;
            } else {
                writeln!(
                    out,
                    "request {} ({}): {} — {}",
                    v.id, v.kind, v.status, v.subject
                )?;
                for r in &v.recipients {
                    writeln!(
                        out,
                        "  {:<16} {:<5} {:<32} {} retries {} {}",
                        r.party,
                        r.channel,
                        r.address.as_deref().unwrap_or("-"),
                        if r.successful {
                            "delivered"
                        } else if r.gave_up {
                            "given up"
                        } else {
                            "pending"
                        },
                        r.retry_count,
                        match (r.reply_code, &r.reply_message) {
                            (Some(c), Some(m)) => format!("{c} {m}"),
                            (None, Some(m)) => m.clone(),
                            _ => String::new(),
                        }
                    )?;
                }
            }
        }
        Command::Grid { user, svg, .. } => {
            let week = instants.map_or(now, |(w, _)| w);
            let party = user
                .as_deref()
                .map(|u| parties::find(&mut conn, u))
                .transpose()?
                .map(|(id, _)| id);
            let (local, server) = schedule::grid::build(&mut conn, week, party)?;
            let start = schedule::grid::week_start_utc(week);
            let scope = user
                .as_deref()
                .map_or("all users".to_string(), |u| format!("user {u}"));
            writeln!(
                out,
                "{}",
                local.to_text(&format!(
                    "digests in the week of {} ({scope}), by local time",
                    start.format("%Y-%m-%d")
                ))
            )?;
            writeln!(
                out,
                "{}",
                server.to_text("the same digests by server time (UTC)")
            )?;
            if let Some(path) = svg {
                let title = format!(
                    "digestd: digests in the week of {} ({scope}), server time (UTC)",
                    start.format("%Y-%m-%d")
                );
                std::fs::write(&path, server.to_svg(&title))?;
                writeln!(out, "wrote {}", path.display())?;
            }
        }
        Command::Serve => unreachable!("handled above"),
        Command::Purge { .. } => {
            let cutoff = cutoff.expect("computed above");
            let p = modlog::purge(&mut conn, cutoff)?;
            writeln!(
                out,
                "purged {} modifications and {} values older than {}",
                p.modifications,
                p.values,
                cutoff.to_rfc3339()
            )?;
        }
        Command::Demo | Command::Bench(_) => unreachable!("handled above"),
    }
    Ok(())
}

fn read_stdin_limited(limit: usize) -> Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!("reading JSON from stdin (end with Ctrl-D)");
    }
    let mut buf = Vec::new();
    stdin.lock().take(limit as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() > limit {
        return Err(Error::invalid(format!(
            "input is larger than {limit} bytes"
        )));
    }
    String::from_utf8(buf).map_err(|_| Error::invalid("input is not valid UTF-8"))
}

fn read_stdin_bytes(limit: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit as u64 + 1)
        .read_to_end(&mut buf)?;
    if buf.len() > limit {
        return Err(Error::invalid(format!(
            "input is larger than {limit} bytes"
        )));
    }
    Ok(buf)
}

fn print_users(out: &mut dyn Write, users: &[parties::User], json: bool) -> Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(users).expect("serialisable")
        )?;
        return Ok(());
    }
    for u in users {
        writeln!(
            out,
            "{:<16} {:<24} week starts {} daily {:02}:00  {}",
            u.username,
            u.timezone,
            u.week_start,
            u.daily_hour,
            [&u.email, &u.xmpp, &u.phone]
                .iter()
                .filter_map(|a| a.as_deref())
                .collect::<Vec<_>>()
                .join(" ")
        )?;
    }
    Ok(())
}
