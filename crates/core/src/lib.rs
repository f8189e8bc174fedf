//! digestd-core: what every layer of digestd uses and that needs neither a
//! database nor a runtime. No diesel, no tokio: unit-tested alone.
//!
//! - [`error`]: [`Invalid`], the one error this crate returns: input that
//!   can never be accepted as it is; with a [`Refusal`] when a person's own
//!   field was refused, which [`i18n`] says in their language.
//! - [`clock`], [`ids`]: injected time, typed ids.
//! - [`validate`]: every input validator (text, names, addresses, zones, instants).
//! - [`text`]: one-line folding, hex, SMS segment arithmetic, URLs with
//!   their password hidden, HMAC-SHA256 for the MACs under the site secret.
//! - [`recur`]: recurrence rules: their bounds, and expansion in the item's zone.
//! - [`i18n`]: the Fluent catalogues of digestd's words, per shipped language.
//! - [`ics`]: iCalendar objects (RFC 5545) for the calendar part of a forward digest.
#![forbid(unsafe_code)]

pub mod clock;
pub mod error;
pub mod i18n;
pub mod ics;
pub mod ids;
pub mod recur;
pub mod text;
pub mod validate;

pub use error::{Invalid, Refusal};
