//! The `smtp` transport: lettre's async SMTP client on `pool_size` long-lived
//! sessions, so the messages of a queue pass reuse their connections and up
//! to `pool_size` go out in parallel.
//!
//! The sessions are digestd's own rather than lettre's pool for one reason:
//! lettre writes a message's final `.` separately from its body, and
//! without `TCP_NODELAY` Nagle's algorithm meets the server's delayed ACK —
//! about 40 ms per message, 90 messages/s on loopback. Our sockets set
//! `TCP_NODELAY` before lettre takes them (plain and STARTTLS; the `smtps`
//! TLS wrapper uses lettre's own connect).
//!
//! A session that breaks (reset, a hang-up in the middle of DATA, a
//! timeout) is dropped, and the next message opens a new one: the pass goes
//! on. One idle since the previous pass is checked with NOOP before reuse.
//! Replies map to outcomes: 2xx sent; 4xx, refused, reset, timeout
//! transient; 5xx permanent.
//!
//! When the server offers PIPELINING, MAIL, RCPT and DATA go in one write
//! (RFC 2920) and a refused message is followed by RSET on the same
//! session instead of a new connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, TlsParameters};
use lettre::transport::smtp::commands::{Data, Ehlo, Mail, Rcpt, Rset};
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::response::Response;

use super::sink::{Outcome, Outgoing};
use crate::config::EmailConfig;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tls {
    None,
    Starttls { required: bool },
    Wrapper,
}

/// Where and how to connect, from `email.smtp_url`.
#[derive(Debug, Clone)]
struct Target {
    host: String,
    port: u16,
    tls: Tls,
    credentials: Option<(String, String)>,
    hello: String,
}

fn parse_url(raw: &str) -> Result<Target> {
    let bad = |why: &str| Error::invalid(format!("config: email.smtp_url {raw:?}: {why}"));
    if raw.is_empty() {
        return Err(bad("required when email.transport is \"smtp\""));
    }
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("no spaces or control characters"));
    }
    let u = url::Url::parse(raw).map_err(|e| bad(&e.to_string()))?;
    let host = u
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("no host"))?
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    let tls_q = u
        .query_pairs()
        .find(|(k, _)| k == "tls")
        .map(|(_, v)| v.to_string());
    let (tls, default_port) = match (u.scheme(), tls_q.as_deref()) {
        ("smtp", None) => (Tls::None, 25),
        ("smtp", Some("required")) => (Tls::Starttls { required: true }, 587),
        ("smtp", Some("opportunistic")) => (Tls::Starttls { required: false }, 587),
        ("smtps", None) => (Tls::Wrapper, 465),
        _ => {
            return Err(bad(
                "use smtp://host:port, smtp://host:port?tls=required|opportunistic or smtps://host:port",
            ))
        }
    };
    let dec = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| bad("credentials are not UTF-8"))
    };
    let credentials = match u.password() {
        Some(p) => Some((dec(u.username())?, dec(p)?)),
        None => None,
    };
    let path = u.path().trim_matches('/');
    Ok(Target {
        host,
        port: u.port().unwrap_or(default_port),
        tls,
        credentials,
        hello: if path.is_empty() {
            "localhost".into()
        } else {
            path.to_string()
        },
    })
}

/// Checks `email.smtp_url` without connecting.
pub fn check_url(url: &str) -> Result<()> {
    parse_url(url).map(|_| ())
}

/// A session, whether it has sat idle since the last pass, and whether the
/// server offers PIPELINING (RFC 2920).
struct Session {
    conn: AsyncSmtpConnection,
    idle: bool,
    pipelining: bool,
}

pub struct SmtpSink {
    rt: tokio::runtime::Runtime,
    target: Target,
    timeout: Duration,
    sessions: Vec<Option<Session>>,
}

impl SmtpSink {
    pub fn new(cfg: &EmailConfig) -> Result<SmtpSink> {
        let target = parse_url(&cfg.smtp_url)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(SmtpSink {
            rt,
            target,
            timeout: Duration::from_secs(cfg.timeout_seconds),
            sessions: (0..cfg.pool_size.max(1)).map(|_| None).collect(),
        })
    }

    /// Sends every message over the sessions in parallel; one outcome each,
    /// in order.
    pub fn send_all(&mut self, msgs: &[Outgoing]) -> Vec<Outcome> {
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
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(m) = msgs.get(i) else { break };
                        let o = send_one(&mut session, target, timeout, m).await;
                        done.push((i, o));
                    }
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
            .map(|o| o.unwrap_or_else(|| Outcome::transient(None, "not attempted")))
            .collect()
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let sessions = std::mem::take(&mut self.sessions);
        self.rt.block_on(async {
            for mut s in sessions.into_iter().flatten() {
                let _ = tokio::time::timeout(Duration::from_secs(2), s.conn.quit()).await;
            }
        });
    }
}

async fn connect(t: &Target, timeout: Duration) -> std::result::Result<Session, String> {
    let hello = ClientId::Domain(t.hello.clone());
    let tls = || TlsParameters::new(t.host.clone()).map_err(|e| format!("TLS: {e}"));
    let mut conn = if t.tls == Tls::Wrapper {
        AsyncSmtpConnection::connect_tokio1(
            (t.host.as_str(), t.port),
            Some(timeout),
            &hello,
            Some(tls()?),
            None,
        )
        .await
        .map_err(|e| format!("connect: {e}"))?
    } else {
        let tcp = tokio::time::timeout(
            timeout,
            tokio::net::TcpStream::connect((t.host.as_str(), t.port)),
        )
        .await
        .map_err(|_| "connect: timed out".to_string())?
        .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("connect: {e}"))?;
        AsyncSmtpConnection::connect_with_transport(Box::new(tcp), &hello)
            .await
            .map_err(|e| format!("connect: {e}"))?
    };
    if let Tls::Starttls { required } = t.tls {
        if conn.can_starttls() {
            conn.starttls(tls()?, &hello)
                .await
                .map_err(|e| format!("STARTTLS: {e}"))?;
        } else if required {
            return Err("STARTTLS required but not offered by the server".into());
        }
    }
    // lettre keeps only the EHLO keywords it knows, and PIPELINING is not
    // one: ask again, before AUTH (a repeated EHLO resets the session).
    let pipelining = conn
        .command(Ehlo::new(hello))
        .await
        .map(|r| r.message().any(|l| l.eq_ignore_ascii_case("PIPELINING")))
        .unwrap_or(false);
    if let Some((user, pass)) = &t.credentials {
        conn.auth(
            &[Mechanism::Plain, Mechanism::Login],
            &Credentials::new(user.clone(), pass.clone()),
        )
        .await
        .map_err(|e| format!("AUTH: {e}"))?;
    }
    Ok(Session {
        conn,
        idle: false,
        pipelining,
    })
}

/// MAIL, RCPT and DATA in one write, their three replies read in order,
/// then the message (RFC 2920): two round trips a message instead of four.
/// A refusal is answered with RSET and the session kept, where lettre's
/// own `send` would close it; only a broken connection aborts it.
async fn send_pipelined(
    conn: &mut AsyncSmtpConnection,
    envelope: &Envelope,
    bytes: &[u8],
) -> std::result::Result<Response, lettre::transport::smtp::Error> {
    let rcpts: String = envelope
        .to()
        .iter()
        .map(|a| Rcpt::new(a.clone(), vec![]).to_string())
        .collect();
    let head = format!(
        "{}{rcpts}{Data}",
        Mail::new(envelope.from().cloned(), vec![])
    );
    let mut replies = vec![conn.command(head).await];
    for _ in 0..envelope.to().len() + 1 {
        replies.push(conn.read_response().await);
    }
    let data_ok = replies.last().is_some_and(|r| r.is_ok());
    let first_err = replies.into_iter().find_map(|r| r.err());
    let result = match (first_err, data_ok) {
        (None, _) => conn.message(bytes).await,
        // The server took DATA after refusing something before it (it
        // should not): end the message empty, then report the refusal.
        (Some(e), true) => {
            let _ = conn.message(b"").await;
            Err(e)
        }
        (Some(e), false) => Err(e),
    };
    if let Err(e) = &result {
        if e.status().is_some() {
            if conn.command(Rset).await.is_err() {
                conn.abort().await;
            }
        } else {
            // No reply code: the connection itself failed.
            conn.abort().await;
        }
    }
    result
}

async fn send_one(
    session: &mut Option<Session>,
    t: &Target,
    timeout: Duration,
    m: &Outgoing,
) -> Outcome {
    let envelope = match (m.envelope_from.parse(), m.to.parse()) {
        (Ok(from), Ok(to)) => match Envelope::new(Some(from), vec![to]) {
            Ok(e) => e,
            Err(e) => return Outcome::permanent(None, format!("envelope: {e}")),
        },
        _ => return Outcome::permanent(None, format!("bad address {:?}", m.to)),
    };
    // A session idle since the last pass may have been closed by the server.
    if let Some(s) = session.as_mut() {
        if s.conn.has_broken() || (s.idle && !s.conn.test_connected().await) {
            *session = None;
        }
    }
    if session.is_none() {
        match connect(t, timeout).await {
            Ok(s) => *session = Some(s),
            // Refused, reset, unreachable, TLS or AUTH trouble: worth a retry.
            Err(e) => return Outcome::transient(None, e),
        }
    }
    let s = session.as_mut().expect("connected above");
    s.idle = false;
    // Pipelined when the server allows and nothing needs SMTPUTF8 or
    // 8BITMIME, which lettre's own send negotiates.
    let plain = m.bytes.is_ascii() && m.to.is_ascii() && m.envelope_from.is_ascii();
    let result = if s.pipelining && plain {
        tokio::time::timeout(timeout, send_pipelined(&mut s.conn, &envelope, &m.bytes)).await
    } else {
        tokio::time::timeout(timeout, s.conn.send(&envelope, &m.bytes)).await
    };
    let outcome = match result {
        Err(_) => {
            *session = None;
            return Outcome::transient(None, format!("timed out after {}s", timeout.as_secs()));
        }
        Ok(Ok(r)) => Outcome::sent(
            Some(u16::from(r.code())),
            r.message().collect::<Vec<_>>().join(" "),
        ),
        Ok(Err(e)) => {
            let code = e.status().map(u16::from);
            if e.is_permanent() {
                Outcome::permanent(code, e.to_string())
            } else {
                Outcome::transient(code, e.to_string())
            }
        }
    };
    if session.as_ref().is_some_and(|s| s.conn.has_broken()) {
        *session = None;
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("smtp://127.0.0.1:2525").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, &t.tls),
            ("127.0.0.1", 2525, &Tls::None)
        );
        let t = parse_url("smtp://bob:p%40ss@mail.example.com?tls=required").unwrap();
        assert_eq!((t.port, &t.tls), (587, &Tls::Starttls { required: true }));
        assert_eq!(t.credentials, Some(("bob".into(), "p@ss".into())));
        assert_eq!(parse_url("smtps://mail.example.com").unwrap().port, 465);
        for bad in [
            "",
            "http://mail:25",
            "smtp://",
            "smtp://mail:25?tls=maybe",
            "smtp://mail:25\r\nX: y",
            "smtp://mail :25",
            "smtp://mail:99999",
        ] {
            assert!(parse_url(bad).is_err(), "{bad:?}");
        }
    }
}
