//! The words of a digest: times in the recipient's zone and 12/24-hour
//! convention, and one human sentence per change in the Cosmo style —
//! "gr24 changed the start time of Janitor's Pipe Dream from 3:00 PM to
//! 4:00 PM PST on Mon, Nov 23".
//!
//! A sentence is a [`Line`]: text before the item's title, the title, text
//! after it, so the HTML template can set the title apart while every piece
//! stays untrusted text that the template escapes.

use std::borrow::Cow;

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

use super::compose::{AttrChange, ItemChange, Upcoming, When};
use crate::modlog::Action;
use crate::subscriptions::{Frequency, Kind};

/// How the recipient reads times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Style {
    pub tz: Tz,
    pub hour12: bool,
    pub month_first: bool,
}

/// Locales whose convention is the 12-hour clock (language, or language and
/// region). Everything else reads 24-hour.
const HOUR12: [&str; 14] = [
    "en", "en-US", "en-CA", "en-AU", "en-NZ", "en-IN", "en-PH", "es-US", "es-MX", "hi", "ar", "ko",
    "zh-TW", "ur",
];

impl Style {
    /// The style of a BCP 47 locale such as "en-US" or "de-DE".
    pub fn new(tz: Tz, locale: &str) -> Style {
        let lang = locale.split('-').next().unwrap_or("");
        let hour12 = HOUR12.iter().any(|l| {
            l.eq_ignore_ascii_case(locale) || (!l.contains('-') && l.eq_ignore_ascii_case(lang))
        }) && !matches!(locale, "en-GB" | "en-IE" | "en-ZA");
        let month_first = matches!(locale, "en-US" | "en" | "es-US" | "en-PH");
        Style {
            tz,
            hour12,
            month_first,
        }
    }

    /// "3:00 PM" or "15:00".
    pub fn time(&self, t: DateTime<Utc>) -> String {
        let l = t.with_timezone(&self.tz);
        if self.hour12 {
            l.format("%-I:%M %p").to_string()
        } else {
            l.format("%H:%M").to_string()
        }
    }

    /// The zone's abbreviation at `t`: "PST", "CET", or "+0545" where the
    /// zone has none.
    pub fn zone(&self, t: DateTime<Utc>) -> String {
        t.with_timezone(&self.tz).format("%Z").to_string()
    }

    /// "Mon, Nov 23" or "Mon 23 Nov".
    pub fn date(&self, t: DateTime<Utc>) -> String {
        let l = t.with_timezone(&self.tz);
        if self.month_first {
            l.format("%a, %b %-d").to_string()
        } else {
            l.format("%a %-d %b").to_string()
        }
    }

    /// "Mon, Nov 23, 3:00 PM PST" or "Mon 23 Nov, 15:00 CET".
    pub fn when(&self, t: DateTime<Utc>) -> String {
        format!("{}, {} {}", self.date(t), self.time(t), self.zone(t))
    }

    /// "Monday 9:00 AM" within the last six days of `until`, else the date.
    pub fn since(&self, t: DateTime<Utc>, until: DateTime<Utc>) -> String {
        if until - t < chrono::Duration::days(6) {
            let l = t.with_timezone(&self.tz);
            format!("{} {}", l.format("%A"), self.time(t))
        } else {
            self.date(t)
        }
    }

    fn same_day(&self, a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
        let (a, b) = (a.with_timezone(&self.tz), b.with_timezone(&self.tz));
        (a.year(), a.ordinal()) == (b.year(), b.ordinal())
    }

    /// "from 3:00 PM to 4:00 PM PST on Mon, Nov 23" when both are on the
    /// same local day, else both in full.
    pub fn from_to(&self, a: DateTime<Utc>, b: DateTime<Utc>) -> String {
        if self.same_day(a, b) && self.zone(a) == self.zone(b) {
            format!(
                "from {} to {} {} on {}",
                self.time(a),
                self.time(b),
                self.zone(b),
                self.date(b)
            )
        } else {
            format!("from {} to {}", self.when(a), self.when(b))
        }
    }
}

/// A sentence around an item's title: one string, and where the title
/// begins and ends in it (a digest's body holds fifty of these per
/// recipient when built from scratch, so each is one allocation, not three).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    text: String,
    title_at: usize,
    after_at: usize,
    /// Where the item lives in its source system: its title links there.
    url: Option<String>,
}

impl Line {
    /// The line of these three pieces.
    pub fn new(before: &str, title: &str, after: &str) -> Line {
        Line {
            text: [before, title, after].concat(),
            title_at: before.len(),
            after_at: before.len() + title.len(),
            url: None,
        }
    }

    /// The line with its item's address (validated when it was recorded).
    pub fn with_url(self, url: Option<&str>) -> Line {
        Line {
            url: url.map(str::to_string),
            ..self
        }
    }

    /// The item's address, if it has one.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The whole sentence.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The words before the title.
    pub fn before(&self) -> &str {
        &self.text[..self.title_at]
    }

    /// The item's title, clipped.
    pub fn title(&self) -> &str {
        &self.text[self.title_at..self.after_at]
    }

    /// The words after the title.
    pub fn after(&self) -> &str {
        &self.text[self.after_at..]
    }
}

/// Attribute changes spelled out per item; the rest are counted ("and 3
/// more changes"), so one item's line stays short however many
/// attributes an edit touched.
pub const MAX_CHANGES_SHOWN: usize = 5;

/// Longest value shown in a sentence, in characters.
const MAX_VALUE_CHARS: usize = 80;

/// A value cut to [`MAX_VALUE_CHARS`] characters (never inside one).
pub fn clip(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_VALUE_CHARS) + '…'.len_utf8());
    push_clip(&mut out, s);
    out
}

/// [`clip`] without its allocation: the head kept, and whether it was
/// cut (then an ellipsis follows it).
fn clipped(s: &str) -> (&str, bool) {
    // No more bytes than the limit: no more characters either. An ASCII
    // head: the limit's character starts at the limit's byte. Only other
    // text is walked character by character (this ran for every title and
    // value of every line, a tenth of composing a digest).
    let cut = if s.len() <= MAX_VALUE_CHARS {
        None
    } else if s.as_bytes()[..MAX_VALUE_CHARS].is_ascii() {
        Some(MAX_VALUE_CHARS)
    } else {
        s.char_indices().nth(MAX_VALUE_CHARS).map(|(i, _)| i)
    };
    match cut {
        Some(i) => (&s[..i], true),
        None => (s, false),
    }
}

/// [`clip`] of `s` appended to `out`.
fn push_clip(out: &mut String, s: &str) {
    let (head, cut) = clipped(s);
    out.push_str(head);
    if cut {
        out.push('…');
    }
}

/// "alice", "alice and bruno", "alice, bruno and 2 others".
pub fn people<S: AsRef<str>>(names: &[S]) -> String {
    let mut out = String::new();
    push_people(&mut out, names.len(), |i| Cow::Borrowed(names[i].as_ref()));
    out
}

/// [`people`] of `n` names appended to `out`: `name(i)` gives the i-th,
/// and only the first two are asked for.
pub fn push_people<'n>(out: &mut String, n: usize, name: impl Fn(usize) -> Cow<'n, str>) {
    match n {
        0 => out.push_str("Someone"),
        1 => out.push_str(&name(0)),
        _ => {
            out.push_str(&name(0));
            out.push_str(if n == 2 { " and " } else { ", " });
            out.push_str(&name(1));
            if n > 2 {
                let rest = n - 2;
                out.push_str(" and ");
                out.push_str(&rest.to_string());
                out.push_str(if rest == 1 { " other" } else { " others" });
            }
        }
    }
}

fn attribute_name(a: &str) -> Cow<'_, str> {
    match a {
        "start" => "start time".into(),
        "reminder" => "reminder".into(),
        "rrule" => "recurrence".into(),
        "kind" => "type".into(),
        "body" => "text".into(),
        other if other.contains('_') => other.replace('_', " ").into(),
        other => other.into(),
    }
}

fn instant(v: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(v)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A value appended to `out`: an instant (`t`, what [`instant`] made of
/// `v`) in the reader's style, anything else quoted and clipped.
fn push_value(out: &mut String, style: &Style, v: &str, t: Option<DateTime<Utc>>) {
    match t {
        Some(t) => out.push_str(&style.when(t)),
        None => {
            out.push('“');
            push_clip(out, v);
            out.push('”');
        }
    }
}

/// "from A to B", "to B", "from A to nothing", appended to `out`.
fn push_change_words(out: &mut String, style: &Style, c: &AttrChange) {
    match (c.old.as_deref(), c.new.as_deref()) {
        (Some(o), Some(n)) => match (instant(o), instant(n)) {
            (Some(a), Some(b)) => out.push_str(&style.from_to(a, b)),
            (a, b) => {
                out.push_str("from ");
                push_value(out, style, o, a);
                out.push_str(" to ");
                push_value(out, style, n, b);
            }
        },
        (None, Some(n)) => {
            out.push_str("to ");
            push_value(out, style, n, instant(n));
        }
        (Some(o), None) => {
            out.push_str("from ");
            push_value(out, style, o, instant(o));
            out.push_str(" to nothing");
        }
        (None, None) => out.push_str("to nothing"),
    }
}

/// The sentence for one item's net change. `who` names the actors,
/// `collection` the collection it belongs to.
pub fn change_line(style: &Style, c: &ItemChange, who: &str, collection: &str) -> Line {
    // Every piece is written straight into the line's one string: these
    // lines are most of building a digest's body from scratch.
    let mut text = String::with_capacity(who.len() + c.title.len().min(MAX_VALUE_CHARS) + 96);
    text.push_str(who);
    let mut changes = c.changes.iter();
    let first = changes.next();
    match c.action {
        Action::Created | Action::Deleted => {
            text.push_str(if c.action == Action::Created {
                " created the "
            } else {
                " deleted the "
            });
            push_clip(&mut text, &c.kind);
            text.push(' ');
        }
        Action::Added => text.push_str(" added "),
        Action::Removed => text.push_str(" removed "),
        Action::Now => text.push_str(" marked "),
        Action::Edited => match first {
            Some(a) => {
                text.push_str(" changed the ");
                text.push_str(&attribute_name(&a.attribute));
                text.push_str(" of ");
            }
            None => text.push_str(" changed "),
        },
    }
    let title_at = text.len();
    push_clip(&mut text, &c.title);
    let after_at = text.len();
    match c.action {
        Action::Created => {
            let starts = c
                .changes
                .iter()
                .find(|a| a.attribute == "start")
                .and_then(|a| a.new.as_deref())
                .and_then(instant);
            if let Some(t) = starts {
                text.push_str(", starting ");
                text.push_str(&style.when(t));
            }
        }
        Action::Added => {
            text.push_str(" to ");
            text.push_str(collection);
        }
        Action::Removed => {
            text.push_str(" from ");
            text.push_str(collection);
        }
        Action::Deleted => {}
        Action::Now => text.push_str(" as now"),
        Action::Edited => {
            if let Some(a) = first {
                text.push(' ');
                push_change_words(&mut text, style, a);
            }
            for a in changes.by_ref().take(MAX_CHANGES_SHOWN - 1) {
                text.push_str(", and the ");
                text.push_str(&attribute_name(&a.attribute));
                text.push(' ');
                push_change_words(&mut text, style, a);
            }
            let rest = changes.count();
            if rest > 0 {
                text.push_str(", and ");
                text.push_str(&count(rest, "more change", "more changes"));
            }
        }
    }
    Line {
        text,
        title_at,
        after_at,
        url: c.url.clone(),
    }
}

/// `line` marked as a change that happened before its digest's window
/// (recorded late): "Earlier, Mon, Nov 23, 8:59 AM PST: " before it.
pub fn earlier(style: &Style, line: Line, at: DateTime<Utc>) -> Line {
    let mut text = String::with_capacity(line.text.len() + 40);
    text.push_str("Earlier, ");
    text.push_str(&style.when(at));
    text.push_str(": ");
    let shift = text.len();
    text.push_str(&line.text);
    Line {
        text,
        title_at: line.title_at + shift,
        after_at: line.after_at + shift,
        url: line.url,
    }
}

/// The line for an upcoming item: "Mon, Nov 23, 10:00 AM EST: " title
/// " (reminder, repeats)".
pub fn upcoming_line(style: &Style, u: &Upcoming) -> Line {
    let mut text = style.when(u.at);
    text.push_str(": ");
    let title_at = text.len();
    push_clip(&mut text, &u.title);
    let after_at = text.len();
    let notes: &[&str] = match (u.what == When::Reminder, u.recurring) {
        (true, true) => &["reminder", "repeats"],
        (true, false) => &["reminder"],
        (false, true) => &["repeats"],
        (false, false) => &[],
    };
    if !notes.is_empty() {
        text.push_str(" (");
        text.push_str(&notes.join(", "));
        text.push(')');
    }
    Line {
        text,
        title_at,
        after_at,
        url: u.url.clone(),
    }
}

/// "Calendar", "Calendar and Wiki", "3 collections".
pub fn collections_phrase<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => "your collections".into(),
        [a] => a.as_ref().to_string(),
        [a, b] => format!("{} and {}", a.as_ref(), b.as_ref()),
        more => format!("{} collections", more.len()),
    }
}

/// A digest's subject, the same for every digest of one subscription
/// (mail readers that thread by subject, Gmail among them, keep a thread
/// only while the subject stays the same): "Daily digest: Calendar" for
/// what changed, "Weekly agenda: Calendar" for what is coming up; a
/// subscription to every collection (`None`) reads "all collections".
/// What a digest holds and since when is its first line instead.
pub fn subject(kind: Kind, frequency: Frequency, collection: Option<&str>) -> String {
    let every = match frequency {
        Frequency::Hourly => "Hourly",
        Frequency::Daily => "Daily",
        Frequency::Weekly => "Weekly",
    };
    let what = match kind {
        Kind::Modification => "digest",
        Kind::Forward => "agenda",
    };
    format!(
        "{every} {what}: {}",
        collection.unwrap_or("all collections")
    )
}

/// "1 change", "3 changes".
/// What a digest says when seen marks left `n` changes out.
pub fn seen_left_out(n: usize) -> String {
    if n == 1 {
        "1 change you have already seen is left out".into()
    } else {
        format!("{n} changes you have already seen are left out")
    }
}

pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests;
