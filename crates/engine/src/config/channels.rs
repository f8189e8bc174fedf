//! The delivery channels' sections: `[email]`, `[sms]`, `[xmpp]`,
//! `[webhook]` and `[matrix]`, with their defaults (`deliver::check_settings` checks them).

use std::str::FromStr;

use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::validate;

/// Defines a transport setting: an enum read and written in lowercase
/// (`"dir"`), shown the same way.
macro_rules! transport_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $v),+
        }

        impl $name {
            /// The setting's word, as written in the file.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

transport_enum!(
    /// How email leaves (`[email] transport`).
    EmailTransport {
        /// One `.eml` file per message under `[email] dir`.
        Dir = "dir",
        /// Through `smtp_url`.
        Smtp = "smtp",
        /// Rows of the SQLite file `db_path`, which a relay drains.
        Db = "db",
        /// `pipe_command` per message.
        Pipe = "pipe",
        /// Printed.
        Stdout = "stdout",
    }
);

transport_enum!(
    /// How XMPP bodies leave (`[xmpp] transport`).
    XmppTransport {
        /// Written under `[email] dir`/xmpp.
        Dir = "dir",
        /// Sent from the service's own account.
        Xmpp = "xmpp",
    }
);

transport_enum!(
    /// How SMS bodies leave (`[sms] transport`).
    SmsTransport {
        /// Written under `[email] dir`/sms.
        Dir = "dir",
        /// Posted to a gateway.
        Http = "http",
    }
);

transport_enum!(
    /// How webhook messages leave (`[webhook] transport`).
    WebhookTransport {
        /// Written under `[email] dir`/webhook: the headers and the body.
        Dir = "dir",
        /// Posted, signed, to each contact point's URL.
        Http = "http",
    }
);

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WebhookConfig {
    /// `dir` writes what would be posted under `[email] dir`/webhook;
    /// `http` posts it.
    pub transport: WebhookTransport,
    /// Plain `http://` URLs besides `https://`.
    pub allow_http: bool,
    /// Loopback, private, link-local and other non-public targets (a test
    /// server, a receiver inside the network); off, digestd refuses them
    /// when a URL is set and when it resolves a name to post.
    pub allow_private: bool,
    /// Connecting, posting and reading the answer, at most (1-600).
    pub timeout_seconds: u64,
    /// Posts of one batch in flight at once, at most (1-64); one
    /// endpoint's go one after another.
    pub concurrency: usize,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            transport: WebhookTransport::Dir,
            allow_http: false,
            allow_private: false,
            timeout_seconds: 10,
            concurrency: 4,
        }
    }
}

impl WebhookConfig {
    /// What a webhook URL may be under these settings.
    pub fn policy(&self) -> validate::UrlPolicy {
        validate::UrlPolicy {
            allow_http: self.allow_http,
            allow_private: self.allow_private,
        }
    }
}

transport_enum!(
    /// How Matrix messages leave (`[matrix] transport`).
    MatrixTransport {
        /// Written under `[email] dir`/matrix: the room or user and the
        /// event's content.
        Dir = "dir",
        /// Sent by the service account through the homeserver.
        Matrix = "matrix",
    }
);

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MatrixConfig {
    /// `dir` writes what would be sent under `[email] dir`/matrix;
    /// `matrix` sends it.
    pub transport: MatrixTransport,
    /// The homeserver's base URL, `https://matrix.example.org`.
    pub homeserver: String,
    /// The service account's user ID, `@digestd:example.org`.
    pub user: String,
    /// The account's access token; or, when empty, `password` logs in
    /// once per process (as `device_id`).
    pub access_token: String,
    pub password: String,
    /// The device a password login uses, the same every time, so that
    /// the homeserver recognises a retried transaction across restarts.
    pub device_id: String,
    /// Plain `http://` to a loopback homeserver (a test server).
    pub allow_http: bool,
    /// Connecting, sending and reading the answer, at most (1-600).
    pub timeout_seconds: u64,
}

impl Default for MatrixConfig {
    fn default() -> Self {
        MatrixConfig {
            transport: MatrixTransport::Dir,
            homeserver: String::new(),
            user: String::new(),
            access_token: String::new(),
            password: String::new(),
            device_id: "DIGESTD".into(),
            allow_http: false,
            timeout_seconds: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct XmppConfig {
    /// `dir` writes XMPP bodies under `[email] dir`/xmpp; `xmpp` sends them
    /// from the service's own account.
    pub transport: XmppTransport,
    /// The service's account, e.g. `digestd@example.org`.
    pub jid: String,
    pub password: String,
    /// `host:port` to connect to instead of the JID's domain (SRV lookup).
    pub server: String,
    /// STARTTLS, on by default; `false` only for a loopback test server.
    pub tls: bool,
    /// Login and per-batch answer timeout.
    pub timeout_seconds: u64,
    /// Longest body sent, in characters (cut with "…").
    pub max_chars: usize,
    /// The longest wait between reconnection attempts.
    pub reconnect_cap_seconds: u64,
    /// At most this many chat stanzas sent and not yet acknowledged by the
    /// server (XEP-0198); each is journaled as its acknowledgement comes,
    /// so a crash repeats at most this many. 0: no waits, the batch is
    /// vouched for by its ping alone (a crash may repeat the whole batch).
    pub ack_window: usize,
}

impl Default for XmppConfig {
    fn default() -> Self {
        XmppConfig {
            transport: XmppTransport::Dir,
            jid: String::new(),
            password: String::new(),
            server: String::new(),
            tls: true,
            timeout_seconds: 15,
            max_chars: 8000,
            reconnect_cap_seconds: 300,
            ack_window: 4,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SmsConfig {
    /// `dir` writes SMS bodies under `[email] dir`/sms; `http` posts them
    /// to a gateway.
    pub transport: SmsTransport,
    /// The gateway's URL (http:// or https://).
    pub endpoint: String,
    /// `twilio`: a form post of To, From, Body; `json`: `json_template`.
    pub shape: String,
    /// For `json`: a JSON body with {to}, {from} and {body} placeholders
    /// (each replaced by a JSON string).
    pub json_template: String,
    /// Basic auth (when `username` is set) …
    pub username: String,
    pub password: String,
    /// … or an Authorization header value, e.g. "Bearer abc".
    pub auth_header: String,
    /// The sender id or number.
    pub from: String,
    /// Segments one message may take (GSM-7 153 / UCS-2 67 each).
    pub max_segments: usize,
    pub timeout_seconds: u64,
}

impl Default for SmsConfig {
    fn default() -> Self {
        SmsConfig {
            transport: SmsTransport::Dir,
            endpoint: String::new(),
            shape: "twilio".into(),
            json_template: r#"{"to": {to}, "from": {from}, "text": {body}}"#.into(),
            username: String::new(),
            password: String::new(),
            auth_header: String::new(),
            from: "digestd".into(),
            max_segments: 3,
            timeout_seconds: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EmailConfig {
    /// How email leaves: `dir` writes one .eml file per message, `smtp`
    /// sends through `smtp_url`, `db` inserts into the SQLite file
    /// `db_path`, `pipe` runs `pipe_command` per message, `stdout` prints
    /// each message.
    pub transport: EmailTransport,
    /// The `dir` transport's directory (other channels go to its xmpp/ and
    /// sms/ subdirectories until their listeners exist).
    pub dir: String,
    /// The sender of every message, "Name <address>"; also the envelope
    /// sender, so bounces come back to digestd.
    pub from: String,
    /// `smtp://host:port` (plain), `smtp://host:port?tls=required`
    /// (STARTTLS), `smtps://host:port` (TLS); `user:password@` for AUTH.
    pub smtp_url: String,
    /// TLS for `smtp`: `none`, `opportunistic` (STARTTLS when offered, not
    /// verified), `required` (STARTTLS, verified) or `wrapper` (smtps,
    /// verified); empty: as `smtp_url` says (`?tls=`, `smtps://`).
    pub tls: String,
    /// A PEM file of CA certificates trusted besides the system's, for a
    /// server with a private CA; empty: the system's alone.
    pub tls_ca_file: String,
    /// For `db`: the SQLite file an external relay drains.
    pub db_path: String,
    /// For `pipe`: a sendmail-style command (program and arguments, no
    /// shell) that reads one message on stdin.
    pub pipe_command: String,
    /// SMTP sessions used in parallel by one queue pass.
    pub pool_size: u32,
    /// Seconds before an SMTP command times out.
    pub timeout_seconds: u64,
    /// First retry after a transient failure; doubles per attempt.
    pub retry_base_seconds: u64,
    /// The longest wait between attempts.
    pub retry_cap_seconds: u64,
    /// Attempts before a message is given up (requests may set their own).
    pub max_retries: u32,
    /// Hard bounces (RFC 3464, 5.x.x) before an address is disabled.
    pub bounce_limit: u32,
    /// DKIM (RFC 6376): the signing domain (`d=`); empty = no signing.
    /// The three go together (`deliver::dkim`).
    pub dkim_domain: String,
    /// The selector (`s=`): the key is published at
    /// `SELECTOR._domainkey.DOMAIN`.
    pub dkim_selector: String,
    /// A PEM file with the private key: RSA (2048 bits or more) or Ed25519.
    pub dkim_key: String,
    /// A forward digest's email carries its items as an iCalendar part
    /// (`text/calendar; method=PUBLISH`, `docs/digests.md`).
    pub calendar: bool,
}

impl Default for EmailConfig {
    fn default() -> Self {
        EmailConfig {
            transport: EmailTransport::Dir,
            dir: "outbox".into(),
            from: "digestd <digestd@localhost>".into(),
            smtp_url: String::new(),
            tls: String::new(),
            tls_ca_file: String::new(),
            db_path: "outbox/outbox.db".into(),
            pipe_command: "/usr/sbin/sendmail -t -i -f {from}".into(),
            pool_size: 4,
            timeout_seconds: 30,
            retry_base_seconds: 300,
            retry_cap_seconds: 21_600,
            max_retries: 3,
            bounce_limit: 3,
            dkim_domain: String::new(),
            dkim_selector: String::new(),
            dkim_key: String::new(),
            calendar: true,
        }
    }
}

/// The configured sender, "Name <address>" or a bare address.
pub fn parse_from(s: &str) -> Result<Mailbox> {
    let bad = |why: &str| Error::invalid(format!("config: email.from {s:?}: {why}"));
    if s.chars().any(char::is_control) {
        return Err(bad("control character"));
    }
    let m = Mailbox::from_str(s)
        .map_err(|_| bad("not an address: use an address, or Name <address>"))?;
    validate::email(m.email.as_ref()).map_err(|e| bad(&e.to_string()))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_senders_are_refused() {
        for bad in ["", "nobody", "a <b@c>\r\nBcc: x@y", "<@>", "x@-bad-"] {
            assert!(parse_from(bad).is_err(), "{bad:?}");
        }
        assert!(parse_from("alerts@example.com").is_ok());
    }
}
