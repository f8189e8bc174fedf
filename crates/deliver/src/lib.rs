//! digestd-deliver: nt requests become messages — the nt queue and its
//! listeners, above the engine's data path and below the use cases
//! (`digestd-app`) and the HTTP face.
//!
//! - [`queue`]: seed 000's nt queue — post, cancel, expand, process (batched
//!   per sender and recipient, retries with backoff), update, show, status;
//! - [`message`]: RFC 5322 / MIME email built with lettre, and batching;
//! - [`threading`]: the headers that keep a subscription's digests in one
//!   thread and name their list (In-Reply-To, References, List-Id);
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
//! - [`xmpp`]: the XMPP listener (tokio-xmpp, one long-lived session);
//! - [`webhook`]: the webhook listener and its chat presets;
//! - [`matrix`]: the Matrix listener (the client-server API over HTTP);
//! - [`events`]: the operators' events posted to `[events] url`;
//! - [`http`]: the HTTP exchanges of the listeners that post to a far end,
//!   on the process's one runtime.
//!
//! [`check_settings`] checks the channels' settings, which the engine's
//! `config` parses but only delivery understands.
//!
//! The engine's modules are imported at this crate's root under their own
//! names (`crate::config`, `crate::db`), as they read in the engine; its
//! `events` (the outbox of operators' events) is named in full, since
//! [`events`] here is the poster that sends them.
#![forbid(unsafe_code)]

use digestd_engine::{
    access, config, db, digest, error, feeds, i18n, ics, ids, parties, schedule, text, validate,
};

pub mod bounce;
pub mod dbout;
pub mod dkim;
pub mod encode;
pub mod events;
pub mod http;
pub mod listener;
pub mod matrix;
pub mod message;
pub mod msgid;
pub mod outbox;
pub mod queue;
pub mod sink;
pub mod sms;
pub mod smtp;
pub mod threading;
pub mod webhook;
pub mod xmpp;

#[cfg(test)]
mod tests;

use crate::config::{Config, EmailConfig, EmailTransport};
use crate::error::{Error, Result};

/// Checks the `[email]`, `[sms]`, `[xmpp]`, `[webhook]` and `[matrix]`
/// settings. Every command runs
/// it after [`Config::load`], so a bad transport setting is refused before
/// anything is read or written.
pub fn check_settings(cfg: &Config) -> Result<()> {
    check_email(&cfg.email)?;
    sms::check(&cfg.sms)?;
    webhook::check(&cfg.webhook)?;
    matrix::check(&cfg.matrix)?;
    events::check(&cfg.events)?;
    xmpp::check(&cfg.xmpp)
}

fn check_email(e: &EmailConfig) -> Result<()> {
    dkim::load(e)?;
    match e.transport {
        EmailTransport::Dir | EmailTransport::Stdout => {}
        EmailTransport::Smtp => smtp::check(e)?,
        EmailTransport::Pipe => sink::check_pipe(&e.pipe_command)?,
        EmailTransport::Db => dbout::check_path(&e.db_path)?,
    }
    if !(1..=64).contains(&e.pool_size) {
        return Err(Error::invalid("config: email.pool_size must be 1-64"));
    }
    if !(1..=600).contains(&e.timeout_seconds) {
        return Err(Error::invalid(
            "config: email.timeout_seconds must be 1-600",
        ));
    }
    if e.retry_base_seconds == 0 || e.retry_cap_seconds < e.retry_base_seconds {
        return Err(Error::invalid(
            "config: email.retry_base_seconds must be at least 1 and at most retry_cap_seconds",
        ));
    }
    if !(1..=100).contains(&e.max_retries) {
        return Err(Error::invalid("config: email.max_retries must be 1-100"));
    }
    if !(1..=1000).contains(&e.bounce_limit) {
        return Err(Error::invalid("config: email.bounce_limit must be 1-1000"));
    }
    if e.dir.is_empty() || e.dir.chars().any(char::is_control) {
        return Err(Error::invalid("config: email.dir must be a path"));
    }
    crate::config::parse_from(&e.from)?;
    Ok(())
}
