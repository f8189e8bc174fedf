//! What the pages show, ready for the templates: subscriptions described in
//! the person's words (their language, their zone, their 12/24-hour clock,
//! as the digests write times), contact points masked, and the templates
//! themselves.
//! Every string from storage is escaped by askama (`.html` templates).

use std::collections::HashMap;

use askama::Template;

use crate::digest::words::Style;
use crate::i18n::Arg;
use crate::parties::{Channel, ContactPoint};
use crate::subscriptions::{Frequency, Subscription};
use crate::validate;

use super::Words;

/// A one-thing page: a bad link, a refusal, a failure.
#[derive(Template)]
#[template(path = "pages/message.html")]
pub struct MessagePage<'a> {
    pub t: super::Words,
    pub title: &'a str,
    pub text: &'a str,
    /// A link back to the manage page, when the person is known.
    pub manage: Option<&'a str>,
}

/// One subscription as a person reads it.
pub struct SubView {
    pub id: i64,
    /// The collection's name, or "all collections".
    pub what: String,
    /// "changes" or "upcoming items", in the reader's language.
    pub kind: String,
    /// "Daily at 9:00 AM", "Weekly on Monday at 09:00", "Every hour".
    pub when: String,
    /// "by email, sms".
    pub by: String,
    pub paused: bool,
    /// The hours to pick from, its own selected (none for hourly ones).
    pub hours: Vec<Choice>,
    /// A group's subscription that reaches the person through the group
    /// named here (its times are the group's).
    pub group: Option<String>,
    /// The person opted out of this group subscription.
    pub opted_out: bool,
    /// The form for how often and where (the person's own ones).
    pub cadence: Option<Cadence>,
    /// "Send it now" is offered: a modification digest, not paused, the
    /// person's own.
    pub flushable: bool,
}

/// The choices of one subscription's "how often and where" form.
pub struct Cadence {
    pub frequencies: Vec<Choice>,
    pub hours: Vec<Choice>,
    pub days: Vec<Choice>,
    /// The person's channels with an enabled address, and the ones the
    /// subscription has; ticked when it has them.
    pub channels: Vec<Choice>,
}

/// The "how often and where" form of `s`: its frequency, hour and day
/// selected (the person's daily hour and first day when it has none), the
/// channels the person can get it on (`usable`) and the ones it has.
pub fn cadence(
    t: &Words,
    s: &Subscription,
    style: &Style,
    (daily_hour, week_start): (i32, &str),
    usable: &[String],
) -> Cadence {
    let frequencies = [Frequency::Hourly, Frequency::Daily, Frequency::Weekly]
        .into_iter()
        .map(|f| Choice {
            value: f.as_str().into(),
            label: t.t(frequency_key(f)).into_owned(),
            selected: s.frequency == f.as_str(),
        })
        .collect();
    let day = s.day_of_week.map_or(
        week_start,
        |d| validate::weekday_name(d.rem_euclid(7) as u8),
    );
    let channels: Vec<Choice> = Channel::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| usable.iter().chain(&s.channels).any(|u| u == c))
        .map(|c| Choice {
            value: c.into(),
            label: t.channel(c),
            selected: s.channels.iter().any(|h| h == c),
        })
        .collect();
    Cadence {
        frequencies,
        hours: hour_choices(style, s.hour_of_day.unwrap_or(daily_hour)),
        days: day_choices(t, day),
        channels,
    }
}

/// One contact point, its address masked.
pub struct ContactView {
    /// The channel's name as the reader says it.
    pub label: String,
    pub masked: String,
    pub verified: bool,
    pub disabled: bool,
    /// A webhook's or a preset's URL: set by the operator alone, so the
    /// page offers no form for it.
    pub by_operator: bool,
}

/// The catalogue key of frequency `f` in a form's choices.
pub(crate) fn frequency_key(f: Frequency) -> &'static str {
    match f {
        Frequency::Hourly => "frequency-hourly",
        Frequency::Daily => "frequency-daily",
        Frequency::Weekly => "frequency-weekly",
    }
}

/// A local hour as the person's clock writes it: "9:00 AM" or "09:00".
pub(crate) fn hour_label(style: &Style, h: i32) -> String {
    if style.hour12 {
        let (h12, ampm) = match h {
            0 => (12, "AM"),
            1..=11 => (h, "AM"),
            12 => (12, "PM"),
            _ => (h - 12, "PM"),
        };
        format!("{h12}:00 {ampm}")
    } else {
        format!("{h:02}:00")
    }
}

/// "Daily at 9:00 AM", "Weekly on Monday at 09:00", "Every hour", in
/// `t`'s language; `hour12` says the clock.
pub fn when(
    t: &Words,
    style: &Style,
    frequency: &str,
    day: Option<i32>,
    hour: Option<i32>,
) -> String {
    match (frequency, day, hour) {
        ("weekly", Some(d), Some(h)) => t.f(
            "when-weekly",
            &[
                ("day", Arg::Str(t.day(d))),
                ("hour", Arg::Str(&hour_label(style, h))),
            ],
        ),
        ("daily", _, Some(h)) => t.f1("when-daily", "hour", &hour_label(style, h)),
        ("hourly", _, _) => t.t("when-hourly").into_owned(),
        (f, _, _) => f.to_string(),
    }
}

/// Describes `s` for its owner; `names` maps collection ids to names.
pub fn describe(
    t: &Words,
    s: &Subscription,
    names: &HashMap<i64, String>,
    style: &Style,
) -> SubView {
    let what = match s.collection {
        Some(k) => names
            .get(&k.0)
            .cloned()
            .unwrap_or_else(|| t.f1("collection-numbered", "id", &k.to_string())),
        None => t.t("all-collections").into_owned(),
    };
    SubView {
        id: s.id.0,
        what,
        kind: t
            .t(if s.kind == "forward" {
                "kind-upcoming"
            } else {
                "kind-changes"
            })
            .into_owned(),
        when: when(t, style, &s.frequency, s.day_of_week, s.hour_of_day),
        by: t.f1(
            "sub-by",
            "channels",
            &s.channels
                .iter()
                .map(|c| t.channel(c))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        paused: s.paused,
        hours: s
            .hour_of_day
            .filter(|_| s.frequency != "hourly")
            .map(|h| hour_choices(style, h))
            .unwrap_or_default(),
        group: None,
        opted_out: false,
        cadence: None,
        flushable: false,
    }
}

/// Describes the group subscription `s`, which reaches a member through
/// group `group`: no hours to pick (the group's are the group's), and
/// whether the member opted out of it.
pub(crate) fn describe_group(
    t: &Words,
    s: &Subscription,
    group: String,
    opted_out: bool,
    names: &HashMap<i64, String>,
    style: &Style,
) -> SubView {
    SubView {
        hours: Vec::new(),
        group: Some(group),
        opted_out,
        ..describe(t, s, names, style)
    }
}

/// An address shown without giving it away: `a***@example.com`,
/// `+34 *** ** 22`, `https://hooks.example.com/***` (a webhook's or a
/// preset's path may carry a token of the receiver's), `@a***:example.org`
/// (a Matrix user; a room `!***:example.org`).
pub fn mask(channel: &str, address: &str) -> String {
    if let Some(url) = Channel::parse(channel).ok().filter(|c| c.is_url()) {
        return url.shown(address);
    }
    if channel == Channel::Matrix.as_str() {
        let (local, server) = address.split_once(':').unwrap_or((address, ""));
        let shown: String = local
            .chars()
            .take(if local.starts_with('@') { 2 } else { 1 })
            .collect();
        return format!("{shown}***:{server}");
    }
    let first: String = address.chars().take(1).collect();
    if channel == "sms" {
        let chars: Vec<char> = address.chars().filter(|c| !c.is_whitespace()).collect();
        if chars.len() < 6 {
            return "***".into();
        }
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 2..].iter().collect();
        return format!("{head} *** ** {tail}");
    }
    match address.rsplit_once('@') {
        Some((_, domain)) => format!("{first}***@{domain}"),
        None => format!("{first}***"),
    }
}

pub fn contact(t: &Words, cp: &ContactPoint) -> ContactView {
    ContactView {
        label: t.channel(&cp.channel),
        masked: mask(&cp.channel, &cp.address),
        verified: cp.verified,
        disabled: cp.disabled,
        by_operator: Channel::parse(&cp.channel).is_ok_and(Channel::is_url),
    }
}

/// An option of a `<select>`.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// The hours of the day in the person's clock, `current` selected.
pub(crate) fn hour_choices(style: &Style, current: i32) -> Vec<Choice> {
    (0..24)
        .map(|h| Choice {
            value: h.to_string(),
            label: hour_label(style, h),
            selected: h == current,
        })
        .collect()
}

/// The days of the week in `t`'s language, `current` (mon..sun) selected.
pub(crate) fn day_choices(t: &Words, current: &str) -> Vec<Choice> {
    (0..7u8)
        .map(|d| Choice {
            value: validate::weekday_name(d).into(),
            label: t.day(i32::from(d)).into(),
            selected: validate::weekday_name(d) == current,
        })
        .collect()
}

/// Every IANA zone chrono-tz knows, `current` selected.
pub(crate) fn zone_choices(current: &str) -> Vec<Choice> {
    chrono_tz::TZ_VARIANTS
        .iter()
        .map(|z| Choice {
            value: z.name().into(),
            label: z.name().into(),
            selected: z.name() == current,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_masked() {
        assert_eq!(mask("email", "asha@example.com"), "a***@example.com");
        assert_eq!(mask("xmpp", "bo@chat.example"), "b***@chat.example");
        assert_eq!(mask("sms", "+34600111222"), "+34 *** ** 22");
        assert_eq!(mask("sms", "+341"), "***");
        assert_eq!(
            mask("webhook", "https://hooks.example.com/t/abc?k=1"),
            "https://hooks.example.com/***"
        );
        assert_eq!(
            mask("slack", "https://hooks.slack.com/services/T0/B0/xyz"),
            "https://hooks.slack.com/***"
        );
        assert_eq!(mask("email", "é@x"), "é***@x");
    }

    #[test]
    fn hours_follow_the_clock() {
        let us = Style::new(chrono_tz::UTC, "en-US");
        let gb = Style::new(chrono_tz::UTC, "en-GB");
        assert_eq!(hour_label(&us, 0), "12:00 AM");
        assert_eq!(hour_label(&us, 9), "9:00 AM");
        assert_eq!(hour_label(&us, 12), "12:00 PM");
        assert_eq!(hour_label(&us, 21), "9:00 PM");
        assert_eq!(hour_label(&gb, 9), "09:00");
        assert_eq!(hour_label(&gb, 21), "21:00");
    }
}
