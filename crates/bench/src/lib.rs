//! digestd-bench: the demo world ([`demo`]) and the benchmarks
//! ([`bench`]), reached as `digestd demo` and `digestd bench …`. Not part
//! of the product's library; the layers below are re-exported here under
//! their own names.
#![forbid(unsafe_code)]

pub use digestd_http::*;

pub mod bench;
pub mod demo;
