//! digestd: a multi-channel digest scheduler.
//!
//! The workspace's crates are its layers, lowest first; each uses only
//! the crates below it, and re-exports them under their own module names,
//! so `digestd::validate`, `digestd::db` or `digestd::http` read the same
//! from here:
//! - `digestd-core` (`crates/core`): ids, the clock, validators, text,
//!   recurrence rules. No database, no runtime.
//! - `digestd-store` (`crates/store`): the connection, schema, migrations
//!   and every path that differs by back end.
//! - `digestd-engine` (`crates/engine`): settings, the entities and the
//!   data path (ingest → schedule → digest). No runtime.
//! - `digestd-deliver` (`crates/deliver`): the nt queue and its listeners.
//! - `digestd-app` (`crates/app`): operations that span the layers
//!   (subscribe, import, remove, sign-up, the report, metrics).
//! - `digestd-http` (`crates/http`): the HTTP face and `serve`.
//! - `digestd-bench` (`crates/bench`): the demo and the benchmarks.
//! - this crate: the command line ([`cli`]) and the binary.
#![forbid(unsafe_code)]

pub use digestd_bench::*;
pub use digestd_http::{http, serve};

pub mod cli;
