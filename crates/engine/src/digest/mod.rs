//! Digests: what a due run holds and how it reads.
//!
//! - [`compose`]: `findModifiedItems` (the log of a window, collapsed per
//!   item) and `findItemsInRange` (what starts or reminds in a window);
//! - [`calendar`]: a forward digest's items as an iCalendar object, for
//!   its email;
//! - [`words`]: the Cosmo-style sentences, in the recipient's zone and
//!   12/24-hour convention;
//! - [`render`]: askama templates per channel, the subject, the cap;
//! - [`preview`]: one subscription's digest at an instant, composed and
//!   rendered as the tick would, posted nowhere; and the whole digest of a
//!   past period, every item (the page the "and N more" link opens);
//! - [`range_page`]: `findItemsInRange` one page at a time (the `range`
//!   feed), each query `LIMIT`ed;
//! - [`link`]: that link, signed so that it cannot be guessed;
//! - [`post`]: the tick's [`crate::schedule::HandOff`]: compose, render and
//!   post an nt request in the tick's transaction;
//! - `handoff`: the composer as the tick's hand-off: only the renderings a
//!   request's channels read, shared ones stored once;
//! - `store`: a batch of posts written in a few statements;
//! - `workers`: a batch's digests planned on the tick's thread, composed
//!   and rendered on `[schedule] compose_workers` threads while the tick's
//!   thread plans the next batch;
//! - `names`: the party names the workers read while more are loaded;
//! - `readers`: reads spread over the tick's and the pool's idle
//!   connections;
//! - `window`: a window of the log as the composer keeps it;
//! - `seen`: seen marks, a per-recipient filter of a window's list.

pub mod calendar;
pub mod compose;
mod handoff;
pub mod link;
pub mod listed;
mod names;
pub mod post;
pub mod preview;
pub mod range_page;
mod readers;
pub mod render;
mod seen;
mod store;
mod window;
pub mod words;
mod workers;

pub use handoff::Drafted;
pub use post::Composer;
pub use preview::{preview, whole, Preview, Whole};
