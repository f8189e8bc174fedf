//! The HTTP face under a descriptor limit and under attack, as real
//! `digestd web`/`serve` processes: a small `ulimit -n` lowers the cap on
//! connections and never runs out, and while hostile connections hold
//! their slots, `/healthz`, the tick and the queue carry on. The limits
//! one by one are in `http_limits.rs`.

use crate::common;
use crate::http_limits::{read_until_closed, HANG};

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Starts `digestd web` for `env` under `ulimit -n {nofile}` with the
/// extra settings `envs`; returns the child (stderr piped) and its address.
fn web_under_ulimit(
    env: &common::cli::Env,
    nofile: u32,
    envs: &[(&str, &str)],
) -> (std::process::Child, String) {
    daemon_under_ulimit(env, "web", nofile, envs)
}

/// [`web_under_ulimit`] for `command` (`web` or `serve`).
fn daemon_under_ulimit(
    env: &common::cli::Env,
    command: &str,
    nofile: u32,
    envs: &[(&str, &str)],
) -> (std::process::Child, String) {
    use std::process::{Command, Stdio};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("sh")
        .args(["-c", &format!("ulimit -n {nofile} && exec \"$0\" \"$@\"")])
        .arg(env!("CARGO_BIN_EXE_digestd"))
        .args([
            "--config",
            env.config.to_str().unwrap(),
            "--db",
            &env.url,
            command,
        ])
        .current_dir(env.dir.path())
        .env("DIGESTD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .env("DIGESTD_LOG__LEVEL", "warn")
        .envs(envs.iter().copied())
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, format!("127.0.0.1:{port}"))
}

/// One `GET /healthz` on a new connection: the whole answer, or `None`.
fn healthz_at(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(HANG)).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    read_until_closed(&mut s)
}

fn wait_until_serving(addr: &str) {
    let started = Instant::now();
    while healthz_at(addr).is_none_or(|a| !a.starts_with("HTTP/1.1 200")) {
        assert!(started.elapsed() < HANG, "web did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops `child` with SIGTERM; its exit code and stderr.
fn stop(child: std::process::Child) -> (Option<i32>, String) {
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `digestd web` under a descriptor limit too small for `max_connections`:
/// the cap is lowered to leave the reserve, with a warning naming the
/// limit, so a flood of stalled connections never makes `accept` fail
/// (EMFILE): the flood is shed and `/healthz` keeps answering.
#[test]
fn a_small_descriptor_limit_lowers_the_cap_and_never_runs_out() {
    let env = common::cli::Env::init();
    let (child, addr) =
        web_under_ulimit(&env, 300, &[("DIGESTD_HTTP__HEADER_TIMEOUT_SECONDS", "60")]);
    wait_until_serving(&addr);
    // More stalled connections than descriptors.
    let flood: Vec<TcpStream> = (0..400)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    for _ in 0..5 {
        let a = healthz_at(&addr).expect("answered during the flood");
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    drop(flood);
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("max_connections lowered to fit the limit on open files")
            && stderr.contains("open_files_limit=300")
            && stderr.contains("using=44"),
        "{stderr}"
    );
    assert!(!stderr.contains("accept failed"), "{stderr}");
}

/// The process's resident memory in MiB, from `/proc`.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib / 1024.0
}

/// How many ticks `serve` has finished, from the tick lease's record.
fn ticks_run(url: &str) -> i64 {
    use diesel::prelude::*;
    use digestd::db::schema::nt_job;
    let mut c = digestd::db::DbUrl::parse(url).unwrap().connect().unwrap();
    nt_job::table
        .filter(nt_job::job_name.eq("tick"))
        .select(nt_job::run_count)
        .first(&mut c)
        .optional()
        .unwrap()
        .unwrap_or(0)
}

/// The `.eml` files in `dir` whose text contains `needle`.
fn mails_with(dir: &std::path::Path, needle: &str) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(needle)))
            .count()
    })
}

/// `/healthz` answered once every 200 ms while `attack` runs for `for_`;
/// the slowest answer. Every one must come.
fn healthz_throughout(addr: &str, for_: Duration) -> Duration {
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    while started.elapsed() < for_ {
        let t = Instant::now();
        let a = healthz_at(addr).expect("/healthz answered during the attack");
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    slowest
}

/// 1,000 connections to `addr` that send a request head a byte a second
/// while a notification is posted: `/healthz` answers throughout, the
/// notification is delivered, the tick runs, and every slow head is closed
/// within 8 s. The slowest `/healthz` and the ticks run meanwhile.
fn slow_heads(env: &common::cli::Env, addr: &str) -> (Duration, i64) {
    let ticks_before = ticks_run(&env.url);
    let stop_drip = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let attackers: Vec<TcpStream> = (0..1000)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\nX-Slow: ").unwrap();
            s
        })
        .collect();
    let drip = {
        let mut socks: Vec<TcpStream> = attackers.iter().map(|s| s.try_clone().unwrap()).collect();
        let stop = stop_drip.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for s in &mut socks {
                    let _ = s.write_all(b"a");
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    env.ok(&[
        "notify",
        "--from",
        "ben",
        "--to",
        "asha",
        "--subject",
        "Posted during the attack",
        "--message",
        "hello",
    ]);
    let slowest_heads = healthz_throughout(addr, Duration::from_secs(8));
    let outbox = env.dir.path().join("outbox");
    assert_eq!(
        mails_with(&outbox, "Posted during the attack"),
        1,
        "not delivered during the attack"
    );
    let ticks_during = ticks_run(&env.url) - ticks_before;
    assert!(
        ticks_during >= 2,
        "{ticks_during} ticks during 8 s of attack"
    );
    // Every slow head is closed by now (4 s header timeout, or shed).
    let open = attackers
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut buf = [0u8; 16];
            let mut s: &TcpStream = s;
            matches!(s.read(&mut buf), Err(e) if e.kind() == ErrorKind::WouldBlock)
        })
        .count();
    stop_drip.store(true, std::sync::atomic::Ordering::SeqCst);
    drip.join().unwrap();
    drop(attackers);
    assert_eq!(open, 0, "slow heads still open after 8 s");
    (slowest_heads, ticks_during)
}

/// 300 connections to `addr` without a token that each offer a 16 MiB
/// body and send 1 MiB of it: the slowest `/healthz` meanwhile, and the
/// peak resident memory of the daemon `pid`, in MiB.
fn bodies_without_a_token(addr: &str, pid: u32) -> (Duration, f64) {
    let mut peak = rss_mib(pid);
    let mib = vec![b'x'; 1 << 20];
    let mut uploads = vec![];
    for i in 0..300 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_write_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let _ = write!(
            s,
            "POST /api/v1/modifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: 16777216\r\n\r\n"
        );
        // The server answers 401 and closes without reading: the write
        // stops at what the socket buffers hold.
        let _ = s.write_all(&mib);
        uploads.push(s);
        if i % 50 == 0 {
            peak = peak.max(rss_mib(pid));
        }
    }
    let slowest_bodies = healthz_throughout(addr, Duration::from_secs(2));
    peak = peak.max(rss_mib(pid));
    drop(uploads);
    (slowest_bodies, peak)
}

/// The audit's two attacks on `digestd serve` under `ulimit -n 1024`, with
/// the tick (every 2 s here) and the queue running: 1,000 connections that
/// send a request head a byte a second, then 300 connections without a
/// token that each offer a 16 MiB body and send 1 MiB of it. Throughout,
/// `/healthz` answers, the tick runs and a notification posted during the
/// attack is delivered; the slow heads are closed; the bodies cost no
/// memory. The figures are printed (`docs/benchmarks.md`, Under attack).
#[test]
fn under_attack_health_the_tick_and_the_queue_carry_on() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    // This process holds the attackers' 1,300 sockets.
    let nofile = getrlimit(Resource::Nofile);
    if nofile.current.is_some_and(|c| c < 4096) {
        let want = Rlimit {
            current: Some(4096),
            maximum: Some(nofile.maximum.map_or(4096, |m| m.max(4096))),
        };
        setrlimit(Resource::Nofile, want).expect("raise this test's limit on open files");
    }
    let env = common::cli::Env::init();
    env.ok(&[
        "user",
        "add",
        "asha",
        "--tz",
        "UTC",
        "--email",
        "asha@example.com",
    ]);
    env.ok(&[
        "user",
        "add",
        "ben",
        "--tz",
        "UTC",
        "--email",
        "ben@example.com",
    ]);
    let (child, addr) = daemon_under_ulimit(
        &env,
        "serve",
        1024,
        &[
            ("DIGESTD_SCHEDULE__TICK", "*/2 * * * * *"),
            ("DIGESTD_SCHEDULE__QUEUE_SECONDS", "1"),
            ("DIGESTD_HTTP__HEADER_TIMEOUT_SECONDS", "4"),
        ],
    );
    let pid = child.id();
    wait_until_serving(&addr);
    std::thread::sleep(Duration::from_secs(1));
    let idle_rss = rss_mib(pid);

    // 1. Slow heads: a byte a second each, for ever.
    let (slowest_heads, ticks_during) = slow_heads(&env, &addr);

    // 2. Bodies without a token: 300 offers of 16 MiB, 1 MiB sent each.
    let (slowest_bodies, peak) = bodies_without_a_token(&addr, pid);
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
    println!(
        "under attack: idle {idle_rss:.1} MiB, peak {peak:.1} MiB (+{:.1}); slowest /healthz {} ms during 1,000 slow heads, {} ms during 300 bodies; {ticks_during} ticks in 8 s",
        peak - idle_rss,
        slowest_heads.as_millis(),
        slowest_bodies.as_millis()
    );
    // Not a speed figure: without shedding, a new connection waits for a
    // slow head's 4 s timeout to free a slot, and this fails.
    assert!(
        slowest_heads < Duration::from_secs(3),
        "/healthz waited {} ms behind slow heads",
        slowest_heads.as_millis()
    );
    assert!(
        peak <= idle_rss + 64.0,
        "resident memory grew from {idle_rss:.1} to {peak:.1} MiB"
    );
}
