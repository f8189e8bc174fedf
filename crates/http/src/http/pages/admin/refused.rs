//! Why an admin page refused what it was given, said in the operator's
//! language: each of the pages' own checks (a filter's or a form's field,
//! an id in the path, a button pressed too late) has its message
//! (`admin-refused-*` in `admin.ftl`), with the value as given shown
//! escaped and cut ([`i18n::refusal::shown`]); a library call's refusal
//! is said from its [`Refusal`](crate::Refusal) when a field's own check
//! gave one (`refusal-*`), else as the library's English line. The CLI
//! and the JSON API never come here: they keep the library's lines.

use axum::http::StatusCode;

use crate::error::Error;
use crate::i18n::refusal::shown;
use crate::i18n::Arg;

use super::super::{refusal_line, Words};
use super::MAX_FIELD;

/// What an admin page refused.
#[derive(Debug)]
pub enum Refused {
    /// A field (its name as given) longer than [`MAX_FIELD`].
    TooLong {
        field: String,
    },
    /// A field (its name as given) holding a control character.
    Control {
        field: String,
    },
    /// A status filter that is no status.
    Status(String),
    /// A value that is no name a user or group could have.
    Name(String),
    /// A name no user or group has.
    NoParty(String),
    /// A `before` that is no request id.
    NotId(String),
    /// A `disabled` other than 1 or nothing.
    Disabled(String),
    /// A grid's `time` other than local or server.
    Time(String),
    /// A grid's `week` that is no instant.
    Week(String),
    /// A channel no channel has.
    Channel(String),
    NoRequest,
    NoSubscription,
    /// A request that has finished (its stored status): not cancelled.
    NotOpen {
        status: String,
    },
    /// A party without a contact point on the channel (stored name).
    NoAddress {
        party: String,
        channel: String,
    },
    /// A member who has not opted out of the subscription.
    NotOptedOut {
        member: String,
    },
    /// Anything else the library refused (or failed with).
    Library(Error),
}

impl From<Error> for Refused {
    fn from(e: Error) -> Refused {
        Refused::Library(e)
    }
}

impl Refused {
    /// The page's status and its one line in `t`'s language; an error
    /// that is not the operator's input stays an error (a 500, said in
    /// the log).
    pub fn said(self, t: &Words) -> crate::Result<(StatusCode, String)> {
        let this = match self {
            Refused::Library(e) if !e.is_bad_input() => return Err(e),
            r => r,
        };
        let status = match &this {
            Refused::NoRequest
            | Refused::NoSubscription
            | Refused::NoParty(_)
            | Refused::NoAddress { .. }
            | Refused::NotOptedOut { .. } => StatusCode::NOT_FOUND,
            Refused::NotOpen { .. } => StatusCode::CONFLICT,
            Refused::Library(Error::NotFound(_)) => StatusCode::NOT_FOUND,
            Refused::Library(Error::Conflict(_)) => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        };
        Ok((status, this.line(t)))
    }

    /// The one line in `t`'s language; every value from the request is
    /// [`shown`] (escaped, cut), and escaped for HTML by the template.
    pub fn line(&self, t: &Words) -> String {
        let one = |key: &str, var: &str, v: &str| t.f1(key, var, &shown(v));
        match self {
            Refused::TooLong { field } => t.f(
                "admin-refused-long",
                &[
                    ("field", Arg::Str(&shown(field))),
                    ("max", Arg::Num(MAX_FIELD)),
                ],
            ),
            Refused::Control { field } => one("admin-refused-control", "field", field),
            Refused::Status(v) => one("admin-refused-status", "value", v),
            Refused::Name(v) => t.f(
                "admin-refused-name",
                &[
                    ("value", Arg::Str(&shown(v))),
                    ("max", Arg::Num(crate::validate::MAX_NAME)),
                ],
            ),
            Refused::NoParty(v) => one("admin-refused-no-party", "value", v),
            Refused::NotId(v) => one("admin-refused-before", "value", v),
            Refused::Disabled(v) => one("admin-refused-disabled", "value", v),
            Refused::Time(v) => one("admin-refused-time", "value", v),
            Refused::Week(v) => one("admin-refused-week", "value", v),
            Refused::Channel(v) => one("admin-refused-channel", "value", v),
            Refused::NoRequest => t.t("admin-refused-no-request").into_owned(),
            Refused::NoSubscription => t.t("admin-refused-no-subscription").into_owned(),
            Refused::NotOpen { status } => t.f1(
                "admin-refused-not-open",
                "status",
                &t.request_status(status),
            ),
            Refused::NoAddress { party, channel } => t.f(
                "admin-refused-no-address",
                &[
                    ("party", Arg::Str(&shown(party))),
                    ("channel", Arg::Str(&t.channel(channel))),
                ],
            ),
            Refused::NotOptedOut { member } => one("admin-refused-not-opted-out", "member", member),
            Refused::Library(e) => refusal_line(e, t.lang),
        }
    }
}
