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

/// The whole machine's CPU time from `/proc/stat`, every core summed:
/// what was busy (everything but idle and waiting for I/O) and all of it.
/// Taken around a timed run, it tells whether the run had the cores to
/// itself or filled them: a run that keeps every core busy is bound by
/// the machine, and a second side doing more work cannot hide it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Machine {
    busy: u64,
    total: u64,
}

impl Machine {
    pub fn now() -> Machine {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        Machine::parse(&stat).unwrap_or_default()
    }

    /// The first line, `cpu  user nice system idle iowait irq softirq steal …`.
    fn parse(stat: &str) -> Option<Machine> {
        let line = stat.lines().next()?.strip_prefix("cpu ")?;
        let f: Vec<u64> = line
            .split_whitespace()
            .take(8)
            .map(|s| s.parse().ok())
            .collect::<Option<_>>()?;
        if f.len() < 5 {
            return None;
        }
        let total: u64 = f.iter().sum();
        Some(Machine {
            busy: total - f[3] - f[4],
            total,
        })
    }

    /// The share of the machine's cores busy since `before`, 0 to 1
    /// (`None` when the clock of `/proc/stat` did not move).
    pub fn busy_since(self, before: Machine) -> Option<f64> {
        let total = self.total.checked_sub(before.total)?;
        (total > 0).then(|| self.busy.saturating_sub(before.busy) as f64 / total as f64)
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
    fn the_machines_busy_share_leaves_out_idle_and_iowait() {
        let before = Machine::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        // 60 busy (40 user, 20 system), 140 idle, 0 iowait.
        let after = Machine::parse("cpu  140 0 70 940 50 0 0 0 0 0\n").unwrap();
        let share = after.busy_since(before).unwrap();
        assert!((share - 0.3).abs() < 1e-9, "{share}");
        assert_eq!(before.busy_since(before), None);
        assert_eq!(before.busy_since(after), None);
        for bad in ["", "cpu0 1 2 3 4 5", "cpu  1 2 x 4 5", "cpu  1 2 3"] {
            assert!(Machine::parse(bad).is_none(), "{bad:?}");
        }
        assert!(Machine::now().total > 0, "this machine has a /proc/stat");
    }

    #[test]
    fn a_missing_or_foreign_process_is_none() {
        assert!(Cpu::of("not-a-pid").is_none());
        assert!(!Cpu::is("self", "surely-not-this-name"));
    }
}
