//! The `dir` outbox, the embedded default: each email an `.eml` file (RFC
//! 5322, CRLF, valid MIME), XMPP and SMS bodies as text files in `xmpp/`
//! and `sms/` (webhook messages, signed, in `webhook/`: `deliver::webhook`) (the [`OutboxListener`] of a push channel whose transport is
//! `dir`).
//!
//! Files are named after (first request, recipient) and written to a
//! temporary name, then renamed: a pass killed between writing and marking
//! the rows rewrites the same file with the same bytes, never a second copy.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use diesel::prelude::*;

use super::listener::{Delivered, DeliveryError, Listener, Outgoing};
use crate::config::EmailConfig;
use crate::db::schema::{nt_queue, parties};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::parties::Channel;

/// Where each channel's messages go.
#[derive(Debug, Clone)]
pub struct Outbox {
    root: PathBuf,
}

impl Outbox {
    pub fn new(cfg: &EmailConfig) -> Result<Outbox> {
        Ok(Outbox {
            root: PathBuf::from(&cfg.dir),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file a message to `party` starting with `request` on `channel`
    /// goes to.
    pub fn path(&self, request: i64, party: &str, channel: Channel) -> PathBuf {
        let name = format!("{request:08}-{party}");
        match channel {
            Channel::Email => self.root.join(format!("{name}.eml")),
            Channel::Xmpp => self.root.join("xmpp").join(format!("{name}.txt")),
            Channel::Sms => self.root.join("sms").join(format!("{name}.txt")),
            Channel::Matrix => self.root.join("matrix").join(format!("{name}.txt")),
            // The webhook and its presets: what would be posted.
            url => self.root.join(url.as_str()).join(format!("{name}.http")),
        }
    }

    /// [`Outbox::write`] as a listener's result: a write that failed is
    /// transient (a full disk may clear; the message is kept for a retry).
    pub fn deliver(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> std::result::Result<Delivered, DeliveryError> {
        match self.write(path, bytes) {
            Ok(()) => Ok(Delivered {
                code: None,
                text: format!("written to {}", path.display()),
                remote_id: None,
            }),
            Err(e) => Err(DeliveryError::Transient {
                code: None,
                text: e.to_string(),
                retry_after_secs: None,
            }),
        }
    }

    /// Writes `bytes` to `path` through a temporary file and a rename.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let io = |e: std::io::Error| Error::Storage(format!("outbox {}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("tmp");
        fs::write(&tmp, bytes).map_err(io)?;
        fs::rename(&tmp, path).map_err(io)
    }
}

/// Queue rows delivered, per (recipient name, channel).
pub fn delivered(conn: &mut DbConn) -> Result<BTreeMap<(String, String), i64>> {
    let rows: Vec<(String, String)> = nt_queue::table
        .inner_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::is_successful.eq(true))
        .select((parties::name, nt_queue::channel))
        .load(conn)?;
    let mut out = BTreeMap::new();
    for k in rows {
        *out.entry(k).or_default() += 1;
    }
    Ok(out)
}

/// The listener of a push channel with no server configured: each body is
/// written to its file under the outbox, with a `To:` line (and for XMPP
/// `Type: chat`) above it. Nothing is sent.
pub struct OutboxListener {
    key: Channel,
    outbox: Outbox,
}

impl OutboxListener {
    pub fn new(channel: Channel, cfg: &EmailConfig) -> Result<OutboxListener> {
        Ok(OutboxListener {
            key: channel,
            outbox: Outbox::new(cfg)?,
        })
    }
}

impl Listener for OutboxListener {
    fn key(&self) -> Channel {
        self.key
    }

    fn send_raw(&mut self, m: &Outgoing) -> std::result::Result<Delivered, DeliveryError> {
        let body = m.body()?;
        let text = if self.key == Channel::Xmpp {
            format!("To: {}\nType: chat\n\n{body}", m.to)
        } else {
            format!("To: {}\n\n{body}\n", m.to)
        };
        self.outbox.deliver(&m.file, text.as_bytes())
    }
}
