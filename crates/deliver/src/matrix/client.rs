//! The client-server API calls the Matrix listener makes, over plain
//! HTTP: a password login, `createRoom` for a direct room (under its
//! alias, [`super::alias`]), an alias resolved, the person's invitation,
//! the service account's account data where direct rooms are recorded
//! ([`super::direct`]), `join` for a room ID given as an address, a
//! member's membership of a room, and `PUT …/send/m.room.message/{txnId}`.
//! No redirect is followed and no proxy used; at most 64 KiB of an answer
//! is read (8 MiB of the account's own account data). What each answer means for the queue is [`refusal`]'s.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::error::{Error, Refusal};
use crate::config::MatrixConfig;

/// The status a send answered with `M_FORBIDDEN` is reported with: the
/// person left the room or may not be written to, and the queue disables
/// the contact point.
pub const FORBIDDEN: u16 = 403;

/// A session with the homeserver.
pub struct Homeserver {
    base: String,
    client: crate::http::Client,
    /// The pass's instant, for a `Retry-After` given as a date.
    pub now: Option<DateTime<Utc>>,
}

/// How much of the service account's account data is read: `m.direct`
/// holds about 80 bytes a person, so some 100,000 people.
pub const MAX_ACCOUNT_DATA: usize = 8 * 1024 * 1024;

/// What a call is, for the queue's verdict on a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Login,
    CreateRoom,
    ResolveAlias,
    Invite,
    AccountData,
    Join,
    Membership,
    Send,
}

impl Homeserver {
    /// A session with the homeserver at `base`, on the runtime `rt`.
    pub fn new(
        cfg: &MatrixConfig,
        base: String,
        rt: &tokio::runtime::Handle,
    ) -> Result<Homeserver, Error> {
        let timeout = Duration::from_secs(cfg.timeout_seconds);
        let b = crate::http::builder(timeout).user_agent(crate::webhook::sign::USER_AGENT);
        let client = crate::http::Client::new(b, rt).map_err(|e| Error::Client(e.to_string()))?;
        Ok(Homeserver {
            base,
            client,
            now: None,
        })
    }

    /// `{base}/_matrix/client/v3/` and `segments`, each percent-encoded.
    fn url(&self, segments: &[&str]) -> Result<url::Url, Error> {
        let mut u = url::Url::parse(&self.base).map_err(|e| Error::BaseUrl(e.to_string()))?;
        u.path_segments_mut()
            .map_err(|_| Error::BaseUrlNoPath)?
            .pop_if_empty()
            .extend(["_matrix", "client", "v3"])
            .extend(segments);
        Ok(u)
    }

    /// Calls `method` on `segments` with `body`; the answer's JSON on 2xx,
    /// else the refusal as the queue reads it.
    fn call(
        &self,
        call: Call,
        method: reqwest::Method,
        segments: &[&str],
        token: Option<&str>,
        body: &Value,
    ) -> Result<Value, Error> {
        let mut req = self.client.request(method, self.url(segments)?);
        if !body.is_null() {
            req = req.json(body);
        }
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        // The service account's own account data (`m.direct`, a room per
        // person) is read up to MAX_ACCOUNT_DATA; any other answer up to
        // the 64 KiB every remote answer is read to.
        let max = match call {
            Call::AccountData => MAX_ACCOUNT_DATA,
            _ => crate::http::MAX_ANSWER,
        };
        let resp = self
            .client
            .exchange(req, max)
            .map_err(|e| Error::Unanswered {
                call,
                text: crate::text::one_line(&e.without_url().to_string()),
            })?;
        let retry_after = crate::webhook::retry_after(&resp.headers, self.now);
        let json: Value = serde_json::from_str(&resp.text).unwrap_or(Value::Null);
        if (200..300).contains(&resp.status) {
            return Ok(json);
        }
        Err(refusal(call, resp.status, &json, &resp.text, retry_after))
    }

    /// A password login as `device_id`; the access token.
    pub fn login(&self, cfg: &MatrixConfig) -> Result<String, Error> {
        let body = json!({
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": cfg.user},
            "password": cfg.password,
            "device_id": cfg.device_id,
            "initial_device_display_name": "digestd",
        });
        let v = self.call(Call::Login, reqwest::Method::POST, &["login"], None, &body)?;
        string(&v, "access_token", Call::Login)
    }

    /// A private room with no one invited yet (the person is invited by
    /// [`Homeserver::invite`] once the room is recorded), under the alias
    /// `#{alias}:{server}` when `alias` (a localpart) is given; its id.
    /// The alias is set as the room's canonical alias by no one: an empty
    /// `m.room.canonical_alias` in the initial state keeps the homeserver
    /// from adding it, so the person's client names the room after the
    /// account, as any direct chat.
    pub fn create_room(&self, token: &str, alias: Option<&str>) -> Result<String, Error> {
        let body = match alias {
            None => json!({"preset": "private_chat"}),
            Some(a) => json!({
                "preset": "private_chat",
                "room_alias_name": a,
                "initial_state": [
                    {"type": "m.room.canonical_alias", "state_key": "", "content": {}}
                ],
            }),
        };
        let v = self.call(
            Call::CreateRoom,
            reqwest::Method::POST,
            &["createRoom"],
            Some(token),
            &body,
        )?;
        room_id(&v, Call::CreateRoom)
    }

    /// The room `alias` (`#local:server`) names (`GET
    /// …/directory/room/{roomAlias}`); its `servers` are not used.
    pub(crate) fn resolve_alias(&self, token: &str, alias: &str) -> Result<String, Error> {
        let v = self.call(
            Call::ResolveAlias,
            reqwest::Method::GET,
            &["directory", "room", alias],
            Some(token),
            &Value::Null,
        )?;
        room_id(&v, Call::ResolveAlias)
    }

    /// Invites `user` to `room` as a direct chat: the member event carries
    /// `is_direct`, which the person's client reads to show it as one (the
    /// `/invite` endpoint takes no such flag).
    pub fn invite(&self, token: &str, room: &str, user: &str) -> Result<(), Error> {
        self.call(
            Call::Invite,
            reqwest::Method::PUT,
            &["rooms", room, "state", "m.room.member", user],
            Some(token),
            &json!({"membership": "invite", "is_direct": true}),
        )
        .map(|_| ())
    }

    /// The account data `kind` of `user` (the service account), `None`
    /// when it has none (404 `M_NOT_FOUND`).
    pub fn account_data(
        &self,
        token: &str,
        user: &str,
        kind: &str,
    ) -> Result<Option<Value>, Error> {
        let got = self.call(
            Call::AccountData,
            reqwest::Method::GET,
            &["user", user, "account_data", kind],
            Some(token),
            &Value::Null,
        );
        match got {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the account data `kind` of `user` with `content`.
    pub fn put_account_data(
        &self,
        token: &str,
        user: &str,
        kind: &str,
        content: &Value,
    ) -> Result<(), Error> {
        self.call(
            Call::AccountData,
            reqwest::Method::PUT,
            &["user", user, "account_data", kind],
            Some(token),
            content,
        )
        .map(|_| ())
    }

    /// Joins `room` (a room ID given as an address: the person invited
    /// the service account); joining a room it is in already is a no-op.
    pub fn join(&self, token: &str, room: &str) -> Result<(), Error> {
        self.call(
            Call::Join,
            reqwest::Method::POST,
            &["join", room],
            Some(token),
            &json!({}),
        )
        .map(|_| ())
    }

    /// `user`'s membership of `room` (`join`, `invite`, `leave`, `ban`),
    /// `None` when the room has none for them.
    pub fn membership(&self, token: &str, room: &str, user: &str) -> Result<Option<String>, Error> {
        let got = self.call(
            Call::Membership,
            reqwest::Method::GET,
            &["rooms", room, "state", "m.room.member", user],
            Some(token),
            &Value::Null,
        );
        match got {
            Ok(v) => Ok(v["membership"].as_str().map(str::to_string)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends `content` to `room` as transaction `txn`; the event's id.
    pub fn send(
        &self,
        token: &str,
        room: &str,
        txn: &str,
        content: &Value,
    ) -> Result<String, Error> {
        let v = self.call(
            Call::Send,
            reqwest::Method::PUT,
            &["rooms", room, "send", "m.room.message", txn],
            Some(token),
            content,
        )?;
        string(&v, "event_id", Call::Send)
    }
}

/// The answer's `room_id`, when it is one (the spec's grammar, checked as
/// an address is): it goes into URLs, the queue's columns and log lines.
pub(crate) fn room_id(v: &Value, call: Call) -> Result<String, Error> {
    let id = string(v, "room_id", call)?;
    match crate::validate::matrix_id(&id) {
        Ok(_) if crate::validate::is_matrix_room(&id) => Ok(id),
        Ok(_) => Err(Error::NotARoom {
            call,
            why: "a user ID".into(),
        }),
        Err(e) => Err(Error::NotARoom {
            call,
            why: e.to_string(),
        }),
    }
}

fn string(v: &Value, key: &str, call: Call) -> Result<String, Error> {
    v[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Error::Incomplete {
            call,
            key: key.to_string(),
        })
}

/// A refusal as [`Error::Refused`], which says what it means for the
/// queue: 429 waits `retry_after_ms` (or `Retry-After`); 5xx, and 401 (a
/// token that expired, a login to make again), are transient;
/// `M_FORBIDDEN` on a send, a join or a look at the room's members is
/// permanent with [`FORBIDDEN`], so the contact point is disabled; any
/// other 3xx or 4xx is permanent (a refused login, room creation,
/// invitation or account data is the settings' to fix: no contact point
/// is disabled for it).
pub fn refusal(
    call: Call,
    status: u16,
    json: &Value,
    answer: &str,
    retry_after: Option<u64>,
) -> Error {
    let errcode = json["errcode"].as_str().unwrap_or("");
    let error = json["error"].as_str().unwrap_or(answer);
    let said: String = crate::text::one_line(&format!("{errcode} {error}"))
        .trim()
        .chars()
        .take(300)
        .collect();
    let retry_after_secs = match status {
        429 => json["retry_after_ms"]
            .as_u64()
            .map(|ms| ms.div_ceil(1000))
            .or(retry_after),
        _ => retry_after,
    };
    Error::Refused(Refusal {
        call,
        status,
        errcode: errcode.to_string(),
        said,
        retry_after_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listener::DeliveryError;

    fn refusal(
        call: Call,
        status: u16,
        json: &Value,
        answer: &str,
        retry_after: Option<u64>,
    ) -> DeliveryError {
        DeliveryError::from(super::refusal(call, status, json, answer, retry_after))
    }

    #[test]
    fn a_room_id_answered_is_checked_before_it_is_used() {
        for good in ["!abc:example.org", "!abc", "!a:[::1]:8448"] {
            let v = json!({ "room_id": good, "servers": ["example.org"] });
            assert_eq!(room_id(&v, Call::ResolveAlias).as_deref(), Ok(good));
        }
        // Not JSON (the call reads it as null), no room_id, not a string.
        for v in [
            Value::Null,
            json!({}),
            json!({"room_id": 5}),
            json!(["!a:x"]),
        ] {
            assert!(
                matches!(
                    room_id(&v, Call::ResolveAlias),
                    Err(Error::Incomplete {
                        call: Call::ResolveAlias,
                        ..
                    })
                ),
                "{v}"
            );
        }
        let long = format!("!{}:example.org", "a".repeat(300));
        for bad in [
            "",
            "!",
            "@alice:example.org",
            "#alias:example.org",
            "!a:example.org\r\nX-Injected: 1",
            "!a\u{1b}[2J:example.org",
            "!a\u{202e}:example.org",
            "!a b:example.org",
            "!a:exa mple.org",
            "!a:example.org:99999",
            "!\u{fffd}:example.org",
            long.as_str(),
        ] {
            let got = room_id(&json!({ "room_id": bad }), Call::CreateRoom);
            let Err(e @ Error::NotARoom { .. }) = got else {
                panic!("{bad:?}: {got:?}");
            };
            assert!(e.is_transient(), "{e}");
            let (DeliveryError::Transient { text, .. } | DeliveryError::Permanent { text, .. }) =
                DeliveryError::from(e);
            assert!(!text.contains(['\r', '\n', '\u{1b}', '\u{202e}']), "{text}");
            assert!(text.len() < 400, "{text}");
        }
    }

    #[test]
    fn refusals_say_whether_to_retry_and_only_a_send_forbidden_disables() {
        let limited = json!({"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": 2500});
        match refusal(Call::Send, 429, &limited, "", None) {
            DeliveryError::Transient {
                code: Some(429),
                retry_after_secs: Some(3),
                ..
            } => {}
            other => panic!("{other:?}"),
        }
        match refusal(Call::Send, 429, &json!({}), "", Some(7)) {
            DeliveryError::Transient {
                retry_after_secs: Some(7),
                ..
            } => {}
            other => panic!("{other:?}"),
        }
        let forbidden = json!({"errcode": "M_FORBIDDEN", "error": "not in room\r\nX: y"});
        match refusal(Call::Send, 403, &forbidden, "", None) {
            DeliveryError::Permanent {
                code: Some(FORBIDDEN),
                text,
            } => assert!(!text.contains('\n'), "{text}"),
            other => panic!("{other:?}"),
        }
        for call in [Call::CreateRoom, Call::Invite, Call::AccountData] {
            assert!(matches!(
                refusal(call, 403, &forbidden, "", None),
                DeliveryError::Permanent { code: None, .. }
            ));
        }
        assert!(matches!(
            refusal(Call::Send, 502, &Value::Null, "<html>", None),
            DeliveryError::Transient {
                code: Some(502),
                ..
            }
        ));
        assert!(matches!(
            refusal(Call::Send, 400, &json!({"errcode": "M_BAD_JSON"}), "", None),
            DeliveryError::Permanent {
                code: Some(400),
                ..
            }
        ));
        assert!(matches!(
            refusal(Call::Send, 302, &Value::Null, "", None),
            DeliveryError::Permanent {
                code: Some(302),
                ..
            }
        ));
    }
}
