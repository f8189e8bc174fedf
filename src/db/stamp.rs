//! Timestamps as SQLite stores them: text in diesel's form (`%F %T%.f`),
//! which compares correctly as text. Written by hand because the bulk
//! paths (the tick's claims, the queue's outcomes) format several per row
//! and chrono's format-string interpreter was a tenth of a simulated year.

use std::fmt::Write;

use chrono::{Datelike, NaiveDateTime, Timelike};

/// `t` exactly as diesel binds a `Timestamp` on SQLite: `2026-11-24
/// 09:00:00`, with `.mmm`, `.uuuuuu` or `.nnnnnnnnn` only when the
/// fraction needs it.
pub fn sqlite_stamp(t: NaiveDateTime) -> String {
    let year = t.year();
    // Years outside 0–9999 and leap seconds (nanosecond ≥ 1e9) are left to
    // chrono's own rendering.
    if !(0..=9999).contains(&year) || t.nanosecond() >= 1_000_000_000 {
        return t.format("%F %T%.f").to_string();
    }
    let mut s = String::with_capacity(29);
    let _ = write!(
        s,
        "{year:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let _ = match t.nanosecond() {
        0 => Ok(()),
        n if n % 1_000_000 == 0 => write!(s, ".{:03}", n / 1_000_000),
        n if n % 1_000 == 0 => write!(s, ".{:06}", n / 1_000),
        n => write!(s, ".{n:09}"),
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn matches_chrono_for_every_kind_of_fraction() {
        let day = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap();
        for (h, m, s, n) in [
            (0, 0, 0, 0),
            (1, 2, 3, 4),
            (23, 59, 59, 999_999_999),
            (9, 30, 0, 120_000_000),
            (9, 30, 0, 123_456_000),
            (12, 0, 1, 1_000),
            (12, 0, 1, 500_000_000),
        ] {
            let t = day.and_hms_nano_opt(h, m, s, n).unwrap();
            assert_eq!(sqlite_stamp(t), t.format("%F %T%.f").to_string());
        }
        for y in [0, 9, 999, 1970, 9999, -1, 10_000] {
            let t = NaiveDate::from_ymd_opt(y, 12, 31)
                .unwrap()
                .and_hms_micro_opt(7, 8, 9, 10)
                .unwrap();
            assert_eq!(sqlite_stamp(t), t.format("%F %T%.f").to_string());
        }
        let leap = day.and_hms_nano_opt(23, 59, 59, 1_500_000_000).unwrap();
        assert_eq!(sqlite_stamp(leap), leap.format("%F %T%.f").to_string());
    }
}
