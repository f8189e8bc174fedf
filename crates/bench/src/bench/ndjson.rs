//! `bench ndjson`: what one large NDJSON `POST /api/v1/modifications` costs
//! the server in resident memory. The server is a process of its own
//! (`digestd web`: this binary, or `--server`, another build of it), so the
//! client's memory is not counted; the client writes the body as it makes
//! it, over a plain socket. The figure is the server's peak resident size
//! (VmHWM, reset after a small warm-up POST) over its resident size before.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::http::lines;
use super::{free_port, open_empty, wait_listening};
use crate::access::{self, Scope};
use crate::error::{Error, Result};
use crate::{items, parties};

#[derive(Args, Debug, Clone)]
pub struct NdjsonArgs {
    /// Lines in the body (about 265 bytes each); the body must stay within
    /// the server's `[http] max_body_bytes` (16 MiB by default).
    #[arg(long, default_value_t = 60_000)]
    pub lines: usize,
    /// The `digestd` binary to run as the server (default: this one).
    #[arg(long)]
    pub server: Option<PathBuf>,
}

/// Where `bench ndjson` runs when no --db is given (recreated each run).
const DEFAULT_BENCH_DB: &str = "sqlite://data/bench-ndjson.db";
/// Lines made and written at a time.
const CHUNK: usize = 500;

pub fn ndjson(args: &NdjsonArgs, url: Option<&str>, out: &mut dyn Write) -> Result<()> {
    if args.lines == 0 {
        return Err(Error::invalid("bench ndjson: --lines must be at least 1"));
    }
    // Checked before the world is written: a bench that fails after it
    // leaves a database the next run refuses as not empty.
    if let Some(p) = args.server.as_ref().filter(|p| !p.is_file()) {
        return Err(Error::invalid(format!(
            "bench ndjson: --server {}: no such file",
            crate::validate::escape_for_line(&p.display().to_string())
        )));
    }
    let db = open_empty(url, DEFAULT_BENCH_DB)?;
    let db_url = url.unwrap_or(DEFAULT_BENCH_DB).to_string();
    let (coll, token) = {
        let c = &mut db.conn()?;
        let t0 = super::requested_at();
        let user = parties::NewUser {
            name: "bench".into(),
            timezone: "UTC".into(),
            ..Default::default()
        };
        parties::create_user(c, t0, &user)?;
        let coll = items::create_collection(c, t0, "Posts", None)?;
        (
            coll.uuid,
            access::add_token(c, t0, "bench", Scope::Ingest)?.1,
        )
    };
    let backend = db.backend();
    drop(db);
    let exe = match &args.server {
        Some(p) => p.clone(),
        None => std::env::current_exe()?,
    };
    let port = free_port()?;
    let mut server = Server(
        Command::new(&exe)
            .args(["--db", &db_url, "web"])
            .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?,
    );
    wait_listening(port, "digestd web", Duration::from_secs(30))?;
    let pid = server.0.id();
    // Warm-up: the pool's connections and the runtime's threads are made.
    post(port, &token, &coll, 0, 10)?;
    let before = status_mib(pid, "VmRSS:")?;
    let reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
    let started = Instant::now();
    let bytes = post(port, &token, &coll, 10, args.lines)?;
    let took = started.elapsed();
    let peak = status_mib(pid, "VmHWM:")?;
    let _ = server.0.kill();
    let _ = server.0.wait();
    writeln!(
        out,
        "bench ndjson: {} lines, {:.1} MiB, posted as NDJSON in {:.2} s to {} ({:?})",
        args.lines,
        bytes as f64 / (1024.0 * 1024.0),
        took.as_secs_f64(),
        exe.display(),
        backend
    )?;
    writeln!(
        out,
        "server resident: {before:.1} MiB before, peak {peak:.1} MiB{}: {:.1} MiB for the POST",
        if reset {
            ""
        } else {
            " (VmHWM not reset: the run's peak)"
        },
        peak - before
    )?;
    Ok(())
}

/// Kills the server when the bench ends early.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One POST of `n` lines from item `first`, written `CHUNK` lines at a
/// time; the body's size. Anything but 201 is an error.
fn post(port: u16, token: &str, coll: &str, first: usize, n: usize) -> Result<usize> {
    let make = |k: usize| -> String {
        let end = (k + CHUNK).min(n);
        let mut s = lines(coll, first + k, end - k).join("\n");
        s.push('\n');
        s
    };
    // The length first, made once and dropped: the body is sent as made.
    let len: usize = (0..n).step_by(CHUNK).map(|k| make(k).len()).sum();
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    write!(
        s,
        "POST /api/v1/modifications HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/x-ndjson\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
    )?;
    // A server that refuses early (413) closes its side: its answer is
    // still read.
    for k in (0..n).step_by(CHUNK) {
        if s.write_all(make(k).as_bytes()).is_err() {
            break;
        }
    }
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    if !answer.starts_with("HTTP/1.1 201") {
        let head = answer.lines().next().unwrap_or("no answer");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
        return Err(Error::Storage(format!(
            "bench ndjson: the POST got {head}: {body}"
        )));
    }
    Ok(len)
}

/// A size field (kB) of `/proc/PID/status`, in MiB; an error if absent.
fn status_mib(pid: u32, field: &str) -> Result<f64> {
    super::status_mib(Some(pid), field)
        .ok_or_else(|| Error::Storage(format!("bench ndjson: no {field} in /proc/{pid}/status")))
}
