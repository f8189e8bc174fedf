//! The states the nt tables hold as text, as types: a request's status
//! (`nt_requests.status`) and what one attempt at a queue row came to
//! (`delivery_log.outcome`). Each is stored, shown and serialized as the
//! same lowercase word; queries bind [`RequestStatus::as_str`], so the
//! columns and their values are what they always were.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Where a request is: `pending` until it is expanded into queue rows,
/// `sending` while any row is open, then final: `sent` (every row
/// delivered), `partial_failure`, `failed` (none), or `cancelled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    Pending,
    Sending,
    Sent,
    PartialFailure,
    Failed,
    Cancelled,
}

impl RequestStatus {
    pub const ALL: [RequestStatus; 6] = [
        RequestStatus::Pending,
        RequestStatus::Sending,
        RequestStatus::Sent,
        RequestStatus::PartialFailure,
        RequestStatus::Failed,
        RequestStatus::Cancelled,
    ];
    /// The statuses from which a request still sends: it may be cancelled.
    pub const OPEN: [RequestStatus; 2] = [RequestStatus::Pending, RequestStatus::Sending];
    /// The statuses a request ends in.
    pub const FINAL: [RequestStatus; 4] = [
        RequestStatus::Sent,
        RequestStatus::PartialFailure,
        RequestStatus::Failed,
        RequestStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Pending => "pending",
            RequestStatus::Sending => "sending",
            RequestStatus::Sent => "sent",
            RequestStatus::PartialFailure => "partial_failure",
            RequestStatus::Failed => "failed",
            RequestStatus::Cancelled => "cancelled",
        }
    }

    /// Pending or sending: not finished, so it may still be cancelled.
    pub fn is_open(self) -> bool {
        Self::OPEN.contains(&self)
    }

    /// The words of `statuses`, to bind in a query (`eq_any`).
    pub fn strs<const N: usize>(statuses: [RequestStatus; N]) -> [&'static str; N] {
        statuses.map(RequestStatus::as_str)
    }
}

impl fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the stored word, as the text column held it.
impl PartialEq<&str> for RequestStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl FromStr for RequestStatus {
    type Err = Error;

    /// A status as stored or as a person names it: 400 (invalid) for
    /// anything else, listing the statuses.
    fn from_str(s: &str) -> Result<RequestStatus, Error> {
        RequestStatus::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = RequestStatus::ALL.iter().map(|x| x.as_str()).collect();
                Error::invalid(format!(
                    "status: {} is not one of {}",
                    digestd_core::validate::escape_for_line(s),
                    all.join(", ")
                ))
            })
    }
}

/// What one attempt at a queue row came to, as `delivery_log.outcome`
/// keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogOutcome {
    /// Accepted by the far end.
    Sent,
    /// Refused for now; the row is tried again after its backoff.
    Transient,
    /// Refused for good; the row gives up.
    Permanent,
    /// Out of retries (or never attempted: no usable address); the row gives up.
    GaveUp,
}

impl LogOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            LogOutcome::Sent => "sent",
            LogOutcome::Transient => "transient",
            LogOutcome::Permanent => "permanent",
            LogOutcome::GaveUp => "gave_up",
        }
    }
}

impl fmt::Display for LogOutcome {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a queue row is after a pass settled it: delivered, to be tried
/// again, or given up. The counters of deliveries (`metrics`) and a pass's
/// report count rows by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    Sent,
    Retry,
    Failed,
}

impl RowState {
    pub const ALL: [RowState; 3] = [RowState::Sent, RowState::Retry, RowState::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Sent => "sent",
            RowState::Retry => "retry",
            RowState::Failed => "failed",
        }
    }
}

impl fmt::Display for RowState {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_back_as_stored_and_serialize_as_stored() {
        for s in RequestStatus::ALL {
            assert_eq!(s.as_str().parse::<RequestStatus>().unwrap(), s);
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        let e = "sending ".parse::<RequestStatus>().unwrap_err().to_string();
        assert!(e.contains("is not one of pending, sending, sent"), "{e}");
        assert_eq!(serde_json::to_value(LogOutcome::GaveUp).unwrap(), "gave_up");
        assert_eq!(serde_json::to_value(RowState::Retry).unwrap(), "retry");
    }
}
