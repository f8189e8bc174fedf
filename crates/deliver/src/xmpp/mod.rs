//! The XMPP listener: the service logs in as its own account and keeps one
//! long-lived session (tokio-xmpp) on the process's runtime, sending each
//! message as `<message type="chat">` to the user's JID.
//!
//! XMPP has no per-message reply. The session negotiates stream
//! management (XEP-0198), and the server's `<a h=…/>` counts the stanzas
//! it took: each message is told of to the queue's journal as its stanza
//! is acknowledged, with at most `[xmpp] ack_window` (4) unacknowledged at
//! a time, so a crash sends again at most that many. A batch then ends
//! with an IQ ping to the server, and one to each other domain the batch
//! went to: stanzas between two entities are handled in order, so when
//! every ping's answer (or error) has arrived every message before it has
//! been taken or bounced (a bounce is a `<message type="error">` carrying
//! the message's id). A ping to our own server alone is not enough: the
//! server answers it at once, while a message for another domain is still
//! on its way there. That is the same promise as an SMTP relay's `250`:
//! accepted by the server, not read by the person. (`batch`)
//!
//! A message that can never be sent is answered on its own before it
//! reaches the session: an address that is not a JID, a body that is not
//! UTF-8 or holds a character XML 1.0 forbids (U+FFFF, a C0 control), a
//! stanza the XML layer will not write. Handed to the stream, such a body
//! failed the whole session and every other message of the batch with it.
//!
//! What went wrong is an [`Error`], which decides: stanza errors
//! `item-not-found`, `not-allowed`, `forbidden`, `jid-malformed`,
//! `not-acceptable` and `bad-request` are permanent;
//! `service-unavailable`, `remote-server-timeout`, connection loss and
//! anything of error type `wait` are transient. A session that drops is
//! torn down: its client dropped, which ends its tasks on the runtime (the
//! stream closed, no reconnection, so nothing is resent behind the queue's
//! back), and opened again at the next send, with backoff after failures.
//!
//! `config` checks `[xmpp]`; `batch` sends a batch on a session;
//! `stanza` holds what a stanza carries (its id, the capped body) and what
//! a stanza error means.

use std::time::Duration;

use chrono::{DateTime, Utc};

use futures_util::StreamExt;
use tokio_xmpp::connect::DnsConfig;
use tokio_xmpp::jid::{BareJid, Jid};
use tokio_xmpp::xmlstream::Timeouts;
use tokio_xmpp::{Client, Event};

use super::listener::{Accepted, Delivered, DeliveryError, Listener, Outgoing};
use crate::config::{XmppConfig, XmppTransport};
use crate::error::Result;
use crate::parties::Channel;

mod batch;
mod config;
mod error;
mod stanza;

use batch::{send_batch, Params};
pub use config::check;
use config::server;
pub use error::Error;
pub use stanza::{cap, classify};

/// Waits until `client` has logged in, at most `timeout`. A bad password
/// or certificate is retried inside tokio-xmpp without end: only the
/// timeout stops it.
pub async fn online(client: &mut Client, timeout: Duration) -> std::result::Result<(), String> {
    let wait = async {
        loop {
            match client.next().await {
                Some(Event::Online { .. }) => return Ok(()),
                Some(Event::Disconnected(e)) => return Err(e.to_string()),
                Some(Event::Stanza(_)) => {}
                None => return Err("stream closed".to_string()),
            }
        }
    };
    match tokio::time::timeout(timeout, wait).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "login did not complete in {}s (server down, or wrong jid/password?)",
            timeout.as_secs()
        )),
    }
}

pub struct XmppListener {
    cfg: XmppConfig,
    /// The process's runtime: the session's tasks live there, and the
    /// listener blocks on it from the (blocking) thread that sends.
    rt: tokio::runtime::Handle,
    session: Option<Client>,
    /// Failed connection attempts in a row, and when the next may start,
    /// on the queue's clock ([`Listener::pass_at`]).
    failures: u32,
    next_try: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    batch: u64,
}

impl XmppListener {
    /// The listener of `cfg`, its session on `rt`. It blocks on `rt`:
    /// send from a blocking thread (a plain thread or `spawn_blocking`),
    /// never from an async task.
    pub fn new(cfg: &XmppConfig, rt: tokio::runtime::Handle) -> Result<XmppListener> {
        check(cfg)?;
        if cfg.transport != XmppTransport::Xmpp {
            return Err(crate::error::Error::invalid(
                "config: xmpp.transport is not \"xmpp\"",
            ));
        }
        Ok(XmppListener {
            cfg: cfg.clone(),
            rt,
            session: None,
            failures: 0,
            next_try: None,
            now: DateTime::<Utc>::UNIX_EPOCH,
            batch: 0,
        })
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.cfg.timeout_seconds)
    }

    fn client(&self) -> Client {
        let jid: Jid = BareJid::new(&self.cfg.jid).expect("checked in new").into();
        let dns = match server(&self.cfg.server) {
            Ok((host, port)) => DnsConfig::NoSrv {
                host,
                port,
                resolver: None,
            },
            Err(_) => DnsConfig::srv_default_client(jid.domain().as_str()),
        };
        let t = self.timeout();
        let timeouts = Timeouts {
            read_timeout: t.max(Duration::from_secs(30)) * 2,
            response_timeout: t,
        };
        if self.cfg.tls {
            Client::new_starttls(jid, self.cfg.password.clone(), dns, timeouts)
        } else {
            Client::new_plaintext(jid, self.cfg.password.clone(), dns, timeouts)
        }
    }

    /// Opens a session unless one is open; after failed logins, not
    /// before the backoff has passed.
    fn connect(&mut self) -> std::result::Result<(), Error> {
        if self.session.is_some() {
            return Ok(());
        }
        if let Some(at) = self.next_try {
            if self.now < at {
                return Err(Error::Backoff {
                    failures: self.failures,
                    wait_secs: (at - self.now).num_seconds() + 1,
                });
            }
        }
        let timeout = self.timeout();
        // The client spawns its tasks as it is made: inside the runtime.
        // One that does not get online is dropped there, which ends them.
        let online = self.rt.block_on(async {
            let mut client = self.client();
            online(&mut client, timeout).await.map(|()| client)
        });
        match online {
            Ok(client) => {
                tracing::info!(jid = %self.cfg.jid, "xmpp: online");
                self.failures = 0;
                self.next_try = None;
                self.session = Some(client);
                Ok(())
            }
            Err(e) => {
                self.failures += 1;
                let wait = (1u64 << self.failures.min(16)).min(self.cfg.reconnect_cap_seconds);
                self.next_try = Some(self.now + chrono::Duration::seconds(wait as i64));
                tracing::warn!(error = %e, retry_in = wait, "xmpp: cannot log in");
                Err(Error::Login(e))
            }
        }
    }

    /// Drops the session, so nothing it queued is sent later behind the
    /// queue's back: its tasks see their client gone, close the stream
    /// and end, reconnecting no more. Inside the runtime, which dropping
    /// the client's channels needs; it does not block.
    fn drop_session(&mut self) {
        if let Some(client) = self.session.take() {
            let _in = self.rt.enter();
            drop(client);
        }
    }
}

impl Listener for XmppListener {
    fn key(&self) -> Channel {
        Channel::Xmpp
    }

    fn pass_at(&mut self, now: DateTime<Utc>) {
        self.now = now;
    }

    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        self.send(std::slice::from_ref(m))
            .pop()
            .expect("one result per message")
    }

    /// The whole batch on the session, at most `[xmpp] ack_window`
    /// stanzas unacknowledged at a time, then the pings; `accepted` hears
    /// of each message as the server acknowledges it (without stream
    /// management: once the pings vouch for it).
    fn send_noting(
        &mut self,
        msgs: &[Outgoing],
        accepted: Accepted<'_>,
    ) -> Vec<std::result::Result<Delivered, DeliveryError>> {
        if msgs.is_empty() {
            return Vec::new();
        }
        // A fresh session for a batch whose session broke before it
        // started; not more, so a dead server costs one timeout per pass.
        for attempt in 0..2 {
            self.batch += 1;
            let p = Params {
                batch: self.batch,
                max_chars: self.cfg.max_chars,
                timeout: self.timeout(),
                window: self.cfg.ack_window,
            };
            if let Err(e) = self.connect() {
                return vec![Err(e.into()); msgs.len()];
            }
            let Some(client) = self.session.as_mut() else {
                unreachable!("connect() opened it")
            };
            let (out, lost, handed) = self.rt.block_on(send_batch(client, msgs, &p, accepted));
            let Some(lost) = lost else {
                return out
                    .into_iter()
                    .map(|o| o.expect("every message settled"))
                    .collect();
            };
            tracing::warn!(error = %lost, "xmpp: session dropped");
            self.drop_session();
            // Nothing was handed to the dead stream: nothing can have gone
            // out, so a fresh session may try at once without a duplicate.
            if attempt == 0 && !handed {
                continue;
            }
            return out
                .into_iter()
                .map(|o| o.unwrap_or_else(|| Err(Error::Lost(lost.clone()).into())))
                .collect();
        }
        unreachable!("the second attempt always returns")
    }

    fn shutdown(&mut self) {
        if let Some(client) = self.session.take() {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(2), client.send_end()).await
            });
        }
    }
}

impl Drop for XmppListener {
    fn drop(&mut self) {
        self.drop_session();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_is_down_is_a_transient_failure_with_backoff() {
        // A port nothing listens on: connection refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mut l = XmppListener::new(
            &XmppConfig {
                transport: XmppTransport::Xmpp,
                jid: "digestd@localhost".into(),
                password: "pw".into(),
                server: format!("127.0.0.1:{port}"),
                tls: false,
                timeout_seconds: 5,
                ..XmppConfig::default()
            },
            rt.handle().clone(),
        )
        .unwrap();
        let r = l.send(&[Outgoing::text("alice@localhost", "hi", Default::default())]);
        assert!(
            matches!(r[0], Err(DeliveryError::Transient { .. })),
            "{r:?}"
        );
        // The second try comes before the backoff is over: refused at once.
        let r = l.send(&[Outgoing::text("alice@localhost", "hi", Default::default())]);
        match &r[0] {
            Err(DeliveryError::Transient { text, .. }) => {
                assert!(text.contains("next try in"), "{text}")
            }
            other => panic!("{other:?}"),
        }
        // Once the queue's clock is past the backoff (2 s after one
        // failure), it tries again: refused by the server, not by itself.
        l.pass_at(DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::seconds(3));
        let r = l.send(&[Outgoing::text("alice@localhost", "hi", Default::default())]);
        match &r[0] {
            Err(DeliveryError::Transient { text, .. }) => {
                assert!(!text.contains("next try in"), "{text}")
            }
            other => panic!("{other:?}"),
        }
        // The clients that never got online were dropped: their tasks on
        // the shared runtime (tokio-xmpp's reconnection among them, which
        // would otherwise try the dead server for ever) all end.
        drop(l);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while rt.metrics().num_alive_tasks() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "{} task(s) still alive",
                rt.metrics().num_alive_tasks()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
