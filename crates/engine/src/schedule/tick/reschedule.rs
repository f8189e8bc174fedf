//! Moving `next_due_at` when a rule changes (a new timezone or week
//! start, a new frequency, hour or day) or a paused subscription resumes.
//! A new frequency also restates the last period run in the new
//! frequency's keys, which the tick compares it with.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;

use super::{first_due, is_after_last, rule_for};
use crate::db::schema::{group_prefs, subscriptions, users};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{PartyId, SubscriptionId};
use crate::subscriptions::Frequency;

/// Recomputes `next_due_at` for the subscriptions of `party`, a user or a
/// group (after its timezone or week changed): the first period of the new rule after the
/// last one run, or at or after `active_since` when none ran. Call it in
/// the transaction that changed the preferences.
pub fn reschedule_party(c: &mut DbConn, party: PartyId) -> Result<usize> {
    let ids: Vec<i64> = subscriptions::table
        .filter(subscriptions::party_id.eq(party.0))
        .select(subscriptions::id)
        .load(c)?;
    for id in &ids {
        reschedule(c, SubscriptionId(*id), None)?;
    }
    Ok(ids.len())
}

/// Recomputes `next_due_at` of one subscription; with `resume_at`, it also
/// becomes active from that instant (no burst for the paused time: periods
/// and changes before it are not delivered).
pub fn reschedule(
    c: &mut DbConn,
    id: SubscriptionId,
    resume_at: Option<DateTime<Utc>>,
) -> Result<()> {
    type Row = (
        String,
        Option<i32>,
        Option<i32>,
        NaiveDateTime,
        Option<NaiveDateTime>,
        Option<String>,
        Option<(String, i32)>,
        Option<(String, i32)>,
    );
    let (freq, hour, day, active, last, last_key, user, group): Row = subscriptions::table
        .left_join(users::table.on(users::party_id.eq(subscriptions::party_id)))
        .left_join(group_prefs::table.on(group_prefs::party_id.eq(subscriptions::party_id)))
        .filter(subscriptions::id.eq(id.0))
        .select((
            subscriptions::frequency,
            subscriptions::hour_of_day,
            subscriptions::day_of_week,
            subscriptions::active_since,
            subscriptions::last_scheduled_at,
            subscriptions::last_period,
            (users::timezone, users::week_start).nullable(),
            (group_prefs::timezone, group_prefs::week_start).nullable(),
        ))
        .first(c)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("no subscription {id}")))?;
    let rule = rule_for(
        Frequency::parse(&freq)?,
        hour,
        day,
        user.or(group).as_ref().map(|(t, w)| (t.as_str(), *w)),
    )?;
    let active = resume_at.unwrap_or(active.and_utc());
    let last_key = match (last, last_key) {
        (Some(l), Some(k)) if !fits(rule.frequency, &k) => {
            let key = key_for_new_frequency(c, id, &rule, l)?;
            diesel::update(subscriptions::table.find(id.0))
                .set(subscriptions::last_period.eq(Some(&key)))
                .execute(c)?;
            Some(key)
        }
        (_, k) => k,
    };
    let next = match last.map(|l| l.and_utc()) {
        Some(l) if l >= active => {
            let mut p = rule.first_after(l);
            while !is_after_last(&rule, &p, last, last_key.as_deref()) {
                p = rule.first_after(p.scheduled);
            }
            p.scheduled
        }
        _ => first_due(&rule, active),
    };
    diesel::update(subscriptions::table.find(id.0))
        .set((
            subscriptions::active_since.eq(active.naive_utc()),
            subscriptions::next_due_at.eq(Some(next.naive_utc())),
        ))
        .execute(c)?;
    Ok(())
}

/// Whether `key` is a period key of `frequency`: daily keys are dates
/// (`2026-11-22`), weekly ones `week-` and a date, hourly ones a local
/// hour with its offset (`2026-11-22T08:00+01:00`).
fn fits(frequency: Frequency, key: &str) -> bool {
    let week = key.starts_with("week-");
    match frequency {
        Frequency::Weekly => week,
        Frequency::Daily => !week && !key.contains('T'),
        Frequency::Hourly => !week && key.contains('T'),
    }
}

/// The last period of a subscription whose frequency changed, as a key of
/// the new frequency: the new rule's period at or before the last one run
/// (`last`), or a run of the new frequency's shape recorded earlier (the
/// subscription had this frequency before) when that is later. A period
/// of the new rule is then run only after both: no digest of a period that
/// has one already, so no run's key `(subscription, period)` is taken twice.
fn key_for_new_frequency(
    c: &mut DbConn,
    id: SubscriptionId,
    rule: &super::Rule,
    last: NaiveDateTime,
) -> Result<String> {
    use crate::db::schema::subscription_runs as r;
    let key = rule.latest_at_or_before(last.and_utc()).key;
    let q = r::table
        .filter(r::subscription_id.eq(id.0))
        .filter(r::period.not_like("flush-%"))
        .select(r::period)
        .order(r::period.desc())
        .limit(1)
        .into_boxed();
    let q = match rule.frequency {
        Frequency::Weekly => q.filter(r::period.like("week-%")),
        Frequency::Daily => q
            .filter(r::period.not_like("week-%"))
            .filter(r::period.not_like("%T%")),
        Frequency::Hourly => return Ok(key),
    };
    let stored: Option<String> = q.first(c).optional()?;
    Ok(stored.filter(|s| *s > key).unwrap_or(key))
}
