//! Timestamps as SQLite stores them: text in diesel's form (`%F %T%.f`),
//! which compares correctly as text. Written by hand because the bulk
//! paths (the tick's claims, the queue's outcomes) format several per row
//! and chrono's format-string interpreter was a tenth of a simulated year.

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
    // Digits placed by hand: `write!` with padding was about a tenth of
    // the Rust side of a tick's claim in a profile.
    let mut b = [0u8; 29];
    put_digits(&mut b[0..4], year as u32);
    b[4] = b'-';
    put_digits(&mut b[5..7], t.month());
    b[7] = b'-';
    put_digits(&mut b[8..10], t.day());
    b[10] = b' ';
    put_digits(&mut b[11..13], t.hour());
    b[13] = b':';
    put_digits(&mut b[14..16], t.minute());
    b[16] = b':';
    put_digits(&mut b[17..19], t.second());
    let len = match t.nanosecond() {
        0 => 19,
        n if n % 1_000_000 == 0 => put_fraction(&mut b, n / 1_000_000, 3),
        n if n % 1_000 == 0 => put_fraction(&mut b, n / 1_000, 6),
        n => put_fraction(&mut b, n, 9),
    };
    b[..len].iter().map(|&c| c as char).collect()
}

/// Writes `v` in decimal into all of `out`, zero-padded on the left.
fn put_digits(out: &mut [u8], mut v: u32) {
    for c in out.iter_mut().rev() {
        *c = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Writes `.` and `v` in `width` digits after the seconds; the length.
fn put_fraction(b: &mut [u8; 29], v: u32, width: usize) -> usize {
    b[19] = b'.';
    put_digits(&mut b[20..20 + width], v);
    20 + width
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
