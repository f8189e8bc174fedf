//! The Cosmo proposal's push listeners behind one trait (lettre's transport
//! shape): one required low-level send of a prepared message to one
//! address, a provided send of several, a no-op `shutdown` by default.
//! Errors say whether to retry; the queue decides from that, never from
//! the text.

use super::sink::Outcome;

/// What the far end said when it took a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub code: Option<u16>,
    pub text: String,
    /// The far end's id for the message (an SMS gateway's message id).
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

pub trait Listener: Send {
    /// The channel key: `email`, `xmpp`, `sms`.
    fn key(&self) -> &'static str;

    /// Sends one prepared message to one address.
    fn send_raw(&mut self, to: &str, body: &str) -> Result<Delivered, DeliveryError>;

    /// Sends each of `msgs` (address, body), in order.
    fn send(&mut self, msgs: &[(String, String)]) -> Vec<Result<Delivered, DeliveryError>> {
        msgs.iter().map(|(to, b)| self.send_raw(to, b)).collect()
    }

    /// Releases what the listener holds (sessions, connections).
    fn shutdown(&mut self) {}
}

impl From<Result<Delivered, DeliveryError>> for Outcome {
    fn from(r: Result<Delivered, DeliveryError>) -> Outcome {
        match r {
            Ok(d) => Outcome::Sent {
                code: d.code,
                text: match &d.remote_id {
                    Some(id) => format!("{} (id {id})", d.text).trim().to_string(),
                    None => d.text,
                },
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

/// A listener for unit tests: records what it was given and answers with
/// the outcomes it was told to, in order (then success).
#[derive(Debug, Default)]
pub struct Stub {
    pub sent: Vec<(String, String)>,
    pub script: std::collections::VecDeque<Result<Delivered, DeliveryError>>,
}

impl Listener for Stub {
    fn key(&self) -> &'static str {
        "stub"
    }

    fn send_raw(&mut self, to: &str, body: &str) -> Result<Delivered, DeliveryError> {
        self.sent.push((to.to_string(), body.to_string()));
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
        let got = s.send(&[("a".into(), "1".into()), ("b".into(), "2".into())]);
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
}
