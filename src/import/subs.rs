//! `digestd subscription import`: `{"party", "frequency", "kind",
//! "collection" | "all": true, "channels", "hour", "day", "include_own",
//! "send_empty"}` lines, each held to `subscription add`'s rules (an
//! identical subscription is refused naming it; new channels for one the
//! party has are merged in). Every line is checked and stored in one
//! transaction, which rolls back when any line is bad.

use std::io::BufRead;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{each_line, read_lines};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::SubscriptionId;
use crate::ingest::Bad;
use crate::schedule::tick::{first_due, rule_for};
use crate::subscriptions::{self, SubscribeRequest};

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
pub fn import(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    input: impl BufRead,
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
    each_line(conn, &reqs, bad, total, progress, |c, req| {
        store(c, now, req)
    })
}

fn store(c: &mut DbConn, now: DateTime<Utc>, req: &SubscribeRequest) -> Result<SubscriptionId> {
    let prepared = subscriptions::prepare(c, req)?;
    let t = prepared.timing();
    let rule = rule_for(t.frequency, t.hour, t.day, t.zone)?;
    Ok(subscriptions::store_in_tx(c, now, &prepared, first_due(&rule, now))?.id())
}
