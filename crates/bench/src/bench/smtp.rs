//! `digestd bench smtp`: N messages of about `--size` bytes to N recipients
//! through the real queue (expansion, sending over a pool of SMTP sessions,
//! status updates) into Postfix's `smtp-sink` (in memory), beside
//! `smtp-source -s P -m N -l SIZE -d` (P sessions, connections reused) into
//! the same sink, in the same run.
//!
//! smtp-source and digestd take turns, `--repeat` digestd runs between
//! `--repeat` + 1 smtp-source runs, and their medians are compared: on a
//! shared machine one run of each says more about the machine than about
//! either. Each digestd run gets a fresh batch of N pending requests
//! (generated in the engine; earlier batches stay as history); what is
//! timed is one `queue::run_pass`, from pending requests to final
//! statuses. The CPU each process spent per message is printed too.

mod group;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::cpu::{per_message, Cpu};
use super::{
    free_port, messages_line, open_empty, recipients, requested_at, requests, wait_listening,
};
use crate::config::EmailConfig;
use crate::db::DbConn;
use crate::deliver::queue::{self, Delivery};
use crate::error::{Error, Result};
use group::{as_processes, group_of_all, sent_to_group};

#[derive(Args, Debug, Clone)]
pub struct SmtpArgs {
    /// Messages (one recipient each).
    #[arg(long, default_value_t = 10_000)]
    pub messages: usize,
    /// Parallel SMTP sessions, for both digestd and smtp-source.
    #[arg(long, default_value_t = 4)]
    pub sessions: u32,
    /// Approximate size of each message on the wire, in bytes.
    #[arg(long, default_value_t = 4096)]
    pub size: usize,
    /// Timed digestd runs, each beside an smtp-source run before it (and
    /// one more after the last); the medians are compared.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Send to one group of all the recipients instead, as an operator
    /// would: each timed run is `digestd notify --to GROUP --expand-group`
    /// and then `digestd queue run`, two processes of this binary
    /// (start-up, expansion, sending and statuses all timed).
    #[arg(long)]
    pub group: bool,
}

const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-smtp.db";

pub(super) fn find(bin: &str) -> Result<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin"]
        .iter()
        .map(|d| Path::new(d).join(bin))
        .find(|p| p.exists())
        .ok_or_else(|| {
            Error::invalid(format!(
                "bench smtp needs {bin} (Debian package postfix: apt-get install postfix)"
            ))
        })
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

pub(super) struct Sink(pub Child);

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_sink(port: u16) -> Result<Sink> {
    start_sink_with(port, &[], Stdio::null())
}

/// smtp-sink on `port` with `extra` options before the address, its
/// standard output to `stdout`.
pub(super) fn start_sink_with(port: u16, extra: &[&str], stdout: Stdio) -> Result<Sink> {
    let mut cmd = Command::new(find("smtp-sink")?);
    if is_root() {
        // smtp-sink refuses to keep root privileges.
        cmd.args(["-u", "nobody"]);
    }
    cmd.args(extra)
        .arg(format!("127.0.0.1:{port}"))
        .arg("1024")
        .stdout(stdout)
        .stderr(Stdio::null());
    let sink = Sink(cmd.spawn()?);
    wait_listening(port, "smtp-sink", Duration::from_secs(5))?;
    Ok(sink)
}

/// The PostgreSQL backend serving `c`, when it runs on this machine.
pub(super) fn backend_pid(c: &mut crate::db::DbConn) -> Option<String> {
    use diesel::prelude::*;
    let crate::db::DbConn::Postgres(pg) = c else {
        return None;
    };
    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(pg)
    .ok()?;
    let pid = pid.to_string();
    Cpu::is(&pid, "postgres").then_some(pid)
}

/// CPU spent by the processes of one timed run.
#[derive(Default)]
pub(super) struct Spent {
    /// This process, or smtp-source (a child, counted once reaped).
    pub client: Duration,
    pub sink: Duration,
    pub backend: Option<Duration>,
}

impl Spent {
    pub fn add(&mut self, o: Spent) {
        self.client += o.client;
        self.sink += o.sink;
        self.backend = match (self.backend, o.backend) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// CPU of (this process or its reaped children, the sink, the backend).
pub(super) fn snapshot(sink: &str, backend: Option<&str>) -> (Cpu, Cpu, Option<Cpu>) {
    let get = |pid: &str| Cpu::of(pid).unwrap_or_default();
    (get("self"), get(sink), backend.map(get))
}

pub(super) fn spent(
    before: (Cpu, Cpu, Option<Cpu>),
    after: (Cpu, Cpu, Option<Cpu>),
    child: bool,
) -> Spent {
    let client = |c: Cpu| if child { c.children } else { c.own };
    Spent {
        client: client(after.0).saturating_sub(client(before.0)),
        sink: after.1.own.saturating_sub(before.1.own),
        backend: after
            .2
            .zip(before.2)
            .map(|(a, b)| a.own.saturating_sub(b.own)),
    }
}

fn smtp_source(port: u16, a: &SmtpArgs) -> Result<Duration> {
    source_run(port, a.sessions, a.messages, a.size)
}

/// `smtp-source -s sessions -m messages -l size -d` into the sink on
/// `port`, timed from start to exit.
pub(super) fn source_run(
    port: u16,
    sessions: u32,
    messages: usize,
    size: usize,
) -> Result<Duration> {
    let t = Instant::now();
    let out = Command::new(find("smtp-source")?)
        .args(["-s", &sessions.to_string()])
        .args(["-m", &messages.to_string()])
        .args(["-l", &size.to_string()])
        .args(["-d", "-f", "bench@localhost", "-t", "sink@localhost"])
        .arg(format!("127.0.0.1:{port}"))
        .output()?;
    let d = t.elapsed();
    if !out.status.success() {
        return Err(Error::Storage(format!(
            "smtp-source failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(d)
}

pub fn smtp(
    args: &SmtpArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> Result<()> {
    find("smtp-source")?;
    if args.repeat == 0 {
        return Err(Error::invalid("bench smtp: --repeat must be at least 1"));
    }
    let port = free_port()?;
    let sink = start_sink(port)?;
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let db_url = url.unwrap_or(DEFAULT_BENCH_DB).to_string();
    let mut c = db.conn()?;
    // Text and HTML each carry about half of the size.
    let body = "The quick brown fox jumps over the lazy dog. ".repeat((args.size / 2 / 45).max(1));
    recipients(
        &mut c,
        args.messages,
        "email",
        "'user' || i || '@example.com'",
    )?;
    if args.group {
        group_of_all(&mut c, args.messages)?;
    }
    writeln!(
        out,
        "bench smtp on {:?}{}: {} messages of ~{} bytes, {} sessions, {} runs each, \
         into smtp-sink on 127.0.0.1:{port}",
        c.backend(),
        if args.group {
            ", to one group by two processes (notify --expand-group, queue run)"
        } else {
            ""
        },
        args.messages,
        args.size,
        args.sessions,
        args.repeat
    )?;
    let cfg = EmailConfig {
        transport: crate::config::EmailTransport::Smtp,
        smtp_url: format!("smtp://127.0.0.1:{port}"),
        pool_size: args.sessions,
        ..EmailConfig::default()
    };
    let mut d = Delivery::new(&cfg, rt)?;
    let turns = Turns {
        args,
        port,
        db_url: &db_url,
        body: &body,
        now: requested_at(),
        sink_pid: sink.0.id().to_string(),
        backend: backend_pid(&mut c),
    };
    turns.take(&mut c, &mut d)?.report(args, out)
}

/// What each timed run of either side needs: the arguments, the sink's
/// port, the bench's database, the message body, the instant the queue
/// runs at, and the processes whose CPU is counted.
struct Turns<'a> {
    args: &'a SmtpArgs,
    port: u16,
    db_url: &'a str,
    body: &'a str,
    now: chrono::DateTime<chrono::Utc>,
    sink_pid: String,
    backend: Option<String>,
}

/// Each side's run times and the CPU they spent.
struct Runs {
    theirs: Vec<Duration>,
    ours: Vec<Duration>,
    source_cpu: Spent,
    our_cpu: Spent,
}

impl Turns<'_> {
    fn snap(&self) -> (Cpu, Cpu, Option<Cpu>) {
        snapshot(&self.sink_pid, self.backend.as_deref())
    }

    /// smtp-source and digestd take turns, smtp-source first and last, so
    /// that a slow spell of the machine falls on both.
    fn take(&self, c: &mut DbConn, d: &mut Delivery) -> Result<Runs> {
        let args = self.args;
        let mut runs = Runs {
            theirs: Vec::new(),
            ours: Vec::new(),
            source_cpu: Spent::default(),
            our_cpu: Spent::default(),
        };
        for k in 0..=args.repeat {
            let s0 = self.snap();
            runs.theirs.push(smtp_source(self.port, args)?);
            runs.source_cpu.add(spent(s0, self.snap(), true));
            if k == args.repeat {
                break;
            }
            if args.group {
                self.group_turn(c, k, &mut runs)?;
            } else {
                self.queue_turn(c, d, k, &mut runs)?;
            }
        }
        Ok(runs)
    }

    /// The `k`th run of the group path, as two processes, then the check
    /// that the group's request reached every member.
    fn group_turn(&self, c: &mut DbConn, k: usize, runs: &mut Runs) -> Result<()> {
        let s0 = self.snap();
        let t = Instant::now();
        as_processes(self.db_url, self.port, self.args, k, self.body)?;
        runs.ours.push(t.elapsed());
        runs.our_cpu.add(spent(s0, self.snap(), true));
        let sent = sent_to_group(c, k)?;
        if sent != self.args.messages {
            return Err(Error::Storage(format!(
                "the group's request reached {sent} of {} members",
                self.args.messages
            )));
        }
        Ok(())
    }

    /// The `k`th run of the queue: a fresh batch of pending requests
    /// (earlier runs' stay as history), then one timed `run_pass`.
    fn queue_turn(
        &self,
        c: &mut DbConn,
        d: &mut Delivery,
        k: usize,
        runs: &mut Runs,
    ) -> Result<()> {
        let n = self.args.messages;
        requests(c, n, k * n, "email", self.body)?;
        let s0 = self.snap();
        let t = Instant::now();
        let report = queue::run_pass(c, d, self.now)?;
        runs.ours.push(t.elapsed());
        runs.our_cpu.add(spent(s0, self.snap(), false));
        let sent = report.written.get("email").copied().unwrap_or(0);
        if sent != n || report.finished != n {
            return Err(Error::Storage(format!(
                "the queue delivered {sent} of {n} messages ({report})"
            )));
        }
        Ok(())
    }
}

impl Runs {
    /// The runs, both medians, the CPU per message and the ratio.
    fn report(mut self, args: &SmtpArgs, out: &mut dyn Write) -> Result<()> {
        let line = |out: &mut dyn Write, what: &str, d: Duration| {
            messages_line(out, what, args.messages, d)
        };
        let runs = |d: &[Duration]| {
            d.iter()
                .map(|d| format!("{:.2}", d.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        writeln!(out, "smtp-source runs (s): {}", runs(&self.theirs))?;
        writeln!(out, "digestd runs (s):     {}", runs(&self.ours))?;
        let (base, mine) = (median(&mut self.theirs), median(&mut self.ours));
        line(
            out,
            &format!("smtp-source -s {} -d (median)", args.sessions),
            base,
        )?;
        line(
            out,
            if args.group {
                "digestd notify --expand-group + queue run, processes (median)"
            } else {
                "digestd queue: expand + send + statuses (run_pass, median)"
            },
            mine,
        )?;
        let us = |d: Duration, runs: usize| per_message(d, args.messages * runs);
        let (n_source, n_ours) = (self.theirs.len(), self.ours.len());
        writeln!(
            out,
            "cpu per message, smtp-source: smtp-source {:.0} µs, smtp-sink {:.0} µs",
            us(self.source_cpu.client, n_source),
            us(self.source_cpu.sink, n_source)
        )?;
        let server = self
            .our_cpu
            .backend
            .map(|b| format!(", PostgreSQL backend {:.0} µs", us(b, n_ours)))
            .unwrap_or_default();
        writeln!(
            out,
            "cpu per message, digestd: digestd {:.0} µs{server}, smtp-sink {:.0} µs",
            us(self.our_cpu.client, n_ours),
            us(self.our_cpu.sink, n_ours)
        )?;
        let ratio = base.as_secs_f64() / mine.as_secs_f64();
        writeln!(
            out,
            "ratio digestd/smtp-source (medians): {ratio:.2} (goal >= 0.80: {})",
            if ratio >= 0.8 { "met" } else { "not met" }
        )?;
        Ok(())
    }
}

/// The median of `d` (the mean of the middle two when even).
pub(super) fn median(d: &mut [Duration]) -> Duration {
    d.sort_unstable();
    let m = d.len() / 2;
    if d.len() % 2 == 1 {
        d[m]
    } else {
        (d[m - 1] + d[m]) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::median;
    use std::time::Duration;

    #[test]
    fn the_median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut [ms(9), ms(1), ms(5)]), ms(5));
        assert_eq!(median(&mut [ms(8), ms(2), ms(4), ms(100)]), ms(6));
        assert_eq!(median(&mut [ms(7)]), ms(7));
    }
}
