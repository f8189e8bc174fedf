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
use crate::error::Result;
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

    /// [`Outbox::write`] as a listener's result.
    pub fn deliver(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> std::result::Result<Delivered, DeliveryError> {
        self.write(path, bytes)?;
        Ok(Delivered {
            code: None,
            text: format!("written to {}", path.display()),
            remote_id: None,
        })
    }

    /// Writes `bytes` to `path` through a temporary file and a rename.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> std::result::Result<(), Error> {
        let io = |source: std::io::Error| Error {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("tmp");
        fs::write(&tmp, bytes).map_err(io)?;
        fs::rename(&tmp, path).map_err(io)
    }
}

/// Why a file of the outbox was not written: making its directory,
/// writing the temporary file or renaming it failed. Always transient: a
/// full disk or a directory's permissions may be mended, and the message
/// is kept for a retry. (The text is the one the queue has always shown,
/// `storage: outbox PATH: …`.)
#[derive(Debug, thiserror::Error)]
#[error("storage: outbox {}: {source}", path.display())]
pub struct Error {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        // A path holds no control characters (`email.dir` is checked, a
        // file is named after ids); escaped all the same, as a line.
        DeliveryError::verdict(true, None, &e.to_string(), None)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_body_not_utf8_is_given_up_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = OutboxListener {
            key: Channel::Sms,
            outbox: Outbox {
                root: dir.path().to_path_buf(),
            },
        };
        let file = dir.path().join("sms").join("00000001-ann.txt");
        let m = Outgoing {
            bytes: b"ok \xff".to_vec(),
            ..Outgoing::text("+15550100", "", file.clone())
        };
        assert_eq!(
            l.send_raw(&m),
            Err(DeliveryError::Permanent {
                code: None,
                text: "body is not UTF-8 (at byte 3)".into()
            })
        );
        assert!(!file.exists());
    }

    #[test]
    fn a_file_that_cannot_be_written_is_transient_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        // The outbox's directory is a file: nothing can be made under it.
        let blocked = dir.path().join("blocked");
        fs::write(&blocked, b"").unwrap();
        let o = Outbox {
            root: blocked.clone(),
        };
        let path = blocked.join("xmpp").join("00000001-ann.txt");
        let e = o.write(&path, b"hi").unwrap_err();
        match DeliveryError::from(e) {
            DeliveryError::Transient {
                code: None,
                text,
                retry_after_secs: None,
            } => assert!(
                text.starts_with(&format!("storage: outbox {}: ", path.display())),
                "{text}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            o.deliver(&path, b"hi"),
            Err(DeliveryError::Transient { .. })
        ));
    }

    #[test]
    fn a_hostile_path_is_one_escaped_line() {
        let e = Error {
            path: PathBuf::from("out\r\nX-Injected: 1/\u{202e}f.eml"),
            source: std::io::Error::other("disk full\nsecond line"),
        };
        let DeliveryError::Transient { text, .. } = DeliveryError::from(e) else {
            panic!("transient")
        };
        assert!(!text.contains(['\r', '\n', '\u{202e}']), "{text}");
        assert!(text.contains("disk full"), "{text}");
    }
}
