//! Digests: what a due run holds and how it reads.
//!
//! - [`compose`]: `findModifiedItems` (the log of a window, collapsed per
//!   item) and `findItemsInRange` (what starts or reminds in a window);
//! - [`words`]: the Cosmo-style sentences, in the recipient's zone and
//!   12/24-hour convention;
//! - [`render`]: askama templates per channel, the subject, the cap;
//! - [`preview`]: one subscription's digest at an instant, composed and
//!   rendered as the tick would, posted nowhere; and the whole digest of a
//!   past period, every item (the page the "and N more" link opens);
//! - [`link`]: that link, signed so that it cannot be guessed;
//! - [`post`]: the tick's [`crate::schedule::HandOff`]: compose, render and
//!   post an nt request in the tick's transaction;
//! - `handoff`: the composer as the tick's hand-off: only the renderings a
//!   request's channels read, shared ones stored once;
//! - `store`: a batch of posts written in a few statements;
//! - `workers`: a batch's digests planned on the tick's thread, composed
//!   and rendered on `[schedule] compose_workers` threads.

pub mod compose;
mod handoff;
pub mod link;
pub mod post;
pub mod preview;
pub mod render;
mod store;
pub mod words;
mod workers;

pub use handoff::Drafted;
pub use post::Composer;
pub use preview::{preview, whole, Preview, Whole};
