//! Every answer that is not a success: a status and a JSON body
//! `{"error": "one line"}` (plus `"lines"` for a batch: the first
//! [`MAX_LINES_LISTED`] bad lines, and `"lines_not_listed"`, how many more
//! there were, when there were more). Library errors map
//! as the CLI's exit codes do: bad input is 4xx, ours is 5xx, and a 5xx
//! says no more than "internal error" (the cause goes to the log).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::error::Error;
use crate::validate;

/// How many bad lines a refusal lists; the rest are counted.
pub const MAX_LINES_LISTED: usize = 100;

/// One bad line of a batch.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LineError {
    pub line: usize,
    pub error: String,
}

/// An HTTP error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub lines: Vec<LineError>,
    /// Bad lines past the ones listed.
    pub lines_not_listed: usize,
    /// When to retry (a 429, a busy database's 503): `Retry-After` and `"retry_after_seconds"`.
    pub retry_after_secs: Option<u64>,
    /// The bad entry of a batch refused at its first (0-based): `"entry"`.
    pub entry: Option<usize>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    lines: &'a [LineError],
    #[serde(skip_serializing_if = "is_zero")]
    lines_not_listed: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The bad lines of a batch as they are found: the first
/// [`MAX_LINES_LISTED`] kept (each message built only then), the rest
/// counted, so that a body of a million bad elements costs a counter.
#[derive(Debug, Default)]
pub struct BadLines {
    listed: Vec<LineError>,
    total: usize,
}

impl BadLines {
    /// Line `line` (1-based) is bad, for the reason `why` makes.
    pub fn push(&mut self, line: usize, why: impl FnOnce() -> String) {
        self.total += 1;
        if self.listed.len() < MAX_LINES_LISTED {
            self.listed.push(LineError {
                line,
                error: validate::escape_for_line(&why()),
            });
        }
    }

    /// There were `total` bad lines in all, some pushed: the rest counted.
    pub(crate) fn counted_beyond(&mut self, total: usize) {
        self.total = self.total.max(total);
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: validate::escape_for_line(&message.into()),
            lines: Vec::new(),
            lines_not_listed: 0,
            retry_after_secs: None,
            entry: None,
        }
    }

    /// The refusal names entry `i` (0-based) of the batch.
    pub(crate) fn with_entry(mut self, i: usize) -> Self {
        self.entry = Some(i);
        self
    }
    pub(crate) fn bad_request(m: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, m)
    }
    pub(crate) fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "a valid token is required (Authorization: Bearer …)",
        )
    }
    pub fn forbidden(needed: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            format!("this token's scope does not allow this (needs {needed})"),
        )
    }
    pub fn not_found(m: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, m)
    }
    pub(crate) fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body is larger than {limit} bytes"),
        )
    }
    pub(crate) fn unprocessable(m: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, m)
    }
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
    /// A batch refused: how many lines are bad and the first error as the
    /// message, the first [`MAX_LINES_LISTED`] bad lines listed.
    pub fn lines(bad: BadLines) -> Self {
        let first = bad
            .listed
            .first()
            .map(|l| format!("line {}: {}", l.line, l.error))
            .unwrap_or_else(|| "invalid input".into());
        let e = Self::bad_request(format!("{} bad line(s); {first}", bad.total));
        e.with_lines(bad)
    }

    /// This error with `bad`'s listed lines and the count of the others.
    pub(crate) fn with_lines(mut self, bad: BadLines) -> Self {
        self.lines_not_listed = bad.total - bad.listed.len();
        self.lines = bad.listed;
        self
    }
}

/// A value the core refused: the caller's, a 400.
impl From<crate::validate::Invalid> for ApiError {
    fn from(e: crate::validate::Invalid) -> Self {
        Self::bad_request(e.line())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match &e {
            Error::Invalid(m) => Self::bad_request(m.line()),
            Error::NotFound(m) => Self::not_found(m.clone()),
            Error::Conflict(m) => Self::new(StatusCode::CONFLICT, m.clone()),
            Error::Busy(_) => {
                tracing::warn!(error = %e, "request refused: the database is busy");
                let mut busy = Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the database is busy; nothing was written: try again",
                );
                busy.retry_after_secs = Some(1);
                busy
            }
            Error::Storage(_) | Error::Io(_) | Error::Remote(_) => {
                tracing::error!(error = %e, "request failed");
                Self::internal()
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: &self.message,
            lines: &self.lines,
            lines_not_listed: self.lines_not_listed,
            retry_after_seconds: self.retry_after_secs,
            entry: self.entry,
        };
        let mut r = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after_secs {
            r.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        r
    }
}

/// A handler's result.
pub type ApiResult<T> = std::result::Result<T, ApiError>;
