//! digestd-engine: settings, the entities and the data path — everything
//! between the store and delivery (`digestd-deliver`).
//!
//! Other systems tell digestd what changed ([`ingest`], [`items`] →
//! [`modlog`]); people subscribe to collections ([`parties`],
//! [`subscriptions`]); every hour one job picks the digests that are due in
//! each user's own timezone ([`schedule`]), composes them ([`digest`]) and
//! posts them as nt requests, which the delivery crate sends.
//!
//! Where things live, lowest layer first; a module imports only modules
//! above it in this list (`tests/it/layers.rs` checks it), and the core's
//! modules ([`clock`], [`ids`], [`validate`], [`text`], [`recur`]) are
//! re-exported here under their own names:
//! - [`error`] and [`db`]: the store crate (`crates/store`): the error
//!   policy; the connection type (SQLite | PostgreSQL), the pool,
//!   migrations, the schema.
//! - [`config`]: typed settings (file, `DIGESTD_*` environment, flags).
//! - [`parties`]: users, groups, membership, expansion, contact points, the system party.
//! - [`modlog`]: the modification log and its values; bulk writes; purge.
//! - [`items`]: collections and items; item upserts record their diff.
//! - [`seen`]: when a person last viewed an item (seen marks), which digests leave out.
//! - [`access`]: API tokens and collection read tickets (secrets kept as hashes).
//! - [`subscriptions`]: the subscription table and its validation.
//! - [`ingest`]: JSON-lines input for `digestd record`.
//! - [`schedule`]: local periods, the week grid, the tick, the lease.
//! - [`digest`]: composing and rendering a due run, posted as an nt request.
//! - [`feeds`]: the Atom feeds of a collection (Cosmo's `changed` and
//!   `range` projections) and their validators, from the digest's queries.
#![forbid(unsafe_code)]

pub use digestd_core::{clock, i18n, ics, ids, recur, text, validate};
/// Storage and the error policy: the store crate, under the names the
/// modules here have always used.
pub use digestd_store::{self as db, error};

pub mod access;
pub mod config;
pub mod digest;
pub mod events;
pub mod feeds;
pub mod ingest;
pub mod items;
pub mod modlog;
pub mod parties;
pub mod schedule;
pub mod seen;
pub mod subscriptions;

pub use error::{Error, Result};
