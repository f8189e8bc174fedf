//! digestd-app: the operations that span the layers, above the queue and
//! below the faces that call them (the command line and HTTP):
//! - [`manage`]: subscribe, resume, a user's new preferences;
//! - [`import`]: bulk import of users and subscriptions;
//! - [`metrics`]: the process's counters (ticks, runs, digests,
//!   deliveries) and the database's gauges, for `/metrics`;
//! - [`report`]: the operator's daily report (`digestd report`, posted once
//!   a local day);
//! - [`remove`]: deleting users, groups, collections and subscriptions
//!   with their unsent requests, in one transaction;
//! - [`signup`]: public sign-up with double opt-in: pending sign-ups, the
//!   verification message, confirmation, the limits;
//! - [`cycle`]: one tick and one queue pass, counted, as the daemon runs
//!   them.
//!
//! The engine's modules and the delivery crate are imported at this
//! crate's root under the names they have everywhere (`crate::config`,
//! `crate::deliver`).
#![forbid(unsafe_code)]

use digestd_deliver as deliver;
use digestd_engine::{
    config, db, digest, error, events, i18n, ids, ingest, items, parties, schedule, subscriptions,
    text, validate,
};

pub mod cycle;
pub mod import;
pub mod manage;
pub mod metrics;
pub mod remove;
pub mod report;
pub mod signup;
