//! A small SMTP server on loopback whose replies are scripted by the
//! recipient's local part, for fault tests over real TCP:
//!
//! - `ok…`   250
//! - `fwd…`  251 (user not local; will forward)
//! - `busy…` 451 at RCPT (transient)
//! - `gone…` 550 at RCPT (permanent)
//! - `cut…`  the first time: accepts RCPT and the data, then closes the
//!   connection instead of replying to the final dot; after that 250.
//! - `late…` accepts RCPT and the data, then refuses it at the final dot
//!   (554, as a content filter would).
//! - `slow…` 250, but 20 ms after the final dot (a slow server, so a test
//!   can kill a pass in the middle).
//! - `pace…` 250, 5 ms after the final dot; the message is recorded
//!   before the wait, so a client killed while waiting for the `250` has
//!   its message counted (the crash tests count what a server took).
//!
//! Every accepted message is recorded with its envelope.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Debug, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    pub data: Vec<u8>,
}

#[derive(Default)]
struct State {
    received: Mutex<Vec<Received>>,
    cut_done: Mutex<Vec<String>>,
    sessions: AtomicUsize,
    stop: AtomicBool,
}

pub struct FaultSmtp {
    pub port: u16,
    state: Arc<State>,
}

impl FaultSmtp {
    /// Listens on an ephemeral loopback port.
    pub fn start() -> FaultSmtp {
        Self::start_on(0)
    }

    /// Listens on `port` (0: any).
    pub fn start_on(port: u16) -> FaultSmtp {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let st = state.clone();
        thread::spawn(move || {
            for conn in listener.incoming() {
                if st.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                st.sessions.fetch_add(1, Ordering::SeqCst);
                let st = st.clone();
                thread::spawn(move || {
                    let _ = session(conn, &st);
                });
            }
        });
        FaultSmtp { port, state }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// TCP sessions accepted so far.
    pub fn sessions(&self) -> usize {
        self.state.sessions.load(Ordering::SeqCst)
    }
}

impl Drop for FaultSmtp {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag and releases the port.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn session(conn: TcpStream, st: &State) -> std::io::Result<()> {
    // Replies to pipelined commands are separate small writes: without
    // this, Nagle holds each until the client ACKs the previous one.
    conn.set_nodelay(true)?;
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    let reply = |w: &mut TcpStream, s: &str| w.write_all(format!("{s}\r\n").as_bytes());
    reply(&mut w, "220 fault.test ESMTP scripted")?;
    let (mut from, mut to): (String, Vec<String>) = (String::new(), Vec::new());
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end().to_string();
        let upper = cmd.to_ascii_uppercase();
        if upper.starts_with("EHLO") {
            w.write_all(
                b"250-fault.test\r\n250-8BITMIME\r\n250-PIPELINING\r\n250 SIZE 10000000\r\n",
            )?;
        } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
            reply(&mut w, "250 ok")?;
        } else if upper.starts_with("RSET") {
            (from, to) = (String::new(), Vec::new());
            reply(&mut w, "250 ok")?;
        } else if upper.starts_with("MAIL FROM:") {
            from = addr(&cmd);
            reply(&mut w, "250 2.1.0 sender ok")?;
        } else if upper.starts_with("RCPT TO:") {
            let a = addr(&cmd);
            let local = a.split('@').next().unwrap_or("").to_string();
            if local.starts_with("busy") {
                reply(&mut w, "451 4.3.0 mailbox busy, try again later")?;
            } else if local.starts_with("gone") {
                reply(&mut w, "550 5.1.1 no such user here")?;
            } else if local.starts_with("fwd") {
                to.push(a);
                reply(&mut w, "251 2.1.5 user not local; will forward")?;
            } else {
                to.push(a);
                reply(&mut w, "250 2.1.5 recipient ok")?;
            }
        } else if upper == "DATA" {
            if to.is_empty() {
                reply(&mut w, "554 5.5.1 no valid recipients")?;
                continue;
            }
            reply(&mut w, "354 end with <CRLF>.<CRLF>")?;
            let mut data = Vec::new();
            loop {
                let mut l = Vec::new();
                if r.read_until(b'\n', &mut l)? == 0 {
                    return Ok(());
                }
                if l == b".\r\n" {
                    break;
                }
                data.extend_from_slice(&l);
            }
            let cut = to.iter().find(|a| a.starts_with("cut")).cloned();
            if let Some(c) = cut {
                let mut done = st.cut_done.lock().unwrap();
                if !done.contains(&c) {
                    done.push(c);
                    // Hang up instead of answering the final dot.
                    return Ok(());
                }
            }
            if to.iter().any(|a| a.starts_with("slow")) {
                thread::sleep(std::time::Duration::from_millis(20));
            }
            if to.iter().any(|a| a.starts_with("late")) {
                (from, to) = (String::new(), Vec::new());
                reply(&mut w, "554 5.7.1 message content rejected")?;
                continue;
            }
            st.received.lock().unwrap().push(Received {
                from: from.clone(),
                to: to.clone(),
                data,
            });
            if to.iter().any(|a| a.starts_with("pace")) {
                thread::sleep(std::time::Duration::from_millis(5));
            }
            (from, to) = (String::new(), Vec::new());
            reply(&mut w, "250 2.0.0 queued")?;
        } else if upper.starts_with("QUIT") {
            reply(&mut w, "221 bye")?;
            return Ok(());
        } else {
            reply(&mut w, "502 5.5.2 command not recognised")?;
        }
    }
}

fn addr(cmd: &str) -> String {
    let start = cmd.find('<').map_or(0, |i| i + 1);
    let end = cmd[start..].find('>').map_or(cmd.len(), |i| start + i);
    cmd[start..end].to_string()
}

/// A loopback port with nothing listening (bound, then released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// Whether Postfix's `bins` (`smtp-sink`, `smtp-source`) are installed;
/// under CI their absence fails the test instead of skipping it.
pub fn have_postfix(bins: &[&str]) -> bool {
    let present = bins
        .iter()
        .all(|b| std::path::Path::new("/usr/sbin").join(b).exists());
    if !present && std::env::var_os("CI").is_some() {
        panic!("CI is set but Postfix's {} are missing", bins.join(", "));
    }
    present
}

/// Postfix's smtp-sink on a loopback port, dumping every message to a file.
pub struct Sink {
    child: std::process::Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Sink {
    /// `None` (the test skipped) when smtp-sink is not installed, outside CI.
    pub fn start() -> Option<Sink> {
        let bin = ["/usr/sbin/smtp-sink", "/usr/bin/smtp-sink"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists());
        let Some(bin) = bin else {
            assert!(
                std::env::var_os("CI").is_none(),
                "smtp-sink is missing: .ci/run installs postfix"
            );
            eprintln!("skipped: smtp-sink not installed (Debian package postfix)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let port = free_port();
        let mut cmd = std::process::Command::new(bin);
        // As root smtp-sink must drop privileges; the dump directory is
        // world-writable for that user.
        cmd.args(["-u", "nobody", "-d"])
            .arg(format!("{}/%M.", dir.path().display()))
            .arg(format!("127.0.0.1:{port}"))
            .arg("256");
        // Owned by the Sink from the start, so it is killed and reaped on
        // every path.
        let sink = Sink {
            child: cmd.spawn().expect("start smtp-sink"),
            port,
            dir,
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(sink);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("smtp-sink did not listen on {port}");
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
