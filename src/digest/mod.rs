//! Digests: what a due run holds and how it reads.
//!
//! - [`compose`]: `findModifiedItems` (the log of a window, collapsed per
//!   item) and `findItemsInRange` (what starts or reminds in a window);
//! - [`recur`]: recurring events expanded in their own timezone;
//! - [`words`]: the Cosmo-style sentences, in the recipient's zone and
//!   12/24-hour convention;
//! - [`render`]: askama templates per channel, the subject, the cap;
//! - [`sms`]: GSM-7 / UCS-2 segment counting and fitting;
//! - [`post`]: the tick's [`crate::schedule::HandOff`]: compose, render and
//!   post an nt request in the tick's transaction.

pub mod compose;
pub mod post;
pub mod recur;
pub mod render;
pub mod sms;
pub mod words;

pub use post::Composer;
