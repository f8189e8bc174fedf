//! The SMS listener: an HTTP gateway, by default Twilio-compatible (a form
//! post of To, From, Body), or any gateway taking a JSON body built from
//! `[sms] json_template`. Bodies are cut to `[sms] max_segments` GSM-7 /
//! UCS-2 segments. 2xx is delivered (the gateway's message id kept); 408,
//! 429 and 5xx other than 501 are transient, honouring Retry-After; other
//! statuses are permanent; no answer at all is transient ([`Error`]).

use std::time::Duration;

use super::listener::{Delivered, DeliveryError, Listener, Outgoing};
use crate::config::{SmsConfig, SmsTransport};
use crate::error::Result;
use crate::parties::Channel;
use crate::text::gsm as segments;

/// Checks `[sms]` without connecting.
pub fn check(c: &SmsConfig) -> Result<()> {
    let bad = |why: String| crate::error::Error::invalid(format!("config: sms.{why}"));
    if !(1..=10).contains(&c.max_segments) {
        return Err(bad("max_segments must be 1-10".into()));
    }
    if !(1..=600).contains(&c.timeout_seconds) {
        return Err(bad("timeout_seconds must be 1-600".into()));
    }
    for (name, v) in [
        ("endpoint", &c.endpoint),
        ("auth_header", &c.auth_header),
        ("username", &c.username),
        ("password", &c.password),
        ("from", &c.from),
    ] {
        if v.chars().any(char::is_control) {
            return Err(bad(format!("{name}: no control characters")));
        }
    }
    if c.transport == SmsTransport::Dir {
        return Ok(());
    }
    let shown = crate::text::redact_url(&c.endpoint);
    if c.endpoint.is_empty() {
        return Err(bad(
            "endpoint: required with transport \"http\": the gateway's http:// or https:// URL"
                .into(),
        ));
    }
    let url = url::Url::parse(&c.endpoint).map_err(|e| {
        bad(format!(
            "endpoint {shown:?}: {e}: use the gateway's http:// or https:// URL"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!("endpoint {shown:?}: use http:// or https://")));
    }
    match c.shape.as_str() {
        "twilio" => {}
        "json" => {
            let probe = fill(&c.json_template, "+15550100", "x", "y");
            serde_json::from_str::<serde_json::Value>(&probe)
                .map_err(|e| bad(format!("json_template is not JSON once filled: {e}")))?;
        }
        other => return Err(bad(format!("shape {other:?}: use \"twilio\" or \"json\""))),
    }
    Ok(())
}

fn fill(template: &str, to: &str, from: &str, body: &str) -> String {
    let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    template
        .replace("{to}", &q(to))
        .replace("{from}", &q(from))
        .replace("{body}", &q(body))
}

pub struct SmsGateway {
    cfg: SmsConfig,
    client: super::http::Client,
    /// The queue pass's instant: what a `Retry-After` date is counted from.
    now: Option<chrono::DateTime<chrono::Utc>>,
}

impl SmsGateway {
    /// The gateway of `[sms]`, posting on the runtime `rt`.
    pub fn new(cfg: &SmsConfig, rt: &tokio::runtime::Handle) -> Result<SmsGateway> {
        check(cfg)?;
        let b = reqwest::Client::builder().timeout(Duration::from_secs(cfg.timeout_seconds));
        let client = super::http::Client::new(b, rt)
            .map_err(|e| crate::error::Error::Storage(format!("sms client: {e}")))?;
        Ok(SmsGateway {
            cfg: cfg.clone(),
            client,
            now: None,
        })
    }
}

/// The gateway's id for the message, from a JSON answer.
fn remote_id(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    ["sid", "id", "message_id", "messageId"]
        .iter()
        .find_map(|k| v.get(k))
        .map(|id| match id {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

impl Listener for SmsGateway {
    fn key(&self) -> Channel {
        Channel::Sms
    }

    fn pass_at(&mut self, now: chrono::DateTime<chrono::Utc>) {
        self.now = Some(now);
    }

    fn send_raw(&mut self, m: &Outgoing) -> Result<Delivered, DeliveryError> {
        let to = m.to.as_str();
        let body = segments::fit(m.body()?, self.cfg.max_segments, "");
        let c = &self.cfg;
        let mut req = self.client.post(&c.endpoint);
        req = match c.shape.as_str() {
            "json" => req.header("Content-Type", "application/json").body(fill(
                &c.json_template,
                to,
                &c.from,
                &body,
            )),
            _ => req.form(&[
                ("To", to),
                ("From", c.from.as_str()),
                ("Body", body.as_str()),
            ]),
        };
        if !c.username.is_empty() {
            req = req.basic_auth(&c.username, Some(&c.password));
        } else if !c.auth_header.is_empty() {
            req = req.header("Authorization", &c.auth_header);
        }
        // At most 64 KiB of the answer is read, as from a webhook.
        let resp = self
            .client
            .exchange(req, super::http::MAX_ANSWER)
            .map_err(|e| Error::Unanswered(e.to_string()))?;
        let status = resp.status;
        let text: String = resp.text.chars().take(500).collect();
        if (200..=299).contains(&status) {
            return Ok(Delivered {
                code: Some(status),
                remote_id: remote_id(&text),
                text: "accepted".into(),
            });
        }
        Err(Error::Refused {
            status,
            answer: text,
            retry_after_secs: super::webhook::retry_after(&resp.headers, self.now),
        }
        .into())
    }
}

/// Why the gateway did not take a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No answer: the gateway could not be reached, or did not answer in
    /// `[sms] timeout_seconds`.
    #[error("gateway: {0}")]
    Unanswered(String),
    /// An answer other than 2xx: its status, the first 500 characters of
    /// its body, and its `Retry-After` in seconds.
    #[error("gateway: {status} {answer}")]
    Refused {
        status: u16,
        answer: String,
        retry_after_secs: Option<u64>,
    },
}

impl Error {
    /// Whether another attempt may succeed: no answer, 408, 429 and 5xx
    /// other than 501 (Not Implemented, which no retry mends); any other
    /// status is the gateway refusing the message.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Error::Unanswered(_) => true,
            Error::Refused { status, .. } => crate::http::worth_retrying(*status),
        }
    }
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        let (code, retry_after_secs) = match &e {
            Error::Unanswered(_) => (None, None),
            Error::Refused {
                status,
                retry_after_secs,
                ..
            } => (Some(*status), *retry_after_secs),
        };
        // The gateway's answer may hold any text: one line, escaped.
        DeliveryError::verdict(e.is_transient(), code, &e.to_string(), retry_after_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, answer: &str) -> Error {
        Error::Refused {
            status,
            answer: answer.into(),
            retry_after_secs: Some(30),
        }
    }

    #[test]
    fn each_answer_is_transient_or_permanent() {
        let cases = [
            (408, true),
            (429, true),
            (500, true),
            (502, true),
            (503, true),
            (599, true),
            (501, false),
            (400, false),
            (401, false),
            (403, false),
            (404, false),
            (301, false),
            (100, false),
            // A status no gateway should send.
            (0, false),
            (600, false),
            (999, false),
        ];
        for (status, transient) in cases {
            match DeliveryError::from(refused(status, "no")) {
                DeliveryError::Transient {
                    code,
                    text,
                    retry_after_secs,
                } => {
                    assert!(transient, "{status}");
                    assert_eq!((code, retry_after_secs), (Some(status), Some(30)));
                    assert_eq!(text, format!("gateway: {status} no"));
                }
                DeliveryError::Permanent { code, text } => {
                    assert!(!transient, "{status}");
                    assert_eq!(code, Some(status));
                    assert_eq!(text, format!("gateway: {status} no"));
                }
            }
        }
        assert_eq!(
            DeliveryError::from(Error::Unanswered("connection refused".into())),
            DeliveryError::Transient {
                code: None,
                text: "gateway: connection refused".into(),
                retry_after_secs: None,
            }
        );
    }

    #[test]
    fn a_hostile_answer_is_one_escaped_line() {
        for answer in ["", "busy\r\nX-Injected: 1", "\u{1b}[2J\u{202e}\u{0}"] {
            let (DeliveryError::Transient { text, .. } | DeliveryError::Permanent { text, .. }) =
                DeliveryError::from(refused(503, answer));
            assert!(text.starts_with("gateway: 503"), "{text}");
            assert!(
                !text.contains(['\r', '\n', '\u{1b}', '\u{202e}', '\u{0}']),
                "{text}"
            );
        }
    }
}
