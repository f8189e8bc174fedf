//! Building a round's email: one message per (sender, recipient) group,
//! every notification of the group in it (see [`message::combine`]).

use std::borrow::Cow;
use std::collections::HashSet;

use chrono::NaiveDateTime;
use lettre::message::Mailbox;

use super::email::EmailJob;
use super::round::{Req, Round, Row};
use super::settle::Settle;
use super::Delivery;
use crate::dkim::Signer;
use crate::error::Result;
use crate::listener::Outgoing;
use crate::message::{self, Email, Part};
use crate::msgid::MessageKey;
use crate::outbox::Outbox;
use crate::parties::Channel;
use crate::threading::{self, List, Thread};

/// What building a message needs besides its round: the sender, owned so
/// the builder thread can hold it while the pass goes on.
pub(super) struct BuildCtx {
    from: Mailbox,
    host: String,
    outbox: Outbox,
    now: NaiveDateTime,
    key: MessageKey,
    dkim: Option<Signer>,
}

impl BuildCtx {
    pub(super) fn new(d: &Delivery, now: NaiveDateTime, key: MessageKey) -> BuildCtx {
        BuildCtx {
            from: d.from.clone(),
            host: d.host.clone(),
            outbox: d.outbox.clone(),
            now,
            key,
            dkim: d.dkim.clone(),
        }
    }

    /// The message of one (sender, recipient) group of `round`, without
    /// the requests cancelled since the round was claimed, and what to
    /// write back for it; `None` when every request in it was cancelled.
    pub(super) fn build_one(
        &self,
        round: &Round,
        job: &EmailJob,
        cancelled: &HashSet<i64>,
    ) -> Result<Option<(Settle, Outgoing)>> {
        let Some(settle) = job.settle.without(cancelled) else {
            return Ok(None);
        };
        let batch: Vec<&Row> = round.rows[job.range.0..job.range.1]
            .iter()
            .filter(|r| !cancelled.contains(&r.request_id))
            .collect();
        let r0 = batch[0];
        // A group's digest with this member's own links.
        let parts: Vec<Cow<Req>> = batch.iter().map(|r| round.req_for(r)).collect();
        let first = r0.request_id;
        let ps: Vec<Part> = parts
            .iter()
            .map(|q| Part {
                subject: &q.subject,
                text: &q.message,
                html: q.message_html.as_deref(),
                date: q.request_date.and_utc(),
            })
            .collect();
        // Several requests: each section says when it was sent, in the
        // recipient's zone and clock.
        let style = round
            .styles
            .get(&r0.party_to)
            .copied()
            .unwrap_or_else(message::utc_style);
        let (mut subject, text, html) = message::combine(&ps, &style);
        // Forward digests' calendars, as one (RFC 6047: one object a method).
        let cals: Vec<&str> = parts.iter().filter_map(|q| q.calendar.as_deref()).collect();
        let calendar = (!cals.is_empty()).then(|| crate::ics::merge(&cals));
        let thread = self.thread(round, &parts, r0.party_to);
        if thread.is_some() {
            // Digests of one subscription waiting together (a queue that
            // was down) keep the subscription's one subject, so a reader
            // that threads by subject too keeps them in its thread.
            subject = parts[0].subject.clone();
        }
        let from_name = round
            .names
            .get(&r0.party_from)
            .map(String::as_str)
            .filter(|n| *n != crate::parties::SYSTEM_PARTY);
        // Keyed: a bounce quoting it is counted against this party only.
        let message_id = self
            .key
            .message_id(first, r0.party_to, batch.len(), &self.host);
        let date = parts
            .iter()
            .map(|q| q.request_date)
            .max()
            .unwrap_or(self.now)
            .and_utc();
        // One link that stops every digest in the message (RFC 8058).
        let unsubscribe =
            message::combine_unsubscribe(parts.iter().filter_map(|q| q.unsubscribe_url.as_deref()));
        let bytes = message::build(&Email {
            from: &self.from,
            from_name,
            to_name: &r0.to_name,
            to_address: &job.address,
            subject: &subject,
            text: &text,
            html: Some(&html),
            date,
            message_id: &message_id,
            unsubscribe: unsubscribe.as_deref(),
            thread: thread.as_ref(),
            calendar: calendar.as_deref(),
            dkim: self.dkim.as_deref(),
        })?;
        let msg = Outgoing {
            envelope_from: self.from.email.to_string(),
            to: job.address.clone(),
            bytes,
            file: self.outbox.path(first, &r0.to_name, Channel::Email),
            signing: None,
            matrix: None,
        };
        Ok(Some((settle, msg)))
    }

    /// The thread of a message whose every part is a digest of one
    /// subscription: its root for `party` and its list. A message holding
    /// notifications, or digests of several subscriptions, is in no
    /// thread. Only formatting and a MAC: what it reads was loaded with
    /// the round, so the same rows give the same headers (a message
    /// rebuilt after a crash is the same message).
    fn thread(&self, round: &Round, parts: &[Cow<Req>], party: i64) -> Option<Thread> {
        let sub = parts[0].subscription_id?;
        if parts.iter().any(|q| q.subscription_id != Some(sub)) {
            return None;
        }
        let list = round.lists.get(&sub).map(|(uuid, name)| List {
            name: name.clone(),
            id: threading::list_id(uuid.as_deref(), self.from.email.domain()),
        });
        Some(Thread {
            root: self.key.thread_root(sub, party, &self.host),
            list,
        })
    }
}
