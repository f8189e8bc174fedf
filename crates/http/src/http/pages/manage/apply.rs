//! What the manage page's forms do (`POST /s/{code}`): each action through
//! the library call the CLI and the API make, on the person's own
//! subscriptions (another's is NotFound: the bad-link page).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::db::DbConn;
use crate::error::Error;
use crate::i18n::{catalogs, Locale};
use crate::ids::{PartyId, SubscriptionId};
use crate::parties::{self, Channel, ContactChange, UserChanges};
use crate::subscriptions::{self, Retime};
use crate::{manage, remove};

/// The subscription a form names (`subscription`); none, or not a
/// number, is NotFound (the bad-link page).
fn subscription_field(f: &HashMap<String, String>) -> crate::Result<SubscriptionId> {
    f.get("subscription")
        .and_then(|s| s.parse::<i64>().ok())
        .map(SubscriptionId)
        .ok_or_else(|| Error::not_found("no such subscription"))
}

/// One of `party`'s subscriptions, named by a form field; another
/// person's, or none, is NotFound (the bad-link page).
pub(super) fn own_subscription(
    c: &mut DbConn,
    party: PartyId,
    f: &HashMap<String, String>,
) -> crate::Result<SubscriptionId> {
    let id = subscription_field(f)?;
    if subscriptions::ids_of_party(c, party)?.contains(&id) {
        Ok(id)
    } else {
        Err(Error::not_found("no such subscription"))
    }
}

/// A group subscription that reaches `party`, named by a form field; any
/// other, or none, is NotFound (the bad-link page).
fn reaching_subscription(
    c: &mut DbConn,
    party: PartyId,
    f: &HashMap<String, String>,
) -> crate::Result<SubscriptionId> {
    let id = subscription_field(f)?;
    if subscriptions::reaching(c, party)?
        .iter()
        .any(|s| s.id == id)
    {
        Ok(id)
    } else {
        Err(Error::not_found("no such subscription"))
    }
}

/// A refusal of the page's own, in `lang`: `key` names its one line.
fn refused(lang: Locale, key: &str) -> Error {
    Error::invalid(catalogs().format(lang, key, &[]))
}

/// Does what the form asked; returns the action done. The page's own
/// refusals are in `lang`; a field's validator refuses with its English
/// line and a kind, which the page says in `lang` (`refusal_line`).
pub(super) fn apply(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    f: &HashMap<String, String>,
    lang: Locale,
) -> crate::Result<&'static str> {
    let field = |k: &str| f.get(k).map(String::as_str);
    match field("action").unwrap_or("") {
        "pause" => {
            let id = own_subscription(c, party, f)?;
            manage::change_subscription(c, now, id, Some(true), &Retime::default())?;
            Ok("pause")
        }
        "resume" => {
            let id = own_subscription(c, party, f)?;
            manage::change_subscription(c, now, id, Some(false), &Retime::default())?;
            Ok("resume")
        }
        "hour" => {
            let id = own_subscription(c, party, f)?;
            let retime = Retime {
                hour: Some(hour_field(f)?),
                ..Retime::default()
            };
            manage::change_subscription(c, now, id, None, &retime)?;
            Ok("hour")
        }
        "cadence" => {
            let id = own_subscription(c, party, f)?;
            manage::change_subscription(c, now, id, None, &cadence(f, lang)?)?;
            Ok("cadence")
        }
        "end" => {
            let id = own_subscription(c, party, f)?;
            if field("confirm") != Some("yes") {
                return Err(refused(lang, "refused-end"));
            }
            remove::subscription(c, now, id)?;
            Ok("end")
        }
        "prefs" => {
            let daily_hour = match field("daily_hour") {
                Some(h) => Some(i64::from(crate::validate::hour_text(h)?)),
                None => None,
            };
            let ch = UserChanges {
                timezone: field("timezone").map(str::to_string),
                week_start: field("week_start").map(str::to_string),
                daily_hour,
                locale: field("locale").map(|l| l.trim().to_string()),
                quiet_hours: field("quiet_hours").map(str::to_string),
            };
            let name = parties::name_of(c, party)?;
            manage::update_user(c, &name, &ch)?;
            Ok("prefs")
        }
        "optout" => {
            let id = reaching_subscription(c, party, f)?;
            c.write_tx(|c| remove::opt_out_in_tx(c, now, party, &[id], remove::Via::Page))?;
            Ok("optout")
        }
        "optin" => {
            let id = reaching_subscription(c, party, f)?;
            c.write_tx(|c| subscriptions::opt_in_in_tx(c, id, party))?;
            Ok("optin")
        }
        "matrix" | "unmatrix" => matrix(c, now, party, (field("action"), field("matrix")), lang),
        "stop" => {
            let ids = subscriptions::ids_of_party(c, party)?;
            let groups: Vec<SubscriptionId> = subscriptions::reaching(c, party)?
                .iter()
                .map(|s| s.id)
                .collect();
            c.write_tx(|c| {
                remove::unsubscribe_in_tx(c, now, &ids, remove::Via::Page)?;
                remove::opt_out_in_tx(c, now, party, &groups, remove::Via::Page)
            })?;
            Ok("stop")
        }
        other => Err(Error::invalid(format!("unknown action {other:?}"))),
    }
}

/// `matrix`: the person's Matrix ID set to the form's `matrix` (spaces
/// around it dropped; validated as `contact --set` validates it: enabled,
/// not verified, a new direct room at the next delivery; the same ID
/// again changes nothing); `unmatrix`: it is removed. Webhook and preset URLs have no such form: the operator
/// sets them.
fn matrix(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: PartyId,
    (action, id): (Option<&str>, Option<&str>),
    lang: Locale,
) -> crate::Result<&'static str> {
    let name = parties::name_of(c, party)?;
    let ch = parties::Channel::Matrix;
    if action == Some("unmatrix") {
        return match parties::remove_contact(c, &name, ch) {
            Err(Error::NotFound(_)) => Err(refused(lang, "refused-no-matrix")),
            other => other.map(|_| "unmatrix"),
        };
    }
    let id = ch.validate_address(id.unwrap_or("").trim_matches(' '))?;
    // The same ID again keeps its state and its room, as a user PUT does.
    let same = parties::contact_points(c, party)?
        .iter()
        .any(|p| p.channel == ch.as_str() && p.address == id);
    if !same {
        parties::change_contact(c, now, &name, ch, &ContactChange::Set(id))?;
    }
    Ok("matrix")
}

/// The form's `hour`, an hour of the day.
fn hour_field(f: &HashMap<String, String>) -> crate::Result<i64> {
    let h = f.get("hour").map(String::as_str).unwrap_or("");
    Ok(i64::from(crate::validate::hour_text(h)?))
}

/// `cadence`: the subscription's frequency, hour, weekday and channels at
/// once. The form sends an hour and a day whatever the frequency; only
/// those the frequency takes are passed on (hourly neither, daily the
/// hour, weekly both). Each ticked `ch_CHANNEL` is a channel, at least one.
fn cadence(f: &HashMap<String, String>, lang: Locale) -> crate::Result<Retime> {
    let frequency = f.get("frequency").cloned().unwrap_or_default();
    let channels: Vec<String> = Channel::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| f.contains_key(&format!("ch_{c}")))
        .map(String::from)
        .collect();
    if channels.is_empty() {
        return Err(refused(lang, "refused-channels"));
    }
    let (hour, day) = match subscriptions::Frequency::parse(&frequency)? {
        subscriptions::Frequency::Hourly => (None, None),
        subscriptions::Frequency::Daily => (Some(hour_field(f)?), None),
        subscriptions::Frequency::Weekly => (
            Some(hour_field(f)?),
            Some(f.get("day").cloned().unwrap_or_default()),
        ),
    };
    Ok(Retime {
        frequency: Some(frequency),
        hour,
        day,
        channels: Some(channels),
    })
}
