//! The compose bench's report: each measured run as a line of time and
//! rate, the pairs on 1 and N workers, what the digests store, and the
//! goals.

use std::io::Write;
use std::time::Duration;

use super::{Drafts, Pair, Ticked};
use crate::bench::{median_of, peak_rss_mib, rate, AnonPeak};
use crate::error::Result;

/// Everything the compose bench measured, for its report.
pub(super) struct Report {
    pub workers: usize,
    /// Window reads: (rows, time).
    pub reads: (usize, Duration),
    pub drafts: Drafts,
    /// The writes' floor.
    pub floor: Duration,
    pub ticked: Ticked,
}

/// One measured run: what ran, how long, how many `unit`s per second.
fn line(out: &mut dyn Write, what: &str, n: usize, d: Duration, unit: &str) -> std::io::Result<()> {
    writeln!(
        out,
        "{what:<62} {:>8.2} s {:>10.0} {unit}/s",
        d.as_secs_f64(),
        rate(n, d)
    )
}

fn met(yes: bool) -> &'static str {
    if yes {
        "met"
    } else {
        "not met"
    }
}

impl Report {
    /// Every line, in order; the memory sampler `anon` is stopped just
    /// before the last.
    pub fn write(self, out: &mut dyn Write, anon: AnonPeak) -> Result<()> {
        let (d, runs) = (&self.drafts, self.drafts.runs);
        let (rows, reads) = self.reads;
        line(
            out,
            &format!("window reads ({rows} modifications, information)"),
            rows,
            reads,
            "rows",
        )?;
        line(
            out,
            &format!("plan: find and claim {runs} due runs"),
            runs,
            d.plan,
            "runs",
        )?;
        line(
            out,
            &format!(
                "compose + render as posted, no writes ({} posts, {} workers)",
                d.drafted.posts, self.workers
            ),
            runs,
            d.draft,
            "digests",
        )?;
        for (what, pairs) in &d.on_workers {
            self.pairs(out, what, pairs)?;
        }
        self.runs(out)?;
        self.stored(out)?;
        self.goals(out, anon)
    }

    /// One way of the hand-off on 1 and N workers: each pair's lines, the
    /// bound its first batch's plan sets, and the median ratio.
    fn pairs(&self, out: &mut dyn Write, what: &str, pairs: &[Pair]) -> Result<()> {
        let (runs, workers) = (self.drafts.runs, self.workers);
        let (mut ratios, mut bounds) = (Vec::new(), Vec::new());
        for (round, &(one, first_one, many, first_many)) in pairs.iter().enumerate() {
            let first = if round % 2 == 0 {
                "1 first"
            } else {
                "1 second"
            };
            line(
                out,
                &format!("  {what}, no writes, 1 worker ({first})"),
                runs,
                one,
                "digests",
            )?;
            line(
                out,
                &format!("  {what}, no writes, {workers} workers"),
                runs,
                many,
                "digests",
            )?;
            ratios.push(one.as_secs_f64() / many.as_secs_f64());
            // The first batch's plan as it ran on N workers (its windows
            // read on as many connections), the rest at best spread evenly.
            let t1 = one.as_secs_f64();
            let (first1, first_n) = (first_one.as_secs_f64(), first_many.as_secs_f64());
            bounds.push((
                t1 / (first_n + (t1 - first1) / workers as f64),
                first1 / t1,
                first_n / first1,
            ));
        }
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (bound, serial, shrunk) = bounds[bounds.len() / 2];
        writeln!(
            out,
            "  {what}: the first batch's plan (its windows read and collapsed) is {:.0}% of 1 worker's time, {shrunk:.2}x of it on {} workers: at most {bound:.2}x on {} workers (median pair)",
            serial * 100.0,
            workers,
            workers
        )?;
        writeln!(
            out,
            "  {what}: {:.2}x from 1 to {} workers, median of {} pairs ({}) (goal >= 1.6x at 2)",
            median_of(ratios),
            workers,
            each.len(),
            each.join(", ")
        )?;
        Ok(())
    }

    /// Composing whole, the tick with the real hand-off, the writes' floor
    /// and filling the holes.
    fn runs(&self, out: &mut dyn Write) -> Result<()> {
        let (d, t, runs) = (&self.drafts, &self.ticked, self.drafts.runs);
        line(
            out,
            &format!("compose + render each whole ({} non-empty)", d.composed),
            runs,
            d.comp,
            "digests",
        )?;
        line(
            out,
            "compose + render, every body from scratch (no sharing)",
            runs,
            d.unshared,
            "digests",
        )?;
        line(
            out,
            &format!(
                "tick with the real hand-off ({} runs, {} posted)",
                t.runs, t.posted
            ),
            t.runs,
            t.full,
            "digests",
        )?;
        line(
            out,
            "writes floor: INSERT … SELECT of as many requests and messages",
            runs,
            self.floor,
            "digests",
        )?;
        let beyond = t.full.as_secs_f64() - d.plan.as_secs_f64() - d.draft.as_secs_f64();
        writeln!(
            out,
            "  the tick beyond plan + compose as posted: {beyond:.2} s ({:.1}x the writes' floor)",
            beyond / self.floor.as_secs_f64()
        )?;
        line(
            out,
            &format!(
                "fill the stored holes at send time ({} digests, information)",
                t.filled.0
            ),
            t.filled.0,
            t.filled.2,
            "digests",
        )?;
        Ok(())
    }

    /// Sizes: rendered whole, filled, and stored per digest by column.
    fn stored(&self, out: &mut dyn Write) -> Result<()> {
        let (kept, filled) = (&self.ticked.kept, self.ticked.filled);
        writeln!(
            out,
            "average size rendered whole {} bytes per digest; filled at send time {}",
            self.drafts.bytes / self.drafts.runs.max(1),
            filled.1 / filled.0.max(1)
        )?;
        let per = |b: i64| b / kept.digests.max(1);
        let total: i64 = kept.columns.iter().map(|(_, b)| b).sum();
        let cols: Vec<String> = kept
            .columns
            .iter()
            .filter(|(_, b)| *b > 0)
            .map(|(c, b)| format!("{c} {}", per(*b)))
            .collect();
        writeln!(
            out,
            "stored per digest ({} digests, {} shared renderings): {} bytes ({}); goal <= 4096 for email: {}",
            kept.digests,
            kept.bodies,
            per(total),
            cols.join(", "),
            met(per(total) <= 4096)
        )?;
        if let Some(b) = kept.on_disk {
            writeln!(
                out,
                "  as PostgreSQL stores them (pg_column_size of the messages and renderings): {} bytes",
                per(b)
            )?;
        }
        Ok(())
    }

    /// The tick against composing, the compose rate, and peak memory.
    fn goals(&self, out: &mut dyn Write, anon: AnonPeak) -> Result<()> {
        let (d, t) = (&self.drafts, &self.ticked);
        let ratio = rate(t.runs, t.full) / rate(d.runs, d.draft);
        writeln!(
            out,
            "tick with the real hand-off at {ratio:.2}x compose + render as posted (goal >= 0.5: {})",
            met(ratio >= 0.5)
        )?;
        let goal = rate(d.runs, d.comp);
        writeln!(
            out,
            "compose rate {goal:.0} digests/s on one core, each whole (goal >= 20000: {})",
            met(goal >= 20_000.0)
        )?;
        let anon = anon.stop();
        if let Some(m) = peak_rss_mib() {
            writeln!(
                out,
                "peak memory {m:.0} MiB resident (VmHWM; goal <= 300: {}), \
                 {anon:.0} MiB anonymous (RssAnon sampled every 5 ms; goal <= 300: {})",
                met(m <= 300.0),
                met(anon <= 300.0)
            )?;
        }
        Ok(())
    }
}
