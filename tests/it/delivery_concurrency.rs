//! The nt queue under crashes and races, on each back end: a pass killed
//! in the middle loses nothing and resends only what it had not settled,
//! two processes delivering or expanding at once do nothing twice, and a
//! dead round's claim expires. The shared helpers are in
//! `common/delivery.rs`.

use crate::common;

use chrono::Duration;
use common::delivery::{notified_users, notify, smtp, user, T0};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::nt_queue;
use digestd::db::DbConn;
use digestd::deliver::queue;

/// `digestd queue run` killed with SIGKILL in the middle of a pass: after
/// the dead process's lease and claims expire, the next pass sends what was
/// not settled. Nothing is lost; a message whose row was marked delivered
/// before the kill is not sent again (only the ones in flight may be).
fn a_pass_killed_mid_delivery_loses_nothing_and_resends_only_the_unsettled(db: &TestDb) {
    use std::process::{Command, Stdio};
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 600;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("slow.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    let server = FaultSmtp::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |at: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
        cmd.current_dir(dir.path())
            .args(["--db", &db.url, "queue", "run", "--at", at])
            .env_remove("DIGESTD_DATABASE_URL")
            .env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env("DIGESTD_EMAIL__SMTP_URL", server.url())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    };
    let delivered = |c: &mut DbConn| -> Vec<String> {
        nt_queue::table
            .filter(nt_queue::is_successful.eq(true))
            .select(nt_queue::address)
            .load::<Option<String>>(c)
            .unwrap()
            .into_iter()
            .flatten()
            .collect()
    };
    let mut child = run(T0).spawn().unwrap();
    // Kill once some rows are marked delivered and some messages are not sent.
    let started = std::time::Instant::now();
    while delivered(&mut c).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "nothing settled in a minute"
        );
        assert!(child.try_wait().unwrap().is_none(), "the pass ended early");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let settled = delivered(&mut c);
    let sent_before = server.received().len();
    assert!(
        sent_before < n,
        "killed in the middle ({sent_before} of {n} sent)"
    );
    // The dead process's lease and claims last 10 minutes.
    let out = run("2026-11-23T09:11:00Z").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut count: std::collections::BTreeMap<String, usize> = Default::default();
    for m in server.received() {
        for to in m.to {
            *count.entry(to).or_default() += 1;
        }
    }
    assert_eq!(count.len(), n, "nothing lost");
    for a in &settled {
        assert_eq!(count[a], 1, "{a} was marked delivered before the kill");
    }
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(n as i64)));
}

fn two_processes_deliver_at_once_and_nothing_twice(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 300;
    for i in 0..n {
        user(&mut c, &format!("p{i}"), &format!("ok.p{i}@example.com"));
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    queue::expand(&mut c, at(T0)).unwrap();
    let server = FaultSmtp::start();
    let url = server.url();
    // Two processes deliver at T0 together, each with its own connection
    // (the first to claim may take every row: what matters is that no row
    // is sent by both).
    let workers: Vec<_> = (0..2)
        .map(|k| {
            let (url, db_url) = (url.clone(), db.url.clone());
            std::thread::spawn(move || {
                let mut c = digestd::db::DbUrl::parse(&db_url)
                    .unwrap()
                    .connect()
                    .unwrap();
                let mut d = smtp(&url);
                queue::run_queue(
                    &mut c,
                    &mut d,
                    at(T0),
                    &format!("worker-{k}"),
                    Duration::minutes(10),
                )
                .unwrap()
            })
        })
        .collect();
    let reports: Vec<queue::PassReport> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let delivered: usize = reports
        .iter()
        .map(|r| r.written.get("email").copied().unwrap_or(0))
        .sum();
    assert_eq!(delivered, n, "{reports:?}");
    let mut to: Vec<String> = server.received().into_iter().flat_map(|m| m.to).collect();
    assert_eq!(to.len(), n);
    to.sort();
    to.dedup();
    assert_eq!(to.len(), n, "no message twice");
    // Each request was final as soon as its row was written; a pass
    // sends nothing more.
    let mut last = smtp(&url);
    queue::run_pass(&mut c, &mut last, at(T0) + Duration::minutes(1)).unwrap();
    assert_eq!(server.received().len(), n);
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(n as i64)));
}

/// Two processes expanding the same pending requests at once: each request
/// gets its rows once and moves to `sending` once, and neither process
/// fails (on PostgreSQL the second waits for the first's rows, then finds
/// them no longer pending; SQLite has one writer at a time).
fn two_expansions_at_once_write_each_row_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 2_000;
    notified_users(&mut c, n, |i| format!("Notice {i}"));
    let start = std::sync::Arc::new(std::sync::Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (db_url, start) = (db.url.clone(), start.clone());
            std::thread::spawn(move || {
                let mut c = digestd::db::DbUrl::parse(&db_url)
                    .unwrap()
                    .connect()
                    .unwrap();
                start.wait();
                queue::expand(&mut c, at(T0))
            })
        })
        .collect();
    let expanded: Vec<usize> = workers
        .into_iter()
        .map(|w| w.join().unwrap().expect("an expansion failed"))
        .collect();
    let rows: i64 = nt_queue::table.count().get_result(&mut c).unwrap();
    assert_eq!(
        rows, n as i64,
        "one row per request ({expanded:?} expanded)"
    );
    let s = queue::status(&mut c).unwrap();
    assert_eq!(s.requests.get("sending"), Some(&(n as i64)));
    assert_eq!(s.requests.get("pending"), None);
}

fn a_claim_left_by_a_dead_round_expires_and_the_row_goes_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "kai", "ok.kai@example.com");
    let r = notify(&mut c, "sys", "kai", "Payroll");
    queue::expand(&mut c, at(T0)).unwrap();
    // A round of a process that died: its claim runs until T0 + 10 min.
    diesel::update(nt_queue::table)
        .set((
            nt_queue::claimed_by.eq(Some("dead-round")),
            nt_queue::claimed_until.eq(Some((at(T0) + Duration::minutes(10)).naive_utc())),
        ))
        .execute(&mut c)
        .unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert!(server.received().is_empty(), "claimed by another round");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(11)).unwrap();
    assert_eq!(server.received().len(), 1);
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
}

backend_tests!(
    a_pass_killed_mid_delivery_loses_nothing_and_resends_only_the_unsettled,
    two_processes_deliver_at_once_and_nothing_twice,
    two_expansions_at_once_write_each_row_once,
    a_claim_left_by_a_dead_round_expires_and_the_row_goes_once,
);
