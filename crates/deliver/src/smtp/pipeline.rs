//! The pipelined path (RFC 2920): one write and one round trip a message.
//!
//! The first message of a run on a session sends MAIL, RCPT and DATA in one
//! write and reads their replies. After that, each write carries a
//! message's body, its final `.` and the next message's MAIL, RCPT and
//! DATA; the replies come back in order: the `.` (the message's outcome),
//! then the next message's three. RFC 2920 allows this: message content
//! may start a group and DATA must end one.
//!
//! What can go wrong, message by message:
//! - a refused MAIL or RCPT (or DATA): that message's outcome; RSET, and
//!   the session goes on;
//! - a refused `.`: that message's outcome; the server has already reset
//!   the transaction and the next message's commands stand;
//! - no reply (reset, hang-up, timeout) to a `.`: that message is transient
//!   (the server may or may not have taken it: at least once), the session
//!   is dropped and the next message, whose commands went out but whose
//!   body did not, starts again on a new session;
//! - no reply to the commands of a run's first message: transient.
//!
//! Lines are dot-stuffed after every LF, bare or not, so no line of a body
//! can end the DATA early on a server that accepts bare LF (SMTP
//! smuggling).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lettre::address::Envelope;
use lettre::transport::smtp::client::AsyncSmtpConnection;
use lettre::transport::smtp::commands::{Data, Mail, Rcpt, Rset};
use lettre::transport::smtp::response::Response;
use lettre::transport::smtp::Error as SmtpError;

use super::{envelope, outcome, ready, send_lettre, timed_out, Session, Target};
use crate::listener::{Accepted, Delivered};
use crate::sink::{Outcome, Outgoing};

/// Takes messages from `next` until none is left and sends them on
/// `session`, pipelined when the server allows; one outcome per message
/// taken. `accepted` hears of each message as its `250` is read, before
/// the session writes the next message's body.
pub(super) async fn work(
    session: &mut Option<Session>,
    t: &Target,
    timeout: Duration,
    msgs: &[Outgoing],
    next: &AtomicUsize,
    accepted: Accepted<'_>,
) -> Vec<(usize, Outcome)> {
    let take = || {
        let i = next.fetch_add(1, Ordering::SeqCst);
        (i < msgs.len()).then_some(i)
    };
    let mut run = Run {
        msgs,
        timeout,
        take: &take,
        accepted,
        done: Vec::new(),
        queued: None,
    };
    while let Some(i) = run.queued.take().or_else(&take) {
        let m = &msgs[i];
        let env = match envelope(m) {
            Ok(e) => e,
            Err(e) => {
                run.done.push((i, e.into()));
                continue;
            }
        };
        let s = match ready(session, t, timeout).await {
            Ok(s) => s,
            Err(e) => {
                run.done.push((i, e.into()));
                continue;
            }
        };
        let usable = if let Some(body) = plain(m).filter(|_| s.pipelining) {
            run.from(&mut s.conn, (i, &env, body)).await
        } else {
            let (o, usable) = send_lettre(&mut s.conn, &env, &m.bytes, timeout).await;
            run.push(i, o);
            usable
        };
        if !usable {
            *session = None;
        }
    }
    run.done
}

/// A message's text when it can go the pipelined way: ASCII throughout
/// (anything else needs SMTPUTF8 or 8BITMIME, which lettre negotiates).
fn plain(m: &Outgoing) -> Option<&str> {
    (m.to.is_ascii() && m.envelope_from.is_ascii())
        .then(|| std::str::from_utf8(&m.bytes).ok().filter(|b| b.is_ascii()))
        .flatten()
}

/// MAIL, RCPT and DATA for one message.
fn commands(env: &Envelope) -> String {
    let mut s = Mail::new(env.from().cloned(), vec![]).to_string();
    for a in env.to() {
        s.push_str(&Rcpt::new(a.clone(), vec![]).to_string());
    }
    s.push_str(&Data.to_string());
    s
}

/// `body` as DATA carries it, appended to `out`: a line that starts with
/// `.` gets a second one (RFC 5321 §4.5.2), then the final `.` line.
fn stuff(body: &str, out: &mut String) {
    out.reserve(body.len() + 16);
    if body.starts_with('.') {
        out.push('.');
    }
    let mut from = 0;
    for (lf, _) in body.match_indices("\n.") {
        out.push_str(&body[from..=lf]);
        out.push('.');
        from = lf + 1;
    }
    out.push_str(&body[from..]);
    if !body.is_empty() && !body.ends_with("\r\n") {
        out.push_str("\r\n");
    }
    out.push_str(".\r\n");
}

/// How a message's MAIL, RCPT and DATA were answered.
enum Head {
    /// 354: send the body.
    Accepted,
    /// A reply refused one of them (its outcome); the session stands.
    Refused(Outcome),
    /// No reply: the session is gone.
    Broken(Outcome),
}

/// One worker's state across the runs of its sessions.
struct Run<'a, F: Fn() -> Option<usize>> {
    msgs: &'a [Outgoing],
    timeout: Duration,
    take: &'a F,
    accepted: Accepted<'a>,
    done: Vec<(usize, Outcome)>,
    /// A message taken but not started; it goes first on the next session.
    queued: Option<usize>,
}

impl<'a, F: Fn() -> Option<usize>> Run<'a, F> {
    /// Message `i`'s outcome; an acceptance is told at once.
    fn push(&mut self, i: usize, o: Outcome) {
        if let Outcome::Sent {
            code,
            text,
            remote_id,
        } = &o
        {
            let d = Delivered {
                code: *code,
                text: text.clone(),
                remote_id: remote_id.clone(),
            };
            (self.accepted)(i, &d);
        }
        self.done.push((i, o));
    }

    /// Sends message `first` (index, envelope, text) and as many after it
    /// as the queue has, one write each. Returns whether the session is
    /// still usable.
    async fn from(
        &mut self,
        conn: &mut AsyncSmtpConnection,
        (first, env, body): (usize, &Envelope, &'a str),
    ) -> bool {
        let timeout = self.timeout;
        let (mut cur, mut cur_body) = (first, body);
        let mut head = within(timeout, async {
            let mail = conn.command(commands(env)).await;
            read_head(conn, mail, env.to().len()).await
        })
        .await;
        loop {
            match head {
                Head::Accepted => {}
                Head::Refused(o) => {
                    self.done.push((cur, o));
                    return matches!(
                        tokio::time::timeout(timeout, conn.command(Rset)).await,
                        Ok(Ok(_))
                    );
                }
                Head::Broken(o) => {
                    self.done.push((cur, o));
                    return false;
                }
            }
            // The next message rides behind this one when it can.
            let mut behind: Option<(usize, Envelope, &'a str)> = None;
            if let Some(n) = (self.take)() {
                match (envelope(&self.msgs[n]), plain(&self.msgs[n])) {
                    (Ok(e), Some(b)) => behind = Some((n, e, b)),
                    (Ok(_), None) => self.queued = Some(n),
                    (Err(e), _) => self.done.push((n, e.into())),
                }
            }
            let mut buf = String::new();
            stuff(cur_body, &mut buf);
            if let Some((_, e, _)) = &behind {
                buf.push_str(&commands(e));
            }
            match tokio::time::timeout(timeout, conn.command(buf)).await {
                // Told before the next body goes out: of this session's
                // accepted messages, at most the one whose dot is on the
                // wire is ever untold.
                Ok(Ok(r)) => self.push(cur, outcome(Ok(r))),
                Ok(Err(e)) if e.status().is_some() => self.done.push((cur, outcome(Err(e)))),
                broken => {
                    let o = match broken {
                        Ok(r) => outcome(r),
                        Err(_) => timed_out(timeout),
                    };
                    self.done.push((cur, o));
                    // Its body never went out: it starts again elsewhere.
                    self.queued = behind.map(|(n, ..)| n);
                    return false;
                }
            }
            let Some((n, e, b)) = behind else {
                return true;
            };
            (cur, cur_body) = (n, b);
            head = within(timeout, async {
                let mail = conn.read_response().await;
                read_head(conn, mail, e.to().len()).await
            })
            .await;
            if let Head::Broken(_) = head {
                // Only its commands went out: it starts again elsewhere.
                self.queued = Some(n);
                return false;
            }
        }
    }
}

/// The answer to a message's commands, or `Broken` after `timeout`.
async fn within(timeout: Duration, head: impl std::future::Future<Output = Head>) -> Head {
    tokio::time::timeout(timeout, head)
        .await
        .unwrap_or_else(|_| Head::Broken(timed_out(timeout)))
}

/// Reads the replies to RCPT (`rcpts` of them) and DATA after `mail`, the
/// reply to MAIL. A refusal before a 354 (which a server should not give)
/// ends that message empty.
async fn read_head(
    conn: &mut AsyncSmtpConnection,
    mail: Result<Response, SmtpError>,
    rcpts: usize,
) -> Head {
    let mut replies = vec![mail];
    for _ in 0..=rcpts {
        if replies
            .last()
            .is_some_and(|r| r.as_ref().is_err_and(|e| e.status().is_none()))
        {
            break;
        }
        replies.push(conn.read_response().await);
    }
    if let Some(Err(e)) = replies.last() {
        if e.status().is_none() {
            return Head::Broken(outcome(replies.pop().expect("just seen")));
        }
    }
    let data_ok = replies.last().is_some_and(|r| r.is_ok());
    match replies.into_iter().find(|r| r.is_err()) {
        None => Head::Accepted,
        Some(refused) => {
            if data_ok {
                let mut empty = String::new();
                stuff("", &mut empty);
                if conn
                    .command(empty)
                    .await
                    .is_err_and(|e| e.status().is_none())
                {
                    return Head::Broken(outcome(refused));
                }
            }
            Head::Refused(outcome(refused))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuffed(body: &str) -> String {
        let mut s = String::new();
        stuff(body, &mut s);
        s
    }

    #[test]
    fn dot_stuffing() {
        assert_eq!(stuffed("a\r\nb\r\n"), "a\r\nb\r\n.\r\n");
        assert_eq!(stuffed(".a\r\n.\r\nb"), "..a\r\n..\r\nb\r\n.\r\n");
        assert_eq!(stuffed(""), ".\r\n");
        // A bare LF followed by a dot cannot end the data early.
        assert_eq!(stuffed("x\n.\r\ny\r\n"), "x\n..\r\ny\r\n.\r\n");
        assert_eq!(stuffed("x\r\n.\ny\r\n"), "x\r\n..\ny\r\n.\r\n");
    }

    #[test]
    fn only_ascii_is_pipelined() {
        let m = |to: &str, body: &[u8]| Outgoing {
            envelope_from: "a@example.com".into(),
            to: to.into(),
            bytes: body.to_vec(),
            file: Default::default(),
            signing: None,
            matrix: None,
        };
        assert!(plain(&m("b@example.com", b"Subject: x\r\n\r\nhi\r\n")).is_some());
        assert!(plain(&m("b@example.com", "caf\u{e9}\r\n".as_bytes())).is_none());
        assert!(plain(&m("b@example.com", b"\xff\xfe")).is_none());
        assert!(plain(&m("j\u{f6}rg@example.com", b"hi\r\n")).is_none());
    }
}
