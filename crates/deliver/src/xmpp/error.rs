//! What can go wrong delivering over XMPP, and what the queue does about
//! it: no session (a login that failed, the backoff after it, a session
//! lost mid-batch) is transient; a message that can never be sent (its
//! address, its body) is permanent; a bounce says by its condition.

use crate::listener::{DeliveryError, NotUtf8};

/// Why a message did not go over XMPP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Logins failed `failures` times in a row and the backoff has not
    /// passed on the queue's clock: no attempt is made.
    #[error("xmpp: not connected after {failures} attempt(s); next try in {wait_secs}s")]
    Backoff { failures: u32, wait_secs: i64 },
    /// The session could not be opened (refused, unreachable, a wrong
    /// password or certificate: only the timeout tells).
    #[error("xmpp: {0}")]
    Login(String),
    /// The session broke before the server vouched for the message
    /// (connection lost, no acknowledgement or ping answer in time).
    #[error("xmpp: {0}")]
    Lost(String),
    /// The message bounced: a `<message type="error">` with its defined
    /// condition, error type and the server's text.
    #[error("xmpp: {condition} ({kind}){}", text.as_deref().map(|t| format!(": {t}")).unwrap_or_default())]
    Stanza {
        condition: String,
        kind: String,
        text: Option<String>,
    },
    /// A bounce with no `<error>` in it.
    #[error("xmpp: error without a condition")]
    NoCondition,
    /// The address is not a JID.
    #[error("xmpp: jid-malformed: {to:?}: {error}")]
    JidMalformed { to: String, error: String },
    /// The body is not UTF-8.
    #[error(transparent)]
    NotUtf8(#[from] NotUtf8),
    /// The body holds a character XML 1.0 forbids.
    #[error("xmpp: the body holds U+{:04X}, which XML 1.0 forbids; not sent", *.0 as u32)]
    NotXml(char),
    /// The XML layer will not write the stanza.
    #[error("xmpp: the message cannot be written as XML: {0}")]
    Unwritable(String),
}

impl Error {
    /// Whether another attempt may succeed. A bounce: `item-not-found`,
    /// `not-allowed`, `forbidden`, `jid-malformed`, `not-acceptable` and
    /// `bad-request` never; `service-unavailable`,
    /// `remote-server-timeout`, `resource-constraint`,
    /// `internal-server-error` and `recipient-unavailable` always; any
    /// other condition when its type is `wait`.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Backoff { .. } | Error::Login(_) | Error::Lost(_) | Error::NoCondition => true,
            Error::Stanza {
                condition, kind, ..
            } => match condition.as_str() {
                "item-not-found" | "not-allowed" | "forbidden" | "jid-malformed"
                | "not-acceptable" | "bad-request" => false,
                "service-unavailable"
                | "remote-server-timeout"
                | "resource-constraint"
                | "internal-server-error"
                | "recipient-unavailable" => true,
                _ => kind == "wait",
            },
            Error::JidMalformed { .. }
            | Error::NotUtf8(_)
            | Error::NotXml(_)
            | Error::Unwritable(_) => false,
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        // A bounce's text is the far server's: one line, escaped.
        DeliveryError::verdict(e.is_transient(), None, &e.to_string(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transient(e: Error) -> bool {
        match DeliveryError::from(e) {
            DeliveryError::Transient {
                code: None,
                retry_after_secs: None,
                ..
            } => true,
            DeliveryError::Permanent { code: None, .. } => false,
            other => panic!("{other:?}"),
        }
    }

    fn bounce(condition: &str, kind: &str) -> Error {
        Error::Stanza {
            condition: condition.into(),
            kind: kind.into(),
            text: None,
        }
    }

    #[test]
    fn each_variant_is_transient_or_permanent() {
        let cases = [
            (
                Error::Backoff {
                    failures: 3,
                    wait_secs: 8,
                },
                true,
            ),
            (Error::Login("stream closed".into()), true),
            (Error::Lost("connection lost: reset".into()), true),
            (Error::NoCondition, true),
            (bounce("service-unavailable", "cancel"), true),
            (bounce("recipient-unavailable", "wait"), true),
            (bounce("item-not-found", "wait"), false),
            (bounce("forbidden", "auth"), false),
            (bounce("policy-violation", "modify"), false),
            (bounce("policy-violation", "wait"), true),
            // What no server should send: an empty or made-up condition.
            (bounce("", ""), false),
            (bounce("x\r\ny", "wait"), true),
            (
                Error::JidMalformed {
                    to: "a@b@c".into(),
                    error: "bad".into(),
                },
                false,
            ),
            (Error::NotUtf8(NotUtf8 { at: 3 }), false),
            (Error::NotXml('\u{FFFF}'), false),
            (Error::Unwritable("invalid".into()), false),
        ];
        for (e, want) in cases {
            let shown = e.to_string();
            assert_eq!(transient(e), want, "{shown}");
        }
    }

    #[test]
    fn the_texts_are_the_ones_the_queue_has_always_shown() {
        let e = Error::Stanza {
            condition: "not-allowed".into(),
            kind: "cancel".into(),
            text: Some("why".into()),
        };
        assert_eq!(e.to_string(), "xmpp: not-allowed (cancel): why");
        assert_eq!(
            bounce("undefined-condition", "cancel").to_string(),
            "xmpp: undefined-condition (cancel)"
        );
        assert_eq!(
            Error::Backoff {
                failures: 1,
                wait_secs: 2
            }
            .to_string(),
            "xmpp: not connected after 1 attempt(s); next try in 2s"
        );
        assert_eq!(
            Error::NotXml('\u{1b}').to_string(),
            "xmpp: the body holds U+001B, which XML 1.0 forbids; not sent"
        );
    }

    #[test]
    fn a_hostile_bounce_text_is_one_escaped_line() {
        for text in ["", "no\r\nX-Injected: 1", "\u{1b}[2J\u{202e}"] {
            let e = Error::Stanza {
                condition: "forbidden".into(),
                kind: "auth".into(),
                text: Some(text.into()),
            };
            let DeliveryError::Permanent { text, .. } = DeliveryError::from(e) else {
                panic!("permanent")
            };
            assert!(text.starts_with("xmpp: forbidden (auth)"), "{text}");
            assert!(!text.contains(['\r', '\n', '\u{1b}', '\u{202e}']), "{text}");
        }
    }
}
