//! The names of days and months in a language, read once from its
//! catalogue (`weekday-short`, `weekday-long`, `month-short`, selected by
//! `$day` or `$month`) and kept as plain strings: dates are written for
//! every line of a digest.

use super::{Arg, Catalogs, Locale};

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// A language's names of days (Monday first) and months (January first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    pub weekdays: [String; 7],
    pub weekdays_long: [String; 7],
    pub months: [String; 12],
}

impl Names {
    pub(super) fn of(c: &Catalogs, l: Locale) -> Names {
        let one = |key: &str, var: &str, v: &str| c.format(l, key, &[(var, Arg::Str(v))]);
        Names {
            weekdays: DAYS.map(|d| one("weekday-short", "day", d)),
            weekdays_long: DAYS.map(|d| one("weekday-long", "day", d)),
            months: MONTHS.map(|m| one("month-short", "month", m)),
        }
    }
}
