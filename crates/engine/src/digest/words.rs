//! The words of a digest: times in the recipient's zone and 12/24-hour
//! convention, and one human sentence per change in the Cosmo style —
//! "gr24 changed the start time of Janitor's Pipe Dream from 3:00 PM to
//! 4:00 PM PST on Mon, Nov 23".
//!
//! A sentence is a [`Line`]: text before the item's title, the title, text
//! after it, so the HTML template can set the title apart while every piece
//! stays untrusted text that the template escapes.

use std::borrow::Cow;

use crate::i18n::{catalogs, Arg, Locale};

use chrono::{DateTime, Utc};
pub use style::Style;

use super::compose::{AttrChange, ItemChange, Upcoming, When};
use crate::modlog::Action;
use crate::subscriptions::{Frequency, Kind};

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
    #[cfg(test)]
    pub(crate) fn with_url(self, url: Option<&str>) -> Line {
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

/// "alice", "alice and bruno", "alice, bruno and 2 others" (in English).
pub fn people<S: AsRef<str>>(lang: Locale, names: &[S]) -> String {
    let mut out = String::new();
    push_people(&mut out, lang, names.len(), |i| {
        Cow::Borrowed(names[i].as_ref())
    });
    out
}

/// [`people`] of `n` names appended to `out`: `name(i)` gives the i-th,
/// and only the first two are asked for.
pub(crate) fn push_people<'n>(
    out: &mut String,
    lang: Locale,
    n: usize,
    name: impl Fn(usize) -> Cow<'n, str>,
) {
    let c = catalogs();
    match n {
        0 => out.push_str(c.text(lang, "someone")),
        1 => out.push_str(&name(0)),
        _ => {
            let (first, second) = (name(0), name(1));
            let args = [
                ("first", Arg::Str(&first)),
                ("second", Arg::Str(&second)),
                ("rest", Arg::Num(n - 2)),
            ];
            let key = if n == 2 { "people-two" } else { "people-more" };
            c.write(out, lang, key, &args, None);
        }
    }
}

/// An attribute's name in `lang`: the known ones translated, the others
/// as stored (underscores as spaces).
fn attribute_name(lang: Locale, a: &str) -> Cow<'_, str> {
    let key = match a {
        "start" => "attribute-start",
        "reminder" => "attribute-reminder",
        "rrule" => "attribute-rrule",
        "kind" => "attribute-kind",
        "body" => "attribute-body",
        other if other.contains('_') => return other.replace('_', " ").into(),
        other => return other.into(),
    };
    catalogs().text(lang, key).into()
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
        Some(t) => style.push_when(out, t),
        None => {
            let value = |o: &mut String| push_clip(o, v);
            let args = [("value", Arg::Write(&value))];
            catalogs().write(out, style.lang, "quoted", &args, None);
        }
    }
}

/// "from A to B", "to B", "from A to nothing", appended to `out`.
fn push_change_words(out: &mut String, style: &Style, c: &AttrChange) {
    let (old, new) = (c.old.as_deref(), c.new.as_deref());
    let (a, b) = (old.and_then(instant), new.and_then(instant));
    if let (Some(a), Some(b)) = (a, b) {
        return style.push_from_to(out, a, b);
    }
    let from = |o: &mut String| push_value(o, style, old.unwrap_or(""), a);
    let to = |o: &mut String| push_value(o, style, new.unwrap_or(""), b);
    let key = match (old, new) {
        (Some(_), Some(_)) => "change-from-to",
        (None, Some(_)) => "change-to",
        (Some(_), None) => "change-from-to-nothing",
        (None, None) => "change-to-nothing",
    };
    let args = [("from", Arg::Write(&from)), ("to", Arg::Write(&to))];
    catalogs().write(out, style.lang, key, &args, None);
}

/// The sentence for one item's net change. `who` names the actors,
/// `collection` the collection it belongs to.
pub(crate) fn change_line(style: &Style, c: &ItemChange, who: &str, collection: &str) -> Line {
    // Every piece is written straight into the line's one string: these
    // lines are most of building a digest's body from scratch.
    let mut text = String::with_capacity(who.len() + c.title.len().min(MAX_VALUE_CHARS) + 96);
    let cat = catalogs();
    let lang = style.lang;
    let mut changes = c.changes.iter();
    let first = changes.next();
    let title = |o: &mut String| push_clip(o, &c.title);
    let kind = |o: &mut String| push_clip(o, &c.kind);
    let starts = (c.action == Action::Created)
        .then(|| c.changes.iter().find(|a| a.attribute == "start"))
        .flatten()
        .and_then(|a| a.new.as_deref())
        .and_then(instant);
    let when = |o: &mut String| {
        if let Some(t) = starts {
            style.push_when(o, t)
        }
    };
    let change = |o: &mut String| {
        if let Some(a) = first {
            push_change_words(o, style, a)
        }
    };
    let attribute = first.map_or(Cow::Borrowed(""), |a| attribute_name(lang, &a.attribute));
    let also = |o: &mut String| {
        for a in changes.clone().take(MAX_CHANGES_SHOWN - 1) {
            let name = attribute_name(lang, &a.attribute);
            let change = |o: &mut String| push_change_words(o, style, a);
            let args = [
                ("attribute", Arg::Str(&name)),
                ("change", Arg::Write(&change)),
            ];
            cat.write(o, lang, "line-edited-also", &args, None);
        }
        let rest = changes
            .clone()
            .count()
            .saturating_sub(MAX_CHANGES_SHOWN - 1);
        if rest > 0 {
            cat.write(
                o,
                lang,
                "line-edited-more",
                &[("count", Arg::Num(rest))],
                None,
            );
        }
    };
    let key = match c.action {
        Action::Created if starts.is_some() => "line-created-starting",
        Action::Created => "line-created",
        Action::Deleted => "line-deleted",
        Action::Added => "line-added",
        Action::Removed => "line-removed",
        Action::Now => "line-now",
        Action::Edited if first.is_some() => "line-edited",
        Action::Edited => "line-edited-bare",
    };
    let args = [
        ("who", Arg::Str(who)),
        ("title", Arg::Write(&title)),
        ("kind", Arg::Write(&kind)),
        ("when", Arg::Write(&when)),
        ("collection", Arg::Str(collection)),
        ("attribute", Arg::Str(&attribute)),
        ("change", Arg::Write(&change)),
        ("also", Arg::Write(&also)),
    ];
    let (title_at, after_at) = cat
        .write(&mut text, lang, key, &args, Some("title"))
        .unwrap_or((text.len(), text.len()));
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
    let when = |o: &mut String| style.push_when(o, at);
    let args = [("when", Arg::Write(&when)), ("line", Arg::Str(&line.text))];
    let shift = catalogs()
        .write(&mut text, style.lang, "line-earlier", &args, Some("line"))
        .map_or(0, |(s, _)| s);
    Line {
        text,
        title_at: line.title_at + shift,
        after_at: line.after_at + shift,
        url: line.url,
    }
}

/// The line for an upcoming item: "Mon, Nov 23, 10:00 AM EST: " title
/// " (reminder, repeats)".
pub(crate) fn upcoming_line(style: &Style, u: &Upcoming) -> Line {
    let mut text = String::with_capacity(u.title.len().min(MAX_VALUE_CHARS) + 48);
    let c = catalogs();
    let notes = match (u.what == When::Reminder, u.recurring) {
        (true, true) => Some("note-reminder-repeats"),
        (true, false) => Some("note-reminder"),
        (false, true) => Some("note-repeats"),
        (false, false) => None,
    };
    let when = |o: &mut String| style.push_when(o, u.at);
    let title = |o: &mut String| push_clip(o, &u.title);
    let note = notes.map_or("", |k| c.text(style.lang, k));
    let args = [
        ("when", Arg::Write(&when)),
        ("title", Arg::Write(&title)),
        ("notes", Arg::Str(note)),
    ];
    let key = match notes {
        Some(_) => "line-upcoming-notes",
        None => "line-upcoming",
    };
    let (title_at, after_at) = c
        .write(&mut text, style.lang, key, &args, Some("title"))
        .unwrap_or((text.len(), text.len()));
    Line {
        text,
        title_at,
        after_at,
        url: u.url.clone(),
    }
}

/// "Calendar", "Calendar and Wiki", "3 collections".
pub(crate) fn collections_phrase<S: AsRef<str>>(lang: Locale, names: &[S]) -> String {
    let c = catalogs();
    match names {
        [] => c.text(lang, "collections-yours").to_string(),
        [a] => a.as_ref().to_string(),
        [a, b] => c.format(
            lang,
            "collections-two",
            &[
                ("first", Arg::Str(a.as_ref())),
                ("second", Arg::Str(b.as_ref())),
            ],
        ),
        more => c.format(lang, "collections-many", &[("count", Arg::Num(more.len()))]),
    }
}

/// A digest's subject, the same for every digest of one subscription
/// (mail readers that thread by subject, Gmail among them, keep a thread
/// only while the subject stays the same): "Daily digest: Calendar" for
/// what changed, "Weekly agenda: Calendar" for what is coming up; a
/// subscription to every collection (`None`) reads "all collections".
/// What a digest holds and since when is its first line instead.
pub fn subject(lang: Locale, kind: Kind, frequency: Frequency, collection: Option<&str>) -> String {
    let key = match (kind, frequency) {
        (Kind::Modification, Frequency::Hourly) => "subject-hourly-digest",
        (Kind::Modification, Frequency::Daily) => "subject-daily-digest",
        (Kind::Modification, Frequency::Weekly) => "subject-weekly-digest",
        (Kind::Forward, Frequency::Hourly) => "subject-hourly-agenda",
        (Kind::Forward, Frequency::Daily) => "subject-daily-agenda",
        (Kind::Forward, Frequency::Weekly) => "subject-weekly-agenda",
    };
    let c = catalogs();
    let all = c.text(lang, "all-collections");
    c.format(
        lang,
        key,
        &[("collection", Arg::Str(collection.unwrap_or(all)))],
    )
}

/// What a digest says when seen marks left `n` changes out.
pub(crate) fn seen_left_out(lang: Locale, n: usize) -> String {
    catalogs().format(lang, "seen-left-out", &[("count", Arg::Num(n))])
}

mod style;
#[cfg(test)]
mod tests;
