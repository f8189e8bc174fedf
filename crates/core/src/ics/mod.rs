//! iCalendar (RFC 5545) objects for iMIP (RFC 6047): a `VCALENDAR` with
//! `METHOD:PUBLISH` holding one `VEVENT` per item, and a `VTIMEZONE` for
//! each zone a start is written in ([`zone`]).
//!
//! Written by hand, the few properties digests need: content lines end in
//! CRLF and are folded at 75 octets, never inside a UTF-8 character
//! ([`fold`]); TEXT values escape `\`, `;`, `,` and line ends, and lose
//! every other control character ([`escape_text`]); URI and RECUR values
//! lose control characters. So no title, rule or address can end a line
//! and start a property of its own.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

mod merge;
mod zone;

pub use merge::merge;

/// The longest content line, in octets, before it is folded (RFC 5545
/// §3.1), the CRLF aside.
pub const LINE_OCTETS: usize = 75;

/// When an event starts or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Time {
    /// An instant written in UTC (`…Z`), no zone.
    Utc(DateTime<Utc>),
    /// An instant written as local time in a zone (`;TZID=…`), whose
    /// `VTIMEZONE` the calendar carries.
    Zoned(DateTime<Utc>, Tz),
    /// A whole day (`;VALUE=DATE`).
    Date(NaiveDate),
}

/// How an event ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `DTEND`.
    At(Time),
    /// `DURATION`.
    For(Duration),
}

/// One `VEVENT`.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    /// Unique and stable for the item: `UID`.
    pub uid: &'a str,
    /// `SUMMARY`, any text.
    pub summary: &'a str,
    pub start: Time,
    /// `None`: as RFC 5545 reads a start alone (an instant lasts no time,
    /// a day the whole day).
    pub end: Option<End>,
    /// An RFC 5545 `RRULE` value (an `RRULE:` prefix is dropped); the
    /// series starts at `start`.
    pub rrule: Option<&'a str>,
    pub url: Option<&'a str>,
    /// A `VALARM` this long after each start (before it when negative).
    pub alarm: Option<Duration>,
}

/// Who publishes the calendar: `ORGANIZER`, which iTIP's `PUBLISH` asks
/// every event to carry (RFC 5546 §3.2.1).
#[derive(Debug, Clone, Copy)]
pub struct Organizer<'a> {
    pub name: Option<&'a str>,
    pub address: &'a str,
}

/// What every calendar begins with.
const HEAD: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//digestd//digest calendar//EN\r\n\
                    CALSCALE:GREGORIAN\r\nMETHOD:PUBLISH\r\n";

/// Zones a recurring event starts in are described this far past `cover`,
/// for clients that convert its later instances with the `VTIMEZONE`
/// rather than their own zone data.
const RECURRING_AHEAD_DAYS: i64 = 2 * 366;

/// The calendar of `events`, stamped `stamp` (`DTSTAMP`). Each zone's
/// `VTIMEZONE` describes its offsets at every start and end written in it
/// and over `cover` (the span the events were listed for), and two years
/// past it for a zone of a recurring event.
pub fn calendar(
    events: &[Event],
    organizer: Option<Organizer>,
    stamp: DateTime<Utc>,
    cover: (DateTime<Utc>, DateTime<Utc>),
) -> String {
    let mut zones: BTreeMap<&'static str, (Tz, Vec<zone::Span>)> = BTreeMap::new();
    for e in events {
        let ahead = Duration::days(if e.rrule.is_some() {
            RECURRING_AHEAD_DAYS
        } else {
            0
        });
        let end = match e.end {
            Some(End::At(t)) => Some(t),
            _ => None,
        };
        for t in [Some(e.start), end].into_iter().flatten() {
            if let Some((at, tz)) = zoned(t, e.rrule.is_some()) {
                let z = zones.entry(tz.name()).or_insert_with(|| (tz, vec![]));
                z.1.extend([(at, at), (cover.0, cover.1 + ahead)]);
            }
        }
    }
    let mut out = Out {
        s: HEAD.to_string(),
    };
    for (tz, spans) in zones.values_mut() {
        zone::vtimezone(&mut out, *tz, spans);
    }
    for e in events {
        event(&mut out, e, organizer, stamp);
    }
    out.line("END", "VCALENDAR");
    out.s
}

fn event(out: &mut Out, e: &Event, organizer: Option<Organizer>, stamp: DateTime<Utc>) {
    let recurring = e.rrule.is_some();
    out.line("BEGIN", "VEVENT");
    out.line("UID", &escape_text(e.uid));
    out.line("DTSTAMP", &utc(stamp));
    if let Some(o) = organizer {
        let name = o
            .name
            .map(|n| format!(";CN={}", param(n)))
            .unwrap_or_default();
        out.line(
            &format!("ORGANIZER{name}"),
            &format!("mailto:{}", uri(o.address)),
        );
    }
    time(out, "DTSTART", e.start, recurring);
    match e.end {
        Some(End::At(t)) => time(out, "DTEND", t, recurring),
        Some(End::For(d)) => out.line("DURATION", &duration(d)),
        None => {}
    }
    if let Some(rule) = e.rrule {
        let rule = rule.trim();
        let rule = match rule.get(..6) {
            Some(p) if p.eq_ignore_ascii_case("RRULE:") => &rule[6..],
            _ => rule,
        };
        out.line("RRULE", &uri(rule));
    }
    out.line("SUMMARY", &escape_text(e.summary));
    if let Some(u) = e.url {
        out.line("URL", &uri(u));
    }
    if let Some(d) = e.alarm {
        out.line("BEGIN", "VALARM");
        out.line("ACTION", "DISPLAY");
        out.line("DESCRIPTION", &escape_text(e.summary));
        out.line("TRIGGER", &duration(d));
        out.line("END", "VALARM");
    }
    out.line("END", "VEVENT");
}

/// The instant and zone `t` is written in as local time, or `None` when it
/// is written in UTC or as a date: a UTC zone, or (for an event that does
/// not repeat) the second of two instants a clock set back reads alike,
/// which local time would name as the first (RFC 5545 §3.3.5).
fn zoned(t: Time, recurring: bool) -> Option<(DateTime<Utc>, Tz)> {
    let Time::Zoned(at, tz) = t else { return None };
    if is_utc(tz) {
        return None;
    }
    let local = at.with_timezone(&tz).naive_local();
    match tz.from_local_datetime(&local) {
        LocalResult::Ambiguous(first, _) if !recurring && first.timestamp() != at.timestamp() => {
            None
        }
        _ => Some((at, tz)),
    }
}

fn is_utc(tz: Tz) -> bool {
    matches!(
        tz.name(),
        "UTC" | "UCT" | "Zulu" | "Universal" | "Etc/UTC" | "Etc/UCT" | "Etc/Zulu" | "Etc/Universal"
    )
}

fn time(out: &mut Out, name: &str, t: Time, recurring: bool) {
    match (t, zoned(t, recurring)) {
        (Time::Date(d), _) => out.line(
            &format!("{name};VALUE=DATE"),
            &d.format("%Y%m%d").to_string(),
        ),
        (_, Some((at, tz))) => out.line(
            &format!("{name};TZID={}", param(tz.name())),
            &local(at.with_timezone(&tz).naive_local()),
        ),
        (Time::Utc(at) | Time::Zoned(at, _), None) => out.line(name, &utc(at)),
    }
}

/// `20261124T090000Z`, to the second.
fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// `20261124T090000`, local time with no zone.
fn local(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%S").to_string()
}

/// An RFC 5545 DURATION: `-PT15M`, `P1DT2H`, `PT0S`.
pub fn duration(d: Duration) -> String {
    let secs = d.num_seconds();
    let (sign, mut s) = if secs < 0 { ("-", -secs) } else { ("", secs) };
    let days = s / 86_400;
    s %= 86_400;
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    let mut out = format!("{sign}P");
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if s > 0 || days == 0 {
        out.push('T');
        for (n, unit) in [(h, 'H'), (m, 'M'), (sec, 'S')] {
            if n > 0 {
                out.push_str(&format!("{n}{unit}"));
            }
        }
        if s == 0 {
            out.push_str("0S");
        }
    }
    out
}

/// A TEXT value (RFC 5545 §3.3.11): `\`, `;` and `,` escaped, every line
/// end (CRLF, CR or LF) as `\n`, and any other control character but tab
/// dropped.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push_str("\\n");
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A value that is not TEXT (a URI, a rule): control characters dropped.
fn uri(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

/// A parameter value, quoted when it holds `;`, `:` or `,` (RFC 5545
/// §3.1), with control characters and `"` (which no parameter value may
/// hold) dropped.
fn param(s: &str) -> String {
    let v: String = s.chars().filter(|c| !c.is_control() && *c != '"').collect();
    if v.contains([';', ':', ',']) {
        format!("\"{v}\"")
    } else {
        v
    }
}

/// `line` folded (RFC 5545 §3.1): at most [`LINE_OCTETS`] octets a line,
/// the leading space of a continuation included, cut only between
/// characters; each line ends in CRLF.
pub fn fold(line: &str, out: &mut String) {
    let mut used = 0;
    for c in line.chars() {
        let n = c.len_utf8();
        if used + n > LINE_OCTETS {
            out.push_str("\r\n ");
            used = 1;
        }
        out.push(c);
        used += n;
    }
    out.push_str("\r\n");
}

/// Content lines being written.
#[derive(Default)]
struct Out {
    s: String,
}

impl Out {
    /// One content line: `name` (with its parameters) and a value already
    /// escaped for its type.
    fn line(&mut self, name: &str, value: &str) {
        fold(&format!("{name}:{value}"), &mut self.s);
    }
}

#[cfg(test)]
mod tests;
