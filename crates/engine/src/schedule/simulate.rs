//! `digestd simulate`: the real tick at every instant of a range, without
//! changing the database: a rehearsal ([`crate::db::rehearse`]) of the
//! ticks, which write `subscriptions` (every tick rewrites the rows it
//! claims), `subscription_runs` (the tick reads only the latest run of
//! each subscription, which is on the subscription row: no rows needed)
//! and `nt_job` (the tick's lease, free for the rehearsal).

use chrono::{DateTime, Utc};

use super::{run_tick, tick::Discard, DueRun};
use crate::db::{DbConn, Scratch};
use crate::error::{Error, Result};

/// The tables a tick writes, as a rehearsal copies them.
const TICK_TABLES: &[Scratch] = &[
    Scratch::Rows("subscriptions"),
    Scratch::Empty("subscription_runs"),
    Scratch::Cleared("nt_job", &["owner", "lease_expires_at"]),
];

/// The most instants one simulation ticks at.
pub const MAX_TICKS: usize = 2_000_000;

/// The instants a simulation ticks at: every `step` from the start, or
/// the instants of a cron schedule (`[schedule] tick`, as `serve` does).
pub enum Ticks {
    Every(chrono::Duration),
    Schedule(Box<cron::Schedule>),
}

impl Ticks {
    /// Every instant in `[from, to)`, in order; more than [`MAX_TICKS`]
    /// is refused, and so is a step that is not positive.
    pub fn instants(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<DateTime<Utc>>> {
        let too_many = || {
            Error::invalid(
                "simulate: more than 2,000,000 ticks; use a larger --every or a shorter range",
            )
        };
        let within = |t: &DateTime<Utc>| *t < to;
        let out: Vec<_> = match self {
            Ticks::Every(step) if *step <= chrono::Duration::zero() => {
                return Err(Error::invalid("simulate: the interval must be positive"))
            }
            Ticks::Every(step) => {
                if (to - from).num_seconds().max(0) / step.num_seconds().max(1) > MAX_TICKS as i64 {
                    return Err(too_many());
                }
                std::iter::successors(Some(from), |t| Some(*t + *step))
                    .take_while(within)
                    .collect()
            }
            // `after` is strictly after: start a second early and drop
            // what falls before `from`.
            Ticks::Schedule(s) => s
                .after(&(from - chrono::Duration::seconds(1)))
                .skip_while(|t| *t < from)
                .take_while(within)
                .take(MAX_TICKS + 1)
                .collect(),
        };
        if out.len() > MAX_TICKS {
            return Err(too_many());
        }
        Ok(out)
    }
}

/// Runs the real tick at every instant of `ticks` (in order), handing
/// nothing on; `each` sees every run in order. The database is unchanged
/// afterwards; the count of runs is returned.
pub fn simulate(
    conn: &mut DbConn,
    ticks: &[DateTime<Utc>],
    owner: &str,
    lease_for: chrono::Duration,
    each: &mut dyn FnMut(&DueRun) -> Result<()>,
) -> Result<usize> {
    crate::db::rehearse(conn, TICK_TABLES, |c, rehearsal| {
        let mut n = 0;
        for &t in ticks {
            let runs = run_tick(c, t, owner, lease_for, &mut Discard)?.ok_or_else(|| {
                Error::conflict(format!("another process holds the tick lease at {t}"))
            })?;
            for r in &runs {
                each(r)?;
            }
            n += runs.len();
            // Each run rewrote one subscription row.
            rehearsal.rewrote(c, runs.len())?;
        }
        Ok(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_schedule_ticks_from_its_first_instant_at_or_after_from_up_to_to() {
        let quarter = Ticks::Schedule(Box::new(
            cron::Schedule::from_str("0 */15 * * * *").unwrap(),
        ));
        let got = quarter
            .instants(t("2026-03-01T00:00:00Z"), t("2026-03-01T01:00:00Z"))
            .unwrap();
        let want: Vec<_> = ["00:00", "00:15", "00:30", "00:45"]
            .iter()
            .map(|hm| t(&format!("2026-03-01T{hm}:00Z")))
            .collect();
        assert_eq!(got, want, "from inclusive, to exclusive");
        // A start between two instants, even by less than a second.
        let got = quarter
            .instants(t("2026-03-01T00:15:00.5Z"), t("2026-03-01T00:45:00Z"))
            .unwrap();
        assert_eq!(got, vec![t("2026-03-01T00:30:00Z")]);
    }

    #[test]
    fn too_many_ticks_or_a_step_that_is_not_positive_are_refused() {
        let (from, to) = (t("2000-01-01T00:00:00Z"), t("2100-01-01T00:00:00Z"));
        let e = Ticks::Every(chrono::Duration::seconds(1))
            .instants(from, to)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 2,000,000 ticks"), "{e}");
        assert!(Ticks::Every(chrono::Duration::zero())
            .instants(from, to)
            .is_err());
        assert_eq!(
            Ticks::Every(chrono::Duration::hours(1))
                .instants(to, from)
                .unwrap(),
            Vec::<DateTime<Utc>>::new(),
            "an empty range"
        );
    }
}
