//! The Cosmo proposal's listeners behind one trait (lettre's transport
//! shape): one required low-level send of a prepared message to one
//! address, a provided send of a batch, a no-op `shutdown` by default.
//! Every channel has one, chosen by key (`email`, `xmpp`, `sms`,
//! `webhook`): email's transports (`dir`, `smtp`, `pipe`, `stdout`), the
//! XMPP session, the SMS gateway, the signed webhook poster, and the
//! outbox for a push channel with no server configured.
//! Errors say whether to retry; the queue decides from that, never from
//! the text. Each transport has an error of its own (`smtp::Error`,
//! `xmpp::Error`, …) saying what went wrong, and one `From` into
//! [`DeliveryError`] that decides, in one place, transient or permanent.

use crate::parties::Channel;
use std::path::PathBuf;

use super::sink::Outcome;

/// One message ready to leave: its envelope and its bytes.
#[derive(Debug, Clone, Default)]
pub struct Outgoing {
    /// The envelope sender (email; empty for the push channels).
    pub envelope_from: String,
    /// The address: an email address, a JID, a phone number.
    pub to: String,
    /// A whole RFC 5322 message, or a chat or SMS text (UTF-8).
    pub bytes: Vec<u8>,
    /// Where an outbox (`dir`) writes it: one name per (first request,
    /// recipient), so a retry rewrites the same file.
    pub file: PathBuf,
    /// A webhook message's id and its endpoint's secret (`None` on the
    /// other channels).
    pub signing: Option<Signing>,
    /// A Matrix message's transaction id and the room it goes to, when
    /// the contact point has one (`None` on the other channels).
    pub matrix: Option<MatrixRoute>,
}

/// Where a Matrix message goes: its transaction id (from the first
/// request and the recipient, the same on every attempt, so the
/// homeserver keeps one event however often it is sent) and the room
/// kept on the contact point (`None`: the listener opens a direct room
/// with the user the address names).
#[derive(Debug, Clone, Default)]
pub struct MatrixRoute {
    pub txn_id: String,
    pub room: Option<String>,
}

/// What signs a webhook message (Standard Webhooks): its `webhook-id`,
/// the same on every attempt so the receiver can tell a retry, and the
/// endpoint's `whsec_` secret. Never printed.
#[derive(Clone, Default)]
pub struct Signing {
    pub id: String,
    pub secret: String,
}

impl std::fmt::Debug for Signing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signing {{ id: {:?}, secret: \"…\" }}", self.id)
    }
}

impl Outgoing {
    /// A text message for a push channel.
    pub fn text(to: &str, body: &str, file: PathBuf) -> Outgoing {
        Outgoing {
            envelope_from: String::new(),
            to: to.to_string(),
            bytes: body.as_bytes().to_vec(),
            file,
            signing: None,
            matrix: None,
        }
    }

    /// The body as text; a body that is not UTF-8 never will be.
    pub fn body(&self) -> Result<&str, NotUtf8> {
        std::str::from_utf8(&self.bytes).map_err(|e| NotUtf8 {
            at: e.valid_up_to(),
        })
    }
}

/// A body that is not UTF-8, on a channel that sends text (SMS, XMPP, a
/// push channel's outbox): the byte offset of the first bad sequence. The
/// same on every attempt, so permanent on every channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("body is not UTF-8 (at byte {at})")]
pub struct NotUtf8 {
    pub at: usize,
}

impl From<NotUtf8> for DeliveryError {
    fn from(e: NotUtf8) -> DeliveryError {
        DeliveryError::verdict(false, None, &e.to_string(), None)
    }
}

/// What the far end said when it took a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub code: Option<u16>,
    pub text: String,
    /// The far end's id for the message (an SMS gateway's message id, an
    /// XMPP stanza id).
    pub remote_id: Option<String>,
}

/// Why a message did not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryError {
    /// Worth another attempt; not before `retry_after_secs` when the far end
    /// said so (HTTP Retry-After).
    Transient {
        code: Option<u16>,
        text: String,
        retry_after_secs: Option<u64>,
    },
    Permanent {
        code: Option<u16>,
        text: String,
    },
}

impl DeliveryError {
    /// A transport's verdict as the queue reads it: its text made one line
    /// (control, bidi and non-XML characters escaped: a far end's text
    /// reaches the queue's columns and log lines), `retry_after_secs`
    /// kept only when another attempt is worth it. Each transport's
    /// `From<Error>` decides `transient` and calls this.
    pub fn verdict(
        transient: bool,
        code: Option<u16>,
        text: &str,
        retry_after_secs: Option<u64>,
    ) -> DeliveryError {
        let text = crate::validate::escape_for_line(text);
        if transient {
            DeliveryError::Transient {
                code,
                text,
                retry_after_secs,
            }
        } else {
            DeliveryError::Permanent { code, text }
        }
    }
}

/// Told of each message the far end took, by its index in the batch, the
/// moment the acceptance is read and before the session sends anything
/// more: the queue's journal ([`super::journal`]) records it there, so a
/// crash re-sends at most what was on the wire.
pub type Accepted<'a> = &'a (dyn Fn(usize, &Delivered) + Sync);

pub trait Listener: Send {
    /// The channel it delivers: one listener a channel.
    fn key(&self) -> Channel;

    /// Sends one prepared message to its address.
    fn send_raw(&mut self, m: &Outgoing) -> Result<Delivered, DeliveryError>;

    /// Sends a batch; one result per message, in order. Listeners that can
    /// do better than one at a time (a pool of SMTP sessions, one XMPP
    /// round trip for a batch) override it.
    fn send(&mut self, msgs: &[Outgoing]) -> Vec<Result<Delivered, DeliveryError>> {
        self.send_noting(msgs, &|_, _| {})
    }

    /// [`Listener::send`], telling `accepted` of each message as the far
    /// end takes it. The provided one sends one message at a time, so each
    /// is told of before the next goes; listeners that send several at once
    /// tell of each as its own acceptance arrives.
    fn send_noting(
        &mut self,
        msgs: &[Outgoing],
        accepted: Accepted<'_>,
    ) -> Vec<Result<Delivered, DeliveryError>> {
        msgs.iter()
            .enumerate()
            .map(|(i, m)| {
                let r = self.send_raw(m);
                if let Ok(d) = &r {
                    accepted(i, d);
                }
                r
            })
            .collect()
    }

    /// The instant of the queue pass about to send (the injected clock):
    /// a listener that waits between attempts of its own (XMPP's
    /// reconnect backoff) measures the wait against it, not the wall clock.
    fn pass_at(&mut self, _now: chrono::DateTime<chrono::Utc>) {}

    /// The installation's key (`site_keys`), loaded by the pass before it
    /// sends: a listener that names things on the far end with it (the
    /// Matrix listener's direct rooms) derives a key of its own from it.
    fn site_key(&mut self, _key: &crate::msgid::MessageKey) {}

    /// The rooms the listener opened since it was last asked, as
    /// (address, room id): a Matrix listener opens a direct room for a
    /// user ID, and the queue keeps it on the contact point.
    fn opened_rooms(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Releases what the listener holds (sessions, connections).
    fn shutdown(&mut self) {}
}

impl From<DeliveryError> for Outcome {
    fn from(e: DeliveryError) -> Outcome {
        Outcome::from(Err(e))
    }
}

impl From<Result<Delivered, DeliveryError>> for Outcome {
    fn from(r: Result<Delivered, DeliveryError>) -> Outcome {
        match r {
            Ok(d) => Outcome::Sent {
                code: d.code,
                text: d.text,
                remote_id: d.remote_id,
            },
            Err(DeliveryError::Transient {
                code,
                text,
                retry_after_secs,
            }) => Outcome::Transient {
                code,
                text,
                retry_after_secs,
            },
            Err(DeliveryError::Permanent { code, text }) => Outcome::permanent(code, text),
        }
    }
}

impl Outcome {
    /// The outcome as a listener's result.
    pub(crate) fn into_result(self) -> Result<Delivered, DeliveryError> {
        match self {
            Outcome::Sent {
                code,
                text,
                remote_id,
            } => Ok(Delivered {
                code,
                text,
                remote_id,
            }),
            Outcome::Transient {
                code,
                text,
                retry_after_secs,
            } => Err(DeliveryError::Transient {
                code,
                text,
                retry_after_secs,
            }),
            Outcome::Permanent { code, text } => Err(DeliveryError::Permanent { code, text }),
        }
    }
}

/// A listener for unit tests: records what it was given and answers with
/// the outcomes it was told to, in order (then success).
#[derive(Debug, Default)]
pub struct Stub {
    pub sent: Vec<(String, String)>,
    pub script: std::collections::VecDeque<Result<Delivered, DeliveryError>>,
}

impl Listener for Stub {
    fn key(&self) -> Channel {
        Channel::Email
    }

    fn send_raw(&mut self, m: &Outgoing) -> Result<Delivered, DeliveryError> {
        self.sent.push((m.to.clone(), m.body()?.to_string()));
        self.script.pop_front().unwrap_or(Ok(Delivered {
            code: None,
            text: "ok".into(),
            remote_id: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provided_send_calls_send_raw_in_order_and_errors_map_to_outcomes() {
        let mut s = Stub::default();
        s.script.push_back(Err(DeliveryError::Transient {
            code: Some(429),
            text: "slow down".into(),
            retry_after_secs: Some(60),
        }));
        let got = s.send(&[
            Outgoing::text("a", "1", PathBuf::new()),
            Outgoing::text("b", "2", PathBuf::new()),
        ]);
        assert_eq!(
            s.sent,
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
        let outcomes: Vec<Outcome> = got.into_iter().map(Outcome::from).collect();
        assert!(matches!(
            outcomes[0],
            Outcome::Transient {
                code: Some(429),
                retry_after_secs: Some(60),
                ..
            }
        ));
        assert!(matches!(outcomes[1], Outcome::Sent { .. }));
    }

    #[test]
    fn outcomes_and_results_convert_both_ways() {
        let cases = [
            Outcome::Sent {
                code: Some(200),
                text: "accepted".into(),
                remote_id: Some("SM1".into()),
            },
            Outcome::sent(Some(250), "2.0.0 Ok"),
            Outcome::Transient {
                code: Some(429),
                text: "slow down".into(),
                retry_after_secs: Some(60),
            },
            Outcome::permanent(Some(550), "no such user"),
        ];
        for o in cases {
            assert_eq!(Outcome::from(o.clone().into_result()), o);
        }
        let mut s = Stub::default();
        let bad = Outgoing {
            bytes: vec![0xff, 0xfe],
            ..Outgoing::text("a", "", PathBuf::new())
        };
        assert!(matches!(
            s.send_raw(&bad),
            Err(DeliveryError::Permanent { .. })
        ));
    }

    #[test]
    fn a_body_not_utf8_says_where_and_is_permanent_on_every_channel() {
        let at = |bytes: &[u8]| {
            Outgoing {
                bytes: bytes.to_vec(),
                ..Default::default()
            }
            .body()
            .map(str::len)
        };
        assert_eq!(at(b"caf\xc3\xa9"), Ok(5));
        assert_eq!(at(b""), Ok(0));
        assert_eq!(at(b"\xff"), Err(NotUtf8 { at: 0 }));
        // A sequence cut short, an overlong NUL, a lone surrogate.
        assert_eq!(at(b"ab\xc3"), Err(NotUtf8 { at: 2 }));
        assert_eq!(at(b"x\xc0\x80"), Err(NotUtf8 { at: 1 }));
        assert_eq!(at(b"\xed\xa0\x80"), Err(NotUtf8 { at: 0 }));
        assert_eq!(
            DeliveryError::from(NotUtf8 { at: 7 }),
            DeliveryError::Permanent {
                code: None,
                text: "body is not UTF-8 (at byte 7)".into()
            }
        );
    }
}
