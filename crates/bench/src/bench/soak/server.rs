//! The soak's servers, each a process of its own so that what the bench
//! reads of its memory and descriptors is the server's alone.
//!
//! A server is `digestd bench soak-server`: `serve` with the bench's clock.
//! It answers HTTP as `serve` does (`http::App` with its metrics) and, at
//! each `tick <instant>` line on its standard input, runs `serve`'s own
//! tick and queue pass ([`cycle::tick_and_deliver`]) at that instant and
//! answers `ticked <seconds> <bytes SQLite holds>` (or `failed <error>`). Its input closed, it
//! drains and exits. Several servers bind one address with `SO_REUSEPORT`,
//! so the kernel spreads the clients' connections over them, and all of
//! them tick at each hour: one leads, the others help or skip, as
//! `serve` processes sharing a database do.
//!
//! [`Servers`] is the bench's side: it starts them, sends the ticks and
//! reads their `/proc` entries; dropped, it kills what is still running.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use clap::Args;

use crate::bench::{ServeHttp, Served};
use crate::clock::FixedClock;
use crate::config::{Config, EmailTransport};
use crate::db::Db;
use crate::deliver::queue::Delivery;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::{cycle, schedule};

#[derive(Args, Debug, Clone)]
pub struct SoakServerArgs {
    /// The address to listen on; shared with the other servers.
    #[arg(long)]
    pub listen: String,
    /// Where the queue passes send mail (`smtp://host:port`).
    #[arg(long)]
    pub smtp_url: String,
    /// This server's own directory (its outbox and sent journal).
    #[arg(long)]
    pub scratch: PathBuf,
}

/// The server's configuration: the defaults, with its address, the
/// bench's SMTP sink and its own directories.
fn config(a: &SoakServerArgs, url: &str) -> Config {
    let mut cfg = Config::default();
    cfg.database.url = url.to_string();
    cfg.http.listen = a.listen.clone();
    cfg.email.transport = EmailTransport::Smtp;
    cfg.email.smtp_url = a.smtp_url.clone();
    cfg.email.dir = a.scratch.join("outbox").to_string_lossy().into_owned();
    cfg.queue.journal_dir = a.scratch.join("journal").to_string_lossy().into_owned();
    cfg
}

/// A listener on `listen` that other processes may bind too.
fn bind_shared(listen: &str) -> Result<tokio::net::TcpListener> {
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| Error::invalid("bench soak-server: --listen must be host:port"))?;
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    Ok(socket.listen(1024)?)
}

/// The instant of a `tick <instant>` line.
fn tick_at(line: &str) -> Result<DateTime<Utc>> {
    line.strip_prefix("tick ")
        .and_then(|t| DateTime::parse_from_rfc3339(t.trim()).ok())
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| Error::invalid("bench soak-server: expected `tick <RFC 3339 instant>`"))
}

/// Runs one server until its standard input closes.
pub fn soak_server(
    a: &SoakServerArgs,
    url: Option<&str>,
    rt: &tokio::runtime::Handle,
    serve: ServeHttp,
    out: &mut dyn Write,
) -> Result<()> {
    let url = url.ok_or_else(|| Error::invalid("bench soak-server: --db is required"))?;
    let cfg = config(a, url);
    // As `serve`: the process's runtime.
    let db = Db::open_existing(url, cfg.database.pool_size)?;
    let mut delivery = Delivery::from_config(&cfg, rt)?;
    let clock = Arc::new(FixedClock::new(super::t0()));
    let metrics = Arc::new(Metrics::new());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = rt.block_on(async {
        let listener = bind_shared(&cfg.http.listen)?;
        Ok::<_, Error>(tokio::spawn(serve(Served {
            listener,
            db: db.clone(),
            cfg: cfg.clone(),
            clock: clock.clone(),
            metrics: metrics.clone(),
            shutdown: Box::pin(async {
                let _ = stopped.await;
            }),
        })))
    })?;
    writeln!(out, "listening")?;
    out.flush()?;
    let owner = schedule::lease::owner_name();
    for line in std::io::stdin().lock().lines() {
        let at = tick_at(&line?)?;
        clock.set(at);
        let started = Instant::now();
        // As `serve`: on a blocking thread of the runtime.
        let (db2, cfg2, owner2, m) = (db.clone(), cfg.clone(), owner.clone(), metrics.clone());
        let mut d = delivery;
        let (d, done) = rt
            .block_on(rt.spawn_blocking(move || {
                let done = cycle::tick_and_deliver(&db2, &cfg2, &mut d, &owner2, at, &m);
                (d, done)
            }))
            .map_err(|e| Error::Storage(format!("bench soak-server: {e}")))?;
        delivery = d;
        match done {
            Ok(()) => writeln!(
                out,
                "ticked {:.3} {}",
                started.elapsed().as_secs_f64(),
                digestd_alloc::sqlite_memory_used()
            )?,
            Err(e) => writeln!(out, "failed {e}")?,
        }
        out.flush()?;
    }
    rt.block_on(rt.spawn_blocking(move || delivery.shutdown()))
        .ok();
    let _ = stop.send(());
    let _ = rt.block_on(server);
    Ok(())
}

/// One server process, seen from the bench.
struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Server {
    fn line(&mut self) -> Result<String> {
        let mut line = String::new();
        self.output.read_line(&mut line)?;
        match line.is_empty() {
            true => Err(Error::Storage(format!(
                "bench soak: server {} exited (its errors are above)",
                self.child.id()
            ))),
            false => Ok(line.trim_end().to_string()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory, open descriptors and CPU time of one process.
#[derive(Clone, Copy, Default)]
pub struct Usage {
    pub rss_mib: f64,
    pub fds: usize,
    pub cpu_secs: f64,
}

impl Usage {
    /// The usage of process `pid`.
    pub fn of(pid: u32) -> Usage {
        let dir = format!("/proc/{pid}");
        Usage {
            rss_mib: super::super::status_mib(Some(pid), "VmRSS:").unwrap_or(0.0),
            fds: std::fs::read_dir(format!("{dir}/fd")).map_or(0, |d| d.count()),
            cpu_secs: cpu_secs(&dir).unwrap_or(0.0),
        }
    }
}

/// User and system CPU time of the process at `dir` (`/proc/PID/stat`'s
/// `utime` and `stime`, in Linux's fixed 100 ticks a second).
fn cpu_secs(dir: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
    // The fields after the command name, which may hold spaces, in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// The bench's servers.
pub struct Servers(Vec<Server>);

impl Servers {
    /// Starts `n` servers on `port` of 127.0.0.1 over the database at
    /// `url`, sending into the sink at `smtp_url`; returns once all listen.
    pub fn start(n: usize, url: &str, port: u16, smtp_url: &str, scratch: &Path) -> Result<Self> {
        let exe = std::env::current_exe()?;
        let mut servers = Vec::with_capacity(n);
        for k in 0..n {
            let dir = scratch.join(format!("server-{k}"));
            let mut child = Command::new(&exe)
                .arg("--db")
                .arg(url)
                .args(["bench", "soak-server", "--listen"])
                .arg(format!("127.0.0.1:{port}"))
                .arg("--smtp-url")
                .arg(smtp_url)
                .arg("--scratch")
                .arg(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()?;
            let input = child.stdin.take().expect("piped");
            let output = BufReader::new(child.stdout.take().expect("piped"));
            let mut server = Server {
                child,
                input,
                output,
            };
            let first = server.line()?;
            if first != "listening" {
                return Err(Error::Storage(format!("bench soak: server said {first:?}")));
            }
            servers.push(server);
        }
        Ok(Servers(servers))
    }

    /// Every server ticks at `at`, at once: the longest it took, and the
    /// bytes SQLite holds in all the servers after it.
    pub fn tick(&mut self, at: DateTime<Utc>) -> Result<(Duration, i64)> {
        let line = format!("tick {}\n", at.to_rfc3339());
        for s in &mut self.0 {
            s.input.write_all(line.as_bytes())?;
            s.input.flush()?;
        }
        let (mut longest, mut sqlite) = (Duration::ZERO, 0);
        for s in &mut self.0 {
            let answer = s.line()?;
            let (secs, bytes) = answer
                .strip_prefix("ticked ")
                .and_then(|t| t.split_once(' '))
                .and_then(|(t, b)| Some((t.parse::<f64>().ok()?, b.parse::<i64>().ok()?)))
                .ok_or_else(|| Error::Storage(format!("bench soak: server said {answer:?}")))?;
            longest = longest.max(Duration::from_secs_f64(secs));
            sqlite += bytes;
        }
        Ok((longest, sqlite))
    }

    /// Each server's memory and descriptors.
    pub fn usage(&self) -> Vec<Usage> {
        self.pids().into_iter().map(Usage::of).collect()
    }

    pub(crate) fn pids(&self) -> Vec<u32> {
        self.0.iter().map(|s| s.child.id()).collect()
    }
}
