//! digestd: a multi-channel digest scheduler.
//!
//! Other systems tell digestd what changed ([`ingest`], [`items`] →
//! [`modlog`]); people subscribe to collections ([`parties`],
//! [`subscriptions`]); every hour one job picks the digests that are due in
//! each user's own timezone and delivers them.
//!
//! Where things live:
//! - [`db`]: the connection type (SQLite | PostgreSQL), the pool, migrations, the schema.
//! - [`parties`]: users, groups, membership, expansion, contact points.
//! - [`items`]: collections and items; item upserts record their diff.
//! - [`modlog`]: the modification log and its values; bulk writes; purge.
//! - [`ingest`]: JSON-lines input for `digestd record`.
//! - [`subscriptions`]: the subscription table and its validation.
//! - [`schedule`]: local periods, the week grid, the tick, the lease.
//! - [`digest`]: composing and rendering a due run, posted as an nt request.
//! - [`deliver`]: the nt queue pass and its transports (so far `dir`).
//! - [`validate`]: every input validator.
//! - [`config`], [`clock`], [`error`], [`ids`]: settings, injected time, the error policy, typed ids.
//! - [`serve`]: the daemon loop (cron-driven ticks, graceful shutdown).
//! - [`cli`], [`demo`], [`bench`]: the command line and what it runs.
#![forbid(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod deliver;
pub mod demo;
pub mod digest;
pub mod error;
pub mod ids;
pub mod ingest;
pub mod items;
pub mod modlog;
pub mod parties;
pub mod recur;
pub mod schedule;
pub mod serve;
pub mod subscriptions;
pub mod text;
pub mod validate;

pub use error::{Error, Result};
