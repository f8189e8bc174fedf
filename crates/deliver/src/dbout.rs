//! The `db` email transport: each message becomes a row of an SQLite file
//! (`[email] db_path`) that an external relay drains — reads a row, hands
//! the message to its MTA, deletes the row. digestd only ever inserts.
//!
//! ```sql
//! CREATE TABLE outbox (
//!     id            INTEGER PRIMARY KEY AUTOINCREMENT, -- drain in this order
//!     key           TEXT NOT NULL UNIQUE,  -- first request and recipient
//!     envelope_from TEXT NOT NULL,
//!     recipient     TEXT NOT NULL,
//!     message       BLOB NOT NULL          -- RFC 5322, CRLF line ends
//! );
//! ```
//!
//! A batch is written in one transaction: it is in the file whole or not
//! at all. The key is the one the `dir` transport names its file after, so
//! a pass killed between the commit here and the queue's status update
//! replaces the same row on its retry instead of adding a second; once a
//! relay has taken the row, the retry adds it again — at least once, as
//! with SMTP after a crash between `250` and the status update. The file
//! is in WAL mode, so the relay reads while digestd writes.

use std::path::Path;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{Binary, Text};
use diesel::sqlite::SqliteConnection;

use super::listener::{DeliveryError, Outgoing};
use super::sink::Outcome;
use crate::error::Result;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    envelope_from TEXT NOT NULL,
    recipient TEXT NOT NULL,
    message BLOB NOT NULL
);";

pub struct DbOutbox {
    conn: SqliteConnection,
}

/// Checks `email.db_path` without opening it.
pub(crate) fn check_path(path: &str) -> Result<()> {
    if path.trim().is_empty() || path.chars().any(char::is_control) {
        return Err(crate::error::Error::invalid(
            "config: email.db_path: a file path, without control characters",
        ));
    }
    Ok(())
}

impl DbOutbox {
    pub fn open(path: &str) -> Result<DbOutbox> {
        check_path(path)?;
        if let Some(dir) = Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| crate::error::Error::Storage(format!("outbox db {path}: {e}")))?;
        }
        let mut conn = SqliteConnection::establish(path)
            .map_err(|e| crate::error::Error::Storage(format!("outbox db {path}: {e}")))?;
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; {SCHEMA}"
        ))
        .map_err(|e| crate::error::Error::Storage(format!("outbox db {path}: {e}")))?;
        Ok(DbOutbox { conn })
    }

    /// Inserts the batch in one transaction; on failure none of it is
    /// there and every message is worth another attempt.
    pub(crate) fn send_all(&mut self, msgs: &[Outgoing]) -> Vec<Outcome> {
        let r = self.conn.transaction(|c| {
            for m in msgs {
                let key = m
                    .file
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| m.file.display().to_string());
                diesel::sql_query(
                    "INSERT INTO outbox (key, envelope_from, recipient, message) VALUES (?, ?, ?, ?) \
                     ON CONFLICT (key) DO UPDATE SET envelope_from = excluded.envelope_from, \
                     recipient = excluded.recipient, message = excluded.message",
                )
                .bind::<Text, _>(&key)
                .bind::<Text, _>(&m.envelope_from)
                .bind::<Text, _>(&m.to)
                .bind::<Binary, _>(&m.bytes)
                .execute(c)?;
            }
            diesel::QueryResult::Ok(())
        });
        match r {
            Ok(()) => msgs
                .iter()
                .map(|_| Outcome::sent(None, "queued in the outbox db"))
                .collect(),
            Err(e) => {
                let failed = Outcome::from(DeliveryError::from(Error::Insert(e)));
                msgs.iter().map(|_| failed.clone()).collect()
            }
        }
    }
}

/// Why a batch is not in the outbox file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The transaction failed (the file locked past the busy timeout, a
    /// full disk, a file that is not SQLite): none of the batch is there.
    #[error("outbox db: {0}")]
    Insert(diesel::result::Error),
}

impl From<Error> for DeliveryError {
    fn from(e: Error) -> DeliveryError {
        // Transient: a lock is released, a disk is freed; nothing about
        // the message itself is wrong.
        let transient = match &e {
            Error::Insert(_) => true,
        };
        DeliveryError::verdict(transient, None, &e.to_string(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(key: &str, to: &str, body: &str) -> Outgoing {
        Outgoing {
            envelope_from: "digestd@localhost".into(),
            to: to.into(),
            bytes: body.as_bytes().to_vec(),
            file: std::path::PathBuf::from("outbox").join(key),
            signing: None,
            matrix: None,
        }
    }

    #[derive(QueryableByName, Debug, PartialEq)]
    struct Row {
        #[diesel(sql_type = Text)]
        key: String,
        #[diesel(sql_type = Text)]
        recipient: String,
        #[diesel(sql_type = Binary)]
        message: Vec<u8>,
    }

    fn rows(path: &str) -> Vec<Row> {
        let mut c = SqliteConnection::establish(path).unwrap();
        diesel::sql_query("SELECT key, recipient, message FROM outbox ORDER BY id")
            .load(&mut c)
            .unwrap()
    }

    #[test]
    fn a_batch_lands_whole_and_a_retry_replaces_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/outbox.db").display().to_string();
        let mut o = DbOutbox::open(&path).unwrap();
        let out = o.send_all(&[
            msg("00000001-ann.eml", "ann@example.com", "one"),
            msg("00000002-bob.eml", "bob@example.com", "two"),
        ]);
        assert!(out.iter().all(|o| matches!(o, Outcome::Sent { .. })));
        // The same message again (a retry after a crash): still one row.
        o.send_all(&[msg("00000001-ann.eml", "ann@example.com", "one")]);
        let got = rows(&path);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].key, "00000001-ann.eml");
        assert_eq!(got[1].recipient, "bob@example.com");
        assert_eq!(got[1].message, b"two");
        // A relay drains a row; digestd opened again keeps the rest.
        let mut relay = SqliteConnection::establish(&path).unwrap();
        relay
            .batch_execute("DELETE FROM outbox WHERE key = '00000001-ann.eml'")
            .unwrap();
        drop(o);
        let mut o = DbOutbox::open(&path).unwrap();
        o.send_all(&[msg("00000003-cy.eml", "cy@example.com", "three")]);
        let keys: Vec<String> = rows(&path).into_iter().map(|r| r.key).collect();
        assert_eq!(keys, ["00000002-bob.eml", "00000003-cy.eml"]);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_a_transient_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outbox.db").display().to_string();
        let mut o = DbOutbox::open(&path).unwrap();
        // Another process holds the write lock past the busy timeout.
        let mut other = SqliteConnection::establish(&path).unwrap();
        other
            .batch_execute("PRAGMA busy_timeout = 0; BEGIN IMMEDIATE;")
            .unwrap();
        o.conn.batch_execute("PRAGMA busy_timeout = 50").unwrap();
        let out = o.send_all(&[msg("k.eml", "ann@example.com", "x")]);
        assert!(matches!(out[0], Outcome::Transient { .. }), "{out:?}");
        other.batch_execute("ROLLBACK").unwrap();
        let out = o.send_all(&[msg("k.eml", "ann@example.com", "x")]);
        assert!(matches!(out[0], Outcome::Sent { .. }), "{out:?}");
    }

    #[test]
    fn a_failed_insert_is_transient_and_one_line() {
        use diesel::result::{DatabaseErrorKind, Error as Db};
        let cases = [
            Db::NotFound,
            Db::DatabaseError(
                DatabaseErrorKind::Unknown,
                Box::new("database is locked\r\nX-Injected: 1".to_string()),
            ),
            Db::DatabaseError(DatabaseErrorKind::Unknown, Box::new(String::new())),
        ];
        for db in cases {
            match DeliveryError::from(Error::Insert(db)) {
                DeliveryError::Transient {
                    code: None,
                    text,
                    retry_after_secs: None,
                } => {
                    assert!(text.starts_with("outbox db: "), "{text}");
                    assert!(!text.contains(['\r', '\n']), "{text}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn hostile_paths_are_refused() {
        for p in ["", "  ", "out\nbox.db", "a\u{0}b"] {
            assert!(check_path(p).is_err(), "{p:?}");
        }
    }
}
