//! The command line (clap). Thin: each command parses its arguments, calls
//! one library function and prints the result. Bad input gives a one-line
//! error on stderr and exit code 2 (clap's own usage errors too). What needs
//! no database (an instant, a duration, stdin) is checked before the
//! database is opened. Only `init` creates a database (and `demo` and
//! `bench` their own); every other command refuses one that is not there.
//!
//! One file per group of commands: [`parties`] (user, group, contact),
//! [`content`] (collection, item, record, seen, purge), [`schedule`] (subscribe,
//! tick, preview, simulate, grid), [`subscription`], [`queue`] (queue, notify, cancel,
//! request, inbound, test-alert, report), [`bench`].

mod access;
mod bench;
mod contact;
mod content;
mod events;
mod logging;
mod parties;
mod queue;
mod schedule;
mod subscription;

use std::io::{IsTerminal, Read, Stdout, Write};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};

use crate::clock::{Clock, FixedClock, SystemClock};
use crate::config::Config;
use crate::db::{Db, PooledConn};
use crate::error::{Error, Result};
use crate::{demo, validate};

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
    /// Pretend the current time is this instant (RFC 3339, or +/-DURATION from
    /// the real clock, e.g. +1h): for tests, demos and simulation. Everything
    /// that would read the clock reads this.
    #[arg(long, global = true, value_name = "TIME", allow_hyphen_values = true)]
    pub now: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create the database (if needed) and apply migrations.
    Init,
    /// Check the settings (file, environment) and the [i18n] overrides
    /// without opening the database: exit 0, or 2 with one line.
    Check,
    /// Users: people with a timezone and contact points.
    #[command(subcommand)]
    User(parties::UserCmd),
    /// Groups of users and groups.
    #[command(subcommand)]
    Group(parties::GroupCmd),
    /// Collections of items.
    #[command(subcommand)]
    Collection(content::CollectionCmd),
    /// Items.
    #[command(subcommand)]
    Item(content::ItemCmd),
    /// Record modifications: JSON lines on stdin, all validated before any is written.
    Record,
    /// Record that a user saw an item (or marks as JSON lines, --file): their
    /// digests leave out changes to it made before then.
    Seen(content::SeenArgs),
    /// Subscribe a user or group to digests of a collection (or all). A digest the party
    /// already has is refused, naming that subscription, or gets the new channels merged in.
    Subscribe(schedule::SubscribeArgs),
    /// One tick at an instant: record the runs that are due and print them as JSON lines.
    Tick(schedule::TickArgs),
    /// The nt queue: expand pending requests, deliver what is due, settle statuses.
    #[command(subcommand)]
    Queue(queue::QueueCmd),
    /// Post a notification; prints the request id as the last line.
    Notify(queue::NotifyArgs),
    /// Cancel a pending or sending request: nothing more of it is sent.
    Cancel { id: i64 },
    /// Requests.
    #[command(subcommand)]
    Request(queue::RequestCmd),
    /// Read one message on stdin: a bounce (RFC 3464 DSN) is recorded against the address; other mail is ignored.
    Inbound,
    /// The operator's daily report as of now (digests, bounces, queue, leases): what
    /// [ops] report_to gets once a day. Posts nothing.
    Report {
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Send one test message now through the channel's configured transport (not the queue).
    TestAlert(queue::TestAlertArgs),
    /// The digest one subscription would get from a tick at an instant (default now),
    /// composed and rendered but not posted: email text, or --html, --chat, --sms, --webhook.
    Preview(schedule::PreviewArgs),
    /// Run the real tick at each instant of a range, delivering nothing; one JSON line per run.
    Simulate(schedule::SimulateArgs),
    /// The 168-bucket week grid: digests per local and server-time hour of one week.
    Grid(schedule::GridArgs),
    /// The daemon: tick on the [schedule] cron expression, deliver, and answer HTTP
    /// ([http] listen, when [http] enabled) until SIGTERM or ctrl-c.
    Serve,
    /// The HTTP server alone ([http] listen): API, feeds, health, metrics; until SIGTERM or ctrl-c.
    Web,
    /// API tokens for the HTTP API.
    #[command(subcommand)]
    Token(access::TokenCmd),
    /// Read tickets: a secret that opens one collection's Atom feeds.
    #[command(subcommand)]
    Ticket(access::TicketCmd),
    /// A user's or group's addresses: with no action, show them (state and bounces);
    /// on one --channel, set it, or mark it verified, disabled or enabled.
    Contact(contact::ContactArgs),
    /// The operators' events ([events]): list, replay, make a secret.
    #[command(subcommand)]
    Events(events::EventsCmd),
    /// Pause, resume, retime, send now (flush), end or list subscriptions.
    #[command(subcommand)]
    Subscription(subscription::SubscriptionCmd),
    /// Delete modifications and seen marks older than a duration.
    Purge(content::PurgeArgs),
    /// Build a small demo world in SQLite and print what it holds.
    Demo,
    /// Benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCmd),
}

/// Parses the process arguments, runs, prints errors; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let result = match cli
        .now
        .as_deref()
        .map(|t| validate::cli_instant("--now", t, SystemClock.now()))
    {
        None => run(cli, &SystemClock),
        Some(Ok(t)) => run(cli, &FixedClock::new(t)),
        Some(Err(e)) => Err(e.into()),
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

/// clap's answer when the arguments do not parse, as clap writes it: help
/// and version on stdout, a usage error on stderr whole (the missing
/// arguments by name, the similar subcommand it suggests, the usage line),
/// exit 2.
fn usage_error(e: &clap::Error) -> i32 {
    let _ = e.print();
    e.exit_code()
}

/// What a command runs with: the settings, the clock, standard output, and
/// the database and the process's tokio runtime, each made when the
/// command first asks for it.
pub struct Ctx<'a> {
    cfg: &'a Config,
    clock: &'a dyn Clock,
    out: &'a mut Stdout,
    db: Option<Db>,
    rt: Option<tokio::runtime::Runtime>,
}

impl Ctx<'_> {
    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// A connection, opening (and migrating) the database the first time.
    /// A database that does not exist yet is refused: only `init` makes
    /// one ([`Ctx::create_db`]).
    fn conn(&mut self) -> Result<PooledConn> {
        if self.db.is_none() {
            let d = &self.cfg.database;
            self.db = Some(Db::open_existing(&d.url, d.pool_size)?);
        }
        self.db.as_ref().expect("opened above").conn()
    }

    /// The process's one tokio runtime, built the first time: `serve` and
    /// `web` run on it, and the SMTP and XMPP listeners of the commands
    /// that deliver (`queue run`, `test-alert`, `demo`, the benches) run
    /// their sessions on it. Multi-threaded, so that its workers drive
    /// those sessions' sockets while a pass blocks on it; a worker a core,
    /// so `serve` and `web` answer on every core.
    fn rt(&mut self) -> Result<&tokio::runtime::Runtime> {
        if self.rt.is_none() {
            self.rt = Some(
                tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()?,
            );
        }
        Ok(self.rt.as_ref().expect("built above"))
    }

    /// A handle on [`Ctx::rt`], for what the listeners keep.
    fn handle(&mut self) -> Result<tokio::runtime::Handle> {
        Ok(self.rt()?.handle().clone())
    }

    /// Creates the database when it does not exist, and migrates it.
    fn create_db(&mut self) -> Result<()> {
        let d = &self.cfg.database;
        self.db = Some(Db::open(&d.url, d.pool_size)?);
        Ok(())
    }
}

/// Runs one parsed command with the given clock.
pub fn run(cli: Cli, clock: &dyn Clock) -> Result<()> {
    let env = crate::config::env_from_os(std::env::vars_os())?;
    for warning in crate::config::unknown_variables(&env) {
        eprintln!("digestd: {warning}");
    }
    let (mut cfg, origins) = Config::load_traced(cli.config.as_deref(), env)?;
    crate::deliver::check_settings(&cfg).map_err(|e| origins.place(e))?;
    crate::config::install(&cfg).map_err(|e| origins.place(e))?;
    if let Some(url) = &cli.db {
        crate::db::DbUrl::parse(url)?;
        cfg.database.url = url.clone();
    }
    // The demo and the benches print their own summaries: the daemon's
    // line per tick, pass and HTTP request (hundreds of thousands in
    // `bench http`) only when a setting asks for them.
    let own_summary = matches!(cli.command, Command::Demo | Command::Bench(_))
        && cfg.log.level == crate::config::LogConfig::default().level;
    logging::init(if own_summary { "warn" } else { &cfg.log.level });
    // Not locked for the whole command: the stdout email transport writes
    // from the delivery thread.
    let out = &mut std::io::stdout();
    let ctx = &mut Ctx {
        cfg: &cfg,
        clock,
        out,
        db: None,
        rt: None,
    };
    match cli.command {
        Command::Init => {
            ctx.create_db()?;
            let url = crate::text::redact_url(&cfg.database.url);
            writeln!(ctx.out, "database ready: {url}")?;
            Ok(())
        }
        Command::Check => {
            writeln!(ctx.out, "settings ok")?;
            Ok(())
        }
        Command::User(c) => parties::user(c, ctx),
        Command::Group(c) => parties::group(c, ctx),
        Command::Contact(a) => contact::contact(a, ctx),
        Command::Collection(c) => content::collection(c, ctx),
        Command::Item(c) => content::item(c, ctx),
        Command::Record => content::record(ctx),
        Command::Seen(a) => content::seen(a, ctx),
        Command::Purge(a) => content::purge(a, ctx),
        Command::Subscribe(a) => schedule::subscribe(a, ctx),
        Command::Subscription(c) => subscription::subscription(c, ctx),
        Command::Tick(a) => schedule::tick(a, ctx),
        Command::Preview(a) => schedule::preview(a, ctx),
        Command::Simulate(a) => schedule::simulate(a, ctx),
        Command::Grid(a) => schedule::grid(a, ctx),
        Command::Queue(c) => queue::queue(c, ctx),
        Command::Events(c) => events::events(c, ctx),
        Command::Notify(a) => queue::notify(a, ctx),
        Command::Cancel { id } => queue::cancel(id, ctx),
        Command::Request(c) => queue::request(c, ctx),
        Command::Inbound => queue::inbound(ctx),
        Command::TestAlert(a) => queue::test_alert(a, ctx),
        Command::Report { json } => queue::report(json, ctx),
        Command::Serve => {
            crate::serve::run(&cfg, shared_clock(cli.now.as_deref(), clock), ctx.rt()?)
        }
        Command::Web => {
            crate::http::run_web(&cfg, shared_clock(cli.now.as_deref(), clock), ctx.rt()?)
        }
        Command::Token(c) => access::token(c, ctx),
        Command::Ticket(c) => access::ticket(c, ctx),
        Command::Demo => demo::run(&cfg, cli.db.is_some(), &ctx.handle()?, ctx.out),
        Command::Bench(c) => bench::run(c, cli.db.as_deref(), ctx),
    }
}

/// The clock a daemon shares between threads: the wall clock, or the fixed
/// instant `--now` named (already checked by `main`).
fn shared_clock(now: Option<&str>, clock: &dyn Clock) -> std::sync::Arc<dyn Clock> {
    match now {
        Some(_) => std::sync::Arc::new(FixedClock::new(clock.now())),
        None => std::sync::Arc::new(SystemClock),
    }
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
    let text = String::from_utf8(buf).map_err(|_| Error::invalid("input is not valid UTF-8"))?;
    // A byte order mark some editors write first is not part of the JSON.
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
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

/// A progress bar on stderr, drawn only when stderr is a terminal; `len` 0
/// when the total is not known.
pub fn progress(len: usize) -> indicatif::ProgressBar {
    let len = (len > 0).then_some(len as u64);
    indicatif::ProgressBar::with_draw_target(len, indicatif::ProgressDrawTarget::stderr())
}
