//! What a tick hands on: each due run ([`DueRun`], and [`RunLine`], its
//! line for `digestd tick` and `simulate`), and the [`HandOff`] that takes
//! the runs inside the tick's transaction.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::db::DbConn;
use crate::error::Result;
use crate::ids::{CollectionId, PartyId, RequestId, SubscriptionId};
use crate::modlog::{Cut, Span};
use crate::schedule::period::Period;
use crate::subscriptions::{Frequency, Kind};

/// A run the tick found due and recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct DueRun {
    pub subscription: SubscriptionId,
    pub party: PartyId,
    pub party_name: String,
    pub tz: Tz,
    pub frequency: Frequency,
    pub kind: Kind,
    pub collection: Option<CollectionId>,
    pub channels: String,
    pub include_own: bool,
    pub send_empty: bool,
    pub period: Period,
    pub tick: DateTime<Utc>,
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    /// The log positions a modification window reads between
    /// ([`crate::modlog::Span`]): from where the last one was cut to the
    /// tick's cut. A forward run has both at the cut.
    pub log_from: Cut,
    pub log_to: Cut,
}

/// One JSON line of `digestd tick` / `digestd simulate`.
#[derive(Debug, Serialize)]
pub struct RunLine<'a> {
    pub subscription: SubscriptionId,
    pub party: &'a str,
    pub tz: &'a str,
    pub frequency: Frequency,
    pub kind: Kind,
    pub period: &'a str,
    pub scheduled_local: String,
    pub scheduled_utc: String,
    pub tick_utc: String,
    pub window_start: String,
    pub window_end: String,
}

fn rfc3339<T: chrono::TimeZone>(t: &DateTime<T>) -> String
where
    T::Offset: std::fmt::Display,
{
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

impl DueRun {
    /// The modification window of the log this run reads.
    pub fn span(&self) -> Span {
        Span {
            start: self.window_start,
            end: self.window_end,
            log: Some((self.log_from.clone(), self.log_to.clone())),
        }
    }

    /// Writes [`DueRun::line`] as one JSON line (`tick`, `simulate`).
    pub fn write_line(&self, w: &mut dyn std::io::Write) -> Result<()> {
        serde_json::to_writer(&mut *w, &self.line()).map_err(std::io::Error::from)?;
        writeln!(w)?;
        Ok(())
    }

    pub fn line(&self) -> RunLine<'_> {
        RunLine {
            subscription: self.subscription,
            party: &self.party_name,
            tz: self.tz.name(),
            frequency: self.frequency,
            kind: self.kind,
            period: &self.period.key,
            scheduled_local: rfc3339(&self.period.scheduled_local(self.tz)),
            scheduled_utc: rfc3339(&self.period.scheduled),
            tick_utc: rfc3339(&self.tick),
            window_start: rfc3339(&self.window_start),
            window_end: rfc3339(&self.window_end),
        }
    }
}

/// Where a due run goes, inside the tick's transaction: digest composition
/// (the next layer) implements it; an error rolls the chunk back, so a run
/// is never recorded without its hand-off nor handed off without its run.
pub trait HandOff {
    /// Called once per chunk with every run about to be handed on, so an
    /// implementation can load what they share in one query.
    fn prepare(&mut self, _conn: &mut DbConn, _runs: &[DueRun]) -> Result<()> {
        Ok(())
    }

    fn hand_off(&mut self, conn: &mut DbConn, run: &DueRun) -> Result<Option<RequestId>>;

    /// Hands on every run of a chunk, in order, returning each one's
    /// request: one call per chunk, so an implementation can write its
    /// posts in a few statements instead of some per run. By default, one
    /// [`HandOff::hand_off`] per run.
    fn hand_off_all(
        &mut self,
        conn: &mut DbConn,
        runs: &[DueRun],
    ) -> Result<Vec<Option<RequestId>>> {
        runs.iter().map(|r| self.hand_off(conn, r)).collect()
    }

    /// Called after a chunk's transaction has committed: what the hand-off
    /// wrote in it is there for the next chunk to refer to. Not called for
    /// a chunk that failed (its writes are gone).
    fn committed(&mut self) {}
}

/// Hands nothing on (simulation, `digestd tick` before delivery exists).
#[derive(Debug, Default)]
pub struct Discard;

impl HandOff for Discard {
    fn hand_off(&mut self, _: &mut DbConn, _: &DueRun) -> Result<Option<RequestId>> {
        Ok(None)
    }
}
