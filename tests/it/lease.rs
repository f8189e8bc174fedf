//! The tick and queue leases across real processes, on each back end: a
//! holder killed with SIGKILL frees its lease at once (the engine frees
//! it: a PostgreSQL advisory lock with its connection, an SQLite lock file
//! with the process), and while the holder lives no other process gets it.
//!
//! Each test catches a child in the middle of its run (a tick of many due
//! subscriptions; a queue pass to a slow SMTP server), stops it with
//! SIGSTOP so the checks need no race, then kills it with SIGKILL.

use crate::common;

use std::process::{Child, Command, Stdio};

use chrono::{DateTime, Duration, Utc};
use common::delivery::{notify, user, T0};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::{nt_job, nt_queue, subscription_runs};
use digestd::db::DbConn;
use digestd::deliver::queue::QUEUE_JOB;
use digestd::schedule::{lease, TICK_JOB};

const TICK_AT: &str = "2026-11-02T08:00:00Z";

fn digestd(db: &TestDb, dir: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
    cmd.current_dir(dir)
        .args(["--db", &db.url])
        .args(args)
        .env_remove("DIGESTD_DATABASE_URL")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}

/// Who the `nt_job` row says holds `job`.
fn recorded_owner(c: &mut DbConn, job: &str) -> Option<String> {
    nt_job::table
        .filter(nt_job::job_name.eq(job))
        .select(nt_job::owner)
        .first(c)
        .unwrap()
}

/// Waits until the child records itself as `job`'s holder, then stops it
/// (SIGSTOP) there, holding the lease.
fn catch_holding(child: &mut Child, c: &mut DbConn, job: &str) {
    let pid = format!(":{}:", child.id());
    let started = std::time::Instant::now();
    while !recorded_owner(c, job).is_some_and(|o| o.contains(&pid)) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child finished before it could be caught holding the lease"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "the child never took the lease"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    signal(child, "-STOP");
}

/// Tries the lease from this process (another process, to the engine).
fn probe(c: &mut DbConn, job: &str, now: DateTime<Utc>) -> bool {
    let got = lease::acquire(c, job, "probe", now, Duration::minutes(10)).unwrap();
    if got {
        lease::release(c, job, "probe", now).unwrap();
    }
    got
}

/// After the holder's death the lease comes free as soon as the engine
/// has seen it die: at once for SQLite's lock file, once the server has
/// dropped the connection on PostgreSQL. The bound only stops a broken
/// lease from hanging the suite (the old row lease held for ten minutes).
fn wait_free(c: &mut DbConn, job: &str, now: DateTime<Utc>) {
    let started = std::time::Instant::now();
    while !probe(c, job, now) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the dead holder's {job} lease was not freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn kill(mut child: Child) {
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "killed by a signal");
}

fn many_due(c: &mut DbConn, n: usize) {
    let now = at("2026-11-01T00:00:00Z");
    c.write_tx(|c| {
        for i in 0..n {
            let name = format!("r{i:05}");
            digestd::parties::create_user(
                c,
                now,
                &digestd::parties::NewUser {
                    name: name.clone(),
                    timezone: "UTC".into(),
                    email: Some(format!("{name}@example.com")),
                    ..Default::default()
                },
            )?;
            digestd::manage::subscribe(
                c,
                now,
                &digestd::subscriptions::SubscribeRequest {
                    party: name,
                    frequency: "daily".into(),
                    kind: "modification".into(),
                    hour: Some(8),
                    ..Default::default()
                },
            )?;
        }
        Ok(())
    })
    .unwrap();
}

fn a_killed_tick_frees_the_lease_at_once_and_a_live_one_keeps_it(db: &TestDb) {
    let mut c = db.conn();
    let n = 3000;
    many_due(&mut c, n);
    let dir = tempfile::tempdir().unwrap();
    let mut first = digestd(db, dir.path(), &["tick", "--at", TICK_AT])
        .spawn()
        .unwrap();
    catch_holding(&mut first, &mut c, TICK_JOB);
    // Two live processes: the second is refused, and nothing is run twice.
    assert!(!probe(&mut c, TICK_JOB, at(TICK_AT)));
    let second = digestd(db, dir.path(), &["tick", "--at", TICK_AT])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("another process holds the tick lease"),
        "{stderr}"
    );
    kill(first);
    // The row still names the dead holder: it is a record, not the lock.
    assert!(recorded_owner(&mut c, TICK_JOB).is_some());
    wait_free(&mut c, TICK_JOB, at(TICK_AT));
    let third = digestd(db, dir.path(), &["tick", "--at", TICK_AT])
        .output()
        .unwrap();
    assert!(
        third.status.success(),
        "{}",
        String::from_utf8_lossy(&third.stderr)
    );
    assert_eq!(recorded_owner(&mut c, TICK_JOB), None, "released");
    // Every due run recorded once, by the killed tick or the next one.
    let runs: i64 = subscription_runs::table.count().get_result(&mut c).unwrap();
    let distinct: i64 = subscription_runs::table
        .select(diesel::dsl::count(subscription_runs::subscription_id).aggregate_distinct())
        .get_result(&mut c)
        .unwrap();
    assert_eq!((runs, distinct), (n as i64, n as i64));
}

fn a_killed_queue_runner_frees_the_lease_at_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 300;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("slow.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    let server = FaultSmtp::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |at: &str| {
        let mut cmd = digestd(db, dir.path(), &["queue", "run", "--at", at]);
        cmd.env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env("DIGESTD_EMAIL__SMTP_URL", server.url());
        cmd
    };
    let mut first = run(T0).spawn().unwrap();
    catch_holding(&mut first, &mut c, QUEUE_JOB);
    assert!(!probe(&mut c, QUEUE_JOB, at(T0)), "a live holder keeps it");
    kill(first);
    let sent: i64 = nt_queue::table
        .filter(nt_queue::is_successful.eq(true))
        .count()
        .get_result(&mut c)
        .unwrap();
    assert!(sent < n as i64, "killed in the middle ({sent} of {n})");
    wait_free(&mut c, QUEUE_JOB, at(T0));
    // The next pass a minute later leads (expands and updates statuses),
    // which it records when it releases the lease.
    let next = "2026-11-23T09:01:00Z";
    let out = run(next).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lease::last_run(&mut c, QUEUE_JOB).unwrap(), Some(at(next)));
    assert_eq!(recorded_owner(&mut c, QUEUE_JOB), None);
}

/// Within one process a second owner is refused as another process would
/// be, the holder renews, and only the holder releases.
fn one_owner_at_a_time_within_a_process(db: &TestDb) {
    let mut c = db.conn();
    let mut other = db.conn();
    let t = at(TICK_AT);
    let ttl = Duration::minutes(10);
    assert!(lease::acquire(&mut c, TICK_JOB, "a", t, ttl).unwrap());
    assert!(!lease::acquire(&mut c, TICK_JOB, "b", t, ttl).unwrap());
    assert!(!lease::acquire(&mut other, TICK_JOB, "b", t, ttl).unwrap());
    assert!(
        lease::acquire(&mut c, TICK_JOB, "a", t, ttl).unwrap(),
        "renews"
    );
    lease::release(&mut other, TICK_JOB, "b", t).unwrap(); // not b's
    assert!(
        !lease::acquire(&mut other, TICK_JOB, "b", t + Duration::hours(1), ttl).unwrap(),
        "no expiry while the holder lives"
    );
    assert!(
        lease::acquire(&mut other, QUEUE_JOB, "b", t, ttl).unwrap(),
        "jobs apart"
    );
    lease::release(&mut c, TICK_JOB, "a", t).unwrap();
    assert_eq!(lease::last_run(&mut c, TICK_JOB).unwrap(), Some(t));
    assert!(lease::acquire(&mut other, TICK_JOB, "b", t, ttl).unwrap());
    lease::release(&mut other, TICK_JOB, "b", t).unwrap();
    lease::release(&mut other, QUEUE_JOB, "b", t).unwrap();
}

backend_tests!(
    a_killed_tick_frees_the_lease_at_once_and_a_live_one_keeps_it,
    a_killed_queue_runner_frees_the_lease_at_once,
    one_owner_at_a_time_within_a_process,
);

/// On SQLite a tick's lock file is opened once and kept: taking the lease
/// again needs no new descriptor (so a full descriptor table from HTTP
/// clients cannot stop a tick), and a lock file removed meanwhile is made
/// again and is the one locked.
#[test]
fn the_sqlite_lock_file_is_opened_once_and_made_again_if_removed() {
    let db = TestDb::sqlite();
    let mut c = db.conn();
    let path = format!("{}.{TICK_JOB}.lock", db.url.trim_start_matches("sqlite://"));
    let open_on_path = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy() == path))
            .count()
    };
    let (t, ttl) = (at(TICK_AT), Duration::minutes(10));
    for _ in 0..5 {
        assert!(lease::acquire(&mut c, TICK_JOB, "a", t, ttl).unwrap());
        lease::release(&mut c, TICK_JOB, "a", t).unwrap();
    }
    assert_eq!(open_on_path(), 1, "one descriptor, kept");
    // Released: another holder (another open file) may lock it.
    let probe = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    probe.try_lock().expect("free after release");
    probe.unlock().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(lease::acquire(&mut c, TICK_JOB, "a", t, ttl).unwrap());
    let again = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("made again");
    assert!(again.try_lock().is_err(), "the new file is the one held");
    lease::release(&mut c, TICK_JOB, "a", t).unwrap();
    again.try_lock().expect("and released");
}
