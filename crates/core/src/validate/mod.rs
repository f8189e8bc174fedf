//! Validators for everything a person or another system hands us. Each
//! returns the normalised value or an [`Invalid`] with a one-line
//! message naming the field; none of them touches storage.
//! Their hostile-input tests are in `validate/tests.rs`.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

pub use crate::error::Invalid;
use crate::error::{RefusalKind as Kind, Result};

mod link;
mod matrix;
mod net;
mod quiet;
mod webhook;
pub use link::{item_url, MAX_ITEM_URL};
pub use matrix::{homeserver_url, is_matrix_room, is_new_localpart, matrix_id, MAX_MATRIX_ID};
pub use net::{client_block, ip_net, ip_nets, IpNet};
pub use quiet::{quiet_hours, quiet_hours_stored, QuietHours};
pub use webhook::{webhook_url, why_not_public, UrlPolicy, MAX_WEBHOOK_URL};

/// Longest name (user, group) we accept.
pub const MAX_NAME: usize = 64;
/// Longest free text (titles, collection names) we accept, in bytes.
pub const MAX_TEXT: usize = 1000;

/// Whether XML 1.0 allows `c` in a document (its `Char` production:
/// `#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
/// [#x10000-#x10FFFF]`). A `char` is never a surrogate, so what is left
/// out is the C0 controls other than tab, LF and CR, and U+FFFE, U+FFFF.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// The first character of `s` that XML 1.0 forbids, to name in an error;
/// `None` when all of it may stand in an XML document, so in an XMPP
/// stanza (one with a character outside it cannot be serialised at all:
/// the XMPP listener checks every body before it goes on the wire).
pub fn not_xml(s: &str) -> Option<char> {
    s.chars().find(|&c| !is_xml_char(c))
}

/// Unicode's 66 noncharacters: U+FDD0–U+FDEF and the last two code points
/// of every plane (U+FFFE, U+FFFF, U+1FFFE … U+10FFFF). They are reserved
/// for a program's own use, never for text that travels. XML forbids two of
/// them and discourages the rest; we refuse them all in the text we store,
/// which costs nobody a real character and keeps every channel able to
/// carry what we accepted.
pub(crate) fn is_noncharacter(c: char) -> bool {
    matches!(c, '\u{FDD0}'..='\u{FDEF}') || (c as u32) & 0xFFFE == 0xFFFE
}

/// Line and paragraph separators.
fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Bidirectional marks, embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Control characters (NUL among them), anything XML 1.0 forbids,
/// noncharacters, line/paragraph separators and bidirectional overrides:
/// anything that could break a header, a line or a chat stanza, or make
/// text display differently from what it is.
fn is_hostile_char(c: char) -> bool {
    c.is_control()
        || !is_xml_char(c)
        || is_noncharacter(c)
        || is_line_separator(c)
        || is_bidi_control(c)
}

fn has_control(s: &str) -> bool {
    s.chars().any(is_hostile_char)
}

/// What `c` is, for an error message: never the character itself, which
/// may be invisible or act on a terminal.
fn describe(c: char) -> String {
    let code = format!("U+{:04X}", c as u32);
    if c == '\0' {
        format!("a control character ({code}, NUL)")
    } else if is_noncharacter(c) {
        format!("a Unicode noncharacter ({code})")
    } else if c.is_control() || !is_xml_char(c) {
        format!("a control character ({code})")
    } else if is_line_separator(c) {
        format!("a line or paragraph separator ({code})")
    } else {
        format!("a bidirectional mark or override ({code})")
    }
}

/// Refuses `s` when it holds a character XML 1.0 forbids or a Unicode
/// noncharacter: for multi-line text (a notification's message) that may
/// keep tabs, line breaks and direction marks but must still reach every
/// channel.
pub fn carriable(what: &str, s: &str) -> Result<()> {
    match s.chars().find(|&c| !is_xml_char(c) || is_noncharacter(c)) {
        Some(c) => Err(Invalid::new(format!("{what} contains {}", describe(c)))),
        None => Ok(()),
    }
}

/// `s` with every hostile character escaped, for one-line error messages.
pub fn escape_for_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let esc: Vec<char> = if is_hostile_char(c) {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect()
}

/// `s` in double quotes for a one-line error message: quotes, backslashes
/// and control characters escaped once, as Rust writes a string literal
/// (`"22:00-07:00\n"`), and any hostile character that form leaves
/// ([`escape_for_line`]) escaped too. Escaping first and then quoting
/// with `{:?}` wrote each escape's backslash twice (`\\n`).
pub fn quoted(s: &str) -> String {
    escape_for_line(&format!("{s:?}"))
}

/// An IANA timezone name, as chrono-tz knows it (`Europe/Paris`, `UTC`).
pub fn timezone(s: &str) -> Result<Tz> {
    if s.is_empty() || s.len() > 64 || has_control(s) {
        return Err(
            Invalid::new(format!("invalid timezone {s:?}")).because(Kind::TimezoneMalformed, s)
        );
    }
    s.parse::<Tz>().map_err(|_| {
        let nearest = closest_timezone(s);
        let hint = nearest.map_or(String::new(), |t| format!(": did you mean {t}?"));
        Invalid::new(format!("unknown IANA timezone {s:?}{hint}"))
            .because(Kind::TimezoneUnknown { nearest }, s)
    })
}

/// The known zone `s` most likely meant: the same name in other case
/// (`europe/berlin`), or one a few letters away (`Europe/Berln`).
fn closest_timezone(s: &str) -> Option<&'static str> {
    let names = || chrono_tz::TZ_VARIANTS.iter().map(|t| t.name());
    if let Some(same) = names().find(|n| n.eq_ignore_ascii_case(s)) {
        return Some(same);
    }
    let s = s.to_ascii_lowercase();
    names()
        .map(|n| (strsim::levenshtein(&n.to_ascii_lowercase(), &s), n))
        .filter(|(d, _)| *d <= 3.min(s.len() / 3))
        .min()
        .map(|(_, n)| n)
}

/// A user or group name: 1–64 of `A-Z a-z 0-9 . _ -`, not starting with `-`.
pub fn name(what: &str, s: &str) -> Result<String> {
    let ok = !s.is_empty()
        && s.len() <= MAX_NAME
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(s.to_string())
    } else {
        Err(Invalid::new(format!(
            "invalid {what} name {s:?}: use 1-{MAX_NAME} letters, digits, '.', '_' or '-'"
        )))
    }
}

/// Free text that ends up in a subject or a title: non-empty after trimming,
/// at most [`MAX_TEXT`] bytes, no hostile character (so no CR/LF that could
/// break out of a header, nothing XML cannot carry, no noncharacter); the
/// error names the field and the character's code point.
pub fn text(what: &str, s: &str) -> Result<String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(Invalid::new(format!("{what} is empty")));
    }
    if t.len() > MAX_TEXT {
        return Err(Invalid::new(format!(
            "{what} is longer than {MAX_TEXT} bytes"
        )));
    }
    refuse_hostile(what, t)?;
    Ok(t.to_string())
}

/// A change's old or new value: may be empty, at most `max` bytes, and
/// holds none of the characters [`text`] refuses (NUL, CR, LF, escapes,
/// bidirectional overrides): a value is shown inside a digest's lines.
pub fn value(what: &str, s: &str, max: usize) -> Result<()> {
    if s.len() > max {
        return Err(Invalid::new(format!("{what} is longer than {max} bytes")));
    }
    refuse_hostile(what, s)
}

/// Refuses `s` when it holds a hostile character, naming the first.
fn refuse_hostile(what: &str, s: &str) -> Result<()> {
    match s.chars().find(|&c| is_hostile_char(c)) {
        Some(c) => Err(Invalid::new(format!("{what} contains {}", describe(c)))),
        None => Ok(()),
    }
}

fn is_atext(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b)
}

fn is_dns_label(l: &str) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && !l.starts_with('-')
        && !l.ends_with('-')
        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// An email address as an RFC 5321 mailbox: a dot-atom local part (≤ 64
/// octets) `@` a DNS domain (≤ 255 octets, at least two labels, or
/// `localhost`), 254 octets in all. Quoted local parts, address literals
/// and non-ASCII (SMTPUTF8) addresses are refused: they are legal but we
/// cannot promise every relay takes them. The domain is lower-cased.
pub fn email(s: &str) -> Result<String> {
    let bad = |why: &str, kind: Kind| {
        Err(Invalid::new(format!("invalid email address {s:?}: {why}")).because(kind, s))
    };
    if s.contains(['\r', '\n']) || has_control(s) {
        return bad("contains a control character", Kind::EmailControl);
    }
    if !s.is_ascii() {
        return bad("non-ASCII addresses are not supported", Kind::EmailNonAscii);
    }
    if s.len() > 254 {
        return bad("longer than 254 octets", Kind::EmailTooLong);
    }
    let Some((local, domain)) = s.rsplit_once('@') else {
        return bad("no '@'", Kind::EmailNoAt);
    };
    if local.is_empty() || local.len() > 64 {
        return bad("local part must be 1-64 octets", Kind::EmailLocalLength);
    }
    if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
        return bad("misplaced '.' in local part", Kind::EmailDots);
    }
    if !local.bytes().all(|b| b == b'.' || is_atext(b)) {
        return bad(
            "local part has a character that needs quoting",
            Kind::EmailQuoting,
        );
    }
    let domain = domain.to_ascii_lowercase();
    let labels: Vec<&str> = domain.split('.').collect();
    if !labels.iter().all(|l| is_dns_label(l)) {
        return bad("domain is not a valid host name", Kind::EmailDomain);
    }
    if labels.len() < 2 && domain != "localhost" {
        return bad("domain needs a dot (e.g. example.com)", Kind::EmailNoDot);
    }
    Ok(format!("{local}@{domain}"))
}

/// An XMPP address for a person: a bare JID `node@domain` (no resource),
/// checked and normalised by the `jid` crate.
pub fn jid(s: &str) -> Result<String> {
    if s.contains(['\r', '\n']) || has_control(s) || s.trim() != s {
        return Err(Invalid::new(format!(
            "invalid JID {s:?}: contains white space or a control character"
        )));
    }
    let j = jid::BareJid::new(s).map_err(|e| Invalid::new(format!("invalid JID {s:?}: {e}")))?;
    if j.node().is_none() {
        return Err(Invalid::new(format!(
            "invalid JID {s:?}: needs a local part (user@domain)"
        )));
    }
    Ok(j.to_string())
}

/// A phone number in E.164: `+`, a leading digit 1–9, 8 to 15 digits in all.
pub fn phone(s: &str) -> Result<String> {
    // Written as people write them: `+1 415 555 0123`, `+1 (415) 555-0123`,
    // `+44 20.7946.0958`; stored in E.164, digits only after the `+`.
    let separated = s.len() <= 32
        && s.chars()
            .skip(1)
            .all(|c| c.is_ascii_digit() || " -.()".contains(c))
        && !s.ends_with(' ');
    let digits: String = match s.strip_prefix('+') {
        Some(rest) if separated => rest.chars().filter(char::is_ascii_digit).collect(),
        _ => String::new(),
    };
    let ok = (8..=15).contains(&digits.len()) && !digits.starts_with('0');
    if ok {
        Ok(format!("+{digits}"))
    } else {
        Err(Invalid::new(format!(
            "invalid phone number {s:?}: use E.164, e.g. +14155550123"
        )))
    }
}

/// A day of the week: `mon`..`sun` or the full English name, any case.
/// Returns 0 for Monday up to 6 for Sunday.
pub fn weekday(s: &str) -> Result<u8> {
    const DAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    let l = s.to_ascii_lowercase();
    DAYS.iter()
        .position(|d| l.len() >= 3 && d.starts_with(&l))
        .map(|i| i as u8)
        .ok_or_else(|| Invalid::new(format!("invalid day {s:?}: use mon..sun")))
}

/// The short name for a weekday number (0 = mon).
pub fn weekday_name(d: u8) -> &'static str {
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"][(d % 7) as usize]
}

/// An hour of the day, 0–23.
pub fn hour(h: i64) -> Result<u8> {
    if (0..=23).contains(&h) {
        Ok(h as u8)
    } else {
        Err(Invalid::new(format!("invalid hour {h}: use 0-23")).because(Kind::Hour, &h.to_string()))
    }
}

/// An hour of the day as a form sends it: a number 0–23, spaces around
/// it allowed.
pub fn hour_text(s: &str) -> Result<u8> {
    match s.trim().parse::<i64>() {
        Ok(h) => hour(h),
        Err(_) => Err(Invalid::new(format!("invalid hour {s:?}: use 0-23")).because(Kind::Hour, s)),
    }
}

/// A BCP 47-like locale tag: `en`, `en-US`, `pt-BR`, `zh-Hant-TW`.
pub fn locale(s: &str) -> Result<String> {
    let mut parts = s.split(['-', '_']);
    let lang = parts.next().unwrap_or("");
    let ok = s.len() <= 35
        && (2..=3).contains(&lang.len())
        && lang.bytes().all(|b| b.is_ascii_alphabetic())
        && parts
            .all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()));
    if ok {
        Ok(s.replace('_', "-"))
    } else {
        Err(
            Invalid::new(format!("invalid locale {s:?}: use a tag like en-US"))
                .because(Kind::Locale, s),
        )
    }
}

/// A UUID in any of its usual spellings; returned lower-case hyphenated.
pub fn uuid(what: &str, s: &str) -> Result<String> {
    uuid::Uuid::parse_str(s)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Invalid::new(format!("invalid {what} UUID {s:?}")))
}

/// An RFC 3339 instant, converted to UTC and truncated to microseconds.
pub fn instant(what: &str, s: &str) -> Result<DateTime<Utc>> {
    use chrono::SubsecRound;
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc).trunc_subsecs(6))
        .map_err(|_| Invalid::new(format!("invalid {what} {s:?}: use RFC 3339")))
}

/// The instants a line's `at` may fall between (`[record] max_age_days`
/// back and `max_ahead_seconds` ahead of the clock): a change dated far
/// ahead would wait unseen for a window that far on, and one older than
/// the log keeps is a mistake, not news.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtBounds {
    pub earliest: DateTime<Utc>,
    pub latest: DateTime<Utc>,
}

impl AtBounds {
    /// No bound (benchmarks and imports of history that set their own clock).
    pub const ANY: AtBounds = AtBounds {
        earliest: DateTime::<Utc>::MIN_UTC,
        latest: DateTime::<Utc>::MAX_UTC,
    };

    /// `at` when it is within the bounds, else why not (one line).
    pub fn check(&self, at: DateTime<Utc>) -> Result<DateTime<Utc>> {
        let fmt = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        if at > self.latest {
            return Err(Invalid::new(format!(
                "at {} is ahead of the clock: at most {} is accepted ([record] max_ahead_seconds)",
                fmt(at),
                fmt(self.latest)
            )));
        }
        if at < self.earliest {
            return Err(Invalid::new(format!(
                "at {} is too old: {} or later is accepted ([record] max_age_days)",
                fmt(at),
                fmt(self.earliest)
            )));
        }
        Ok(at)
    }
}

/// An instant on the command line: RFC 3339, `now`, or `+DURATION` /
/// `-DURATION` from `now` (`+1h`, `-2d`, see [`duration`]), so that a
/// script can say "an hour ago" on any machine without date arithmetic.
pub fn cli_instant(what: &str, s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    use chrono::SubsecRound;
    let bad = || {
        Invalid::new(format!(
            "invalid {what} {s:?}: use RFC 3339, now, or +/-DURATION from now, e.g. +1h, -2d"
        ))
    };
    let t = match (s, s.strip_prefix('+'), s.strip_prefix('-')) {
        ("now", _, _) => now,
        (_, Some(ahead), _) => now + duration(ahead).map_err(|_| bad())?,
        (_, _, Some(back)) => now - duration(back).map_err(|_| bad())?,
        _ => DateTime::parse_from_rfc3339(s)
            .map_err(|_| bad())?
            .with_timezone(&Utc),
    };
    Ok(t.trunc_subsecs(6))
}

/// A duration like `90d`, `12h`, `30m`, `45s` or `2w`.
pub fn duration(s: &str) -> Result<chrono::Duration> {
    let bad = || {
        Invalid::new(format!(
            "invalid duration {s:?}: a whole number and a unit s, m, h, d or w, e.g. 90d, 12h, 2w"
        ))
    };
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: i64 = num.parse().map_err(|_| bad())?;
    if n <= 0 || n > 100_000 {
        return Err(bad());
    }
    Ok(match unit {
        "s" => chrono::Duration::seconds(n),
        "m" => chrono::Duration::minutes(n),
        "h" => chrono::Duration::hours(n),
        "d" => chrono::Duration::days(n),
        "w" => chrono::Duration::weeks(n),
        _ => return Err(bad()),
    })
}

#[cfg(test)]
mod tests;
