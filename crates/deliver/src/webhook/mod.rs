//! The webhook listener: each message is a JSON document posted to the
//! contact point's https URL, signed as Standard Webhooks says
//! ([`sign`]), from an address checked against `[webhook]`'s policy
//! ([`guard`]). A batch's posts go out several at once, one endpoint's
//! one after another ([`lanes`], `[webhook] concurrency`). 2xx is
//! delivered; 408, 429 and 5xx other than 501 (and no answer) are
//! transient, honouring `Retry-After`; a redirect is not followed and is
//! permanent, as is any other status; 410 Gone is permanent and the queue
//! disables the contact point: [`Error`] says why, and its conversion
//! into the queue's [`DeliveryError`] decides. At most 64 KiB of an
//! answer is read. With `[webhook] transport = "dir"` what would be
//! posted (the request line, headers and body) is written under the
//! outbox's `webhook/` instead.
//!
//! The same listener, keyed by another channel, posts the chat and push
//! presets ([`presets`]: Slack, Discord, Teams, ntfy): the same document
//! written in the service's format, unsigned, under the same policy and
//! answers; their `dir` files go under the outbox's `<channel>/`.

pub mod body;
mod error;
mod guard;
mod lanes;
pub mod presets;
pub mod sign;

pub use self::error::Error;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::runtime::Handle;

use super::http::{self, Client};
use super::listener::{Accepted, Delivered, DeliveryError, Listener, Outgoing};
use super::outbox::Outbox;
use crate::config::{EmailConfig, WebhookConfig, WebhookTransport};
use crate::error::Result;
use crate::parties::Channel;

/// The most HTTP clients a listener keeps (each holds its kept
/// connections); past it they are all dropped and made again.
const MAX_CLIENTS: usize = 16;

/// The reply code a contact point that is gone answers with: the queue
/// disables the contact point when a message gets it.
pub const GONE: u16 = 410;

/// Checks `[webhook]` without connecting.
pub fn check(c: &WebhookConfig) -> Result<()> {
    let bad = |why: &str| crate::error::Error::invalid(format!("config: webhook.{why}"));
    if !(1..=600).contains(&c.timeout_seconds) {
        return Err(bad("timeout_seconds must be 1-600"));
    }
    if !(1..=64).contains(&c.concurrency) {
        return Err(bad("concurrency must be 1-64"));
    }
    Ok(())
}

pub struct WebhookListener {
    /// The webhook, or one of its presets.
    channel: Channel,
    cfg: WebhookConfig,
    /// `None` with the `http` transport.
    outbox: Option<Outbox>,
    /// The queue pass's instant (the injected clock): the messages'
    /// `webhook-timestamp`.
    now: Option<DateTime<Utc>>,
    /// HTTP clients kept between posts, so a connection is reused, by the
    /// name pinned and the addresses it was pinned to: a post goes out on
    /// a client pinned to exactly the addresses checked for it (a URL
    /// naming an address pins nothing and shares one client).
    clients: HashMap<(Option<String>, Vec<SocketAddr>), Client>,
    /// The process's runtime, which the clients run on.
    rt: Handle,
}

/// A message made ready to leave: what to post (or write), or why it
/// cannot go.
enum Ready {
    Post(Box<lanes::Post>),
    Written(std::result::Result<Delivered, DeliveryError>),
}

impl WebhookListener {
    /// The listener `[webhook] transport` names, posting on the runtime
    /// `rt`; `email` gives the outbox for `dir`.
    pub fn new(cfg: &WebhookConfig, email: &EmailConfig, rt: &Handle) -> Result<WebhookListener> {
        WebhookListener::on(Channel::Webhook, cfg, email, rt)
    }

    /// The listener of URL channel `channel`: the webhook or a preset.
    pub fn on(
        channel: Channel,
        cfg: &WebhookConfig,
        email: &EmailConfig,
        rt: &Handle,
    ) -> Result<WebhookListener> {
        check(cfg)?;
        if !channel.is_url() {
            return Err(crate::error::Error::invalid(format!(
                "{} is not posted to a URL",
                channel.as_str()
            )));
        }
        Ok(WebhookListener {
            channel,
            cfg: cfg.clone(),
            outbox: match cfg.transport {
                WebhookTransport::Dir => Some(Outbox::new(email)?),
                WebhookTransport::Http => None,
            },
            now: None,
            clients: HashMap::new(),
            rt: rt.clone(),
        })
    }

    /// The client for `target`: kept, or made now and kept.
    fn client(&mut self, target: &guard::Target) -> std::result::Result<&Client, Error> {
        let key = match &target.name {
            Some(name) => {
                let mut addrs = target.addrs.clone();
                addrs.sort_unstable();
                (Some(name.clone()), addrs)
            }
            None => (None, Vec::new()),
        };
        if !self.clients.contains_key(&key) {
            if self.clients.len() >= MAX_CLIENTS {
                self.clients.clear();
            }
            let timeout = Duration::from_secs(self.cfg.timeout_seconds);
            let mut client = http::builder(timeout);
            if let (Some(name), addrs) = &key {
                client = client.resolve_to_addrs(name, addrs);
            }
            let client = Client::new(client, &self.rt).map_err(Error::Client)?;
            self.clients.insert(key.clone(), client);
        }
        Ok(&self.clients[&key])
    }

    /// `m`'s post to its URL, checked against the policy and resolved now,
    /// on the client pinned to the addresses checked.
    fn post(
        &mut self,
        m: &Outgoing,
        body: &[u8],
        headers: &[(&str, String)],
    ) -> std::result::Result<lanes::Post, Error> {
        let target = guard::target(&m.to, self.cfg.policy())?;
        let client = self.client(&target)?;
        let mut req = client.post(target.url.as_str()).body(body.to_vec());
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        Ok(lanes::Post {
            endpoint: target.url.into(),
            req,
        })
    }

    /// `m` signed (the webhook) or written in its service's format (a
    /// preset), then posted, or written to the outbox with `dir`.
    fn ready(&mut self, m: &Outgoing) -> std::result::Result<Ready, Error> {
        let (body, headers) = if self.channel.is_preset() {
            let r = presets::request(self.channel, &m.bytes).map_err(Error::Preset)?;
            let mut headers = r.headers;
            headers.push(("user-agent", sign::USER_AGENT.to_string()));
            (r.body, headers)
        } else {
            let signing = m.signing.as_ref().ok_or(Error::NoSecret)?;
            let now = self.now.ok_or(Error::NoInstant)?;
            let headers = sign::headers(&signing.id, now.timestamp(), &signing.secret, &m.bytes)
                .map_err(Error::Sign)?;
            (m.bytes.clone(), headers)
        };
        Ok(match &self.outbox {
            Some(outbox) => Ready::Written(write(outbox, m, &body, &headers)),
            None => Ready::Post(Box::new(self.post(m, &body, &headers)?)),
        })
    }
}

/// What would be posted, written to the outbox.
fn write(
    outbox: &Outbox,
    m: &Outgoing,
    body: &[u8],
    headers: &[(&str, String)],
) -> std::result::Result<Delivered, DeliveryError> {
    let mut text = format!("POST {}\n", m.to);
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\n"));
    }
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(body));
    text.push('\n');
    outbox.deliver(&m.file, text.as_bytes())
}

/// An answer's `Retry-After` as seconds ([`retry_after_secs`]); without
/// `now` (no pass has said its instant) only delta-seconds are read.
pub(crate) fn retry_after(
    headers: &reqwest::header::HeaderMap,
    now: Option<DateTime<Utc>>,
) -> Option<u64> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    match now {
        Some(now) => retry_after_secs(v, now),
        None => v.trim().parse().ok(),
    }
}

/// `Retry-After` (RFC 9110) as seconds after `now`: delta-seconds, or an
/// HTTP date (one already past is 0).
pub fn retry_after_secs(v: &str, now: DateTime<Utc>) -> Option<u64> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs);
    }
    let at = DateTime::parse_from_rfc2822(v).ok()?;
    Some((at.with_timezone(&Utc) - now).num_seconds().max(0) as u64)
}

impl Listener for WebhookListener {
    fn key(&self) -> Channel {
        self.channel
    }

    fn pass_at(&mut self, now: DateTime<Utc>) {
        self.now = Some(now);
    }

    /// One message: made ready, then posted on its own.
    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        match self.ready(m)? {
            Ready::Written(r) => r,
            Ready::Post(p) => Ok(lanes::post_one(&self.rt, *p, self.now)?),
        }
    }

    /// Each message made ready in order (signed, its URL checked and
    /// resolved; written at once with `dir`), then the posts sent inside
    /// one `block_on`, at most `[webhook] concurrency` in flight: one
    /// endpoint's posts one after another in the batch's order, different
    /// endpoints side by side ([`lanes`]). `accepted` hears of each as its
    /// answer is read.
    fn send_noting(
        &mut self,
        msgs: &[Outgoing],
        accepted: Accepted<'_>,
    ) -> Vec<std::result::Result<Delivered, DeliveryError>> {
        let mut out: Vec<Option<std::result::Result<Delivered, DeliveryError>>> =
            vec![None; msgs.len()];
        let mut posts = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            match self.ready(m) {
                Ok(Ready::Post(p)) => posts.push((i, *p)),
                Ok(Ready::Written(r)) => {
                    if let Ok(d) = &r {
                        accepted(i, d);
                    }
                    out[i] = Some(r);
                }
                Err(e) => out[i] = Some(Err(e.into())),
            }
        }
        let sent = lanes::post_all(&self.rt, posts, self.cfg.concurrency, self.now, accepted);
        for (i, r) in sent {
            out[i] = Some(r.map_err(DeliveryError::from));
        }
        out.into_iter()
            .map(|r| r.expect("every message has its result"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    fn asked(v: &[u8], now: Option<DateTime<Utc>>) -> Option<u64> {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_bytes(v).unwrap());
        retry_after(&h, now)
    }

    #[test]
    fn retry_after_reads_seconds_and_dates_and_nothing_else() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(asked(b" 120 ", Some(now)), Some(120));
        assert_eq!(asked(b"120", None), Some(120));
        let date = b"Sun, 29 Nov 2026 12:01:30 GMT";
        assert_eq!(asked(date, Some(now)), Some(90));
        // A date needs the pass's instant; a past one waits nothing.
        assert_eq!(asked(date, None), None);
        assert_eq!(asked(b"Sun, 29 Nov 2026 11:00:00 GMT", Some(now)), Some(0));
        for bad in [&b"-5"[..], b"soon", b"1e3", b"\xff\xfe", b""] {
            assert_eq!(asked(bad, Some(now)), None, "{bad:?}");
        }
        assert_eq!(retry_after(&HeaderMap::new(), Some(now)), None);
    }
}
