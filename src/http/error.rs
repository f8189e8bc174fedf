//! Every answer that is not a success: a status and a JSON body
//! `{"error": "one line"}` (plus `"lines"` for a batch). Library errors map
//! as the CLI's exit codes do: bad input is 4xx, ours is 5xx, and a 5xx
//! says no more than "internal error" (the cause goes to the log).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::error::Error;
use crate::validate;

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
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    lines: &'a [LineError],
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: validate::escape_for_line(&message.into()),
            lines: Vec::new(),
        }
    }
    pub fn bad_request(m: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, m)
    }
    pub fn unauthorized() -> Self {
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
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body is larger than {limit} bytes"),
        )
    }
    pub fn unprocessable(m: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, m)
    }
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
    /// A batch refused: the first error as the message, every bad line listed.
    pub fn lines(lines: Vec<LineError>) -> Self {
        let first = lines
            .first()
            .map(|l| format!("line {}: {}", l.line, l.error))
            .unwrap_or_else(|| "invalid input".into());
        let mut e = Self::bad_request(format!("{} bad line(s); {first}", lines.len()));
        e.lines = lines;
        e
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match &e {
            Error::Invalid(m) => Self::bad_request(m.clone()),
            Error::NotFound(m) => Self::not_found(m.clone()),
            Error::Conflict(m) => Self::new(StatusCode::CONFLICT, m.clone()),
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
        };
        (self.status, Json(body)).into_response()
    }
}

/// A handler's result.
pub type ApiResult<T> = std::result::Result<T, ApiError>;
