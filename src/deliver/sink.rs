//! Where prepared messages go, and what came of each: the email transports
//! (`dir`, `smtp`) behind one call, and the outcome the queue records.

use std::path::PathBuf;

use super::outbox::Outbox;
use super::smtp::SmtpSink;
use crate::config::EmailConfig;
use crate::error::{Error, Result};

/// One message ready to leave: its envelope and its bytes.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub envelope_from: String,
    pub to: String,
    pub bytes: Vec<u8>,
    /// Where the `dir` transport writes it.
    pub file: PathBuf,
}

/// What happened to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent {
        code: Option<u16>,
        text: String,
    },
    /// Worth another attempt later (4xx, connection refused/reset, timeout).
    Transient {
        code: Option<u16>,
        text: String,
    },
    /// Never worth another attempt (5xx, an address the server refuses).
    Permanent {
        code: Option<u16>,
        text: String,
    },
}

impl Outcome {
    pub fn transient(code: Option<u16>, text: impl Into<String>) -> Outcome {
        Outcome::Transient {
            code,
            text: text.into(),
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

    pub fn text(&self) -> &str {
        match self {
            Outcome::Sent { text, .. }
            | Outcome::Transient { text, .. }
            | Outcome::Permanent { text, .. } => text,
        }
    }
}

/// The configured email transport.
pub enum EmailSink {
    Dir(Outbox),
    Smtp(Box<SmtpSink>),
}

impl EmailSink {
    pub fn new(cfg: &EmailConfig) -> Result<EmailSink> {
        match cfg.transport.as_str() {
            "dir" => Ok(EmailSink::Dir(Outbox::new(cfg)?)),
            "smtp" => Ok(EmailSink::Smtp(Box::new(SmtpSink::new(cfg)?))),
            other => Err(Error::invalid(format!(
                "config: email.transport {other:?}: use \"dir\" or \"smtp\""
            ))),
        }
    }

    pub fn send_all(&mut self, msgs: &[Outgoing]) -> Vec<Outcome> {
        match self {
            EmailSink::Dir(o) => msgs
                .iter()
                .map(|m| match o.write(&m.file, &m.bytes) {
                    Ok(()) => Outcome::Sent {
                        code: None,
                        text: format!("written to {}", m.file.display()),
                    },
                    // A full disk may clear; keep the message for a retry.
                    Err(e) => Outcome::transient(None, e.to_string()),
                })
                .collect(),
            EmailSink::Smtp(s) => s.send_all(msgs),
        }
    }
}
