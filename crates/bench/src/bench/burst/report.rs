//! The burst's report: the world's line, then the burst beside the floor,
//! its split, the CPU per message, the ratio and the memory.

use std::io::Write;
use std::time::Duration;

use super::run::{Probe, Ticks};
use super::sink::SOURCE_HEADERS;
use super::world::{World, BUSY_CHANGES, BUSY_EVERY, QUIET_CHANGES};
use crate::bench::cpu::per_message;
use crate::bench::smtp::Spent;
use crate::bench::{peak_rss_mib, rate};
use crate::error::Result;

/// What the world holds: its collections, modifications and how many
/// digests list a busy collection's changes.
pub(super) fn world_line(out: &mut dyn Write, world: &World, n: usize) -> Result<()> {
    writeln!(
        out,
        "world: {} collections ({} busy with {BUSY_CHANGES} changes, the rest {QUIET_CHANGES}), \
         {} modifications; {} digests ({:.1}%) list {BUSY_CHANGES} changes",
        world.collections,
        world.collections.div_ceil(BUSY_EVERY),
        world.mods,
        world.busy_digests,
        100.0 * world.busy_digests as f64 / n as f64
    )?;
    Ok(())
}

/// Everything the report's lines after the check are made of.
pub(super) struct Report {
    pub n: usize,
    pub sessions: u32,
    /// Mean message size, in bytes, and what the transport saw accepted.
    pub mean: usize,
    pub acc: u64,
    /// smtp-source's `-l`.
    pub length: usize,
    pub probe: Probe,
    pub ticks: Ticks,
    pub burst_cpu: Spent,
    pub floors: Vec<Duration>,
    pub floor_cpu: Spent,
    /// Peak memory after the setup, and whether VmHWM was reset then.
    pub setup_peak: Option<f64>,
    pub reset: bool,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Report {
    pub fn write(&self, out: &mut dyn Write) -> Result<()> {
        let floor = self.floors.iter().min().copied().unwrap_or_default();
        self.times(out, floor)?;
        self.cpu(out)?;
        let ratio = secs(floor) / secs(self.ticks.burst());
        writeln!(
            out,
            "ratio burst/floor (floor time / burst time): {ratio:.2} (goal >= 0.60: {})",
            if ratio >= 0.6 { "met" } else { "not met" }
        )?;
        rss_lines(
            out,
            self.setup_peak,
            self.reset.then(peak_rss_mib).flatten(),
        )?;
        if let (Some(anon), Some(file)) = (self.ticks.resident.anon, self.ticks.resident.file) {
            writeln!(
                out,
                "resident after each tick and pass, at most: {anon:.0} MiB anonymous (heap), \
                 {file:.0} MiB file-backed (the program and its libraries)"
            )?;
        }
        Ok(())
    }

    /// The burst's time and its parts, then the floor's.
    fn times(&self, out: &mut dyn Write, floor: Duration) -> Result<()> {
        let (n, t) = (self.n, &self.ticks);
        let burst_t = t.burst();
        let share = |d: Duration| 100.0 * secs(d) / secs(burst_t);
        writeln!(
            out,
            "mean message size {} bytes (what the transport handed to the SMTP sessions, headers and body, \
             over the {} accepted); smtp-source -l {} (the payload with its CRLFs; its own headers add ~{SOURCE_HEADERS} bytes)",
            self.mean, self.acc, self.length
        )?;
        writeln!(
            out,
            "{:<62} {:>8.2} s {:>9.0} messages/s",
            "burst: ticks + queue passes",
            secs(burst_t),
            rate(n, burst_t)
        )?;
        writeln!(
            out,
            "  tick {:.2} s ({:.0}%): find + claim {:.2} s ({:.0}%), compose + render + post {:.2} s ({:.0}%)",
            secs(t.tick),
            share(t.tick),
            secs(t.tick.saturating_sub(t.handoff)),
            share(t.tick.saturating_sub(t.handoff)),
            secs(t.handoff),
            share(t.handoff)
        )?;
        if self.probe.probed > 0 {
            // The hand-off split at the rate compose + render ran alone.
            let composing = self
                .probe
                .time
                .mul_f64(n as f64 / self.probe.probed as f64)
                .min(t.handoff);
            let posting = t.handoff.saturating_sub(composing);
            writeln!(
                out,
                "    of which, at the rate measured alone: compose + render ~{:.2} s ({:.0}%), \
                 posting ~{:.2} s ({:.0}%)",
                secs(composing),
                share(composing),
                secs(posting),
                share(posting)
            )?;
        }
        writeln!(
            out,
            "  queue passes {:.2} s ({:.0}%)",
            secs(t.queue),
            share(t.queue)
        )?;
        writeln!(
            out,
            "{:<62} {:>8.2} s {:>9.0} messages/s",
            format!(
                "floor: smtp-source -s {} -m {n} -l {} -d (fastest of {})",
                self.sessions,
                self.length,
                self.floors.len()
            ),
            secs(floor),
            rate(n, floor)
        )?;
        writeln!(
            out,
            "floor runs (s): {}",
            self.floors
                .iter()
                .map(|d| format!("{:.2}", secs(*d)))
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        Ok(())
    }

    /// The CPU each process spent per message, in the burst and the floor.
    fn cpu(&self, out: &mut dyn Write) -> Result<()> {
        let us = |d: Duration, runs: usize| per_message(d, self.n * runs);
        let server = self
            .burst_cpu
            .backend
            .map(|b| format!(", PostgreSQL backend {:.0} µs", us(b, 1)))
            .unwrap_or_default();
        writeln!(
            out,
            "cpu per message, burst: digestd {:.0} µs{server}, smtp-sink {:.0} µs",
            us(self.burst_cpu.client, 1),
            us(self.burst_cpu.sink, 1)
        )?;
        writeln!(
            out,
            "cpu per message, floor: smtp-source {:.0} µs, smtp-sink {:.0} µs",
            us(self.floor_cpu.client, self.floors.len()),
            us(self.floor_cpu.sink, self.floors.len())
        )?;
        Ok(())
    }
}

/// Peak memory: the whole run's, and the burst's own when VmHWM could be
/// reset after the setup (smtp-sink and smtp-source are other processes).
fn rss_lines(out: &mut dyn Write, setup: Option<f64>, burst: Option<f64>) -> Result<()> {
    let whole = match burst {
        Some(b) => Some(setup.map_or(b, |a| a.max(b))),
        None => peak_rss_mib(),
    };
    let Some(whole) = whole else {
        return Ok(writeln!(out, "peak memory: VmHWM not available")?);
    };
    let burst_part = burst
        .map(|b| format!("; in the burst and floor {b:.0} MiB (VmHWM reset after the setup)"))
        .unwrap_or_default();
    let judged = burst.unwrap_or(whole);
    writeln!(
        out,
        "peak memory {whole:.0} MiB over the whole run (setup {:.0} MiB){burst_part}; goal <= 300 MiB in the burst: {}",
        setup.unwrap_or(f64::NAN),
        if judged <= 300.0 { "met" } else { "not met" }
    )?;
    Ok(())
}
