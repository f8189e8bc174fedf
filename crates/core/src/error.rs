//! The one error of the core: input that can never be accepted as it is
//! (a bad timezone, address, JID, number, instant, …). Its message is one
//! line for the caller. The layers above fold it into their own error as
//! "the caller's fault" (CLI exit 2, HTTP 4xx).

/// Input that can never be accepted as it is; the message says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl Invalid {
    pub fn new(msg: impl Into<String>) -> Self {
        Invalid(msg.into())
    }
}

/// A core result: the value, or why the input is refused.
pub type Result<T, E = Invalid> = std::result::Result<T, E>;
