//! digestd-http: the HTTP face ([`http`]: health, tokens, the JSON API,
//! the Atom feeds, the pages, metrics, OpenAPI) and the daemon that runs
//! it beside the tick and the queue ([`serve`]). The engine's modules are
//! re-exported here under their own names, so a path reads the same in
//! every crate above the engine.
#![forbid(unsafe_code)]

pub use digestd_engine::*;

pub mod http;
pub mod serve;
