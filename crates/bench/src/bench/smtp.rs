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
use crate::deliver::queue::{self, Delivery};
use crate::error::{Error, Result};

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

pub fn smtp(args: &SmtpArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
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
    let mut d = Delivery::new(&cfg)?;
    let now = requested_at();
    let sink_pid = sink.0.id().to_string();
    let backend = backend_pid(&mut c);
    let snap = || snapshot(&sink_pid, backend.as_deref());
    let (mut theirs, mut ours) = (Vec::new(), Vec::new());
    let (mut source_cpu, mut our_cpu) = (Spent::default(), Spent::default());
    // smtp-source and digestd take turns, smtp-source first and last, so
    // that a slow spell of the machine falls on both.
    for k in 0..=args.repeat {
        let s0 = snap();
        theirs.push(smtp_source(port, args)?);
        source_cpu.add(spent(s0, snap(), true));
        if k == args.repeat {
            break;
        }
        if args.group {
            let s0 = snap();
            let t = Instant::now();
            as_processes(&db_url, port, args, k, &body)?;
            ours.push(t.elapsed());
            our_cpu.add(spent(s0, snap(), true));
            let sent = sent_to_group(&mut c, k)?;
            if sent != args.messages {
                return Err(Error::Storage(format!(
                    "the group's request reached {sent} of {} members",
                    args.messages
                )));
            }
            continue;
        }
        // A fresh batch of pending requests; earlier runs' stay as history.
        requests(&mut c, args.messages, k * args.messages, "email", &body)?;
        let s0 = snap();
        let t = Instant::now();
        let report = queue::run_pass(&mut c, &mut d, now)?;
        ours.push(t.elapsed());
        our_cpu.add(spent(s0, snap(), false));
        let sent = report.written.get("email").copied().unwrap_or(0);
        if sent != args.messages || report.finished != args.messages {
            return Err(Error::Storage(format!(
                "the queue delivered {sent} of {} messages ({report})",
                args.messages
            )));
        }
    }
    let line =
        |out: &mut dyn Write, what: &str, d: Duration| messages_line(out, what, args.messages, d);
    let runs = |d: &[Duration]| {
        d.iter()
            .map(|d| format!("{:.2}", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    writeln!(out, "smtp-source runs (s): {}", runs(&theirs))?;
    writeln!(out, "digestd runs (s):     {}", runs(&ours))?;
    let (base, mine) = (median(&mut theirs), median(&mut ours));
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
    let (n_source, n_ours) = (theirs.len(), ours.len());
    writeln!(
        out,
        "cpu per message, smtp-source: smtp-source {:.0} µs, smtp-sink {:.0} µs",
        us(source_cpu.client, n_source),
        us(source_cpu.sink, n_source)
    )?;
    let server = our_cpu
        .backend
        .map(|b| format!(", PostgreSQL backend {:.0} µs", us(b, n_ours)))
        .unwrap_or_default();
    writeln!(
        out,
        "cpu per message, digestd: digestd {:.0} µs{server}, smtp-sink {:.0} µs",
        us(our_cpu.client, n_ours),
        us(our_cpu.sink, n_ours)
    )?;
    let ratio = base.as_secs_f64() / mine.as_secs_f64();
    writeln!(
        out,
        "ratio digestd/smtp-source (medians): {ratio:.2} (goal >= 0.80: {})",
        if ratio >= 0.8 { "met" } else { "not met" }
    )?;
    Ok(())
}

/// The group `bench-group` holding the `n` recipients.
fn group_of_all(c: &mut crate::db::DbConn, n: usize) -> Result<()> {
    use diesel::connection::SimpleConnection;
    let d = super::sql::Dialect(c.backend());
    let t0 = d.ts_lit(requested_at());
    let all = d.series(n + 1);
    let group = super::PARTY0 + n as i64 + 1;
    c.batch_execute(&format!(
        "INSERT INTO parties (id, kind, name, created_at) VALUES ({group}, 'group', 'bench-group', {t0}); \
         INSERT INTO memberships (group_id, member_id) \
             SELECT {group}, {} + i FROM {all} WHERE i > 0",
        super::PARTY0
    ))?;
    Ok(())
}

/// One timed run of the group path: `digestd notify` to the group, then
/// `digestd queue run`, each a process of this binary on the bench's
/// database, sending over SMTP into the sink on `port`.
fn as_processes(db_url: &str, port: u16, a: &SmtpArgs, k: usize, body: &str) -> Result<()> {
    let exe = std::env::current_exe()?;
    let run = |args: &[&str], stdin: Option<&str>| -> Result<()> {
        let mut cmd = Command::new(&exe);
        cmd.arg("--db")
            .arg(db_url)
            .args(args)
            .env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env(
                "DIGESTD_EMAIL__SMTP_URL",
                format!("smtp://127.0.0.1:{port}"),
            )
            .env("DIGESTD_EMAIL__POOL_SIZE", a.sessions.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(text.as_bytes())?;
        }
        let done = child.wait_with_output()?;
        if !done.status.success() {
            return Err(Error::Storage(format!(
                "digestd {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&done.stderr).trim()
            )));
        }
        Ok(())
    };
    let subject = format!("Bench group message {k}");
    run(
        &[
            "notify",
            "--from",
            "u0",
            "--to",
            "bench-group",
            "--expand-group",
            "--subject",
            &subject,
            "--message",
            "-",
        ],
        Some(body),
    )?;
    run(&["queue", "run"], None)
}

/// How many members the `k`th run's group request reached.
fn sent_to_group(c: &mut crate::db::DbConn, k: usize) -> Result<usize> {
    use crate::db::schema::{nt_queue, nt_requests};
    use diesel::prelude::*;
    let subject = format!("Bench group message {k}");
    let n: i64 = nt_queue::table
        .inner_join(nt_requests::table.on(nt_requests::request_id.eq(nt_queue::request_id)))
        .filter(nt_requests::subject.eq(&subject))
        .filter(nt_queue::is_successful.eq(true))
        .count()
        .get_result(c)?;
    Ok(n as usize)
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
