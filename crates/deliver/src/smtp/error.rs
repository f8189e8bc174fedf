//! What can go wrong sending over SMTP, and what the queue does about it:
//! a refusal carries the server's code (5xx permanent, anything else
//! transient); a session that could not be opened or was lost, and a
//! refused login, are transient; a message without a usable envelope is
//! permanent.

use std::time::Duration;

use crate::listener::DeliveryError;
use crate::sink::Outcome;

/// Why a message did not go over SMTP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No TCP connection, or no greeting: refused, reset, unreachable,
    /// timed out connecting.
    #[error("connect: {0}")]
    Connect(String),
    /// The TLS settings could not be built (a `tls_ca_file` certificate
    /// lettre refuses).
    #[error("TLS: {0}")]
    Tls(String),
    /// STARTTLS was offered and failed (a certificate not trusted, a
    /// handshake the server broke off).
    #[error("STARTTLS: {0}")]
    Starttls(String),
    /// `tls=required` against a server that does not offer STARTTLS.
    #[error("STARTTLS required but not offered by the server")]
    StarttlsNotOffered,
    /// AUTH refused; `reply` is the server's code and text as it said
    /// them. Transient, so that messages wait for the password to be
    /// mended rather than being given up.
    #[error("authentication failed: {}", crate::validate::escape_for_line(reply))]
    Auth { code: Option<u16>, reply: String },
    /// The server answered a command with a negative reply; `text` is
    /// lettre's reading of it ("permanent error (550): …").
    #[error("{text}")]
    Refused { code: u16, text: String },
    /// No reply: the session broke (reset, hang-up, a reply lettre could
    /// not read) in the middle of a command.
    #[error("{0}")]
    Lost(String),
    /// No reply in `[email] timeout_seconds`.
    #[error("timed out after {}s", .0.as_secs())]
    TimedOut(Duration),
    /// The envelope could not be built from the addresses.
    #[error("envelope: {0}")]
    Envelope(String),
    /// The recipient (or the sender) is not an email address.
    #[error("bad address {0:?}")]
    BadAddress(String),
    /// The pass ended before any session took the message.
    #[error("not attempted")]
    NotAttempted,
}

impl Error {
    /// lettre's error as ours: a reply with a code is a refusal, anything
    /// else a lost session.
    pub(crate) fn from_lettre(e: &lettre::transport::smtp::Error) -> Error {
        match e.status() {
            Some(code) => Error::Refused {
                code: u16::from(code),
                text: e.to_string(),
            },
            None => Error::Lost(e.to_string()),
        }
    }

    /// The server's reply code, when it gave one.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Refused { code, .. } => Some(*code),
            Error::Auth { code, .. } => *code,
            _ => None,
        }
    }

    /// Whether another attempt may succeed: only a 5xx refusal and a
    /// message with no usable envelope are final. A reply code outside
    /// 500-599 (4xx, or one no server should send) is worth a retry.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Refused { code, .. } => !(500..=599).contains(code),
            Error::Envelope(_) | Error::BadAddress(_) => false,
            Error::Connect(_)
            | Error::Tls(_)
            | Error::Starttls(_)
            | Error::StarttlsNotOffered
            | Error::Auth { .. }
            | Error::Lost(_)
            | Error::TimedOut(_)
            | Error::NotAttempted => true,
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        // A reply's text is the server's: one line, escaped.
        DeliveryError::verdict(e.is_transient(), e.code(), &e.to_string(), None)
    }
}

impl From<Error> for Outcome {
    fn from(e: Error) -> Outcome {
        Outcome::from(DeliveryError::from(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(e: Error) -> (bool, Option<u16>, String) {
        match DeliveryError::from(e) {
            DeliveryError::Transient {
                code,
                text,
                retry_after_secs: None,
            } => (true, code, text),
            DeliveryError::Permanent { code, text } => (false, code, text),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_variant_is_transient_or_permanent() {
        let refused = |code: u16| Error::Refused {
            code,
            text: format!("error ({code}): x"),
        };
        let cases = [
            (Error::Connect("Connection refused".into()), true, None),
            (Error::Tls("bad PEM".into()), true, None),
            (
                Error::Starttls("invalid peer certificate".into()),
                true,
                None,
            ),
            (Error::StarttlsNotOffered, true, None),
            (
                Error::Auth {
                    code: Some(535),
                    reply: "535 5.7.8 no".into(),
                },
                true,
                Some(535),
            ),
            (
                Error::Auth {
                    code: None,
                    reply: String::new(),
                },
                true,
                None,
            ),
            (refused(421), true, Some(421)),
            (refused(452), true, Some(452)),
            (refused(550), false, Some(550)),
            (refused(554), false, Some(554)),
            (refused(599), false, Some(599)),
            // Codes no server should send: never given up for them.
            (refused(0), true, Some(0)),
            (refused(250), true, Some(250)),
            (refused(600), true, Some(600)),
            (refused(999), true, Some(999)),
            (Error::Lost("network error: reset".into()), true, None),
            (Error::TimedOut(Duration::from_secs(30)), true, None),
            (
                Error::Envelope("missing destination address".into()),
                false,
                None,
            ),
            (Error::BadAddress("not an address".into()), false, None),
            (Error::NotAttempted, true, None),
        ];
        for (e, transient, code) in cases {
            let shown = e.to_string();
            let got = verdict(e);
            assert_eq!((got.0, got.1), (transient, code), "{shown}");
            assert_eq!(got.2, shown);
        }
    }

    #[test]
    fn the_texts_are_the_ones_the_queue_has_always_shown() {
        assert_eq!(
            Error::TimedOut(Duration::from_secs(30)).to_string(),
            "timed out after 30s"
        );
        assert_eq!(
            Error::BadAddress("a\r\nb".into()).to_string(),
            "bad address \"a\\r\\nb\"",
            "Debug-quoted: no line break reaches the text"
        );
        assert_eq!(
            Error::Connect("timed out".into()).to_string(),
            "connect: timed out"
        );
        assert_eq!(Error::NotAttempted.to_string(), "not attempted");
    }

    #[test]
    fn a_hostile_reply_is_one_escaped_line() {
        let (transient, code, text) = verdict(Error::Refused {
            code: 550,
            text: "permanent error (550): no\r\nX-Injected: 1\u{7}".into(),
        });
        assert_eq!((transient, code), (false, Some(550)));
        assert!(!text.contains(['\r', '\n', '\u{7}']), "{text}");
        let (transient, _, text) = verdict(Error::Lost(String::new()));
        assert!(transient && text.is_empty());
    }

    #[test]
    fn a_hostile_auth_reply_is_one_escaped_line() {
        for reply in ["535 no\r\nX-Injected: 1", "", "\u{1b}[2J\u{202e}"] {
            let (transient, _, text) = verdict(Error::Auth {
                code: Some(535),
                reply: reply.into(),
            });
            assert!(transient);
            assert!(text.starts_with("authentication failed: "), "{text}");
            assert!(!text.contains(['\r', '\n', '\u{1b}', '\u{202e}']), "{text}");
        }
    }
}
