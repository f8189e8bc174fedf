//! The run a subscription would get from a tick at an instant, computed the
//! way [`super::tick`] computes it but claimed by nobody: nothing is
//! written and the schedule does not move (`digestd preview`).
//!
//! The period is the latest one scheduled at or before the instant, even
//! when a tick has already run it, so a preview always has a window:
//! - modification: from the end of the last window run (when that is not
//!   after the instant; else from the period before, as if it had run),
//!   or `active_since` when none ran, to the instant: what the next digest
//!   holds so far;
//! - forward: from the period's scheduled instant (or the last window's
//!   end, when that falls inside it, as the tick chains) to the next one's.
//!
//! Both are clipped to `active_since`: a subscription gets nothing from
//! before it began (or was resumed).

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::period::{Period, Rule};
use super::tick::{rule_for, DueRun};
use crate::db::schema::{group_prefs, parties, subscription_runs, subscriptions, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::modlog;
use crate::subscriptions::{Frequency, Key, KeyColumns, Kind};

/// A previewed run and whether its subscription is paused (a paused one
/// previews anyway: this is what it would get if it were not).
#[derive(Debug, Clone)]
pub struct PreviewRun {
    pub run: DueRun,
    pub paused: bool,
}

type Row = (
    (Key, String, bool, bool, bool),
    (NaiveDateTime, Option<NaiveDateTime>, String),
    String,
    Option<(String, i32)>,
    Option<(String, i32)>,
);

/// The run subscription `id` would get from a tick at `at`; reads only.
pub fn preview_run(c: &mut DbConn, id: SubscriptionId, at: DateTime<Utc>) -> Result<PreviewRun> {
    let row: Option<Row> = subscriptions::table
        .inner_join(parties::table)
        .left_join(users::table.on(users::party_id.eq(subscriptions::party_id)))
        .left_join(group_prefs::table.on(group_prefs::party_id.eq(subscriptions::party_id)))
        .filter(subscriptions::id.eq(id.0))
        .select((
            (
                KeyColumns::default(),
                subscriptions::channels,
                subscriptions::include_own,
                subscriptions::send_empty,
                subscriptions::paused,
            ),
            (
                subscriptions::active_since,
                subscriptions::last_window_end,
                subscriptions::last_log_cut,
            ),
            parties::name,
            (users::timezone, users::week_start).nullable(),
            (group_prefs::timezone, group_prefs::week_start).nullable(),
        ))
        .first(c)
        .optional()?;
    let Some((
        ((party, coll, kind, freq, hour, day), channels, include_own, send_empty, paused),
        (active, last_end, last_pos),
        name,
        user,
        group,
    )) = row
    else {
        return Err(Error::not_found(format!("no subscription {id}")));
    };
    let frequency = Frequency::parse(&freq)?;
    let kind = Kind::parse(&kind)?;
    let rule = rule_for(
        frequency,
        hour,
        day,
        user.or(group).as_ref().map(|(t, w)| (t.as_str(), *w)),
    )?;
    let active = active.and_utc();
    let period = rule.latest_at_or_before(at);
    let (start, end) = window(
        &rule,
        kind,
        &period,
        at,
        last_end.map(|e| e.and_utc()),
        active,
    );
    let window_start = start.max(active).min(end);
    // What a tick now would read: from the last cut to where the log can
    // be cut now.
    let last_cut = modlog::Cut::from_stored(last_pos);
    let cut = modlog::cut(c)?.later(&last_cut);
    Ok(PreviewRun {
        run: DueRun {
            subscription: id,
            party: PartyId(party),
            party_name: name,
            tz: rule.tz,
            frequency,
            kind,
            collection: coll.map(CollectionId),
            channels,
            include_own,
            send_empty,
            period,
            tick: at,
            window_start,
            window_end: end,
            log_from: match kind {
                Kind::Modification => last_cut,
                Kind::Forward => cut.clone(),
            },
            log_to: cut,
        },
        paused,
    })
}

/// The bounds of the window a tick at `at` would give `period`: a
/// modification window from the last one's end (or the period before, or
/// `active`) to `at`; a forward one from the period (or the last end) to
/// the next period.
fn window(
    rule: &Rule,
    kind: Kind,
    period: &Period,
    at: DateTime<Utc>,
    last_end: Option<DateTime<Utc>>,
    active: DateTime<Utc>,
) -> (DateTime<Utc>, DateTime<Utc>) {
    let following = rule.first_after(period.scheduled).scheduled;
    match kind {
        Kind::Modification => {
            let start = match last_end {
                Some(e) if e <= at => e,
                Some(_) => {
                    rule.latest_at_or_before(period.scheduled - chrono::Duration::microseconds(1))
                        .scheduled
                }
                None => active,
            };
            (start, at)
        }
        Kind::Forward => {
            let start = match last_end {
                Some(e) if e < following && e < period.scheduled => e,
                _ => period.scheduled,
            };
            (start, following)
        }
    }
}

/// The run subscription `id` had for period `period`: the one a tick
/// recorded (its period and window, as it was posted); else, when no tick
/// ran it yet, the run a tick at `now` would make, if that is of `period`.
/// `None` for an unknown subscription or a period it has neither had nor
/// is in. Reads only.
pub fn past_run(
    c: &mut DbConn,
    id: SubscriptionId,
    period: &str,
    now: DateTime<Utc>,
) -> Result<Option<PreviewRun>> {
    let mut p = match preview_run(c, id, now) {
        Ok(p) => p,
        Err(Error::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    type Stored = (
        NaiveDateTime,
        NaiveDateTime,
        NaiveDateTime,
        NaiveDateTime,
        Option<String>,
        Option<String>,
    );
    let stored: Option<Stored> = subscription_runs::table
        .filter(subscription_runs::subscription_id.eq(id.0))
        .filter(subscription_runs::period.eq(period))
        .select((
            subscription_runs::scheduled_at,
            subscription_runs::window_start,
            subscription_runs::window_end,
            subscription_runs::ran_at,
            subscription_runs::log_from,
            subscription_runs::log_to,
        ))
        .order(subscription_runs::id.desc())
        .first(c)
        .optional()?;
    match stored {
        Some((scheduled, start, end, ran, from, to)) => {
            p.run.period = Period {
                key: period.to_string(),
                scheduled: scheduled.and_utc(),
            };
            p.run.window_start = start.and_utc();
            p.run.window_end = end.and_utc();
            p.run.tick = ran.and_utc();
            // A run recorded before the log had positions reads by time.
            p.run.log_from = from.map(modlog::Cut::from_stored).unwrap_or_default();
            p.run.log_to = to.map(modlog::Cut::from_stored).unwrap_or_default();
            Ok(Some(p))
        }
        None if p.run.period.key == period => Ok(Some(p)),
        None => Ok(None),
    }
}
