//! digestd-bench: the demo world ([`demo`]) and the benchmarks
//! ([`bench`]), reached as `digestd demo` and `digestd bench …`. Not part
//! of the product's library; the layers below are re-exported here under
//! their own names. The HTTP crate is not among them: the benchmarks that
//! serve HTTP get its server from the binary ([`bench::ServeHttp`]).
#![forbid(unsafe_code)]

pub use digestd_app::*;
pub use digestd_deliver as deliver;
pub use digestd_engine::*;

pub mod bench;
pub mod demo;
