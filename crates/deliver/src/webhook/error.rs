//! Why a webhook (or a preset's post) did not go, and the one place that
//! decides whether that is worth another attempt: the conversion into
//! the queue's [`DeliveryError`]. 2xx is no error; a status that is not
//! is [`Error::Refused`], transient for 408, 429 and 5xx other than 501
//! (with the answer's `Retry-After`), permanent otherwise: a redirect
//! (none is followed), 410 Gone (the queue disables the contact point on
//! it, by its code), any other 4xx. No answer at all (a timeout, no
//! connection) and a name that does not resolve now are transient; what
//! no retry can change (a URL the policy refuses, no secret) is
//! permanent. The texts are the ones the queue writes down.

use crate::listener::DeliveryError;
use crate::text::one_line;

/// A webhook's failure, before the queue sees it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The HTTP client for the target could not be made.
    #[error("webhook client: {0}")]
    Client(#[source] reqwest::Error),
    /// Nothing came back: no connection, a timeout before the answer's
    /// head. Built by [`Error::unanswered`], which leaves the URL out (a
    /// preset's is its credential).
    #[error("webhook: {}", one_line(&.0.to_string()))]
    Unanswered(#[source] reqwest::Error),
    /// The far end answered with a status other than 2xx. `shown` is the
    /// start of its answer (one line, at most 300 characters), `cut` says
    /// whether the answer went past what is read (64 KiB), `location` is
    /// a redirect's target.
    #[error("{}", refused(*.status, .shown, *.cut, .location.as_deref()))]
    Refused {
        status: u16,
        shown: String,
        cut: bool,
        location: Option<String>,
        /// `Retry-After`, as seconds from the pass's instant.
        retry_after: Option<u64>,
    },
    /// The URL is not one `[webhook]`'s policy allows, as written or as
    /// its name resolves (the text says why).
    #[error("{0}")]
    Target(String),
    /// The URL's host name does not resolve now.
    #[error("webhook: cannot resolve {host}: {why}")]
    Unresolved { host: String, why: String },
    /// The contact point has no secret for this URL (it changed since the
    /// row was queued).
    #[error("webhook: no secret to sign with")]
    NoSecret,
    /// No pass said its instant, which signs the message.
    #[error("webhook: no pass instant")]
    NoInstant,
    /// The secret cannot sign (not a `whsec_` secret).
    #[error("{0}")]
    Sign(#[source] crate::error::Error),
    /// A preset could not write the stored document in its service's
    /// format.
    #[error("{0}")]
    Preset(String),
}

/// A reply that is cut says so, after what is shown of it.
const CUT: &str = " (answer cut at 64 KiB)";

fn refused(status: u16, shown: &str, cut: bool, location: Option<&str>) -> String {
    let cut = if cut { CUT } else { "" };
    match status {
        300..=399 => format!(
            "webhook: {status} redirect to {} not followed (digestd follows no redirects: set the final URL){cut}",
            one_line(location.unwrap_or("nowhere"))
        ),
        super::GONE => format!(
            "webhook: {status} {shown}{cut}: the endpoint is gone; contact point disabled"
        ),
        _ => format!("webhook: {status} {shown}{cut}"),
    }
}

impl Error {
    /// No answer to a post: `e` without its URL.
    pub fn unanswered(e: reqwest::Error) -> Error {
        Error::Unanswered(e.without_url())
    }

    /// Whether another attempt may go: 408, 429, 5xx but 501, no answer,
    /// a name that does not resolve, a client that could not be made.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Client(_) | Error::Unanswered(_) | Error::Unresolved { .. } => true,
            Error::Refused { status, .. } => crate::http::worth_retrying(*status),
            Error::Target(_)
            | Error::NoSecret
            | Error::NoInstant
            | Error::Sign(_)
            | Error::Preset(_) => false,
        }
    }

    /// The status the far end answered with, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Refused { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        let (code, text) = (e.status(), e.to_string());
        if !e.is_transient() {
            return DeliveryError::Permanent { code, text };
        }
        let retry_after_secs = match e {
            Error::Refused { retry_after, .. } => retry_after,
            _ => None,
        };
        DeliveryError::Transient {
            code,
            text,
            retry_after_secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: u16, retry_after: Option<u64>) -> DeliveryError {
        Error::Refused {
            status,
            shown: "{\"error\": \"no\"}".into(),
            cut: false,
            location: None,
            retry_after,
        }
        .into()
    }

    fn transient(code: u16, retry_after_secs: Option<u64>) -> DeliveryError {
        DeliveryError::Transient {
            code: Some(code),
            text: format!("webhook: {code} {{\"error\": \"no\"}}"),
            retry_after_secs,
        }
    }

    #[test]
    fn statuses_worth_another_attempt_are_transient_with_their_retry_after() {
        for code in [408, 429, 500, 502, 503, 504, 599] {
            assert_eq!(answered(code, Some(90)), transient(code, Some(90)));
            assert_eq!(answered(code, None), transient(code, None));
        }
    }

    #[test]
    fn other_statuses_are_permanent_and_never_wait() {
        for code in [100, 199, 400, 401, 403, 404, 409, 413, 422, 451, 501, 600] {
            assert_eq!(
                answered(code, Some(90)),
                DeliveryError::Permanent {
                    code: Some(code),
                    text: format!("webhook: {code} {{\"error\": \"no\"}}"),
                },
                "{code}"
            );
        }
    }

    #[test]
    fn redirects_and_gone_are_permanent_and_say_why() {
        for code in [300, 301, 302, 307, 308, 399] {
            let e = Error::Refused {
                status: code,
                shown: String::new(),
                cut: true,
                location: Some("http://x/\r\nX-Evil: 1".into()),
                retry_after: Some(5),
            };
            let DeliveryError::Permanent { code: got, text } = e.into() else {
                panic!("{code} is permanent");
            };
            assert_eq!(got, Some(code));
            assert!(text.contains("not followed"), "{text}");
            assert!(text.ends_with(CUT) && !text.contains('\n'), "{text:?}");
        }
        let gone = Error::Refused {
            status: super::super::GONE,
            shown: "gone".into(),
            cut: false,
            location: None,
            retry_after: None,
        };
        assert_eq!(
            DeliveryError::from(gone),
            DeliveryError::Permanent {
                code: Some(410),
                text: "webhook: 410 gone: the endpoint is gone; contact point disabled".into(),
            }
        );
        let nowhere = refused(302, "", false, None);
        assert!(nowhere.contains("redirect to nowhere"), "{nowhere}");
    }

    #[test]
    fn what_no_retry_changes_is_permanent_and_the_rest_transient() {
        let permanent = |e: Error, want: &str| {
            assert_eq!(
                DeliveryError::from(e),
                DeliveryError::Permanent {
                    code: None,
                    text: want.into()
                }
            );
        };
        permanent(Error::NoSecret, "webhook: no secret to sign with");
        permanent(Error::NoInstant, "webhook: no pass instant");
        permanent(
            Error::Target("webhook url names no host".into()),
            "webhook url names no host",
        );
        permanent(Error::Preset("slack: not JSON".into()), "slack: not JSON");
        permanent(
            Error::Sign(crate::error::Error::invalid("bad secret")),
            "bad secret",
        );
        let unresolved = Error::Unresolved {
            host: "hooks.example.invalid".into(),
            why: "no such host".into(),
        };
        assert_eq!(
            DeliveryError::from(unresolved),
            DeliveryError::Transient {
                code: None,
                text: "webhook: cannot resolve hooks.example.invalid: no such host".into(),
                retry_after_secs: None,
            }
        );
    }
}
