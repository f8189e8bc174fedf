//! `bench …`: each benchmark with its floor, on its own database.

use clap::Subcommand;

use super::Ctx;
use crate::bench::{self, Served, Serving};
use crate::error::Result;
use crate::http;

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
    /// Notifications through the real queue to a loopback receiver, beside a bare reqwest client.
    Webhook(bench::WebhookArgs),
    /// Messages through the real queue into Synapse, beside a bare reqwest client.
    Matrix(bench::MatrixArgs),
    /// One recurring item's expansion for a weekly window, old starts beside new ones.
    Recur(bench::RecurArgs),
    /// HTTP routes (304 feed, full feed, POST modifications) beside a constant route and the record path.
    Http(bench::HttpArgs),
    /// The server's peak resident memory for one large NDJSON POST of modifications.
    Ndjson(bench::NdjsonArgs),
    /// `user import` and `subscription import` of N people beside a raw load of the same rows.
    Import(bench::ImportArgs),
    /// N users' daily digests at one local hour: ticks and queue passes into smtp-sink, beside smtp-source.
    Burst(bench::BurstArgs),
    /// Sustained mixed load: ingest, feed readers, API reads, hourly ticks into smtp-sink; memory per hour.
    Soak(bench::SoakArgs),
    /// One server of `bench soak` (started by it): `serve` with the bench's clock.
    #[command(hide = true)]
    SoakServer(bench::SoakServerArgs),
}

/// A bench opens the database it is given (`--db`) itself, or its own
/// SQLite file: never the configured one.
pub fn run(cmd: BenchCmd, db: Option<&str>, ctx: &mut Ctx) -> Result<()> {
    // The benches that deliver do so on the process's runtime.
    match cmd {
        BenchCmd::Ingest(a) => bench::ingest(&a, db, ctx.out),
        BenchCmd::Tick(a) => bench::tick(&a, db, ctx.out),
        BenchCmd::Simulate(a) => bench::simulate(&a, db, ctx.out),
        BenchCmd::Compose(a) => bench::compose(&a, db, ctx.out),
        BenchCmd::Smtp(a) => bench::smtp(&a, db, &ctx.handle()?, ctx.out),
        BenchCmd::Xmpp(a) => bench::xmpp(&a, db, &ctx.handle()?, ctx.out),
        BenchCmd::Webhook(a) => bench::webhook(&a, db, &ctx.handle()?, ctx.out),
        BenchCmd::Matrix(a) => bench::matrix(&a, db, &ctx.handle()?, ctx.out),
        BenchCmd::Recur(a) => bench::recur(&a, ctx.out),
        BenchCmd::Http(a) => bench::http(&a, db, serve_http, ctx.out),
        BenchCmd::Ndjson(a) => bench::ndjson(&a, db, ctx.out),
        BenchCmd::Import(a) => bench::import(&a, db, ctx.out),
        BenchCmd::Burst(a) => bench::burst(&a, db, &ctx.handle()?, ctx.out),
        BenchCmd::Soak(a) => bench::soak(&a, db, ctx.out),
        BenchCmd::SoakServer(a) => bench::soak_server(&a, db, &ctx.handle()?, serve_http, ctx.out),
    }
}

/// The HTTP face the benchmarks serve: the router and server of `serve`.
fn serve_http(s: Served) -> Serving {
    let app = http::App::with_metrics(s.db, s.cfg, s.clock, s.metrics);
    Box::pin(http::serve_on(s.listener, app, s.shutdown))
}
