//! Where prepared messages go, and what came of each: the email transports
//! (`dir`, `smtp`, `db`, `pipe`, `stdout`) as the `email` listener, and the
//! outcome the queue records.

use std::borrow::Cow;

use super::dbout::DbOutbox;
pub use super::listener::Outgoing;
use super::listener::{Accepted, Delivered, DeliveryError, Listener};
use super::outbox::Outbox;
use super::smtp::SmtpSink;
use crate::config::{EmailConfig, EmailTransport};
use crate::error::{Error, Result};
use crate::parties::Channel;

/// What happened to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent {
        code: Option<u16>,
        text: String,
        /// The far end's id for the message, when it gives one.
        remote_id: Option<String>,
    },
    /// Worth another attempt later (4xx, connection refused/reset, timeout);
    /// not before `retry_after_secs` when the far end said so.
    Transient {
        code: Option<u16>,
        text: String,
        retry_after_secs: Option<u64>,
    },
    /// Never worth another attempt (5xx, an address the server refuses).
    Permanent { code: Option<u16>, text: String },
}

impl Outcome {
    pub fn sent(code: Option<u16>, text: impl Into<String>) -> Outcome {
        Outcome::Sent {
            code,
            text: text.into(),
            remote_id: None,
        }
    }

    pub fn transient(code: Option<u16>, text: impl Into<String>) -> Outcome {
        Outcome::Transient {
            code,
            text: text.into(),
            retry_after_secs: None,
        }
    }

    pub fn permanent(code: Option<u16>, text: impl Into<String>) -> Outcome {
        Outcome::Permanent {
            code,
            text: text.into(),
        }
    }

    pub fn code(&self) -> Option<u16> {
        match self {
            Outcome::Sent { code, .. }
            | Outcome::Transient { code, .. }
            | Outcome::Permanent { code, .. } => *code,
        }
    }

    /// The reply as recorded and shown: the far end's text, and its id for
    /// the message when it gave one.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Outcome::Sent {
                text,
                remote_id: Some(id),
                ..
            } => Cow::Owned(format!("{text} (id {id})").trim().to_string()),
            Outcome::Sent { text, .. }
            | Outcome::Transient { text, .. }
            | Outcome::Permanent { text, .. } => Cow::Borrowed(text),
        }
    }
}

/// The configured email transport.
pub enum EmailSink {
    Dir(Outbox),
    Smtp(Box<SmtpSink>),
    /// An SQLite file an external relay drains.
    Db(Box<DbOutbox>),
    /// Program and arguments; the message on its stdin.
    Pipe(Vec<String>),
    Stdout,
}

/// Checks `email.pipe_command`: a program and its arguments, no control
/// characters (it is split on spaces, never given to a shell).
pub fn check_pipe(cmd: &str) -> Result<()> {
    if cmd.split_whitespace().next().is_none() {
        return Err(Error::invalid(
            "config: email.pipe_command is required when email.transport is \"pipe\"",
        ));
    }
    if cmd.chars().any(char::is_control) {
        return Err(Error::invalid(
            "config: email.pipe_command: no control characters",
        ));
    }
    Ok(())
}

/// Runs `cmd` with `m` on stdin, `{from}` in an argument replaced by the
/// envelope sender (the configured address, never the recipient: an
/// address may begin with `-`): exit 0 sent; 75 (EX_TEMPFAIL) or a command
/// that cannot start transient; anything else permanent.
fn pipe(cmd: &[String], m: &Outgoing) -> Outcome {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let bytes = &m.bytes;
    let child = Command::new(&cmd[0])
        .args(
            cmd[1..]
                .iter()
                .map(|a| a.replace("{from}", &m.envelope_from)),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Outcome::transient(None, format!("{}: {e}", cmd[0])),
    };
    let wrote = child
        .stdin
        .take()
        .map(|mut i| i.write_all(bytes))
        .unwrap_or(Ok(()));
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return Outcome::transient(None, format!("{}: {e}", cmd[0])),
    };
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    match out.status.code() {
        Some(0) if wrote.is_ok() => Outcome::sent(None, format!("{} exited 0", cmd[0])),
        Some(75) => Outcome::transient(
            None,
            format!("{} exited 75 (try again later): {err}", cmd[0]),
        ),
        Some(n) => Outcome::permanent(None, format!("{} exited {n}: {err}", cmd[0])),
        None => Outcome::transient(None, format!("{} was killed by a signal", cmd[0])),
    }
}

/// A message's lines as an mbox (mboxrd) holds them: a line that starts
/// with `From `, after any number of `>`, gets one more `>`, so that no
/// line of a message reads as the start of the next one; a reader removes
/// one `>` from each such line.
fn mboxrd(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let quoted = line.iter().take_while(|b| **b == b'>').count();
        if line[quoted..].starts_with(b"From ") {
            out.push(b'>');
        }
        out.extend_from_slice(line);
    }
    out
}

impl EmailSink {
    /// The transport of `cfg`; `smtp` runs its sessions on `rt`.
    pub fn new(cfg: &EmailConfig, rt: &tokio::runtime::Handle) -> Result<EmailSink> {
        match cfg.transport {
            EmailTransport::Dir => Ok(EmailSink::Dir(Outbox::new(cfg)?)),
            EmailTransport::Smtp => Ok(EmailSink::Smtp(Box::new(SmtpSink::new(cfg, rt.clone())?))),
            EmailTransport::Db => Ok(EmailSink::Db(Box::new(DbOutbox::open(&cfg.db_path)?))),
            EmailTransport::Pipe => {
                check_pipe(&cfg.pipe_command)?;
                Ok(EmailSink::Pipe(
                    cfg.pipe_command
                        .split_whitespace()
                        .map(String::from)
                        .collect(),
                ))
            }
            EmailTransport::Stdout => Ok(EmailSink::Stdout),
        }
    }

    /// Sends `msgs`, one outcome each, telling `accepted` of each message
    /// as it is taken: over SMTP as each `250` is read, one file or pipe
    /// at a time for `dir`, `pipe` and `stdout`, the whole chunk once its
    /// `db` transaction has committed (a repeat there replaces the row).
    pub fn send_all(&mut self, msgs: &[Outgoing], accepted: Accepted<'_>) -> Vec<Outcome> {
        let noted = |i: usize, o: Outcome| {
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
                accepted(i, &d);
            }
            o
        };
        match self {
            EmailSink::Dir(o) => msgs
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    noted(
                        i,
                        match o.write(&m.file, &m.bytes) {
                            Ok(()) => {
                                Outcome::sent(None, format!("written to {}", m.file.display()))
                            }
                            // A full disk may clear; keep the message for a retry.
                            Err(e) => Outcome::transient(None, e.to_string()),
                        },
                    )
                })
                .collect(),
            EmailSink::Smtp(s) => s.send_all(msgs, accepted),
            EmailSink::Db(o) => o
                .send_all(msgs)
                .into_iter()
                .enumerate()
                .map(|(i, o)| noted(i, o))
                .collect(),
            EmailSink::Pipe(cmd) => msgs
                .iter()
                .enumerate()
                .map(|(i, m)| noted(i, pipe(cmd, m)))
                .collect(),
            EmailSink::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                msgs.iter()
                    .enumerate()
                    .map(|(i, m)| {
                        // mbox-style separation, so a reader can split them.
                        let r = writeln!(out, "From {} ", m.envelope_from)
                            .and_then(|_| out.write_all(&mboxrd(&m.bytes)))
                            .and_then(|_| out.write_all(b"\n"))
                            .and_then(|_| out.flush());
                        noted(
                            i,
                            match r {
                                Ok(()) => Outcome::sent(None, "written to stdout"),
                                Err(e) => Outcome::transient(None, format!("stdout: {e}")),
                            },
                        )
                    })
                    .collect()
            }
        }
    }
}

impl Listener for EmailSink {
    fn key(&self) -> Channel {
        Channel::Email
    }

    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        self.send(std::slice::from_ref(m))
            .pop()
            .expect("one result per message")
    }

    /// Over SMTP, the batch is spread over the pool's sessions in parallel.
    fn send_noting(
        &mut self,
        msgs: &[Outgoing],
        accepted: Accepted<'_>,
    ) -> Vec<std::result::Result<Delivered, DeliveryError>> {
        self.send_all(msgs, accepted)
            .into_iter()
            .map(Outcome::into_result)
            .collect()
    }

    /// Says QUIT on the SMTP sessions.
    fn shutdown(&mut self) {
        if let EmailSink::Smtp(s) = self {
            s.quit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mboxrd;

    #[test]
    fn mbox_lines_that_read_as_a_new_message_are_quoted() {
        let body = b"Subject: s\r\n\r\nFrom me\r\n>From you\r\nnot From here\r\nFrom\r\nFrom";
        let got = String::from_utf8(mboxrd(body)).unwrap();
        assert_eq!(
            got,
            "Subject: s\r\n\r\n>From me\r\n>>From you\r\nnot From here\r\nFrom\r\nFrom"
        );
        // Three notifications whose bodies forge "From " lines still read
        // as three messages.
        let mbox: Vec<u8> = (0..3)
            .flat_map(|_| {
                let mut m = b"From digestd@localhost \n".to_vec();
                m.extend(mboxrd(b"Subject: x\r\n\r\nFrom forged@evil\r\nFrom x\r\n"));
                m.push(b'\n');
                m
            })
            .collect();
        let starts = String::from_utf8(mbox)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("From "))
            .count();
        assert_eq!(starts, 3);
    }
}
