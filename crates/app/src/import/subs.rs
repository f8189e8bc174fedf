//! `digestd subscription import`: `{"party", "frequency", "kind",
//! "collection" | "all": true, "channels", "hour", "day", "include_own",
//! "send_empty"}` lines, each held to `subscription add`'s rules (an
//! identical subscription is refused naming it; new channels for one the
//! party has are merged in). Every line is checked and stored in one
//! transaction, which rolls back when any line is bad.

use std::collections::HashMap;
use std::io::BufRead;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{read_lines, verdict};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::SubscriptionId;
use crate::ingest::Bad;
use crate::schedule::tick::{first_due, rule_for};
use crate::subscriptions::{self, Frequency, Prepared, SubscribeRequest};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    party: String,
    frequency: String,
    kind: String,
    collection: Option<String>,
    #[serde(default)]
    all: bool,
    channels: Option<Vec<String>>,
    hour: Option<i64>,
    day: Option<String>,
    #[serde(default)]
    include_own: bool,
    #[serde(default)]
    send_empty: bool,
}

impl Line {
    fn request(self) -> Result<SubscribeRequest> {
        match (&self.collection, self.all) {
            (Some(_), true) => {
                return Err(Error::invalid(
                    "give \"collection\" or \"all\": true, not both",
                ))
            }
            (None, false) => {
                return Err(Error::invalid(
                    "give \"collection\" (a UUID) or \"all\": true",
                ))
            }
            _ => {}
        }
        Ok(SubscribeRequest {
            party: self.party,
            frequency: self.frequency,
            kind: self.kind,
            collection: self.collection,
            channels: self.channels.unwrap_or_else(|| vec!["email".into()]),
            hour: self.hour,
            day: self.day,
            include_own: self.include_own,
            send_empty: self.send_empty,
        })
    }
}

/// Reads every line, then checks and stores each in one transaction: the
/// subscriptions' ids in input order (a merged line gives the id it was
/// merged into). Any bad line: nothing is written and the one-line error
/// names the bad lines.
///
/// What each line names is read for the whole batch first
/// ([`subscriptions::Lookup`]), each distinct schedule's first due time is
/// worked out once, and the rows go in multi-row statements
/// ([`subscriptions::store_many_in_tx`]).
///
/// `events`: whether each subscription made records its
/// `subscription.created` (the caller's `[events]` posts that type): one
/// event a row made an import of 100,000 on SQLite about a fifth slower,
/// for a record nothing reads unless it is posted.
pub fn import(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    input: impl BufRead,
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<SubscriptionId>> {
    let mut bad = Bad::default();
    let (lines, total) = read_lines::<Line>(input, &mut bad)?;
    let mut reqs = Vec::with_capacity(lines.len());
    for (n, line) in lines {
        match line.request() {
            Ok(r) => reqs.push((n, r)),
            Err(e) => bad.push(n, e.to_string()),
        }
    }
    let mut out = Ok(Vec::new());
    conn.write_tx(|c| {
        let asked: Vec<&SubscribeRequest> = reqs.iter().map(|(_, r)| r).collect();
        let look = subscriptions::Lookup::load(c, &asked)?;
        let mut due: HashMap<DueKey, DateTime<Utc>> = HashMap::new();
        let mut batch = Vec::with_capacity(reqs.len());
        let mut lines = Vec::with_capacity(reqs.len());
        for (n, req) in &reqs {
            match subscriptions::prepare_with(c, &look, req).and_then(|p| {
                let next = first_due_of(&mut due, &p, now)?;
                Ok((p, next))
            }) {
                Ok(v) => {
                    batch.push(v);
                    lines.push(*n);
                }
                Err(e) if e.is_bad_input() => bad.push(*n, e.to_string()),
                Err(e) => return Err(e),
            }
        }
        if bad.count > 0 {
            // Rolls back; the refusal below says why.
            return Err(Error::invalid("import refused"));
        }
        match subscriptions::store_many_in_tx(c, now, &batch, events, progress)? {
            Ok(done) => {
                out = Ok(done.iter().map(|s| s.id()).collect());
                Ok(())
            }
            Err(refused) => {
                for (i, e) in refused {
                    bad.push(lines[i], e.to_string());
                }
                Err(Error::invalid("import refused"))
            }
        }
    })
    .or_else(|e| if bad.count > 0 { Ok(()) } else { Err(e) })?;
    verdict(bad, total)?;
    out
}

/// What a first due time depends on: frequency, hour, day, zone, week start.
type DueKey = (Frequency, Option<i32>, Option<i32>, Option<(String, i32)>);

/// `p`'s first due time, worked out once per distinct schedule.
fn first_due_of(
    due: &mut HashMap<DueKey, DateTime<Utc>>,
    p: &Prepared,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>> {
    let t = p.timing();
    let key = (
        t.frequency,
        t.hour,
        t.day,
        t.zone.map(|(z, w)| (z.to_string(), w)),
    );
    if let Some(d) = due.get(&key) {
        return Ok(*d);
    }
    let d = first_due(&rule_for(t.frequency, t.hour, t.day, t.zone)?, now);
    due.insert(key, d);
    Ok(d)
}
