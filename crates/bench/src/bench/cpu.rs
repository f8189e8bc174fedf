//! CPU time of the processes in a bench run, from `/proc/PID/stat`: on a
//! shared two-core machine the wall-clock ratio moves with whatever else
//! runs, while the CPU each side spends per message moves much less, and
//! it tells which process a change made cheaper.

use std::time::Duration;

/// Linux reports `utime` and friends in clock ticks of `USER_HZ`, which is
/// 100 on every architecture digestd runs on.
const USER_HZ: u64 = 100;

/// CPU time (user + system) of process `pid` ("self" for this one), and
/// of its children that have been waited for.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cpu {
    pub own: Duration,
    pub children: Duration,
}

impl Cpu {
    pub fn of(pid: &str) -> Option<Cpu> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) may hold spaces; fields after it are
        // numbers. utime, stime, cutime, cstime are fields 14 to 17.
        let rest = &stat[stat.rfind(')')? + 1..];
        let f: Vec<u64> = rest
            .split_whitespace()
            .skip(11)
            .take(4)
            .map(|s| s.parse().ok())
            .collect::<Option<_>>()?;
        let ticks = |n: u64| Duration::from_millis(n * 1000 / USER_HZ);
        (f.len() == 4).then(|| Cpu {
            own: ticks(f[0] + f[1]),
            children: ticks(f[2] + f[3]),
        })
    }

    /// Whether `pid` is a process named `name` on this machine.
    pub fn is(pid: &str, name: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == name)
            .unwrap_or(false)
    }
}

/// Microseconds of `d` per message.
pub(super) fn per_message(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_cpu_time_that_grows_with_work() {
        let before = Cpu::of("self").expect("/proc/self/stat");
        let t = std::time::Instant::now();
        let mut x = 0u64;
        let mut after = before;
        // A tick is 10 ms of CPU; on a busy machine that may take longer.
        while after.own <= before.own && t.elapsed() < Duration::from_secs(10) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            after = Cpu::of("self").unwrap();
        }
        std::hint::black_box(x);
        assert!(after.own > before.own, "{before:?} then {after:?}");
    }

    #[test]
    fn a_missing_or_foreign_process_is_none() {
        assert!(Cpu::of("not-a-pid").is_none());
        assert!(!Cpu::is("self", "surely-not-this-name"));
    }
}
