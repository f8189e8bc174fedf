//! The operators' event outbox (`events`): what happened, written by the
//! module that made it happen **in the transaction of the change it
//! reports**, so a change that rolls back leaves no event and a change
//! that commits always has one. The queue passes post them
//! (`deliver::events`) as `{"type", "timestamp", "data"}`, signed per
//! Standard Webhooks, in id order per subscription (or per party, for a
//! contact point's events).
//!
//! Every type but the per-message two is always recorded, so `digestd
//! events list` is the installation's record of subscriptions, opt-outs,
//! sign-ups and contact points whether or not anything receives it;
//! `digest.delivered` and `delivery.failed`, one per message, are recorded
//! by a queue pass whose `[events]` posts them ([`Wants`]).

mod read;

pub use read::{
    counts, due, last_error, list, mark_failed, mark_retry, mark_sent, pending, purge_before,
    replay, skip_unwanted, Due, EventRow,
};

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::EventsConfig;
use crate::db::outbox::{insert_events, NewEvent};
use crate::db::schema::parties;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{PartyId, SubscriptionId};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// A digest reached one recipient on one channel.
    #[serde(rename = "digest.delivered")]
    DigestDelivered,
    /// The queue gave a message up (permanent failure or out of retries).
    #[serde(rename = "delivery.failed")]
    DeliveryFailed,
    /// A bounce report for one of our messages was recorded.
    #[serde(rename = "contact.bounced")]
    ContactBounced,
    /// A contact point was disabled (bounces, 410 Gone, left the room).
    #[serde(rename = "contact.disabled")]
    ContactDisabled,
    #[serde(rename = "subscription.created")]
    SubscriptionCreated,
    #[serde(rename = "subscription.paused")]
    SubscriptionPaused,
    #[serde(rename = "subscription.resumed")]
    SubscriptionResumed,
    /// Ended: deleted, or its party or collection deleted.
    #[serde(rename = "subscription.ended")]
    SubscriptionEnded,
    /// A person stopped a digest themselves (`how`: page, one-click, API).
    #[serde(rename = "unsubscribe")]
    Unsubscribe,
    #[serde(rename = "signup.confirmed")]
    SignupConfirmed,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::DigestDelivered,
        Kind::DeliveryFailed,
        Kind::ContactBounced,
        Kind::ContactDisabled,
        Kind::SubscriptionCreated,
        Kind::SubscriptionPaused,
        Kind::SubscriptionResumed,
        Kind::SubscriptionEnded,
        Kind::Unsubscribe,
        Kind::SignupConfirmed,
    ];

    /// The type as posted and stored (`digest.delivered`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::DigestDelivered => "digest.delivered",
            Kind::DeliveryFailed => "delivery.failed",
            Kind::ContactBounced => "contact.bounced",
            Kind::ContactDisabled => "contact.disabled",
            Kind::SubscriptionCreated => "subscription.created",
            Kind::SubscriptionPaused => "subscription.paused",
            Kind::SubscriptionResumed => "subscription.resumed",
            Kind::SubscriptionEnded => "subscription.ended",
            Kind::Unsubscribe => "unsubscribe",
            Kind::SignupConfirmed => "signup.confirmed",
        }
    }

    /// The type written `s`; anything else is bad input naming the types.
    pub fn parse(s: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                Error::invalid(format!(
                    "unknown event type {}: use one of {}",
                    crate::validate::quoted(s),
                    known.join(", ")
                ))
            })
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks `[events] types`: each a known type, none twice.
pub fn check_types(cfg: &EventsConfig) -> Result<()> {
    for (i, t) in cfg.types.iter().enumerate() {
        Kind::parse(t).map_err(|e| Error::invalid(format!("config: events.types: {e}")))?;
        if cfg.types[..i].contains(t) {
            return Err(Error::invalid(format!(
                "config: events.types names {t:?} twice"
            )));
        }
    }
    Ok(())
}

/// Which per-message events a queue pass records: those its `[events]`
/// posts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wants {
    pub delivered: bool,
    pub failed: bool,
}

impl Wants {
    pub fn of(cfg: &EventsConfig) -> Wants {
        Wants {
            delivered: cfg.wants(Kind::DigestDelivered.as_str()),
            failed: cfg.wants(Kind::DeliveryFailed.as_str()),
        }
    }
}

/// One event to record: its type, what it is about, and its own fields.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: Kind,
    pub subscription: Option<SubscriptionId>,
    pub party: Option<PartyId>,
    pub fields: Map<String, Value>,
}

impl Event {
    pub fn new(kind: Kind) -> Event {
        Event {
            kind,
            subscription: None,
            party: None,
            fields: Map::new(),
        }
    }

    /// About subscription `s`: posted in order with its other events.
    pub fn subscription(mut self, s: SubscriptionId) -> Event {
        self.subscription = Some(s);
        self
    }

    /// About party `p` (its name is added as `party`).
    pub fn party(mut self, p: PartyId) -> Event {
        self.party = Some(p);
        self
    }

    /// A field of `data`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Event {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    /// The order its events are posted in: its subscription's, else its
    /// party's.
    fn order_key(&self) -> String {
        match (self.subscription, self.party) {
            (Some(s), _) => format!("s:{}", s.0),
            (None, Some(p)) => format!("p:{}", p.0),
            (None, None) => String::new(),
        }
    }
}

/// Records `list` at `now` in the caller's transaction: `data` is each
/// event's fields with `subscription` (its id) and `party` (the name) in
/// front.
pub fn record_in_tx(c: &mut DbConn, now: DateTime<Utc>, list: &[Event]) -> Result<()> {
    if list.is_empty() {
        return Ok(());
    }
    let names = party_names(c, list)?;
    let now = now.naive_utc();
    let rows: Vec<NewEvent> = list
        .iter()
        .map(|e| {
            let mut data = Map::new();
            if let Some(s) = e.subscription {
                data.insert("subscription".into(), s.0.into());
            }
            if let Some(p) = e.party {
                let name = names.get(&p.0).cloned().map_or(Value::Null, Value::String);
                data.insert("party".into(), name);
            }
            data.extend(e.fields.clone());
            NewEvent {
                kind: e.kind.as_str(),
                order_key: e.order_key(),
                subscription_id: e.subscription.map(|s| s.0),
                party_id: e.party.map(|p| p.0),
                occurred_at: now,
                data: Value::Object(data).to_string(),
            }
        })
        .collect();
    insert_events(c, &rows)
}

/// [`record_in_tx`] of one event.
pub fn record_one_in_tx(c: &mut DbConn, now: DateTime<Utc>, e: Event) -> Result<()> {
    record_in_tx(c, now, std::slice::from_ref(&e))
}

/// The names of the parties `list` is about, by id.
fn party_names(c: &mut DbConn, list: &[Event]) -> Result<HashMap<i64, String>> {
    let mut ids: Vec<i64> = list.iter().filter_map(|e| e.party.map(|p| p.0)).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = HashMap::new();
    for chunk in ids.chunks(1_000) {
        let rows: Vec<(i64, String)> = parties::table
            .filter(parties::id.eq_any(chunk))
            .select((parties::id, parties::name))
            .load(c)?;
        out.extend(rows);
    }
    Ok(out)
}

/// The document posted for an event: the type, when it happened (RFC
/// 3339, UTC) and its data.
pub fn envelope(kind: &str, at: DateTime<Utc>, data: &str) -> String {
    let data: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    serde_json::json!({
        "type": kind,
        "timestamp": at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "data": data,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_and_unknown_ones_are_named() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()).unwrap(), k);
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                Value::String(k.as_str().into())
            );
        }
        for bad in ["", "digest", "DIGEST.DELIVERED", "unsubscribe\r\nX: y"] {
            let e = Kind::parse(bad).unwrap_err().to_string();
            assert!(e.contains("unknown event type"), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn types_are_checked_and_wants_follow_them() {
        let mut cfg = EventsConfig::default();
        assert_eq!(Wants::of(&cfg), Wants::default(), "no url: nothing");
        cfg.url = "https://ops.example/hooks".into();
        assert!(Wants::of(&cfg).delivered && Wants::of(&cfg).failed);
        cfg.types = vec!["delivery.failed".into()];
        check_types(&cfg).unwrap();
        assert_eq!(
            Wants::of(&cfg),
            Wants {
                delivered: false,
                failed: true
            }
        );
        cfg.types = vec!["delivery.failed".into(), "delivery.failed".into()];
        assert!(check_types(&cfg).unwrap_err().to_string().contains("twice"));
        cfg.types = vec!["nope".into()];
        assert!(check_types(&cfg)
            .unwrap_err()
            .to_string()
            .contains("events.types"));
    }

    #[test]
    fn the_envelope_is_type_timestamp_data() {
        let at = "2026-11-29T10:00:00Z".parse().unwrap();
        let v: Value =
            serde_json::from_str(&envelope("unsubscribe", at, r#"{"how":"page"}"#)).unwrap();
        assert_eq!(v["type"], "unsubscribe");
        assert_eq!(v["timestamp"], "2026-11-29T10:00:00.000000Z");
        assert_eq!(v["data"]["how"], "page");
    }
}
