//! The calendar a forward digest's email carries (`[email] calendar`):
//! one `VEVENT` per item its lines list, written by [`crate::ics`] from
//! what the item stores. Made with the digest's body, when the tick
//! renders it, and stored with its email parts, so every attempt to send
//! it sends the same bytes.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use lettre::message::Mailbox;

use super::compose::Upcoming;
use crate::ics::{self, Event, Organizer, Time};

/// Who publishes the calendars: the sender (`[email] from`), whose domain
/// names the installation in each event's `UID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    pub name: Option<String>,
    pub address: String,
    pub host: String,
}

impl Publisher {
    pub fn new(from: &Mailbox) -> Publisher {
        Publisher {
            name: from.name.clone(),
            address: from.email.to_string(),
            host: from.email.domain().to_string(),
        }
    }
}

/// The calendar of the items among the first `shown` of `ups` (each item
/// once, at its first line), stamped `window.0`, the instant the digest
/// looks ahead from: the same for every attempt and every recipient.
/// `None` when no item listed has a start (a reminder alone is no event).
///
/// An item's start is written in the zone it stores (the zone its rule
/// repeats in), in UTC when it names none, as digestd expands it; a
/// recurring item keeps its rule and its series' start, so a calendar
/// expands it as the digest did. Items store no end, no all-day flag and
/// no exceptions: the event lasts no time (RFC 5545 §3.6.1), and its
/// reminder becomes a `VALARM` at the same offset from each start.
pub fn calendar(
    ups: &[Upcoming],
    shown: usize,
    p: &Publisher,
    window: (DateTime<Utc>, DateTime<Utc>),
) -> Option<String> {
    let mut seen = HashSet::new();
    let mut uids = Vec::new();
    let mut listed = Vec::new();
    for u in ups.iter().take(shown) {
        let Some(start) = u.timing.start else {
            continue;
        };
        if seen.insert(u.item_uuid.as_str()) {
            uids.push(format!("{}@{}", u.item_uuid, p.host));
            listed.push((u, start));
        }
    }
    if listed.is_empty() {
        return None;
    }
    let events: Vec<Event> = listed
        .iter()
        .zip(&uids)
        .map(|((u, start), uid)| Event {
            uid,
            summary: &u.title,
            start: match u.timing.tz {
                Some(tz) => Time::Zoned(*start, tz),
                None => Time::Utc(*start),
            },
            end: None,
            rrule: u.timing.rrule.as_deref(),
            url: u.url.as_deref(),
            alarm: u.timing.reminder.map(|r| r - *start),
        })
        .collect();
    let organizer = Organizer {
        name: p.name.as_deref(),
        address: &p.address,
    };
    Some(ics::calendar(&events, Some(organizer), window.0, window))
}
