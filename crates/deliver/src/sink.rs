//! Where prepared messages go, and what came of each: the email transports
//! (`dir`, `smtp`, `db`, `pipe`, `stdout`) as the `email` listener, and the
//! outcome the queue records. Each transport's error is its own
//! (`smtp::Error`, `dbout::Error`, `outbox::Error`, [`pipe::Error`],
//! [`stdout::Error`]), made an outcome through `DeliveryError`.

pub mod pipe;
pub mod stdout;

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
pub(crate) fn check_pipe(cmd: &str) -> Result<()> {
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
    pub(crate) fn send_all(&mut self, msgs: &[Outgoing], accepted: Accepted<'_>) -> Vec<Outcome> {
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
                            Err(e) => Outcome::from(DeliveryError::from(e)),
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
                .map(|(i, m)| noted(i, pipe::pipe(cmd, m)))
                .collect(),
            EmailSink::Stdout => {
                let mut out = std::io::stdout().lock();
                msgs.iter()
                    .enumerate()
                    .map(|(i, m)| noted(i, stdout::write(&mut out, m)))
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
