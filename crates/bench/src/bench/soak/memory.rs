//! The servers' resident memory over the soak: sampled every second,
//! each whole minute's peak and median, the peak while a tick ran, and
//! the plateau line.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::load::Shared;

/// The servers' resident memory together, read every second from
/// `started` until the clients stop: (seconds since `started`, MiB).
pub(super) async fn sample_rss(
    pids: Vec<u32>,
    s: Arc<Shared>,
    started: Instant,
) -> Vec<(f64, f64)> {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    let mut samples = Vec::new();
    while !s.stopped() {
        every.tick().await;
        let rss: f64 = pids
            .iter()
            .map(|p| crate::bench::status_mib(Some(*p), "VmRSS:").unwrap_or(0.0))
            .sum();
        samples.push((started.elapsed().as_secs_f64(), rss));
    }
    samples
}

/// Each whole minute's peak and median of `samples` (a minute cut short
/// by the end is left out). The peak is the goal's measure; the median
/// says where the minute stayed, which one spike does not move.
pub(super) fn minutes(samples: &[(f64, f64)]) -> Vec<Minute> {
    let mut each: Vec<Vec<f64>> = Vec::new();
    for (t, rss) in samples {
        let m = (*t / 60.0) as usize;
        if each.len() <= m {
            each.resize(m + 1, Vec::new());
        }
        each[m].push(*rss);
    }
    if each.last().is_some_and(|v| v.len() < 55) {
        each.pop();
    }
    each.into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            Minute {
                peak: v.last().copied().unwrap_or(0.0),
                median: v.get(v.len() / 2).copied().unwrap_or(0.0),
            }
        })
        .collect()
}

/// One whole minute of resident samples, in MiB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Minute {
    peak: f64,
    median: f64,
}

/// The peak of `samples` taken while a tick ran (`ticks`: from, to) and
/// the peak of the others.
pub(super) fn peaks_by_tick(samples: &[(f64, f64)], ticks: &[(f64, f64)]) -> (f64, f64) {
    let during = |t: f64| ticks.iter().any(|(a, b)| t >= *a && t <= *b + 1.0);
    samples
        .iter()
        .fold((0.0, 0.0), |(tick, calm), (t, rss)| match during(*t) {
            true => (tick.max(*rss), calm),
            false => (tick, calm.max(*rss)),
        })
}

/// The line on each minute's peak and the plateau goal: the last whole
/// minute's peak within 10% of the third's; then the same for the
/// minutes' medians, which a single spike in either minute does not move.
pub(super) fn plateau_line(minutes: &[Minute]) -> String {
    if minutes.is_empty() {
        return "resident, each minute's peak: the soak was shorter than a minute".into();
    }
    let list = |f: fn(&Minute) -> f64| -> String {
        let each: Vec<String> = minutes.iter().map(|m| format!("{:.0}", f(m))).collect();
        each.join(", ")
    };
    let mut line = format!("resident, each minute's peak: {} MiB", list(|m| m.peak));
    let against = |f: fn(&Minute) -> f64| -> Option<f64> {
        match (minutes.get(2), minutes.last()) {
            (Some(third), Some(last)) if minutes.len() > 3 => {
                Some((f(last) / f(third) - 1.0) * 100.0)
            }
            _ => None,
        }
    };
    if let Some(p) = against(|m| m.peak) {
        line += &format!("; the last minute's {p:+.0}% against the third's (goal within 10%)");
    }
    line += &format!("; medians {} MiB", list(|m| m.median));
    if let Some(p) = against(|m| m.median) {
        line += &format!(", the last {p:+.0}% against the third");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_whole_minute_has_its_peak_median_and_ticks_their_own() {
        // Two whole minutes, each climbing to its own peak, then ten
        // seconds of a third.
        let samples: Vec<(f64, f64)> = (0..130)
            .map(|t| (f64::from(t), f64::from(100 + t % 60 + t / 60 * 10)))
            .collect();
        let got = minutes(&samples);
        let peaks: Vec<f64> = got.iter().map(|m| m.peak).collect();
        let medians: Vec<f64> = got.iter().map(|m| m.median).collect();
        assert_eq!(peaks, vec![159.0, 169.0]);
        assert_eq!(medians, vec![130.0, 140.0]);
        // A tick from 5 to 8 s: its samples (and one a second after) apart.
        assert_eq!(peaks_by_tick(&samples[..20], &[(5.0, 8.0)]), (109.0, 119.0));
    }

    #[test]
    fn one_spike_moves_the_peaks_not_the_medians() {
        let m = |peak, median| Minute { peak, median };
        assert_eq!(
            plateau_line(&[
                m(100.0, 90.0),
                m(100.0, 95.0),
                m(200.0, 100.0),
                m(160.0, 102.0)
            ]),
            "resident, each minute's peak: 100, 100, 200, 160 MiB; \
             the last minute's -20% against the third's (goal within 10%); \
             medians 90, 95, 100, 102 MiB, the last +2% against the third"
        );
        // Too short for the goal: the lists alone.
        assert_eq!(
            plateau_line(&[m(100.0, 90.0)]),
            "resident, each minute's peak: 100 MiB; medians 90 MiB"
        );
    }
}
