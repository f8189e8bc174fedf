//! `digestd bench simulate`: how long `simulate` takes over a year of
//! hourly ticks, on a world built through the same library calls as
//! `user add` and `subscribe`, beside a baseline in the same run: the same
//! periods computed with no database at all (what any simulation must at
//! least do).

use std::io::Write;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use clap::Args;

use super::{open_empty, peak_rss_mib};
use crate::error::{Error, Result};
use crate::manage::subscribe;
use crate::parties::{create_user, NewUser};
use crate::schedule::tick::rule_for;
use crate::subscriptions::{Frequency, SubscribeRequest};

#[derive(Args, Debug, Clone)]
pub struct SimulateArgs {
    /// Users, spread over ten zones (three subscriptions each, an hourly
    /// one for every tenth user).
    #[arg(long, default_value_t = 1_000)]
    pub users: usize,
    /// Days simulated from 2026-01-01T00:00Z, at 1-hour ticks.
    #[arg(long, default_value_t = 365)]
    pub days: i64,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-simulate.db";

/// Odd offsets (:30, :45), a 30-minute DST shift, DST at midnight, and
/// ordinary zones.
const ZONES: [&str; 10] = [
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Asia/Kathmandu",
    "America/St_Johns",
    "America/Santiago",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Kolkata",
    "Asia/Tokyo",
    "Europe/London",
];

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// The world: user `i` in zone `i % 10`, a daily modification digest at
/// `i % 24`, a weekly forward digest on day `i % 7` at `(i * 7) % 24`, a
/// second daily at `(i + 12) % 24`, and an hourly one for every tenth user.
fn build(c: &mut crate::db::DbConn, users: usize, at: DateTime<Utc>) -> Result<usize> {
    c.write_tx(|c| {
        let mut subs = 0;
        for i in 0..users {
            let name = format!("u{i}");
            create_user(
                c,
                at,
                &NewUser {
                    name: name.clone(),
                    timezone: ZONES[i % ZONES.len()].to_string(),
                    email: Some(format!("{name}@example.com")),
                    xmpp: None,
                    phone: None,
                    matrix: None,
                    week_start: None,
                    daily_hour: Some((i % 24) as i64),
                    locale: None,
                    quiet_hours: None,
                },
            )?;
            let sub = |frequency: &str, kind: &str, hour: Option<i64>, day: Option<&str>| {
                SubscribeRequest {
                    party: name.clone(),
                    frequency: frequency.into(),
                    kind: kind.into(),
                    collection: None,
                    channels: vec![],
                    hour,
                    day: day.map(str::to_string),
                    include_own: false,
                    send_empty: false,
                }
            };
            let mut reqs = vec![
                sub("daily", "modification", None, None),
                sub(
                    "weekly",
                    "forward",
                    Some(((i * 7) % 24) as i64),
                    Some(DAYS[i % 7]),
                ),
                sub("daily", "forward", Some(((i + 12) % 24) as i64), None),
            ];
            if i % 10 == 0 {
                reqs.push(sub("hourly", "modification", None, None));
            }
            for r in &reqs {
                subscribe(c, at, r)?;
            }
            subs += reqs.len();
        }
        Ok(subs)
    })
}

/// The baseline: every period of every subscription scheduled from `from`
/// to the last tick, from its rule alone. (A period scheduled after the
/// last tick, at :15, :30 or :45, is due at a tick past the range.)
fn periods_only(
    c: &mut crate::db::DbConn,
    from: DateTime<Utc>,
    last: DateTime<Utc>,
) -> Result<usize> {
    let mut n = 0;
    for s in crate::subscriptions::list(c)? {
        let user = crate::parties::get_user(c, s.party)?;
        let ws = crate::validate::weekday(&user.week_start)? as i32;
        let rule = rule_for(
            Frequency::parse(&s.frequency)?,
            s.hour_of_day,
            s.day_of_week,
            Some((user.timezone.as_str(), ws)),
        )?;
        let mut p = rule.first_after(from - Duration::microseconds(1));
        while p.scheduled <= last {
            n += 1;
            p = rule.first_after(p.scheduled);
        }
    }
    Ok(n)
}

/// `digestd bench simulate`.
pub fn simulate(args: &SimulateArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.users == 0 || !(1..=3_660).contains(&args.days) {
        return Err(Error::invalid(
            "--users must be at least 1 and --days between 1 and 3660",
        ));
    }
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let mut c = db.conn()?;
    let from = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let to = from + Duration::days(args.days);
    let t = Instant::now();
    let subs = build(&mut c, args.users, from)?;
    writeln!(
        out,
        "bench simulate: {} users in {} zones, {subs} subscriptions (built in {:.1} s); {} days of 1-hour ticks",
        args.users,
        ZONES.len(),
        t.elapsed().as_secs_f64(),
        args.days
    )?;
    let t = Instant::now();
    let periods = periods_only(&mut c, from, to - Duration::hours(1))?;
    let base = t.elapsed();
    // Each run serialised as the JSON line `simulate` prints, into a sink:
    // the bench measures digestd, not the terminal.
    let mut sink = std::io::BufWriter::new(std::io::sink());
    let t = Instant::now();
    let ticks = crate::schedule::Ticks::Every(Duration::hours(1)).instants(from, to)?;
    let runs = crate::schedule::simulate(&mut c, &ticks, "bench", Duration::hours(1), &mut |r| {
        r.write_line(&mut sink)
    })?;
    let d = t.elapsed();
    if runs != periods {
        return Err(Error::Storage(format!(
            "simulate gave {runs} runs for {periods} periods"
        )));
    }
    writeln!(
        out,
        "periods from the rules alone (baseline) {periods:>9} periods {:>8.2} s",
        base.as_secs_f64()
    )?;
    writeln!(
        out,
        "simulate (the real tick)                {runs:>9} runs    {:>8.2} s  {:>8.0} runs/s  {:.1}x the baseline  peak RSS {:.0} MiB",
        d.as_secs_f64(),
        runs as f64 / d.as_secs_f64(),
        d.as_secs_f64() / base.as_secs_f64(),
        peak_rss_mib().unwrap_or(f64::NAN)
    )?;
    Ok(())
}
