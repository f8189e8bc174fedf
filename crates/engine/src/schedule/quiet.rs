//! Quiet hours in time: whether an instant falls inside a party's quiet
//! window in its zone, and when that window ends, resolved as periods are
//! ([`super::period::resolve_first`]): an end in a spring-forward gap ends
//! at the first instant after the gap, an end that happens twice (fall
//! back) at its first occurrence. The queue holds notifications until
//! then; the tick merges an hourly subscription's periods inside the
//! window into the first one after it.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use super::period::{resolve_first, Rule};
use crate::validate::QuietHours;

/// When `t` is inside `q` in `tz`: the instant the window ends (always
/// after `t`); `None` when `t` is outside it.
///
/// The local clock decides: `t`'s local time of day is inside when it is
/// at or after the start and before the end (crossing midnight, either).
/// The end is resolved on the local date it falls on (the next one for a
/// window that started before midnight). During a repeated hour, a local
/// time past the end's first occurrence is outside: the window ended then.
pub fn quiet_until(q: &QuietHours, tz: Tz, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let local = t.with_timezone(&tz).naive_local();
    let time = local.time();
    if !q.holds_time(time) {
        return None;
    }
    let date = if q.crosses_midnight() && time >= q.start {
        local.date().succ_opt()?
    } else {
        local.date()
    };
    let until = resolve_first(tz, date.and_time(q.end));
    (until > t).then_some(until)
}

/// Seconds from `now` to `until`, rounded up, so that `now` plus them is
/// never before the window's end.
pub fn seconds_until(now: DateTime<Utc>, until: DateTime<Utc>) -> u64 {
    let d = until - now;
    let whole = d.num_seconds();
    let part = d - Duration::seconds(whole) > Duration::zero();
    (whole + i64::from(part)).max(0) as u64
}

/// An hourly period scheduled at `at` of a party quiet by `q`: `None`
/// when it is outside the window, else the first period of `rule` at or
/// after the window's end (where its digest goes instead).
pub(crate) fn moved_past(
    q: Option<&QuietHours>,
    rule: &Rule,
    at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let until = quiet_until(q?, rule.tz, at)?;
    Some(super::tick::first_due(rule, until))
}

/// The quiet window that moves an hourly subscription's periods: its
/// party's stored one (`stored`), for an hourly rule; none for daily and
/// weekly digests, which are sent inside quiet hours.
pub(crate) fn of_hourly(rule: &Rule, stored: Option<&str>) -> Option<QuietHours> {
    match rule.frequency {
        crate::subscriptions::Frequency::Hourly => QuietHours::parse_stored(stored?),
        _ => None,
    }
}

/// "07:00 Europe/Paris (06:00 UTC)": a window's end for people to read.
pub fn until_text(tz: Tz, until: DateTime<Utc>) -> String {
    let local = until.with_timezone(&tz).format("%H:%M");
    let utc = until.format("%H:%M");
    if tz == Tz::UTC {
        format!("{local} UTC")
    } else {
        format!("{local} {} ({utc} UTC)", tz.name())
    }
}

#[cfg(test)]
mod tests;
