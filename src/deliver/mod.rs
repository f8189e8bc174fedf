//! Delivery: nt requests become messages.
//!
//! - [`message`]: RFC 5322 / MIME email built with lettre;
//! - [`outbox`]: one pass of the nt queue (expand pending requests into
//!   queue rows, deliver the due rows, settle request statuses) with the
//!   `dir` transport: each email an `.eml` file, each XMPP or SMS body a
//!   text file beside them.

pub mod message;
pub mod outbox;
