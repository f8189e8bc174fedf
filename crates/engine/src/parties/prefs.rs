//! A user's preferences (timezone, first day of week, daily hour, locale,
//! quiet hours):
//! validated, then written inside the caller's transaction
//! (`manage::update_user` reschedules in the same one).

use diesel::prelude::*;

use super::find;
use crate::db::schema::users;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::validate;

/// What `user set` may change.
#[derive(Debug, Clone, Default)]
pub struct UserChanges {
    pub timezone: Option<String>,
    pub week_start: Option<String>,
    pub daily_hour: Option<i64>,
    pub locale: Option<String>,
    /// `HH:MM-HH:MM`, or empty to clear.
    pub quiet_hours: Option<String>,
}

/// [`UserChanges`], validated.
#[derive(Debug, Clone, Default)]
pub struct ValidChanges {
    timezone: Option<chrono_tz::Tz>,
    week_start: Option<u8>,
    daily_hour: Option<u8>,
    locale: Option<String>,
    /// `Some("")` clears them.
    quiet_hours: Option<String>,
}

impl UserChanges {
    /// Checks every field; touches no storage.
    pub fn validate(&self) -> Result<ValidChanges> {
        Ok(ValidChanges {
            timezone: self
                .timezone
                .as_deref()
                .map(validate::timezone)
                .transpose()?,
            week_start: self
                .week_start
                .as_deref()
                .map(validate::weekday)
                .transpose()?,
            daily_hour: self.daily_hour.map(validate::hour).transpose()?,
            locale: self.locale.as_deref().map(validate::locale).transpose()?,
            quiet_hours: self
                .quiet_hours
                .as_deref()
                .map(|q| validate::quiet_hours(q).map(validate::quiet_hours_stored))
                .transpose()?,
        })
    }
}

/// Writes a user's new preferences inside the caller's transaction.
/// `manage::update_user` is the whole operation: it reschedules the
/// user's subscriptions in the same transaction, so a new timezone neither
/// loses nor doubles a period.
pub fn apply_user_changes_in_tx(c: &mut DbConn, name: &str, ch: &ValidChanges) -> Result<PartyId> {
    let (id, kind) = find(c, name)?;
    if kind != "user" {
        return Err(Error::invalid(format!("{name:?} is a group, not a user")));
    }
    apply_changes_by_id(c, id, ch)?;
    Ok(id)
}

/// [`apply_user_changes_in_tx`] for a user already looked up.
pub(super) fn apply_changes_by_id(c: &mut DbConn, id: PartyId, ch: &ValidChanges) -> Result<()> {
    if let Some(tz) = ch.timezone {
        diesel::update(users::table.find(id.0))
            .set(users::timezone.eq(tz.name()))
            .execute(c)?;
    }
    if let Some(ws) = ch.week_start {
        diesel::update(users::table.find(id.0))
            .set(users::week_start.eq(i32::from(ws)))
            .execute(c)?;
    }
    if let Some(dh) = ch.daily_hour {
        diesel::update(users::table.find(id.0))
            .set(users::daily_hour.eq(i32::from(dh)))
            .execute(c)?;
    }
    if let Some(l) = &ch.locale {
        diesel::update(users::table.find(id.0))
            .set(users::locale.eq(l))
            .execute(c)?;
    }
    if let Some(q) = &ch.quiet_hours {
        diesel::update(users::table.find(id.0))
            .set(users::quiet_hours.eq(q))
            .execute(c)?;
    }
    Ok(())
}

impl ValidChanges {
    /// Whether these changes name quiet hours or a zone: what the
    /// notifications held for quiet hours wait on.
    pub fn moves_quiet_hours(&self) -> bool {
        self.quiet_hours.is_some() || self.timezone.is_some()
    }
    pub(super) fn timezone_name(&self) -> Option<&'static str> {
        self.timezone.map(|t| t.name())
    }
    pub(super) fn week_start_or(&self, d: u8) -> i32 {
        i32::from(self.week_start.unwrap_or(d))
    }
    pub(super) fn daily_hour_or(&self, h: u8) -> i32 {
        i32::from(self.daily_hour.unwrap_or(h))
    }
    pub(super) fn quiet_hours_or<'a>(&'a self, q: &'a str) -> &'a str {
        self.quiet_hours.as_deref().unwrap_or(q)
    }
    pub(super) fn locale_or<'a>(&'a self, l: &'a str) -> &'a str {
        self.locale.as_deref().unwrap_or(l)
    }
}
