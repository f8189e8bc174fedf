//! The HTTP exchanges of the listeners that post to a far end (the
//! webhooks and their presets, Matrix, the SMS gateway, the operators'
//! events), on the process's one runtime. A listener sends from a pass's
//! thread, never from an async task: it blocks on the runtime's handle
//! while the runtime's workers drive the connection, as the SMTP and XMPP
//! listeners do. No client starts a runtime or a thread of its own.

use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::runtime::Handle;

/// The most of an answer read; the rest is left unread.
pub const MAX_ANSWER: usize = 64 * 1024;

/// Whether an answer's status is worth another attempt: 408, 429 and 5xx
/// other than 501 (Not Implemented, which no retry mends). The webhooks
/// and the SMS gateway read a refusal by it.
pub(crate) fn worth_retrying(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502..=599)
}

/// The client every post to a far end starts from: no redirect followed,
/// no proxy, `timeout` to connect and for the whole exchange.
pub fn builder(timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(timeout)
        .connect_timeout(timeout)
}

/// A client on the runtime `rt`, its kept connections with it.
#[derive(Clone)]
pub struct Client {
    client: reqwest::Client,
    rt: Handle,
}

/// What a far end answered: at most the bytes asked for of its body, as
/// text, and whether there was more.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    pub cut: bool,
}

impl Client {
    /// The client `b` builds, on `rt`.
    pub fn new(b: reqwest::ClientBuilder, rt: &Handle) -> reqwest::Result<Client> {
        let _in = rt.enter();
        Ok(Client {
            client: b.build()?,
            rt: rt.clone(),
        })
    }

    /// A request to `url` (sent by [`Client::exchange`]).
    pub fn request(
        &self,
        method: reqwest::Method,
        url: impl reqwest::IntoUrl,
    ) -> reqwest::RequestBuilder {
        self.client.request(method, url)
    }

    /// `POST url`.
    pub fn post(&self, url: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, url)
    }

    /// Sends `req` and reads at most `max` bytes of the answer ([`read`]),
    /// blocking on the client's runtime until it has.
    pub(crate) fn exchange(
        &self,
        req: reqwest::RequestBuilder,
        max: usize,
    ) -> reqwest::Result<Answer> {
        self.rt.block_on(read(req, max))
    }
}

/// Sends `req` and reads at most `max` bytes of the answer; an answer that
/// breaks off is what came of it. `Err` when nothing came back (no
/// connection, a timeout before the head). For a listener that has
/// several exchanges in flight inside one `block_on` (the webhooks'); the
/// others call [`Client::exchange`].
pub async fn read(req: reqwest::RequestBuilder, max: usize) -> reqwest::Result<Answer> {
    let mut resp = req.send().await?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let mut body = Vec::new();
    while body.len() <= max {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let cut = body.len() > max;
    body.truncate(max);
    Ok(Answer {
        status,
        headers,
        text: String::from_utf8_lossy(&body).into_owned(),
        cut,
    })
}

impl Answer {
    /// Header `name` as text, when it is.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}
