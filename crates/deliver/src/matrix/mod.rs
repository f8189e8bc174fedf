//! The Matrix listener: digestd's service account (`[matrix]`) sends each
//! message as an `m.room.message` (`m.text`, plain text and HTML from the
//! digest's JSON document: [`body`]) over the client-server API
//! ([`client`]). An address is a user ID or a room ID. For a user ID the
//! first delivery finds the direct room in the service account's record
//! of that person ([`direct`]) or opens it under the person's alias
//! ([`alias`]: `createRoom` with no one in it, or the room another
//! process created under the same alias), records it there and in
//! `m.direct`, then invites the user with `is_direct`; the queue keeps it
//! on the contact point ([`Listener::opened_rooms`]) for the next ones. A
//! room ID is joined once per process (the person invited the account).
//!
//! Each message is a transaction whose id comes from the queue row (the
//! first request and the recipient), the same on every attempt: a message
//! sent again after a crash is the same event, which the homeserver keeps
//! once. 429 waits `retry_after_ms`; 5xx and no answer are transient;
//! `M_FORBIDDEN`, and a person who left (or was banned from) the kept
//! room (their membership is looked at once per process), are permanent
//! and disable the contact point; any other refusal is permanent. What
//! went wrong is an [`Error`], which decides. With `[matrix] transport = "dir"` (the default)
//! what would be sent is written under the outbox's `matrix/` instead.

pub mod alias;
pub mod body;
pub mod client;
pub mod direct;
mod error;

pub use error::{Error, Refusal};

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::listener::{Delivered, DeliveryError, Listener, MatrixRoute, Outgoing};
use super::outbox::Outbox;
use crate::config::{EmailConfig, MatrixConfig, MatrixTransport};
use crate::error::Result;
use crate::parties::Channel;
use crate::validate;
use client::Homeserver;
pub use client::FORBIDDEN;

/// Checks `[matrix]` without connecting: the homeserver, the account and
/// a credential are needed to send.
pub fn check(c: &MatrixConfig) -> Result<()> {
    let bad = |why: String| crate::error::Error::invalid(format!("config: matrix.{why}"));
    if !(1..=600).contains(&c.timeout_seconds) {
        return Err(bad("timeout_seconds must be 1-600".into()));
    }
    for (name, v) in [
        ("access_token", &c.access_token),
        ("device_id", &c.device_id),
    ] {
        if v.chars().any(|ch| !ch.is_ascii_graphic()) {
            return Err(bad(format!("{name}: printable ASCII only")));
        }
    }
    if c.password.chars().any(char::is_control) {
        return Err(bad("password: no control characters".into()));
    }
    if c.transport == MatrixTransport::Dir {
        return Ok(());
    }
    validate::homeserver_url(&c.homeserver, c.allow_http).map_err(|e| bad(e.to_string()))?;
    let user = validate::matrix_id(&c.user).map_err(|e| bad(format!("user: {e}")))?;
    if validate::is_matrix_room(&user) {
        return Err(bad(
            "user: the service account's user ID (@name:server)".into()
        ));
    }
    if c.access_token.is_empty() && c.password.is_empty() {
        return Err(bad(
            "access_token: required with transport \"matrix\" (or password, to log in)".into(),
        ));
    }
    if c.device_id.is_empty() {
        return Err(bad("device_id: must not be empty".into()));
    }
    Ok(())
}

pub struct MatrixListener {
    cfg: MatrixConfig,
    /// `Some` with the `dir` transport.
    outbox: Option<Outbox>,
    /// Opened at the first send.
    server: Option<Homeserver>,
    token: Option<String>,
    /// The rooms this listener opened or joined, by address: a second
    /// message to the same person in the same pass (another sender's)
    /// goes to the same room before the queue has kept it.
    rooms: HashMap<String, String>,
    /// The rooms opened or found recorded and not yet handed to the
    /// queue.
    opened: Vec<(String, String)>,
    /// Direct rooms created whose record failed, by address: recorded
    /// before the person is invited.
    unrecorded: HashMap<String, String>,
    /// The direct rooms' aliases, from the installation's key
    /// ([`Listener::site_key`]); `None` before it is given, or once the
    /// homeserver refused an alias (`no_alias`).
    names: Option<alias::Namer>,
    no_alias: bool,
    /// The pass's instant, for a `Retry-After` given as a date.
    now: Option<DateTime<Utc>>,
    /// The process's runtime, which the session's client runs on.
    rt: tokio::runtime::Handle,
}

impl MatrixListener {
    /// The listener `[matrix] transport` names, on the runtime `rt`;
    /// `email` gives the outbox for `dir`.
    pub fn new(
        cfg: &MatrixConfig,
        email: &EmailConfig,
        rt: &tokio::runtime::Handle,
    ) -> Result<MatrixListener> {
        check(cfg)?;
        Ok(MatrixListener {
            cfg: cfg.clone(),
            outbox: match cfg.transport {
                MatrixTransport::Dir => Some(Outbox::new(email)?),
                MatrixTransport::Matrix => None,
            },
            server: None,
            token: None,
            rooms: HashMap::new(),
            opened: Vec::new(),
            unrecorded: HashMap::new(),
            names: None,
            no_alias: false,
            now: None,
            rt: rt.clone(),
        })
    }

    /// The session and its token: opened, and logged in with the
    /// password when no access token is set, at the first send.
    fn session(&mut self) -> std::result::Result<(&Homeserver, String), Error> {
        if self.server.is_none() {
            let base = validate::homeserver_url(&self.cfg.homeserver, self.cfg.allow_http)
                .map_err(|e| Error::Homeserver(e.to_string()))?;
            self.server = Some(Homeserver::new(&self.cfg, base, &self.rt)?);
        }
        if let Some(server) = self.server.as_mut() {
            server.now = self.now;
        }
        let server = self.server.as_ref().expect("opened above");
        if self.token.is_none() {
            self.token = Some(if self.cfg.access_token.is_empty() {
                server
                    .login(&self.cfg)
                    .map_err(|e| Error::Login(Box::new(e)))?
            } else {
                self.cfg.access_token.clone()
            });
        }
        Ok((server, self.token.clone().expect("set above")))
    }

    /// The room `m` goes to: the one this listener opened, the one the
    /// queue kept, a direct room found recorded, or a new one (a room ID
    /// address: joined).
    fn room(&mut self, m: &Outgoing, route: &MatrixRoute) -> std::result::Result<String, Error> {
        if let Some(r) = self.rooms.get(&m.to) {
            return Ok(r.clone());
        }
        if !validate::is_matrix_room(&m.to) {
            return self.direct_room(&m.to, route.room.as_deref());
        }
        let room = route.room.clone().unwrap_or_else(|| m.to.clone());
        if route.room.is_none() {
            let (server, token) = self.session()?;
            server.join(&token, &m.to)?;
        }
        self.rooms.insert(m.to.clone(), room.clone());
        Ok(room)
    }

    /// The direct room with `user`, the person invited to it when they
    /// are not yet. In order: the room the queue `kept` (while the person
    /// is still in it or invited: one who left or was banned is refused
    /// as `M_FORBIDDEN` is); one this listener created and could not yet
    /// record; the newest usable one recorded for the person; or the one
    /// under the person's alias ([`MatrixListener::open_room`]). A
    /// process that dies at any point leaves a room the next one finds,
    /// recorded or by its alias.
    fn direct_room(
        &mut self,
        user: &str,
        kept: Option<&str>,
    ) -> std::result::Result<String, Error> {
        let me = self.cfg.user.clone();
        let unrecorded = self.unrecorded.get(user).cloned();
        let token = self.session()?.1;
        let server = self.server.as_ref().expect("opened by session");
        let (room, theirs) = if let Some(r) = kept {
            let theirs = server.membership(&token, r, user)?;
            if let Some(gone) = theirs
                .as_deref()
                .filter(|t| !direct::still_theirs(Some(*t)))
            {
                return Err(Error::Left {
                    user: user.to_string(),
                    room: r.to_string(),
                    membership: gone.to_string(),
                });
            }
            (r.to_string(), theirs)
        } else if let Some(r) = unrecorded {
            direct::record(server, &token, &me, user, &r)?;
            self.unrecorded.remove(user);
            (r, None)
        } else if let Some(found) = direct::find(server, &token, &me, user)? {
            self.opened.push((user.to_string(), found.0.clone()));
            found
        } else {
            self.open_room(&token, user)?
        };
        let server = self.server.as_ref().expect("opened by session");
        if theirs.is_none() {
            direct::invite(server, &token, &room, user)?;
        }
        self.rooms.insert(user.to_string(), room.clone());
        Ok(room)
    }

    /// The room for `user` when none is kept nor recorded, recorded now,
    /// with the person's membership: the one under the person's alias,
    /// created now or by another process; without an alias (none known,
    /// refused by the homeserver, every name used up), a new one, as two
    /// processes may each open.
    fn open_room(
        &mut self,
        token: &str,
        user: &str,
    ) -> std::result::Result<(String, Option<String>), Error> {
        let me = self.cfg.user.clone();
        let server = self.server.as_ref().expect("opened by session");
        let walked = match &self.names {
            Some(names) => Some(alias::open(server, token, names, user)?),
            None => None,
        };
        let room = match walked {
            Some(alias::Opened::Found(room, theirs)) => {
                self.opened.push((user.to_string(), room.clone()));
                direct::record(server, token, &me, user, &room)?;
                return Ok((room, theirs));
            }
            Some(alias::Opened::Created(room)) => room,
            Some(alias::Opened::Refused(e)) => {
                let room = server.create_room(token, None)?;
                tracing::warn!(
                    user = me.as_str(),
                    "matrix: the homeserver refuses the direct rooms' aliases ({}): rooms \
                     are opened without one, and two processes opening a person's first \
                     room at once may each open one",
                    crate::validate::escape_for_line(&e.to_string())
                );
                self.names = None;
                self.no_alias = true;
                room
            }
            Some(alias::Opened::Exhausted) => {
                tracing::warn!(
                    user,
                    "matrix: every alias of the person's direct room holds a room they left: \
                     one is opened without an alias"
                );
                server.create_room(token, None)?
            }
            None => server.create_room(token, None)?,
        };
        // Kept by the queue with this row's outcome, whatever follows.
        self.opened.push((user.to_string(), room.clone()));
        self.unrecorded.insert(user.to_string(), room.clone());
        direct::record(server, token, &me, user, &room)?;
        self.unrecorded.remove(user);
        Ok((room, None))
    }

    fn write(
        &self,
        outbox: &Outbox,
        m: &Outgoing,
        route: &MatrixRoute,
        content: &serde_json::Value,
    ) -> std::result::Result<Delivered, DeliveryError> {
        let room = match (&route.room, validate::is_matrix_room(&m.to)) {
            (Some(r), _) => r.clone(),
            (None, true) => m.to.clone(),
            (None, false) => "(a direct room, opened at the first send)".into(),
        };
        let text = format!(
            "To: {}\nRoom: {room}\nTransaction: {}\n\n{:#}\n",
            m.to, route.txn_id, content
        );
        outbox.deliver(&m.file, text.as_bytes())
    }
}

impl Listener for MatrixListener {
    fn key(&self) -> Channel {
        Channel::Matrix
    }

    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        let route = m.matrix.clone().ok_or(Error::NoTransaction)?;
        validate::matrix_id(&m.to).map_err(|e| Error::Address(e.to_string()))?;
        let content = body::content(&m.bytes).map_err(Error::Body)?;
        if let Some(outbox) = &self.outbox {
            return self.write(outbox, m, &route, &content);
        }
        let room = self.room(m, &route)?;
        let (server, token) = self.session()?;
        let sent = server.send(&token, &room, &route.txn_id, &content);
        if let Err(e) = &sent {
            // An expired token: log in again at the next attempt.
            if e.status() == Some(401) && !self.cfg.password.is_empty() {
                self.token = None;
            }
        }
        let event = sent?;
        Ok(Delivered {
            code: Some(200),
            text: format!("sent to {room}"),
            remote_id: Some(event),
        })
    }

    fn pass_at(&mut self, now: DateTime<Utc>) {
        self.now = Some(now);
    }

    fn site_key(&mut self, key: &crate::msgid::MessageKey) {
        if self.names.is_none() && !self.no_alias {
            self.names = alias::Namer::new(key.derived(alias::PURPOSE), &self.cfg.user);
        }
    }

    fn opened_rooms(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.opened)
    }
}

/// `digestd test-alert --channel matrix --to NAME`: one notification,
/// now, to the Matrix contact point of the user or group `NAME` (its kept
/// room, or a direct room opened and kept now), sent with `[matrix]
/// transport = "matrix"` or written under the outbox's `matrix/`.
pub fn test_alert(
    conn: &mut crate::db::DbConn,
    cfg: &MatrixConfig,
    email: &EmailConfig,
    rt: &tokio::runtime::Handle,
    party: &str,
    now: DateTime<Utc>,
) -> Result<(String, crate::sink::Outcome)> {
    let (id, _) = crate::parties::find(conn, party)?;
    let point = crate::parties::matrix_rooms(conn, &[id.0])?
        .into_iter()
        .next()
        .ok_or_else(|| crate::error::Error::not_found(format!("{party} has no matrix address")))?;
    let ((_, address), room) = point;
    let mut l = MatrixListener::new(cfg, email, rt)?;
    l.site_key(&crate::msgid::MessageKey::load(conn)?);
    let doc = crate::webhook::body::notification(
        0,
        "digestd test alert",
        &format!("digestd test alert, {}", now.format("%Y-%m-%d %H:%M UTC")),
        now.naive_utc(),
    );
    let file = std::path::Path::new(&email.dir)
        .join("matrix")
        .join(format!("test-alert-{}.txt", now.timestamp_micros()));
    let mut m = Outgoing::text(&address, &doc.to_string(), file);
    m.matrix = Some(MatrixRoute {
        txn_id: format!("digestd_test_{}", now.timestamp_micros()),
        room,
    });
    let outcome = crate::sink::Outcome::from(l.send_raw(&m));
    let opened = l.opened_rooms();
    if !opened.is_empty() {
        conn.write_tx(|c| crate::parties::keep_matrix_rooms_in_tx(c, &opened))?;
    }
    Ok((address, outcome))
}
