//! Quiet hours: a local window, `HH:MM-HH:MM`, that may cross midnight
//! (`22:00-07:00`); the empty string is none. Stored as written here
//! (normalised), read back with [`QuietHours::parse_stored`].

use chrono::{NaiveTime, Timelike};

use crate::error::RefusalKind as Kind;
use crate::error::{Invalid, Result};

/// A person's or group's quiet window, in their own zone: from `start`
/// (inside) to `end` (outside), crossing midnight when `end < start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuietHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

/// What a form or a flag may hold, at most; anything longer is refused
/// before it is looked at.
const MAX_INPUT: usize = 32;

/// Quiet hours as given: `HH:MM-HH:MM` (ASCII digits, a hyphen-minus,
/// start ≠ end, surrounding spaces ignored), or empty for none
/// (`Ok(None)`).
pub fn quiet_hours(s: &str) -> Result<Option<QuietHours>> {
    let bad = |why: &str, kind: Kind| {
        let shown = super::quoted(&s.chars().take(MAX_INPUT).collect::<String>());
        Invalid::new(format!(
            "invalid quiet hours {shown}: {why} (use HH:MM-HH:MM, e.g. 22:00-07:00, or '' for none)"
        ))
        .because(kind, s)
    };
    if s.len() > MAX_INPUT {
        return Err(bad(
            &format!("longer than {MAX_INPUT} bytes"),
            Kind::QuietTooLong { max: MAX_INPUT },
        ));
    }
    let t = s.trim_matches(' ');
    if t.is_empty() {
        return Ok(None);
    }
    if let Some(c) = t.chars().find(|c| !c.is_ascii()) {
        let code = format!("U+{:04X}", c as u32);
        return Err(bad(
            &format!("{code} is not an ASCII digit or '-'"),
            Kind::QuietNotAscii { code },
        ));
    }
    let Some((a, b)) = t.split_once('-') else {
        return Err(bad("no '-' between start and end", Kind::QuietNoDash));
    };
    let start = clock(a).ok_or_else(|| {
        let part = a.to_string();
        bad(
            &format!("start {a:?} is not HH:MM"),
            Kind::QuietStart { part },
        )
    })?;
    let end = clock(b).ok_or_else(|| {
        let part = b.to_string();
        bad(&format!("end {b:?} is not HH:MM"), Kind::QuietEnd { part })
    })?;
    if start == end {
        return Err(bad("start and end are the same", Kind::QuietSame));
    }
    Ok(Some(QuietHours { start, end }))
}

/// `HH:MM`, 00:00 to 23:59, exactly five ASCII characters.
fn clock(s: &str) -> Option<NaiveTime> {
    let b = s.as_bytes();
    let digits = [0, 1, 3, 4]
        .iter()
        .all(|&i| b.get(i).is_some_and(u8::is_ascii_digit));
    if b.len() != 5 || b[2] != b':' || !digits {
        return None;
    }
    let n = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    NaiveTime::from_hms_opt(n(0), n(3), 0).filter(|_| n(0) < 24 && n(3) < 60)
}

impl QuietHours {
    /// A stored value: empty is none; anything else was validated when it
    /// was written (a value that no longer parses reads as none).
    pub fn parse_stored(s: &str) -> Option<QuietHours> {
        quiet_hours(s).ok().flatten()
    }

    /// Whether the window crosses midnight.
    pub fn crosses_midnight(&self) -> bool {
        self.end < self.start
    }

    /// Whether local time of day `t` falls inside the window (the start
    /// inside, the end outside), by the clock alone.
    pub fn holds_time(&self, t: NaiveTime) -> bool {
        if self.crosses_midnight() {
            t >= self.start || t < self.end
        } else {
            t >= self.start && t < self.end
        }
    }

    /// Whether a local hour, `hour:00`, falls inside the window.
    pub fn holds_hour(&self, hour: u8) -> bool {
        NaiveTime::from_hms_opt(u32::from(hour), 0, 0).is_some_and(|t| self.holds_time(t))
    }
}

impl std::fmt::Display for QuietHours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:02}:{:02}-{:02}:{:02}",
            self.start.hour(),
            self.start.minute(),
            self.end.hour(),
            self.end.minute()
        )
    }
}

/// The stored form of what [`quiet_hours`] accepted: `HH:MM-HH:MM` or ''.
pub fn quiet_hours_stored(q: Option<QuietHours>) -> String {
    q.map_or(String::new(), |q| q.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        quiet_hours(s).unwrap_err().to_string()
    }

    #[test]
    fn a_window_is_read_and_written_back() {
        let q = quiet_hours("22:00-07:00").unwrap().unwrap();
        assert!(q.crosses_midnight());
        assert_eq!(q.to_string(), "22:00-07:00");
        assert_eq!(
            quiet_hours(" 09:30-17:45 ").unwrap().unwrap().to_string(),
            "09:30-17:45"
        );
        assert_eq!(quiet_hours("").unwrap(), None);
        assert_eq!(quiet_hours("  ").unwrap(), None);
        assert!(q.holds_hour(23) && q.holds_hour(0) && q.holds_hour(6));
        assert!(!q.holds_hour(7) && !q.holds_hour(21));
        let day = quiet_hours("13:00-14:30").unwrap().unwrap();
        assert!(
            day.holds_hour(13) && day.holds_hour(14) && !day.holds_hour(15) && !day.holds_hour(12)
        );
        assert_eq!(
            QuietHours::parse_stored("00:00-23:59"),
            quiet_hours("00:00-23:59").unwrap()
        );
        assert_eq!(QuietHours::parse_stored("junk"), None);
    }

    #[test]
    fn hostile_windows_are_refused_in_one_line() {
        for (s, why) in [
            ("25:00-07:00", "start \"25:00\" is not HH:MM"),
            ("22:60-07:00", "start \"22:60\" is not HH:MM"),
            ("22:00-22:00", "start and end are the same"),
            ("22-7", "start \"22\" is not HH:MM"),
            ("22:00–07:00", "U+2013 is not an ASCII digit or '-'"),
            ("２２:００-07:00", "U+FF12 is not an ASCII digit or '-'"),
            ("22:00", "no '-' between start and end"),
            ("22:00-07:00-08:00", "end \"07:00-08:00\" is not HH:MM"),
            ("-22:00-07:00", "start \"\" is not HH:MM"),
            ("2a:00-07:00", "start \"2a:00\" is not HH:MM"),
            ("22:00-7:00", "end \"7:00\" is not HH:MM"),
        ] {
            let e = err(s);
            assert!(e.contains(why), "{s:?}: {e}");
            assert!(e.starts_with("invalid quiet hours"), "{e}");
            assert!(!e.contains('\n'));
        }
        for s in [
            "22:00-07:00\r\n",
            "22:00\n-07:00",
            "22:00-07:00\0",
            "\t22:00-07:00",
        ] {
            let e = err(s);
            assert!(
                !e.contains('\n') && !e.contains('\r') && !e.contains('\0'),
                "{e}"
            );
            assert!(e.contains("is not HH:MM"), "{s:?}: {e}");
        }
        let long = err(&"2".repeat(10_000));
        assert!(
            long.contains("longer than 32 bytes") && long.len() < 200,
            "{long}"
        );
    }
}
