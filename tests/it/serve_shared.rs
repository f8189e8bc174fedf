//! Two `digestd serve` processes on one PostgreSQL database share a burst
//! (issue 24 part 3): both compose (the lease holder leads the start-up
//! tick, the other claims chunks of it) and both deliver (the other
//! expands pending requests from their far end), and every subscriber
//! gets exactly one digest, at a real SMTP server over a real socket.
//! PostgreSQL only: on SQLite the second process has nothing to share (one
//! writer; `tests/it/schedule_shared.rs` shows it skipping).

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::smtp::FaultSmtp;
use common::TestDb;
use diesel::prelude::*;
use digestd::db::schema::{nt_requests, subscription_runs};

const USERS: usize = 1_500;

/// Runs `digestd ARGS` on `db` with `stdin`, as of `now`; must succeed.
fn digestd_in(db: &TestDb, now: &str, args: &[&str], stdin: &[u8]) {
    common::digestd_on(&db.url, &[&["--now", now][..], args].concat(), stdin);
}

/// A `digestd serve` process, its log (stderr) read as it is written.
struct Serve {
    child: Child,
    log: Arc<Mutex<String>>,
    reader: JoinHandle<()>,
}

impl Serve {
    /// Queue passes it has finished: one `queue:` line each.
    fn passes(&self) -> usize {
        let log = self.log.lock().unwrap();
        log.lines()
            .filter(|l| l.contains("digestd::serve: queue: "))
            .count()
    }
}

fn serve(db: &TestDb, dir: &std::path::Path, smtp: &FaultSmtp) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .args(["--db", &db.url, "serve"])
        .env_remove("DIGESTD_DATABASE_URL")
        .env("DIGESTD_HTTP__ENABLED", "false")
        .env("DIGESTD_EMAIL__TRANSPORT", "smtp")
        .env("DIGESTD_EMAIL__SMTP_URL", smtp.url())
        // Small chunks and frequent passes: a 1,500-digest burst in many
        // pieces, for two processes to share.
        .env("DIGESTD_SCHEDULE__TICK_CHUNK", "50")
        .env("DIGESTD_SCHEDULE__QUEUE_SECONDS", "1")
        .env("DIGESTD_SCHEDULE__COMPOSE_WORKERS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let log = Arc::new(Mutex::new(String::new()));
    let to = log.clone();
    let reader = std::thread::spawn(move || {
        for line in stderr.lines() {
            let Ok(line) = line else { break };
            let mut to = to.lock().unwrap();
            to.push_str(&line);
            to.push('\n');
        }
    });
    Serve { child, log, reader }
}

/// SIGTERM, then its log.
fn stop(mut s: Serve) -> String {
    let kill = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = s.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "clean exit on SIGTERM");
    s.reader.join().unwrap();
    let log = s.log.lock().unwrap();
    log.clone()
}

/// `key=N` in a log line.
fn field(line: &str, key: &str) -> Option<usize> {
    let rest = line.split(&format!("{key}=")).nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Runs claimed at ticks this process led, and at ticks it helped.
fn tick_runs(log: &str) -> (usize, usize) {
    let (mut led, mut helped) = (0, 0);
    for l in log.lines().filter(|l| l.contains(" tick")) {
        let n = field(l, "runs").unwrap_or(0);
        if l.contains("tick helped") {
            helped += n;
        } else if l.contains(" tick ") || l.ends_with(" tick") {
            led += n;
        }
    }
    (led, helped)
}

/// Emails this process delivered, from its `queue:` lines.
fn delivered(log: &str) -> usize {
    log.lines()
        .filter_map(|l| l.split("delivered email ").nth(1))
        .filter_map(|r| {
            r.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}

/// [`USERS`] users, each with an hourly digest of everything, imported
/// through the binary three hours ago.
fn subscribe_the_burst(db: &TestDb) {
    // Subscribed three hours ago (serve reads the wall clock): the
    // start-up tick finds every hourly digest due.
    let then = (chrono::Utc::now() - chrono::Duration::hours(3)).to_rfc3339();
    // digestd's tables first: the commands below open only a database
    // that `init` (or the library) made.
    drop(db.conn());
    let users: String = (0..USERS)
        .map(|i| {
            format!("{{\"name\":\"u{i:04}\",\"tz\":\"UTC\",\"email\":\"u{i:04}@example.com\"}}\n")
        })
        .collect();
    digestd_in(db, &then, &["user", "import"], users.as_bytes());
    let subs: String = (0..USERS)
        .map(|i| {
            format!(
                "{{\"party\":\"u{i:04}\",\"frequency\":\"hourly\",\"kind\":\"modification\",\
                 \"all\":true,\"channels\":[\"email\"],\"send_empty\":true}}\n"
            )
        })
        .collect();
    digestd_in(db, &then, &["subscription", "import"], subs.as_bytes());
}

#[test]
fn two_serve_processes_share_a_burst_and_nothing_goes_twice() {
    let Some(db) = TestDb::postgres() else {
        eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set");
        return;
    };
    subscribe_the_burst(&db);

    let smtp = FaultSmtp::start();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = serve(&db, a_dir.path(), &smtp);
    let b = serve(&db, b_dir.path(), &smtp);
    let mut c = db.conn();
    let started = Instant::now();
    let sent = |c: &mut digestd::db::DbConn| -> i64 {
        nt_requests::table
            .filter(nt_requests::status.eq("sent"))
            .count()
            .get_result(c)
            .unwrap()
    };
    while smtp.received().len() < USERS || sent(&mut c) < USERS as i64 {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "{} of {USERS} received, {} requests sent",
            smtp.received().len(),
            sent(&mut c)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Two passes more on each side, the second begun after all was sent:
    // nothing else may go out.
    let more = (a.passes() + 2, b.passes() + 2);
    let waited = Instant::now();
    while a.passes() < more.0 || b.passes() < more.1 {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "no queue pass after the burst: {} {}",
            a.log.lock().unwrap(),
            b.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (a_log, b_log) = (stop(a), stop(b));

    // Exactly one digest per subscriber, at the server.
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for m in smtp.received() {
        for to in m.to {
            *per.entry(to).or_default() += 1;
        }
    }
    assert_eq!(per.len(), USERS, "every subscriber got one");
    let twice: Vec<_> = per.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "sent twice: {twice:?}");
    let runs: i64 = subscription_runs::table.count().get_result(&mut c).unwrap();
    let requests: i64 = nt_requests::table.count().get_result(&mut c).unwrap();
    assert_eq!((runs, requests), (USERS as i64, USERS as i64));

    // Both composed: one led the tick, the other helped, and their runs
    // add up to the burst.
    let ((a_led, a_helped), (b_led, b_helped)) = (tick_runs(&a_log), tick_runs(&b_log));
    assert_eq!(
        a_led + a_helped + b_led + b_helped,
        USERS,
        "runs: a {a_led}+{a_helped}, b {b_led}+{b_helped}\n{a_log}\n{b_log}"
    );
    assert!(
        (a_led > 0 && b_helped > 0) || (b_led > 0 && a_helped > 0),
        "one led and the other helped: a {a_led}+{a_helped}, b {b_led}+{b_helped}\n{a_log}\n{b_log}"
    );
    // Both delivered, and together exactly the burst.
    let (a_sent, b_sent) = (delivered(&a_log), delivered(&b_log));
    assert_eq!(a_sent + b_sent, USERS, "a {a_sent}, b {b_sent}");
    assert!(
        a_sent > 0 && b_sent > 0,
        "both delivered: a {a_sent}, b {b_sent}\n{a_log}\n{b_log}"
    );
    eprintln!(
        "composed: a {a_led}+{a_helped}, b {b_led}+{b_helped}; delivered: a {a_sent}, b {b_sent}"
    );
}
