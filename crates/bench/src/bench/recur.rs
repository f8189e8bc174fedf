//! `digestd bench recur`: what one recurring item costs a forward digest,
//! for rules that began long ago (the skip-ahead) and for the costliest
//! rules the validator still accepts, beside the floor measured in the same
//! run: the same rule starting the day before the window, as a new item
//! would.

use std::io::Write;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use clap::Args;

use crate::digest::compose::MAX_OCCURRENCES;
use crate::error::{Error, Result};
use crate::recur;

#[derive(Args, Debug, Clone)]
pub struct RecurArgs {
    /// Expansions timed per rule (the median of five runs of this many).
    #[arg(long, default_value_t = 2_000)]
    pub repeat: usize,
}

/// Rules and the start of their series: the audit's, and the ones that make
/// the crate step the most per window among those [`recur::validate`] takes.
const CASES: [(&str, &str, &str); 8] = [
    ("hourly from 1900", "FREQ=HOURLY", "1900-01-01T09:00:00Z"),
    (
        "hourly 4×/h from 1900",
        "FREQ=HOURLY;BYMINUTE=0,15,30,45",
        "1900-01-01T09:00:00Z",
    ),
    ("daily from 1900", "FREQ=DAILY", "1900-01-01T09:00:00Z"),
    (
        "weekdays, last of month, from 1900",
        "FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR",
        "1900-01-01T09:00:00Z",
    ),
    (
        "29 February from 1904",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
        "1904-02-29T09:00:00Z",
    ),
    (
        "hourly in March only, from 1900",
        "FREQ=HOURLY;BYMONTH=3",
        "1900-01-01T09:00:00Z",
    ),
    (
        "daily COUNT=1000 from January",
        "FREQ=DAILY;COUNT=1000",
        "2026-01-05T09:00:00Z",
    ),
    (
        "every 400th day from 1900",
        "FREQ=DAILY;INTERVAL=400",
        "1900-01-01T09:00:00Z",
    ),
];

/// Microseconds per expansion of `rule` from `start` over `[from, to)`.
fn time(
    rule: &str,
    start: DateTime<Utc>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    n: usize,
) -> Result<(f64, usize)> {
    let tz = chrono_tz::America::New_York;
    let mut got = 0;
    let runs = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..n {
                got = recur::occurrences(start, tz, Some(rule), from, to, MAX_OCCURRENCES)
                    .map_err(Error::invalid)?
                    .len();
            }
            Ok(t0.elapsed().as_secs_f64() * 1e6 / n as f64)
        })
        .collect::<Result<Vec<f64>>>()?;
    Ok((super::median_of(runs), got))
}

pub fn recur(args: &RecurArgs, out: &mut dyn Write) -> Result<()> {
    let n = args.repeat.max(1);
    let from = Utc.with_ymd_and_hms(2026, 11, 23, 5, 0, 0).unwrap();
    let to = from + Duration::weeks(1);
    writeln!(
        out,
        "one weekly window, {n} expansions × 5, median; floor: the rule starting a day before the window"
    )?;
    writeln!(
        out,
        "{:<38} {:>9} {:>11} {:>11} {:>7} {:>12}",
        "rule", "instances", "µs/item", "floor µs", "ratio", "validate µs"
    )?;
    for (name, rule, start) in CASES {
        let start = crate::validate::instant("start", start)?;
        let (us, got) = time(rule, start, from, to, n)?;
        let (floor, _) = time(rule, from - Duration::days(1), from, to, n)?;
        let t0 = Instant::now();
        recur::validate(rule, start, chrono_tz::America::New_York).map_err(Error::invalid)?;
        let v = t0.elapsed().as_secs_f64() * 1e6;
        writeln!(
            out,
            "{name:<38} {got:>9} {us:>11.1} {floor:>11.1} {:>7.2} {v:>12.0}",
            us / floor
        )?;
    }
    Ok(())
}
