//! The error policy, written once.
//!
//! - Library functions return [`Result<T>`] with this [`Error`]: a `thiserror`
//!   enum whose variant says what the caller should do. `Invalid`,
//!   `NotFound` and `Conflict` are the caller's fault (bad input): the CLI
//!   exits with code 2 and HTTP answers 4xx with a JSON body, and nothing has
//!   been written, because every operation validates before it opens its
//!   write transaction. `Storage` and `Io` are ours or the environment's:
//!   exit code 1 / HTTP 5xx. `Busy` is the database saying "not now" (a
//!   lock held past the wait, no free connection): nothing was written,
//!   and the same request later may succeed (exit code 1 / HTTP 503 with
//!   `Retry-After`).
//! - The binary has no error type of its own: `cli::main` prints the error
//!   as one line (`digestd: …`) and `main.rs` exits with its
//!   [`Error::exit_code`].
//! - Delivery errors (retry or not) get their own type in the delivery layer;
//!   they are never folded into strings.

use thiserror::Error;

/// Library result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum Error {
    /// Input that can never be accepted as it is (bad timezone, address, …):
    /// its one line, and, when a field's own check refused it, the kind of
    /// refusal a page says in the reader's language.
    #[error("{0}")]
    Invalid(digestd_core::Invalid),
    /// A named thing (user, group, collection, …) does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The input clashes with what is stored (duplicate name, group cycle, …).
    #[error("{0}")]
    Conflict(String),
    /// The database failed or could not be reached.
    #[error("storage: {0}")]
    Storage(String),
    /// The database is busy: a lock held past the wait (SQLite's busy
    /// timeout, PostgreSQL's lock timeout), a serialization failure, no
    /// free connection in the pool. Nothing was written; retry later.
    #[error("database busy: {0}")]
    Busy(String),
    /// A file or stream failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A server we deliver through (mail, XMPP, an SMS gateway) failed or
    /// refused for now: not our storage, not the caller's input.
    #[error("{0}")]
    Remote(String),
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(digestd_core::Invalid::new(msg))
    }
    pub fn not_found(msg: impl Into<String>) -> Self {
        Error::NotFound(msg.into())
    }
    pub fn conflict(msg: impl Into<String>) -> Self {
        Error::Conflict(msg.into())
    }

    /// True when the caller's input is at fault (CLI exit 2, HTTP 4xx).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::Invalid(_) | Error::NotFound(_) | Error::Conflict(_)
        )
    }

    /// Why a field's own check refused the input, as a kind a page says in
    /// the reader's language; `None` for any other error.
    pub fn refusal(&self) -> Option<&digestd_core::Refusal> {
        match self {
            Error::Invalid(e) => e.refusal(),
            _ => None,
        }
    }

    /// The process exit code the CLI uses for this error.
    pub fn exit_code(&self) -> i32 {
        if self.is_bad_input() {
            2
        } else {
            1
        }
    }
}

/// The core's validators refuse input with [`digestd_core::Invalid`]: the
/// caller's fault, as here.
impl From<digestd_core::Invalid> for Error {
    fn from(e: digestd_core::Invalid) -> Self {
        Error::Invalid(e)
    }
}

impl From<diesel::result::Error> for Error {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error as D};
        match e {
            D::NotFound => Error::NotFound("not found".into()),
            D::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                Error::Conflict(format!("already exists ({})", one_line(info.message())))
            }
            D::DatabaseError(kind, info) if is_busy(&kind, info.message()) => {
                Error::Busy(one_line(info.message()))
            }
            D::DatabaseError(_, info) => {
                let mut msg = one_line(info.message());
                for (label, part) in [("detail", info.details()), ("hint", info.hint())] {
                    if let Some(part) = part {
                        msg.push_str(&format!("; {label}: {}", one_line(part)));
                    }
                }
                Error::Storage(msg)
            }
            other => Error::Storage(one_line(&other.to_string())),
        }
    }
}

/// Whether the database refused for now rather than for good: SQLite's
/// `SQLITE_BUSY`/`SQLITE_LOCKED` ("database is locked", "database table
/// is locked"), PostgreSQL's serialization failures and lock timeouts.
fn is_busy(kind: &diesel::result::DatabaseErrorKind, message: &str) -> bool {
    use diesel::result::DatabaseErrorKind as K;
    matches!(kind, K::SerializationFailure)
        || message.starts_with("database is locked")
        || message.starts_with("database table is locked")
        || message.starts_with("canceling statement due to lock timeout")
}

/// A server's message on one line: PostgreSQL's span several (`DETAIL:`,
/// `HINT:`, a tab before the next), which a one-line error would show as
/// literal `\n`s.
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::result::{DatabaseErrorKind as K, Error as D};

    fn db(kind: K, message: &str) -> Error {
        D::DatabaseError(kind, Box::new(message.to_string())).into()
    }

    #[test]
    fn busy_databases_are_told_apart_from_failed_ones() {
        for (kind, message) in [
            (K::Unknown, "database is locked"),
            (K::Unknown, "database table is locked: subscriptions"),
            (K::SerializationFailure, "could not serialize access"),
            (K::Unknown, "canceling statement due to lock timeout"),
        ] {
            let e = db(kind, message);
            assert!(matches!(e, Error::Busy(_)), "{message}: {e:?}");
            assert_eq!(e.exit_code(), 1);
        }
        for message in [
            "no such table: users",
            "disk I/O error",
            "the database is locked up",
        ] {
            assert!(
                matches!(db(K::Unknown, message), Error::Storage(_)),
                "{message}"
            );
        }
        assert!(matches!(db(K::UniqueViolation, "dup"), Error::Conflict(_)));
    }
}
