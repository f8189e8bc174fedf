//! `[events]`: the operators' event webhook (`events` records, the queue
//! passes post; `deliver::events::check` checks the URL and the secret).

use serde::{Deserialize, Serialize};

/// Where and what the operators' events are posted.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EventsConfig {
    /// The receiver's `http(s)://` URL; empty: events are recorded (but
    /// per-message ones) and not posted.
    pub url: String,
    /// The Standard Webhooks secret (`whsec_` and base64 of 24-32 bytes)
    /// each post is signed with.
    pub secret: String,
    /// The event types posted, and the per-message ones recorded
    /// (`digest.delivered`, `delivery.failed`); empty: all of them.
    pub types: Vec<String>,
    /// Connecting, posting and reading the answer, at most (1-600).
    pub timeout_seconds: u64,
    /// How long an event is retried, from when it happened, before it is
    /// given up (`failed`, sent again by `digestd events replay`).
    pub give_up_hours: u32,
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            url: String::new(),
            secret: String::new(),
            types: Vec::new(),
            timeout_seconds: 10,
            give_up_hours: 72,
        }
    }
}

impl EventsConfig {
    /// Whether events are posted at all.
    pub fn posts(&self) -> bool {
        !self.url.is_empty()
    }

    /// Whether events of `kind` (as written, `digest.delivered`) are
    /// posted.
    pub fn wants(&self, kind: &str) -> bool {
        self.posts() && (self.types.is_empty() || self.types.iter().any(|t| t == kind))
    }
}
