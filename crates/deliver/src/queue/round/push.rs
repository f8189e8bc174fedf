//! A round's rows, planned: grouped per (sender, recipient, channel),
//! each group one message; groups with no address given up at once; the
//! email groups jobs for the builder; XMPP, SMS, webhooks, the presets
//! and Matrix messages for the pusher ([`super::super::pusher`]). Their
//! outcomes are written with what they call for: a webhook that answered
//! 410 Gone, or a Matrix contact point refused with `M_FORBIDDEN`,
//! disabled; the Matrix rooms opened kept.

use super::super::pusher::Push;
use super::*;

/// What a round's groups become before anything is sent.
#[derive(Default)]
struct Plan {
    /// The email groups, for the builder.
    jobs: Vec<EmailJob>,
    /// The groups given up at once.
    refused: Vec<Settle>,
    /// The other groups' messages, in the round's order, for the pusher.
    pushes: Vec<Push>,
}

impl Plan {
    /// `m` to be sent by `ch`'s listener; `settle` takes its outcome.
    fn send(&mut self, ch: Channel, msg: Outgoing, settle: Settle) {
        self.pushes.push(Push { ch, settle, msg });
    }

    /// A group with nothing that can be sent: given up at once, no
    /// attempt counted.
    fn refuse(&mut self, batch: &[Row], why: impl Into<String>) {
        self.refused.push(Settle {
            attempted: false,
            ..settle_of(batch, Outcome::permanent(None, why))
        });
    }
}

/// `batch` (one group's rows) settled with `outcome`.
pub(super) fn settle_of(batch: &[Row], outcome: Outcome) -> Settle {
    Settle {
        attempted: true,
        address: batch[0].address.clone(),
        keys: batch
            .iter()
            .map(|r| (r.request_id, r.party_to, r.channel.clone()))
            .collect(),
        retry_counts: batch.iter().map(|r| r.retry_count).collect(),
        max_retries: batch.iter().map(|r| r.max_retries).collect(),
        rows_of_request: batch.iter().map(Row::rows_of_request).collect(),
        of: batch
            .iter()
            .map(|r| {
                Some(super::super::settle::Of {
                    digest: r.digest,
                    subscription: r.subscription_id,
                })
            })
            .collect(),
        outcome,
    }
}

/// The groups of `rows` (sorted by sender, recipient and channel): each
/// run of one (sender, recipient, channel), as a range of indexes.
pub(super) fn groups(rows: &[Row]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    fn key(r: &Row) -> (i64, i64, &str) {
        (r.party_from, r.party_to, &r.channel)
    }
    while i < rows.len() {
        let first = key(&rows[i]);
        let j = i + rows[i..].iter().take_while(|r| key(r) == first).count();
        out.push((i, j));
        i = j;
    }
    out
}

/// A chat or SMS group's text: a digest has its own chat and SMS texts; a
/// plain notification is its subject (SMS) or subject and message.
fn chat_text(round: &Round, ch: Channel, batch: &[Row]) -> String {
    let body: Vec<String> = batch
        .iter()
        .map(|r| round.req_for(r))
        .map(|q| match (ch, &q.message_chat, &q.message_sms) {
            (Channel::Xmpp, Some(chat), _) => chat.to_string(),
            (Channel::Xmpp, None, _) => format!("{}\n{}", q.subject, q.message),
            (_, _, Some(sms)) => sms.clone(),
            (_, _, None) => q.subject.clone(),
        })
        .collect();
    body.join(if ch == Channel::Sms { "\n" } else { "\n\n" })
}

/// A webhook, preset or Matrix group's JSON document: each digest's own,
/// each notification's built now; one, or a batch of them.
fn document(round: &Round, batch: &[Row]) -> String {
    let docs = batch
        .iter()
        .map(|r| round.req_for(r))
        .map(|q| match &q.message_webhook {
            Some(doc) => hook::digest(q.id, doc),
            None => hook::notification(q.id, &q.subject, &q.message, q.request_date),
        })
        .collect();
    hook::message(docs)
}

/// The recipients of `rows` on `ch`, each once.
fn parties_on(rows: &[Row], ch: Channel) -> Vec<i64> {
    let mut parties: Vec<i64> = rows
        .iter()
        .filter(|r| r.channel == ch.as_str())
        .map(|r| r.party_to)
        .collect();
    parties.sort_unstable();
    parties.dedup();
    parties
}

/// What a round's webhook and Matrix rows need from their contact points.
struct Keys {
    /// The webhooks' secrets, by (party, URL).
    secrets: HashMap<(i64, String), String>,
    /// The Matrix rooms kept, by (party, address).
    rooms: HashMap<(i64, String), Option<String>>,
}

impl Rounds<'_> {
    /// Groups the round per (sender, recipient, channel); gives up the
    /// groups with no address and writes their outcomes; returns the
    /// email groups and the other messages.
    pub(super) fn plan(&mut self, round: &Round) -> Result<(Vec<EmailJob>, Vec<Push>)> {
        let keys = Keys {
            secrets: self.webhook_secrets(&round.rows)?,
            rooms: self.matrix_rooms(&round.rows)?,
        };
        let mut plan = Plan::default();
        for range in groups(&round.rows) {
            self.plan_group(round, range, &keys, &mut plan)?;
        }
        if !plan.refused.is_empty() {
            self.write_with_rooms(&plan.refused, &[])?;
        }
        Ok((plan.jobs, plan.pushes))
    }

    /// Writes `done`'s outcomes in one transaction, with the Matrix rooms
    /// `rooms` kept on their contact points (so the next messages go to
    /// the same rooms) and the contact points that answered 410 Gone
    /// (webhooks) or `M_FORBIDDEN` (Matrix) disabled.
    pub(super) fn write_with_rooms(
        &mut self,
        done: &[Settle],
        rooms: &[(String, String)],
    ) -> Result<()> {
        let gone = gone(done);
        let policy = self.d.settle_policy();
        let (now, report) = (self.now, &mut *self.report);
        self.conn.write_tx(|c| {
            if !rooms.is_empty() {
                crate::parties::keep_matrix_rooms_in_tx(c, rooms)?;
            }
            for (party, ch, url) in &gone {
                crate::parties::disable_gone_webhook_in_tx(c, now, *party, *ch, url)?;
            }
            write_outcomes(c, policy, done, now, report)
        })?;
        if !gone.is_empty() {
            tracing::warn!(
                endpoints = gone.len(),
                "contact points disabled: 410 Gone (webhooks) or M_FORBIDDEN (Matrix)"
            );
        }
        Ok(())
    }

    /// Adds the group of `round`'s rows in `range` to `plan`.
    fn plan_group(
        &self,
        round: &Round,
        range: (usize, usize),
        keys: &Keys,
        plan: &mut Plan,
    ) -> Result<()> {
        let batch = &round.rows[range.0..range.1];
        let r0 = &batch[0];
        let ch = Channel::parse(&r0.channel)?;
        let Some(address) = r0.address.clone() else {
            plan.refuse(batch, format!("no {} address", ch.as_str()));
            return Ok(());
        };
        let not_sent = || settle_of(batch, Outcome::transient(None, "not sent"));
        if ch == Channel::Email {
            plan.jobs.push(EmailJob {
                range,
                address,
                settle: not_sent(),
            });
            return Ok(());
        }
        let file = self.d.outbox.path(r0.request_id, &r0.to_name, ch);
        if !ch.reads_document() {
            let m = Outgoing::text(&address, &chat_text(round, ch, batch), file);
            plan.send(ch, m, not_sent());
            return Ok(());
        }
        let requests: Vec<i64> = batch.iter().map(|r| r.request_id).collect();
        if ch == Channel::Matrix {
            // The room kept for the address, if any; the transaction id
            // is the same on every attempt of these rows.
            let room = keys.rooms.get(&(r0.party_to, address.clone())).cloned();
            let mut m = Outgoing::text(&address, &document(round, batch), file);
            m.matrix = Some(MatrixRoute {
                txn_id: hook::message_id(&requests, r0.party_to),
                room: room.flatten(),
            });
            plan.send(ch, m, not_sent());
            return Ok(());
        }
        // The webhook signs with its URL's secret; a preset's URL is its
        // own credential, and its listener turns the document into the
        // service's format as it sends it.
        let signing = match (ch, keys.secrets.get(&(r0.party_to, address.clone()))) {
            (Channel::Webhook, None) => {
                plan.refuse(
                    batch,
                    "no webhook secret: the URL changed since the message was queued",
                );
                return Ok(());
            }
            (Channel::Webhook, Some(secret)) => Some(Signing {
                id: hook::message_id(&requests, r0.party_to),
                secret: secret.clone(),
            }),
            _ => None,
        };
        let mut m = Outgoing::text(&address, &document(round, batch), file);
        m.signing = signing;
        plan.send(ch, m, not_sent());
        Ok(())
    }

    /// The rooms kept on the Matrix contact points the round's Matrix
    /// rows go to, by (party, address).
    fn matrix_rooms(&mut self, rows: &[Row]) -> Result<HashMap<(i64, String), Option<String>>> {
        let parties = parties_on(rows, Channel::Matrix);
        if parties.is_empty() {
            return Ok(HashMap::new());
        }
        crate::parties::matrix_rooms(self.conn, &parties)
    }

    /// The secrets of the webhook contact points the round's webhook rows
    /// go to, by (party, URL).
    fn webhook_secrets(&mut self, rows: &[Row]) -> Result<HashMap<(i64, String), String>> {
        let parties = parties_on(rows, Channel::Webhook);
        if parties.is_empty() {
            return Ok(HashMap::new());
        }
        crate::parties::webhook_secrets(self.conn, &parties)
    }
}

/// The contact points of `done` to disable: (party, channel, address) of
/// each webhook or preset that answered 410 Gone and each Matrix contact
/// point refused with `M_FORBIDDEN`.
fn gone(done: &[Settle]) -> Vec<(i64, Channel, String)> {
    done.iter()
        .filter_map(|s| {
            let ch = Channel::parse(&s.keys.first()?.2).ok()?;
            let gone = match ch {
                Channel::Matrix => matrix::FORBIDDEN,
                url if url.is_url() => webhook::GONE,
                _ => return None,
            };
            matches!(s.outcome, Outcome::Permanent { code: Some(c), .. } if c == gone)
                .then_some((s, ch))
        })
        .filter_map(|(s, ch)| Some((s.keys[0].1, ch, s.address.clone()?)))
        .collect()
}
