//! The `smtp` transport: lettre's async SMTP client on `pool_size` long-lived
//! sessions, so the messages of a queue pass reuse their connections and up
//! to `pool_size` go out in parallel.
//!
//! The sessions are digestd's own rather than lettre's pool: our sockets
//! set `TCP_NODELAY` before lettre takes them (plain and STARTTLS; the
//! `smtps` TLS wrapper uses lettre's own connect), and we need the
//! connection itself for pipelining. Without `TCP_NODELAY`, a message
//! written in more than one piece meets Nagle's algorithm and the server's
//! delayed ACK: about 40 ms per message, 90 messages/s on loopback.
//!
//! When the server offers PIPELINING and a message is plain ASCII, it goes
//! through [`pipeline`]: one write and one round trip per message. When
//! not, lettre's own `send` (four round trips, SMTPUTF8 and 8BITMIME
//! negotiated).
//!
//! A session that breaks (reset, a hang-up in the middle of DATA, a
//! timeout) is dropped, and the next message opens a new one: the pass goes
//! on. One idle since the previous pass is checked with NOOP before reuse.
//! Replies map to outcomes: 2xx sent; anything else is an [`Error`],
//! which decides: 4xx, refused, reset, timeout transient; 5xx permanent.

mod error;
mod pipeline;
mod url;

pub use error::Error;

pub use url::check;
use url::{target, Target, Tls};

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, Certificate, TlsParameters};
use lettre::transport::smtp::commands::Ehlo;
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::response::Response;

use super::listener::Accepted;
use super::sink::{Outcome, Outgoing};
use crate::config::EmailConfig;
use crate::error::Result;

/// A session, whether it has sat idle since the last pass, and whether the
/// server offers PIPELINING (RFC 2920).
struct Session {
    conn: AsyncSmtpConnection,
    idle: bool,
    pipelining: bool,
}

pub struct SmtpSink {
    /// The process's runtime, which drives the sessions' sockets and
    /// timers; the sessions run on the calling (blocking) thread.
    rt: tokio::runtime::Handle,
    target: Target,
    timeout: Duration,
    sessions: Vec<Option<Session>>,
}

impl SmtpSink {
    /// The transport of `cfg` on the runtime `rt`. Its sends block on
    /// `rt`: call them from a blocking thread (a plain thread or
    /// `spawn_blocking`), never from an async task.
    pub fn new(cfg: &EmailConfig, rt: tokio::runtime::Handle) -> Result<SmtpSink> {
        Ok(SmtpSink {
            rt,
            target: target(cfg)?,
            timeout: Duration::from_secs(cfg.timeout_seconds),
            sessions: (0..cfg.pool_size.max(1)).map(|_| None).collect(),
        })
    }

    /// Sends every message over the sessions in parallel; one outcome each,
    /// in order. `accepted` is told of each message as its `250` is read,
    /// before its session writes anything more: a crash leaves at most one
    /// accepted message per session untold.
    pub(crate) fn send_all(&mut self, msgs: &[Outgoing], accepted: Accepted<'_>) -> Vec<Outcome> {
        let next = AtomicUsize::new(0);
        let mut sessions = std::mem::take(&mut self.sessions);
        for s in sessions.iter_mut().flatten() {
            s.idle = true;
        }
        let (target, timeout) = (&self.target, self.timeout);
        let results = self.rt.block_on(async {
            let workers = sessions.into_iter().map(|mut session| {
                let next = &next;
                async move {
                    let done =
                        pipeline::work(&mut session, target, timeout, msgs, next, accepted).await;
                    (session, done)
                }
            });
            futures_util::future::join_all(workers).await
        });
        let mut out: Vec<Option<Outcome>> = vec![None; msgs.len()];
        for (session, done) in results {
            self.sessions.push(session);
            for (i, o) in done {
                out[i] = Some(o);
            }
        }
        out.into_iter()
            .map(|o| o.unwrap_or_else(|| Error::NotAttempted.into()))
            .collect()
    }
}

impl SmtpSink {
    /// Says QUIT on each open session, 2 s at most each, and closes them.
    /// From a blocking thread, as the sends. A sink dropped without it
    /// closes its sessions' sockets without a goodbye.
    pub fn quit(&mut self) {
        let sessions = std::mem::take(&mut self.sessions);
        self.sessions = sessions.iter().map(|_| None).collect();
        self.rt.block_on(async {
            for mut s in sessions.into_iter().flatten() {
                let _ = tokio::time::timeout(Duration::from_secs(2), s.conn.quit()).await;
            }
        });
    }
}

/// TLS for `t`: `opportunistic` encrypts without verifying (a server's
/// self-signed or mismatched certificate still gets an encrypted session,
/// as Postfix's `may`); `required` and `wrapper` verify against the
/// system's roots and `tls_ca_file`'s.
fn tls_parameters(
    t: &Target,
) -> std::result::Result<TlsParameters, lettre::transport::smtp::Error> {
    let mut b = TlsParameters::builder(t.host.clone());
    if t.tls == (Tls::Starttls { required: false }) {
        b = b
            .dangerous_accept_invalid_certs(true)
            .dangerous_accept_invalid_hostnames(true);
    }
    for pem in &t.roots {
        b = b.add_root_certificate(Certificate::from_pem(pem)?);
    }
    b.build()
}

/// AUTH, when the URL has credentials (after connect's EHLO: a repeated
/// EHLO resets the session). A refusal is [`Error::Auth`] with the
/// server's code and text, not lettre's wording ("response error:
/// incomplete response").
async fn login(conn: &mut AsyncSmtpConnection, t: &Target) -> std::result::Result<(), Error> {
    let Some((user, pass)) = &t.credentials else {
        return Ok(());
    };
    let e = match conn
        .auth(
            &[Mechanism::Plain, Mechanism::Login],
            &Credentials::new(user.clone(), pass.clone()),
        )
        .await
    {
        Ok(_) => return Ok(()),
        Err(e) => e,
    };
    let code = e.status().map(u16::from);
    let text = e.to_string();
    // lettre says "permanent error (535): …"; keep the server's part.
    let said = text.split_once("): ").map_or(text.as_str(), |(_, r)| r);
    let reply = match code {
        Some(c) => format!("{c} {said}"),
        None => said.to_string(),
    };
    Err(Error::Auth { code, reply })
}

async fn connect(t: &Target, timeout: Duration) -> std::result::Result<Session, Error> {
    let hello = ClientId::Domain(t.hello.clone());
    let tls = || tls_parameters(t).map_err(|e| Error::Tls(e.to_string()));
    let connect = |e: &dyn std::fmt::Display| Error::Connect(e.to_string());
    let mut conn = if t.tls == Tls::Wrapper {
        AsyncSmtpConnection::connect_tokio1(
            (t.host.as_str(), t.port),
            Some(timeout),
            &hello,
            Some(tls()?),
            None,
        )
        .await
        .map_err(|e| connect(&e))?
    } else {
        let tcp = tokio::time::timeout(
            timeout,
            tokio::net::TcpStream::connect((t.host.as_str(), t.port)),
        )
        .await
        .map_err(|_| connect(&"timed out"))?
        .map_err(|e| connect(&e))?;
        tcp.set_nodelay(true).map_err(|e| connect(&e))?;
        AsyncSmtpConnection::connect_with_transport(Box::new(tcp), &hello)
            .await
            .map_err(|e| connect(&e))?
    };
    if let Tls::Starttls { required } = t.tls {
        if conn.can_starttls() {
            conn.starttls(tls()?, &hello)
                .await
                .map_err(|e| Error::Starttls(e.to_string()))?;
        } else if required {
            return Err(Error::StarttlsNotOffered);
        }
    }
    // lettre keeps only the EHLO keywords it knows, and PIPELINING is not
    // one: ask again, before AUTH (a repeated EHLO resets the session).
    let pipelining = conn
        .command(Ehlo::new(hello))
        .await
        .map(|r| r.message().any(|l| l.eq_ignore_ascii_case("PIPELINING")))
        .unwrap_or(false);
    Ok(Session {
        conn,
        idle: false,
        pipelining,
    })
}

/// The envelope of one message, or why it has none.
fn envelope(m: &Outgoing) -> std::result::Result<Envelope, Error> {
    match (m.envelope_from.parse(), m.to.parse()) {
        (Ok(from), Ok(to)) => {
            Envelope::new(Some(from), vec![to]).map_err(|e| Error::Envelope(e.to_string()))
        }
        _ => Err(Error::BadAddress(m.to.clone())),
    }
}

/// The session to send on: the open one if it still answers, or a new one.
async fn ready<'s>(
    session: &'s mut Option<Session>,
    t: &Target,
    timeout: Duration,
) -> std::result::Result<&'s mut Session, Error> {
    // A session idle since the last pass may have been closed by the server.
    if let Some(s) = session.as_mut() {
        if s.conn.has_broken() || (s.idle && !s.conn.test_connected().await) {
            *session = None;
        }
    }
    let s = match session {
        Some(s) => s,
        None => match connect(t, timeout).await {
            Ok(mut s) => {
                tokio::time::timeout(timeout, login(&mut s.conn, t))
                    .await
                    .unwrap_or(Err(Error::TimedOut(timeout)))?;
                session.insert(s)
            }
            // Refused, reset, unreachable, TLS trouble: worth a retry.
            Err(e) => return Err(e),
        },
    };
    s.idle = false;
    Ok(s)
}

/// A reply (or its absence) as an outcome: 2xx sent, a refusal or a lost
/// session as [`Error`] decides.
fn outcome(r: std::result::Result<Response, lettre::transport::smtp::Error>) -> Outcome {
    match r {
        Ok(r) => Outcome::sent(
            Some(u16::from(r.code())),
            r.message().collect::<Vec<_>>().join(" "),
        ),
        Err(e) => Error::from_lettre(&e).into(),
    }
}

fn timed_out(timeout: Duration) -> Outcome {
    Error::TimedOut(timeout).into()
}

/// One message by lettre's own `send`; also whether the session is still
/// usable (lettre closes it after any refusal).
async fn send_lettre(
    conn: &mut AsyncSmtpConnection,
    envelope: &Envelope,
    bytes: &[u8],
    timeout: Duration,
) -> (Outcome, bool) {
    match tokio::time::timeout(timeout, conn.send(envelope, bytes)).await {
        Err(_) => (timed_out(timeout), false),
        Ok(r) => (outcome(r), !conn.has_broken()),
    }
}
