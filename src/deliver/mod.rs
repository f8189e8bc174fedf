//! Delivery: nt requests become messages.
//!
//! - [`queue`]: seed 000's nt queue — post, cancel, expand, process (batched
//!   per sender and recipient, retries with backoff), update, show, status;
//! - [`message`]: RFC 5322 / MIME email built with lettre, and batching;
//! - [`encode`]: 7bit or quoted-printable bodies, in one pass;
//! - [`sink`]: the email transports as the `email` listener, and delivery
//!   outcomes;
//! - [`smtp`]: the `smtp` transport (lettre, async, pooled);
//! - [`dbout`]: the `db` transport (an SQLite file a relay drains);
//! - [`outbox`]: the `dir` transport, and where XMPP and SMS bodies go when
//!   their listener is not configured;
//! - [`bounce`]: `digestd inbound`, RFC 3464 bounces against contact points;
//! - [`listener`]: the `Listener` trait every channel is delivered through;
//! - [`sms`]: the SMS listener (an HTTP gateway);
//! - [`xmpp`]: the XMPP listener (tokio-xmpp, one long-lived session).

pub mod bounce;
pub mod dbout;
pub mod encode;
pub mod listener;
pub mod message;
pub mod outbox;
pub mod queue;
pub mod sink;
pub mod sms;
pub mod smtp;
pub mod xmpp;
