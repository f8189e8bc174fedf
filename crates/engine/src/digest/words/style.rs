//! How a recipient reads times and in which language: the zone, the
//! locale's 12/24-hour clock and date order, and the shipped language
//! nearest to the locale, whose names of days and months dates use.

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

use crate::i18n::{catalogs, Arg, Catalogs, Locale};

/// How the recipient reads times, and in which language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Style {
    pub tz: Tz,
    pub hour12: bool,
    pub month_first: bool,
    /// The shipped language nearest to the recipient's locale.
    pub lang: Locale,
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
            lang: Locale::resolve(locale),
        }
    }

    /// The catalogues this style's words come from.
    pub fn words(&self) -> &'static Catalogs {
        catalogs()
    }

    /// The message `key` in the reader's language.
    pub fn say(&self, key: &str, args: &[(&str, Arg)]) -> String {
        catalogs().format(self.lang, key, args)
    }

    /// A message without variables in the reader's language.
    pub fn text(&self, key: &'static str) -> &'static str {
        catalogs().text(self.lang, key)
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

    /// "Mon, Nov 23" or "Mon 23 Nov" (in English; the names and the
    /// punctuation are the language's: "Mo., 23. Nov.").
    pub fn date(&self, t: DateTime<Utc>) -> String {
        let mut out = String::with_capacity(16);
        self.push_date(&mut out, t);
        out
    }

    pub(super) fn push_date(&self, out: &mut String, t: DateTime<Utc>) {
        let l = t.with_timezone(&self.tz);
        let c = catalogs();
        let names = c.names(self.lang);
        let key = if self.month_first {
            "date-month-first"
        } else {
            "date-day-first"
        };
        let day = l.day();
        let wd = &names.weekdays[l.weekday().num_days_from_monday() as usize];
        let month = &names.months[l.month0() as usize];
        c.write(
            out,
            self.lang,
            key,
            &[
                ("weekday", Arg::Str(wd)),
                ("month", Arg::Str(month)),
                ("day", Arg::Num(day as usize)),
            ],
            None,
        );
    }

    /// "Mon, Nov 23, 3:00 PM PST" or "Mon 23 Nov, 15:00 CET".
    pub fn when(&self, t: DateTime<Utc>) -> String {
        let mut out = String::with_capacity(32);
        self.push_when(&mut out, t);
        out
    }

    pub(super) fn push_when(&self, out: &mut String, t: DateTime<Utc>) {
        self.push_date(out, t);
        out.push_str(", ");
        out.push_str(&self.time(t));
        out.push(' ');
        out.push_str(&self.zone(t));
    }

    /// "Monday 9:00 AM" within the last six days of `until`, else the date.
    pub fn since(&self, t: DateTime<Utc>, until: DateTime<Utc>) -> String {
        if until - t < chrono::Duration::days(6) {
            let l = t.with_timezone(&self.tz);
            let names = catalogs().names(self.lang);
            let day = &names.weekdays_long[l.weekday().num_days_from_monday() as usize];
            format!("{day} {}", self.time(t))
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
    pub(super) fn push_from_to(&self, out: &mut String, a: DateTime<Utc>, b: DateTime<Utc>) {
        let c = catalogs();
        if self.same_day(a, b) && self.zone(a) == self.zone(b) {
            let (ta, tb, zone) = (self.time(a), self.time(b), self.zone(b));
            c.write(
                out,
                self.lang,
                "change-same-day",
                &[
                    ("from", Arg::Str(&ta)),
                    ("to", Arg::Str(&tb)),
                    ("zone", Arg::Str(&zone)),
                    ("date", Arg::Write(&|o| self.push_date(o, b))),
                ],
                None,
            );
        } else {
            c.write(
                out,
                self.lang,
                "change-from-to",
                &[
                    ("from", Arg::Write(&|o| self.push_when(o, a))),
                    ("to", Arg::Write(&|o| self.push_when(o, b))),
                ],
                None,
            );
        }
    }
}
