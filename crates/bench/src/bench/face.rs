//! The HTTP face a benchmark serves (`bench http`, `bench soak-server`):
//! passed in by the binary, which owns the HTTP crate, so that this crate
//! builds without `digestd-http` and a change there rebuilds only that
//! crate and the binary.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::clock::Clock;
use crate::config::Config;
use crate::db::Db;
use crate::error::Result;
use crate::metrics::Metrics;

/// What a benchmark serves: its listener, database, settings, clock and
/// the metrics its ticks feed, until `shutdown` completes.
pub struct Served {
    pub listener: tokio::net::TcpListener,
    pub db: Db,
    pub cfg: Config,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<Metrics>,
    pub shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
}

/// Serving, until the shutdown completes and the requests in flight drain.
pub type Serving = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// The face: `digestd-http`'s server and router, as `digestd serve` runs
/// them.
pub type ServeHttp = fn(Served) -> Serving;
