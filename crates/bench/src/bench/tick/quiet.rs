//! `digestd bench tick --quiet-share F`: the tick with quiet hours
//! (22:00-07:00 in each user's zone) on a share of the users beside the
//! tick without any, alternated in one run over the same world and
//! instants. Each round starts from the same scheduler state (saved once,
//! restored before each round, untimed), since quiet hours move the
//! `next_due_at` of hourly subscriptions without a run.

use std::io::Write;
use std::time::Instant;

use chrono::{DateTime, Utc};
use diesel::connection::SimpleConnection;

use crate::db::DbConn;
use crate::error::Result;
use crate::schedule::tick::{tick as run_tick, Discard};

/// Pairs of rounds (without, with), alternated.
const PAIRS: usize = 3;

/// Gives a `share` of the users quiet hours (`on`) or none.
fn set_quiet(c: &mut DbConn, share: f64, on: bool) -> Result<()> {
    let per_mille = (share * 1000.0).round() as i64;
    let value = if on { "22:00-07:00" } else { "" };
    c.batch_execute(&format!(
        "UPDATE users SET quiet_hours = '{value}' WHERE party_id % 1000 < {per_mille}; \
         DELETE FROM subscription_runs; \
         UPDATE subscriptions SET next_due_at = s.next_due_at, last_scheduled_at = NULL, \
             last_period = NULL, last_window_end = NULL \
         FROM quiet_saved AS s WHERE subscriptions.id = s.id;"
    ))?;
    super::vacuum(c)
}

/// One round: every instant ticked, the runs counted, the time summed.
fn round(c: &mut DbConn, instants: &[DateTime<Utc>]) -> Result<(usize, f64)> {
    let t = Instant::now();
    let mut runs = 0;
    for at in instants {
        runs += run_tick(c, *at, &mut Discard)?.len();
    }
    Ok((runs, t.elapsed().as_secs_f64()))
}

/// The alternated rounds and their medians.
pub(super) fn compare(
    c: &mut DbConn,
    share: f64,
    instants: &[DateTime<Utc>],
    out: &mut dyn Write,
) -> Result<()> {
    c.batch_execute(
        "DROP TABLE IF EXISTS quiet_saved; \
         CREATE TEMP TABLE quiet_saved AS SELECT id, next_due_at FROM subscriptions;",
    )?;
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for k in 0..PAIRS * 2 {
        let on = k % 2 == 1;
        set_quiet(c, share, on)?;
        let (runs, secs) = round(c, instants)?;
        writeln!(
            out,
            "  {} quiet hours: {runs} runs in {secs:.3} s",
            if on { "with   " } else { "without" }
        )?;
        if on { &mut with } else { &mut without }.push(secs);
    }
    set_quiet(c, share, false)?;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut without), median(&mut with));
    writeln!(
        out,
        "quiet hours on {:.0}% of the users: median {b:.3} s against {a:.3} s without, {:+.1}% (goal within 10%)",
        share * 100.0,
        (b / a - 1.0) * 100.0
    )?;
    Ok(())
}
