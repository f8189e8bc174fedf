//! digestd: a multi-channel digest scheduler.
//!
//! Other systems tell digestd what changed ([`ingest`], [`items`] →
//! [`modlog`]); people subscribe to collections ([`parties`],
//! [`subscriptions`]); every hour one job picks the digests that are due in
//! each user's own timezone ([`schedule`]), composes them ([`digest`]) and
//! delivers them by email, XMPP and SMS ([`deliver`]).
//!
//! Where things live, lowest layer first; a module imports only modules
//! above it in this list (`tests/it/layers.rs` checks it):
//! - [`error`], [`clock`], [`ids`]: the error policy, injected time, typed ids.
//! - [`validate`]: every input validator (text, names, addresses, zones, instants).
//! - [`text`]: one-line folding, the sender mailbox, SMS segment arithmetic, URLs with their password hidden.
//! - [`db`]: the connection type (SQLite | PostgreSQL), the pool, migrations, the schema.
//! - [`config`]: typed settings (file, `DIGESTD_*` environment, flags).
//! - [`recur`]: recurrence rules: their bounds, and expansion in the item's zone.
//! - [`parties`]: users, groups, membership, expansion, contact points, the system party.
//! - [`modlog`]: the modification log and its values; bulk writes; purge.
//! - [`items`]: collections and items; item upserts record their diff.
//! - [`access`]: API tokens and collection read tickets (secrets kept as hashes).
//! - [`subscriptions`]: the subscription table and its validation.
//! - [`ingest`]: JSON-lines input for `digestd record`.
//! - [`schedule`]: local periods, the week grid, the tick, the lease.
//! - [`manage`]: operations that span layers: subscribe, resume, a user's new preferences.
//! - [`digest`]: composing and rendering a due run, posted as an nt request.
//! - [`feeds`]: the Atom feeds of a collection (Cosmo's `changed` and
//!   `range` projections) and their validators, from the digest's queries.
//! - [`deliver`]: the nt queue and its listeners (email by `dir`, `smtp`,
//!   `pipe`, `db` or `stdout`; XMPP; SMS by an HTTP gateway), bounces, and
//!   the check of the channels' settings.
//! - [`metrics`]: the process's counters (ticks, runs, digests, deliveries) and the database's gauges, for `/metrics`.
//! - [`report`]: the operator's daily report (`digestd report`, posted once a local day).
//! - [`remove`]: deleting users, groups, collections and subscriptions with
//!   their unsent requests, in one transaction.
//! - [`signup`]: public sign-up with double opt-in: pending sign-ups, the
//!   verification message, confirmation, the limits.
//! - [`http`]: the HTTP server: health, tokens, the JSON API, the Atom feeds, metrics, OpenAPI.
//! - [`serve`]: the daemon loop (cron-driven ticks and queue passes, graceful shutdown).
//! - [`demo`], [`bench`]: the demo world and the benchmarks.
//! - [`cli`]: the command line, one file per group of commands.
#![forbid(unsafe_code)]

pub mod access;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod deliver;
pub mod demo;
pub mod digest;
pub mod error;
pub mod feeds;
pub mod http;
pub mod ids;
pub mod import;
pub mod ingest;
pub mod items;
pub mod manage;
pub mod metrics;
pub mod modlog;
pub mod parties;
pub mod recur;
pub mod remove;
pub mod report;
pub mod schedule;
pub mod serve;
pub mod signup;
pub mod subscriptions;
pub mod text;
pub mod validate;

pub use error::{Error, Result};
