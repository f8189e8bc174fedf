//! The crash window, on each back end: `digestd queue run` killed with
//! SIGKILL at random moments while it delivers to a slow server, again and
//! again, then left to finish. Nothing is lost, and each kill sends again at
//! most what was on the wire: one message per SMTP session (`[email]
//! pool_size`), the one text in flight to the SMS gateway, thanks to the
//! sent journal (`deliver::queue::journal`).
//!
//! The kill points come from a seeded generator; the seed is printed, and
//! `CRASH_SEED=N` replays a run.

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::SecondsFormat;
use common::delivery::{notify, user, T0};
use common::http::Gateway;
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use digestd::config::EmailConfig;
use digestd::deliver::queue::{self, NewNotification};
use digestd::parties::{self, NewUser};
use rand::{Rng, SeedableRng};

/// Kills per test, at least.
const KILLS: usize = 20;
/// SMTP sessions of a pass (the default `pool_size`).
const SESSIONS: usize = 4;
/// A run is killed after the server took 1 to this many more messages.
const MORE: usize = 25;
/// Messages per test: more than every kill can take (`KILLS` × `MORE`,
/// and what arrives in the 0–8 ms before each kill), so that whatever the
/// seed, work is left for each run to be killed in. With 300 texts a seed
/// that drew large numbers ran out of texts after 18 kills.
const MESSAGES: usize = KILLS * (MORE + 10);

fn rng() -> rand::rngs::StdRng {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    println!("seed {seed} (CRASH_SEED={seed} replays it)");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// `queue run` at T0 + 11 minutes × `k`, in `dir`: each run comes after
/// the dead one's lease and claims (10 minutes) have expired.
fn queue_run(db: &TestDb, dir: &std::path::Path, k: usize) -> Command {
    let when = (at(T0) + chrono::Duration::minutes(11 * k as i64))
        .to_rfc3339_opts(SecondsFormat::Secs, true);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
    cmd.current_dir(dir)
        .args(["--db", &db.url, "queue", "run", "--at", &when])
        .env_remove("DIGESTD_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Waits until `taken()` has grown by `more` since `from`, or the child
/// has ended; whether it is still running.
fn wait_for(child: &mut Child, taken: &dyn Fn() -> usize, from: usize, more: usize) -> bool {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if taken() >= from + more {
            return true;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the pass made no progress in 30 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Per recipient, how many times the server took a message.
fn counts(server: &FaultSmtp) -> BTreeMap<String, usize> {
    let mut count = BTreeMap::new();
    for m in server.received() {
        for to in m.to {
            *count.entry(to).or_default() += 1;
        }
    }
    count
}

/// Runs `run(k)` again and again, killing each run after the server
/// took 1–`MORE` more messages (`taken`) and 0–8 ms more, until `KILLS` runs
/// were killed in the middle of their delivery; then one run finishes.
/// Returns the kills.
fn kill_again_and_again(run: &dyn Fn(usize) -> Command, taken: &dyn Fn() -> usize) -> usize {
    let mut rng = rng();
    let (mut kills, mut k) = (0, 0);
    while kills < KILLS {
        assert!(
            k < 3 * KILLS,
            "{kills} kills in {k} runs: the passes end too soon"
        );
        let mut child = run(k).spawn().unwrap();
        k += 1;
        let more = rng.random_range(1..=MORE);
        if wait_for(&mut child, taken, taken(), more) {
            std::thread::sleep(Duration::from_millis(rng.random_range(0..=8)));
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
    }
    let out = run(k).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    kills
}

/// Where the runs keep their journals: the default for `db` (beside an
/// SQLite file, `data/journal/` under the working directory `dir` for
/// PostgreSQL), never in the outbox.
fn journal_dir(db: &TestDb, dir: &std::path::Path) -> std::path::PathBuf {
    dir.join(digestd::config::journal_dir_for(&db.url))
}

/// Nothing lost, at most `per_kill` duplicates a kill, every request sent,
/// no journal left behind (the finished pass's is empty and removed, the
/// dead ones' were replayed and removed), and none ever in the outbox.
fn check(
    c: &mut digestd::db::DbConn,
    db: &TestDb,
    dir: &std::path::Path,
    want: &[String],
    count: &BTreeMap<String, usize>,
    kills: usize,
    per_kill: usize,
) {
    let lost: Vec<&String> = want.iter().filter(|a| !count.contains_key(*a)).collect();
    assert!(lost.is_empty(), "lost: {lost:?}");
    let dups: usize = count.values().map(|c| c - 1).sum();
    println!(
        "{kills} kills: {dups} duplicate(s), {:.2} per kill (bound {per_kill})",
        dups as f64 / kills as f64
    );
    assert!(
        dups <= per_kill * kills,
        "{dups} duplicates after {kills} kills: more than {per_kill} a kill"
    );
    let s = queue::status(c).unwrap();
    assert_eq!(s.requests.get("sent"), Some(&(want.len() as i64)), "{s:?}");
    assert!(!dir.join("outbox/journal").exists());
    let left: Vec<_> = std::fs::read_dir(journal_dir(db, dir))
        .expect("the runs' journal directory")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "journals left: {left:?}");
}

/// 700 notifications to 700 people through an SMTP server that takes 5 ms
/// a message, on 4 sessions.
fn smtp_kills_resend_at_most_one_message_per_session(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = MESSAGES;
    let want: Vec<String> = (0..n).map(|i| format!("pace.p{i}@example.com")).collect();
    for (i, a) in want.iter().enumerate() {
        user(&mut c, &format!("p{i}"), a);
        notify(&mut c, "sys", &format!("p{i}"), &format!("Notice {i}"));
    }
    let server = FaultSmtp::start();
    let dir = tempfile::tempdir().unwrap();
    let run = |k| {
        let mut cmd = queue_run(db, dir.path(), k);
        cmd.env("DIGESTD_EMAIL__TRANSPORT", "smtp")
            .env("DIGESTD_EMAIL__SMTP_URL", server.url())
            .env("DIGESTD_EMAIL__POOL_SIZE", SESSIONS.to_string());
        cmd
    };
    let kills = kill_again_and_again(&run, &|| server.received().len());
    check(
        &mut c,
        db,
        dir.path(),
        &want,
        &counts(&server),
        kills,
        SESSIONS,
    );
}

/// 700 texts to 700 people through an SMS gateway that answers in 5 ms;
/// the listener sends one at a time, so a kill repeats at most one.
fn sms_kills_resend_at_most_the_text_in_flight(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = MESSAGES;
    let want: Vec<String> = (0..n).map(|i| format!("+3460011{i:04}")).collect();
    for (i, phone) in want.iter().enumerate() {
        parties::create_user(
            &mut c,
            at("2026-11-01T00:00:00Z"),
            &NewUser {
                name: format!("p{i}"),
                timezone: "Europe/Madrid".into(),
                phone: Some(phone.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        queue::post_request(
            &mut c,
            &EmailConfig::default(),
            &NewNotification {
                from: "sys".into(),
                to: format!("p{i}"),
                subject: format!("Notice {i}"),
                message: "unused by SMS".into(),
                channels: vec!["sms".into()],
                ..Default::default()
            },
            at(T0),
        )
        .unwrap();
    }
    let gw = Gateway::start(vec![]);
    gw.set_delay(5);
    let dir = tempfile::tempdir().unwrap();
    let run = |k| {
        let mut cmd = queue_run(db, dir.path(), k);
        cmd.env("DIGESTD_SMS__TRANSPORT", "http")
            .env("DIGESTD_SMS__ENDPOINT", gw.url())
            .env("DIGESTD_SMS__USERNAME", "AC123")
            .env("DIGESTD_SMS__PASSWORD", "secret")
            .env("DIGESTD_SMS__FROM", "+15550100");
        cmd
    };
    let kills = kill_again_and_again(&run, &|| gw.requests().len());
    let mut count = BTreeMap::new();
    for r in gw.requests() {
        *count.entry(r.form("To").unwrap()).or_default() += 1;
    }
    check(&mut c, db, dir.path(), &want, &count, kills, 1);
}

backend_tests!(
    smtp_kills_resend_at_most_one_message_per_session,
    sms_kills_resend_at_most_the_text_in_flight,
);
