//! digestd-http: the HTTP face ([`http`]: health, tokens, the JSON API,
//! the Atom feeds, the pages, metrics, OpenAPI) and the daemon that runs
//! it beside the tick and the queue ([`serve`]). The engine's modules, the
//! delivery crate (as `deliver`) and the operations' modules are
//! re-exported here under their own names, so a path reads the same in
//! every crate above them.
#![forbid(unsafe_code)]

pub use digestd_app::*;
pub use digestd_deliver as deliver;
pub use digestd_engine::*;

pub mod http;
pub mod serve;
