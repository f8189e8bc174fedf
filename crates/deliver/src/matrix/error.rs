//! What can go wrong delivering to Matrix, and what the queue does about
//! it: a homeserver that does not answer, answers 429, 401 or 5xx, or
//! refuses the login is transient; a homeserver that refuses the message
//! otherwise, a person who left the room, and a message that can never be
//! sent are permanent. `M_FORBIDDEN` on a send, a join or a look at the
//! room's members, and a person gone from the kept room, carry
//! [`FORBIDDEN`], on which the queue disables the contact point.

use super::client::Call;
use super::FORBIDDEN;
use crate::listener::DeliveryError;

/// Why a message did not go to Matrix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The HTTP client could not be built.
    #[error("matrix client: {0}")]
    Client(String),
    /// `[matrix] homeserver` is refused (checked at start; kept for a
    /// setting changed under a running process).
    #[error("matrix: {0}")]
    Homeserver(String),
    /// The homeserver's URL cannot be parsed into a base for the API.
    #[error("matrix: homeserver: {0}")]
    BaseUrl(String),
    /// The homeserver's URL cannot take a path (`mailto:`-like).
    #[error("matrix: the homeserver URL takes no path")]
    BaseUrlNoPath,
    /// No answer to `call`: unreachable, timed out, cut off.
    #[error("matrix: {call:?}: {text}")]
    Unanswered { call: Call, text: String },
    /// An answer other than 2xx.
    #[error("{0}")]
    Refused(Refusal),
    /// A 2xx answer without the field the call returns.
    #[error("matrix: {call:?}: the answer has no {key}")]
    Incomplete { call: Call, key: String },
    /// A 2xx answer whose `room_id` is no room ID (`why`, escaped).
    #[error("matrix: {call:?}: the answer's room_id is no room ID: {why}")]
    NotARoom { call: Call, why: String },
    /// The room a direct room's alias names is one the service account
    /// has not joined (yet): another process is creating it.
    #[error("matrix: {room} ({alias}) is not joined yet (another process is opening it?)")]
    AliasPending { alias: String, room: String },
    /// The person left (or was banned from) the room the queue kept.
    #[error("matrix: {user} is no longer in {room} ({membership}); contact point disabled")]
    Left {
        user: String,
        room: String,
        membership: String,
    },
    /// The queue row carries no transaction id.
    #[error("matrix: no transaction id")]
    NoTransaction,
    /// The address is neither a user ID nor a room ID.
    #[error("matrix: {0}")]
    Address(String),
    /// The body is not a digest's or a notification's JSON document.
    #[error("{0}")]
    Body(String),
    /// The password login failed: the settings' to fix, not the
    /// recipient's, so the message waits and no contact point is
    /// disabled, whatever the refusal.
    #[error("{0}")]
    Login(Box<Error>),
}

/// A homeserver's answer other than 2xx to `call`: its status, its
/// `errcode`, what it said (`errcode` and `error`, one line, at most 300
/// characters) and when to try again (`retry_after_ms`, else
/// `Retry-After`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub call: Call,
    pub status: u16,
    pub errcode: String,
    pub said: String,
    pub retry_after_secs: Option<u64>,
}

impl Refusal {
    /// `M_FORBIDDEN` where it is the person's doing: on a send, a join or
    /// a look at the room's members.
    fn forbidden_in_room(&self) -> bool {
        self.status == 403
            && self.errcode == "M_FORBIDDEN"
            && matches!(self.call, Call::Send | Call::Join | Call::Membership)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "matrix: {:?}: {} {}", self.call, self.status, self.said)?;
        if self.forbidden_in_room() {
            f.write_str(": not allowed in the room; contact point disabled")
        } else if (300..=399).contains(&self.status) {
            f.write_str(" (a redirect: digestd follows none; set the final URL)")
        } else {
            Ok(())
        }
    }
}

impl Error {
    /// Whether another attempt may succeed: no answer, an answer without
    /// its field, 429, 401 (a token that expired), 5xx, a refused login.
    /// Any other status (a 3xx redirect, which is not followed, among
    /// them) and everything about the message itself is final.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Client(_)
            | Error::Unanswered { .. }
            | Error::Incomplete { .. }
            | Error::NotARoom { .. }
            | Error::AliasPending { .. }
            | Error::Login(_) => true,
            // An alias gone between `createRoom` and its resolution: the
            // next attempt creates it.
            Error::Refused(r) if r.call == Call::ResolveAlias && r.status == 404 => true,
            Error::Refused(r) => matches!(r.status, 401 | 429 | 500..=599),
            Error::Homeserver(_)
            | Error::BaseUrl(_)
            | Error::BaseUrlNoPath
            | Error::Left { .. }
            | Error::NoTransaction
            | Error::Address(_)
            | Error::Body(_) => false,
        }
    }

    /// The code the queue records: the status, except a 403 that is not
    /// the person's doing (kept without it, since [`FORBIDDEN`] disables
    /// the contact point); [`FORBIDDEN`] for a person gone from the room.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Refused(r) if r.status == 403 && !r.forbidden_in_room() => None,
            Error::Refused(r) => Some(r.status),
            Error::Left { .. } => Some(FORBIDDEN),
            Error::Login(e) => e.code(),
            _ => None,
        }
    }

    /// When to try again, if the homeserver said and the error is
    /// transient.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Error::Refused(r) if self.is_transient() => r.retry_after_secs,
            Error::Login(e) => e.retry_after_secs(),
            _ => None,
        }
    }

    /// Whether the queue disables the contact point for it.
    pub fn disables(&self) -> bool {
        !self.is_transient() && self.code() == Some(FORBIDDEN)
    }

    /// `createRoom` refused because its alias names a room already: 400
    /// `M_ROOM_IN_USE` (the spec's answer), or 409 (Synapse's to the
    /// second of two creations of one alias at the same instant).
    pub(crate) fn alias_taken(&self) -> bool {
        matches!(self, Error::Refused(r) if r.call == Call::CreateRoom
            && ((r.status == 400 && r.errcode == "M_ROOM_IN_USE") || r.status == 409))
    }

    /// `createRoom` refused with an alias for another reason: the
    /// homeserver's policy (403: `alias_creation_rules`, a spam checker),
    /// a namespace an application service holds (400 `M_EXCLUSIVE`), a
    /// name it does not take (another 400). Without the alias it may
    /// succeed.
    pub(crate) fn alias_refused(&self) -> bool {
        matches!(self, Error::Refused(r) if r.call == Call::CreateRoom
            && matches!(r.status, 400 | 403))
            && !self.alias_taken()
    }

    /// The homeserver's status, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Refused(r) => Some(r.status),
            _ => None,
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        let retry_after = e.retry_after_secs();
        DeliveryError::verdict(e.is_transient(), e.code(), &e.to_string(), retry_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(call: Call, status: u16, errcode: &str) -> Error {
        super::super::client::refusal(call, status, &json!({ "errcode": errcode }), "", Some(9))
    }

    #[test]
    fn each_variant_is_transient_or_permanent() {
        let cases = [
            (Error::Client("no TLS backend".into()), true, None),
            (Error::Homeserver("http:// is refused".into()), false, None),
            (Error::BaseUrl("relative URL".into()), false, None),
            (Error::BaseUrlNoPath, false, None),
            (
                Error::Unanswered {
                    call: Call::Send,
                    text: "timed out".into(),
                },
                true,
                None,
            ),
            (
                Error::Incomplete {
                    call: Call::Send,
                    key: "event_id".into(),
                },
                true,
                None,
            ),
            (
                Error::Left {
                    user: "@a:x".into(),
                    room: "!r:x".into(),
                    membership: "leave".into(),
                },
                false,
                Some(FORBIDDEN),
            ),
            (Error::NoTransaction, false, None),
            (Error::Address("not a Matrix ID".into()), false, None),
            (Error::Body(String::new()), false, None),
            (
                refused(Call::Send, 429, "M_LIMIT_EXCEEDED"),
                true,
                Some(429),
            ),
            (refused(Call::Send, 401, "M_UNKNOWN_TOKEN"), true, Some(401)),
            (refused(Call::Send, 500, ""), true, Some(500)),
            (refused(Call::Send, 599, ""), true, Some(599)),
            (
                refused(Call::Send, 403, "M_FORBIDDEN"),
                false,
                Some(FORBIDDEN),
            ),
            (
                refused(Call::Join, 403, "M_FORBIDDEN"),
                false,
                Some(FORBIDDEN),
            ),
            (
                refused(Call::Membership, 403, "M_FORBIDDEN"),
                false,
                Some(FORBIDDEN),
            ),
            (refused(Call::Invite, 403, "M_FORBIDDEN"), false, None),
            (refused(Call::Send, 403, "M_UNKNOWN"), false, None),
            (refused(Call::Send, 404, "M_NOT_FOUND"), false, Some(404)),
            (refused(Call::Send, 302, ""), false, Some(302)),
            // Statuses no homeserver should send.
            (refused(Call::Send, 0, ""), false, Some(0)),
            (refused(Call::Send, 200, ""), false, Some(200)),
            (refused(Call::Send, 999, ""), false, Some(999)),
        ];
        verdicts(cases);
    }

    /// Each error is transient or permanent as said, with the code, and
    /// disables the contact point exactly when the code is [`FORBIDDEN`].
    fn verdicts(cases: impl IntoIterator<Item = (Error, bool, Option<u16>)>) {
        for (e, transient, code) in cases {
            let shown = e.to_string();
            let disables = e.disables();
            match DeliveryError::from(e) {
                DeliveryError::Transient { code: c, .. } => {
                    assert!(transient, "{shown}");
                    assert_eq!(c, code, "{shown}");
                }
                DeliveryError::Permanent { code: c, .. } => {
                    assert!(!transient, "{shown}");
                    assert_eq!(c, code, "{shown}");
                }
            }
            assert_eq!(disables, code == Some(FORBIDDEN), "{shown}");
        }
    }

    #[test]
    fn the_alias_errors_are_transient_only_where_a_retry_helps() {
        verdicts([
            (
                Error::NotARoom {
                    call: Call::ResolveAlias,
                    why: "a user ID".into(),
                },
                true,
                None,
            ),
            (
                Error::AliasPending {
                    alias: "#a:x".into(),
                    room: "!r:x".into(),
                },
                true,
                None,
            ),
            (
                refused(Call::ResolveAlias, 404, "M_NOT_FOUND"),
                true,
                Some(404),
            ),
            (refused(Call::ResolveAlias, 403, "M_FORBIDDEN"), false, None),
            (refused(Call::ResolveAlias, 400, ""), false, Some(400)),
            (
                refused(Call::CreateRoom, 400, "M_ROOM_IN_USE"),
                false,
                Some(400),
            ),
        ]);
    }

    #[test]
    fn an_alias_taken_is_told_from_an_alias_refused() {
        let taken = [
            refused(Call::CreateRoom, 400, "M_ROOM_IN_USE"),
            refused(Call::CreateRoom, 409, "M_UNKNOWN"),
            refused(Call::CreateRoom, 409, ""),
        ];
        for e in &taken {
            assert!(e.alias_taken() && !e.alias_refused(), "{e}");
        }
        let policy = [
            refused(Call::CreateRoom, 403, "M_FORBIDDEN"),
            refused(Call::CreateRoom, 403, ""),
            refused(Call::CreateRoom, 400, "M_EXCLUSIVE"),
            refused(Call::CreateRoom, 400, "M_INVALID_PARAM"),
            // Hostile or odd codes: not the spec's, so not "taken".
            refused(Call::CreateRoom, 400, "M_ROOM_IN_USE\r\nX: 1"),
            refused(Call::CreateRoom, 400, "m_room_in_use"),
        ];
        for e in &policy {
            assert!(e.alias_refused() && !e.alias_taken(), "{e}");
        }
        let neither = [
            refused(Call::CreateRoom, 429, "M_LIMIT_EXCEEDED"),
            refused(Call::CreateRoom, 500, "M_ROOM_IN_USE"),
            refused(Call::CreateRoom, 401, "M_UNKNOWN_TOKEN"),
            refused(Call::CreateRoom, 404, "M_UNRECOGNIZED"),
            refused(Call::Invite, 400, "M_ROOM_IN_USE"),
            refused(Call::ResolveAlias, 409, ""),
            refused(Call::Send, 403, "M_FORBIDDEN"),
            Error::Unanswered {
                call: Call::CreateRoom,
                text: "timed out".into(),
            },
            Error::Incomplete {
                call: Call::CreateRoom,
                key: "room_id".into(),
            },
        ];
        for e in &neither {
            assert!(!e.alias_taken() && !e.alias_refused(), "{e}");
        }
    }

    #[test]
    fn a_refused_login_waits_keeping_its_code_and_only_a_transient_retry_after() {
        let login = |e: Error| DeliveryError::from(Error::Login(Box::new(e)));
        assert_eq!(
            login(refused(Call::Login, 403, "M_FORBIDDEN")),
            DeliveryError::Transient {
                code: None,
                text: "matrix: Login: 403 M_FORBIDDEN".into(),
                retry_after_secs: None,
            }
        );
        assert!(matches!(
            login(refused(Call::Login, 400, "M_BAD_JSON")),
            DeliveryError::Transient {
                code: Some(400),
                retry_after_secs: None,
                ..
            }
        ));
        assert!(matches!(
            login(refused(Call::Login, 429, "M_LIMIT_EXCEEDED")),
            DeliveryError::Transient {
                code: Some(429),
                retry_after_secs: Some(9),
                ..
            }
        ));
        assert!(!Error::Login(Box::new(refused(Call::Login, 403, "M_FORBIDDEN"))).disables());
    }

    #[test]
    fn the_texts_are_the_ones_the_queue_has_always_shown() {
        assert_eq!(
            refused(Call::Send, 403, "M_FORBIDDEN").to_string(),
            "matrix: Send: 403 M_FORBIDDEN: not allowed in the room; contact point disabled"
        );
        assert_eq!(
            refused(Call::Send, 301, "").to_string(),
            "matrix: Send: 301  (a redirect: digestd follows none; set the final URL)"
        );
        assert_eq!(
            Error::Incomplete {
                call: Call::CreateRoom,
                key: "room_id".into()
            }
            .to_string(),
            "matrix: CreateRoom: the answer has no room_id"
        );
    }

    #[test]
    fn hostile_texts_are_one_escaped_line() {
        let answer = json!({"errcode": "M_X\r\nX-Injected: 1", "error": "\u{1b}[2J\u{202e}"});
        let e = super::super::client::refusal(Call::Send, 400, &answer, "", None);
        let left = Error::Left {
            user: "@a:x\r\nX-Injected: 1".into(),
            room: "!r:x\u{202e}".into(),
            membership: String::new(),
        };
        for e in [e, left, Error::Body("bad\nbody".into())] {
            let (DeliveryError::Transient { text, .. } | DeliveryError::Permanent { text, .. }) =
                DeliveryError::from(e);
            assert!(!text.contains(['\r', '\n', '\u{1b}', '\u{202e}']), "{text}");
        }
    }
}
