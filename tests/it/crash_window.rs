//! The crash window, on each back end: `digestd queue run` killed with
//! SIGKILL at random moments while it delivers to a slow server, again and
//! again, then left to finish. Nothing is lost, and each kill sends again at
//! most what was on the wire: one message per SMTP session (`[email]
//! pool_size`), the one text in flight to the SMS gateway, the chat
//! stanzas Prosody has not yet acknowledged (`[xmpp] ack_window`), the
//! webhook posts in flight (`[webhook] concurrency`), thanks to the sent
//! journal (`deliver::queue::journal`).
//!
//! The kill points come from a seeded generator; the seed is printed, and
//! `CRASH_SEED=N` replays a run.

use crate::common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::SecondsFormat;
use common::delivery::{notify, notify_on, user, T0};
use common::http::Gateway;
use common::prosody::{Prosody, Reader};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use digestd::config::EmailConfig;
use digestd::deliver::queue::{self, NewNotification};
use digestd::parties::{self, NewUser};
use digestd::validate::UrlPolicy;
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
    tally(server.received().into_iter().flat_map(|m| m.to))
}

/// How many times each of `keys` came.
fn tally(keys: impl Iterator<Item = String>) -> BTreeMap<String, usize> {
    let mut count = BTreeMap::new();
    for k in keys {
        *count.entry(k).or_default() += 1;
    }
    count
}

/// Runs `run(k)` again and again, killing each run after the server
/// took 1–`MORE` more messages (`taken`) and 0–8 ms more, until `KILLS` runs
/// were killed in the middle of their delivery; then one run finishes.
/// Returns the kills. `left()`, read at each kill, says whether messages
/// were still to go (the kill landed mid-delivery); how many did is
/// printed.
fn kill_again_and_again(
    run: &dyn Fn(usize) -> Command,
    taken: &dyn Fn() -> usize,
    left: &dyn Fn() -> bool,
) -> usize {
    let mut rng = rng();
    let (mut kills, mut k, mut mid) = (0, 0, 0);
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
            mid += usize::from(left());
        }
        child.wait().unwrap();
    }
    println!("{mid} of {kills} kills landed with messages still to go, in {k} runs");
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
    let kills = kill_again_and_again(&run, &|| server.received().len(), &|| {
        counts(&server).len() < n
    });
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

/// People `p0`… `p{n-1}` (each `person(i)`, named and in Madrid) and one
/// request from `sys` to each, "Notice {i}", on `channel` alone.
fn one_request_each(
    c: &mut digestd::db::DbConn,
    n: usize,
    channel: &str,
    person: &dyn Fn(usize) -> NewUser,
) {
    for i in 0..n {
        let name = format!("p{i}");
        let new = NewUser {
            name: name.clone(),
            timezone: "Europe/Madrid".into(),
            ..person(i)
        };
        parties::create_user(c, at("2026-11-01T00:00:00Z"), &new).unwrap();
        let request = NewNotification {
            from: "sys".into(),
            to: name,
            subject: format!("Notice {i}"),
            message: "Body.".into(),
            channels: vec![channel.into()],
            ..Default::default()
        };
        queue::post_request(c, &EmailConfig::default(), &request, at(T0)).unwrap();
    }
}

/// 700 texts to 700 people through an SMS gateway that answers in 5 ms;
/// the listener sends one at a time, so a kill repeats at most one.
fn sms_kills_resend_at_most_the_text_in_flight(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = MESSAGES;
    let want: Vec<String> = (0..n).map(|i| format!("+3460011{i:04}")).collect();
    one_request_each(&mut c, n, "sms", &|i| NewUser {
        phone: Some(want[i].clone()),
        ..Default::default()
    });
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
    let count = || tally(gw.requests().iter().map(|r| r.form("To").unwrap()));
    let kills = kill_again_and_again(&run, &|| gw.requests().len(), &|| count().len() < n);
    let count = count();
    check(&mut c, db, dir.path(), &want, &count, kills, 1);
}

/// Webhook posts in flight at most (`[webhook] concurrency`, its default).
const POSTS: usize = 4;

/// 700 webhooks to 700 endpoints (one path each) on a receiver that
/// answers in 5 ms; the listener posts `POSTS` at a time and journals
/// each as its answer is read, so a kill repeats at most `POSTS`.
fn webhook_kills_resend_at_most_the_posts_in_flight(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let gw = Gateway::start(vec![]);
    gw.set_delay(5);
    let n = MESSAGES;
    let want: Vec<String> = (0..n).map(|i| format!("/send/{i}")).collect();
    for (i, path) in want.iter().enumerate() {
        let (name, then) = (format!("p{i}"), at("2026-11-01T00:00:00Z"));
        user(&mut c, &name, &format!("{name}@example.com"));
        let url = format!("http://127.0.0.1:{}{path}", gw.port);
        parties::set_webhook(&mut c, then, &name, &url, None, UrlPolicy::ANY).unwrap();
        notify_on(&mut c, "sys", &name, &format!("Notice {i}"), &["webhook"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |k| {
        let mut cmd = queue_run(db, dir.path(), k);
        cmd.env("DIGESTD_WEBHOOK__TRANSPORT", "http")
            .env("DIGESTD_WEBHOOK__ALLOW_HTTP", "true")
            .env("DIGESTD_WEBHOOK__ALLOW_PRIVATE", "true")
            .env("DIGESTD_WEBHOOK__CONCURRENCY", POSTS.to_string());
        cmd
    };
    let count = || tally(gw.requests().into_iter().map(|r| r.path));
    let kills = kill_again_and_again(&run, &|| gw.requests().len(), &|| count().len() < n);
    assert!(gw.max_in_flight() > 1, "the posts were in flight together");
    check(&mut c, db, dir.path(), &want, &count(), kills, POSTS);
}

/// Stanzas the XMPP listener leaves unacknowledged at most (`[xmpp]
/// ack_window`, its default).
const WINDOW: usize = 4;
/// XMPP messages: Prosody takes them faster than the SMTP server, so more
/// arrive in the 0–8 ms before each kill; a round claims up to 1,000.
const XMPP_MESSAGES: usize = 1000;

/// 1,000 chat messages from 1,000 senders' requests to one reader
/// account (every person's JID is bob's: one message per person, told
/// apart by its text) through a real Prosody; the listener journals each
/// as the server acknowledges it (XEP-0198), at most `WINDOW` in flight.
fn xmpp_kills_resend_at_most_the_unacknowledged_window(db: &TestDb) {
    let Some(prosody) = Prosody::start(&[("digestd", "servicepw"), ("bob", "bobpw")]) else {
        return;
    };
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = XMPP_MESSAGES;
    let want: Vec<String> = (0..n).map(|i| format!("Notice {i}")).collect();
    one_request_each(&mut c, n, "xmpp", &|_| NewUser {
        xmpp: Some("bob@localhost".into()),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let run = |k| {
        let mut cmd = queue_run(db, dir.path(), k);
        cmd.env("DIGESTD_XMPP__TRANSPORT", "xmpp")
            .env("DIGESTD_XMPP__JID", "digestd@localhost")
            .env("DIGESTD_XMPP__PASSWORD", "servicepw")
            .env("DIGESTD_XMPP__SERVER", prosody.server())
            .env("DIGESTD_XMPP__TLS", "false")
            .env("DIGESTD_XMPP__ACK_WINDOW", WINDOW.to_string());
        cmd
    };
    // Bob stays online the whole time, so every message is routed to his
    // session as it comes (none to offline storage), and counts them.
    let got: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let count = || {
        let got = got.lock().unwrap();
        tally(
            got.iter()
                .map(|b| b.lines().next().unwrap_or_default().to_string()),
        )
    };
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let kills = std::thread::scope(|s| {
        s.spawn(|| {
            let mut bob = Reader::login(&prosody, "bob", "bobpw");
            ready_tx.send(()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                let b = bob.bodies(1, Duration::from_millis(50));
                got.lock().unwrap().extend(b);
            }
        });
        ready.recv().unwrap();
        let kills =
            kill_again_and_again(&run, &|| got.lock().unwrap().len(), &|| count().len() < n);
        // What the last pass sent is on its way to bob: wait for it.
        let until = Instant::now() + Duration::from_secs(30);
        while count().len() < n && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        kills
    });
    check(&mut c, db, dir.path(), &want, &count(), kills, WINDOW);
}

backend_tests!(
    smtp_kills_resend_at_most_one_message_per_session,
    sms_kills_resend_at_most_the_text_in_flight,
    xmpp_kills_resend_at_most_the_unacknowledged_window,
    webhook_kills_resend_at_most_the_posts_in_flight,
);
