//! The `smtp` transport: lettre's async SMTP client with a connection pool,
//! so the messages of one queue pass reuse their sessions and up to
//! `pool_size` go out in parallel. A broken connection is dropped by the
//! pool and the next message opens a new one; the pass goes on.
//!
//! Replies map to outcomes the queue understands: 2xx (250, 251) sent;
//! 4xx, refused, reset, timeout transient; 5xx permanent.

use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::PoolConfig;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use super::sink::{Outcome, Outgoing};
use crate::config::EmailConfig;
use crate::error::{Error, Result};

/// Checks `email.smtp_url` without connecting.
pub fn check_url(url: &str) -> Result<()> {
    let bad = |why: &str| Error::invalid(format!("config: email.smtp_url {url:?}: {why}"));
    if url.is_empty() {
        return Err(bad("required when email.transport is \"smtp\""));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("no spaces or control characters"));
    }
    if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
        return Err(bad("use smtp://host:port or smtps://host:port"));
    }
    AsyncSmtpTransport::<Tokio1Executor>::from_url(url).map_err(|e| bad(&e.to_string()))?;
    Ok(())
}

pub struct SmtpSink {
    /// `None` only while dropping: the pool must be built and dropped
    /// inside the runtime it spawns its housekeeping on.
    transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    rt: tokio::runtime::Runtime,
    parallel: usize,
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _inside = self.rt.enter();
        self.transport.take();
    }
}

impl SmtpSink {
    pub fn new(cfg: &EmailConfig) -> Result<SmtpSink> {
        check_url(&cfg.smtp_url)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let inside = rt.enter();
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&cfg.smtp_url)
            .map_err(|e| Error::invalid(format!("config: email.smtp_url: {e}")))?
            .timeout(Some(Duration::from_secs(cfg.timeout_seconds)))
            .pool_config(PoolConfig::new().max_size(cfg.pool_size))
            .build();
        drop(inside);
        Ok(SmtpSink {
            rt,
            transport: Some(transport),
            parallel: cfg.pool_size as usize,
        })
    }

    /// Sends every message, up to `pool_size` at once; one outcome each,
    /// in order.
    pub fn send_all(&mut self, msgs: &[Outgoing]) -> Vec<Outcome> {
        use futures_util::stream::{self, StreamExt};
        let t = self.transport.as_ref().expect("present until dropped");
        self.rt.block_on(async {
            stream::iter(msgs.iter().map(|m| async move { send_one(t, m).await }))
                .buffered(self.parallel)
                .collect::<Vec<_>>()
                .await
        })
    }
}

async fn send_one(t: &AsyncSmtpTransport<Tokio1Executor>, m: &Outgoing) -> Outcome {
    let envelope = match (m.envelope_from.parse(), m.to.parse()) {
        (Ok(from), Ok(to)) => match Envelope::new(Some(from), vec![to]) {
            Ok(e) => e,
            Err(e) => return Outcome::permanent(None, format!("envelope: {e}")),
        },
        _ => return Outcome::permanent(None, format!("bad address {:?}", m.to)),
    };
    match t.send_raw(&envelope, &m.bytes).await {
        Ok(r) => Outcome::Sent {
            code: Some(u16::from(r.code())),
            text: r.message().collect::<Vec<_>>().join(" "),
        },
        Err(e) => {
            let code = e.status().map(u16::from);
            let text = e.to_string();
            if e.is_permanent() {
                Outcome::permanent(code, text)
            } else {
                // 4xx, and everything that is not a reply at all: refused,
                // reset, timeout, TLS trouble.
                Outcome::transient(code, text)
            }
        }
    }
}
