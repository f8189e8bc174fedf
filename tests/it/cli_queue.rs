//! Black-box tests of the `digestd` binary: `queue purge`, `notify`,
//! `queue run`, `cancel` and `request show` (`src/cli/queue.rs`);
//! `inbound` is in `cli_inbound.rs`, `test-alert` and the transports in
//! `cli_test_alert.rs`.
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use std::ffi::OsStr;

use common::cli::*;
use serde_json::{json, Value};

// ------------------------------------------------------------ queue purge

#[test]
fn queue_purge_deletes_only_requests_finished_before_the_cutoff() {
    let (env, _) = world();
    env.add_user("bob", &["--email", "bob@example.com"]);
    let notify = |subject: &str| {
        let out = env.ok(&[
            "notify",
            "--from",
            "alice",
            "--to",
            "bob",
            "--subject",
            subject,
            "--message",
            "m",
        ]);
        out.lines().last().unwrap().to_string()
    };
    let (old, cancelled) = (notify("Old"), notify("Cancelled"));
    env.ok(&["cancel", cancelled.as_str()]);
    env.ok(&["queue", "run", "--at", "2020-01-01T00:00:00Z"]);
    let open = notify("Open");
    assert_eq!(env.count("delivery_log"), 1);
    let out = env.ok(&["queue", "purge", "--older-than", "90d"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    // The cancelled one finished now (the cancel's own time), not in 2020.
    assert!(
        out.starts_with(
            "purged 1 finished requests, 1 queue rows, 1 delivery log rows and 0 events from before "
        ),
        "{out}"
    );
    env.refused(&["request", "show", old.as_str()], b"", "no request");
    env.ok(&["request", "show", cancelled.as_str()]);
    env.ok(&["request", "show", open.as_str()]);
    assert_eq!(
        (
            env.count("nt_requests"),
            env.count("nt_messages"),
            env.count("nt_queue"),
            env.count("delivery_log")
        ),
        (2, 2, 0, 0)
    );
    let again = env.ok(&["queue", "purge", "--older-than", "1d"]);
    assert!(again.starts_with("purged 0 finished requests"), "{again}");
}

#[test]
fn queue_purge_refuses_bad_durations_and_deletes_nothing() {
    let env = Env::new();
    for d in ["0d", "abc", "5y", "90", "", "-5d", "1.5d"] {
        let arg = format!("--older-than={d}");
        let out = env.run(&["queue", "purge", arg.as_str()]);
        assert_refused(&out, "invalid duration", std::slice::from_ref(&arg));
    }
    assert!(
        !env.db_path.exists(),
        "a refused purge must not create the database"
    );
    // On a database with finished requests: refused, nothing deleted.
    let (env, _) = world();
    env.ok(&[
        "notify",
        "--from",
        "alice",
        "--to",
        "alice",
        "--subject",
        "S",
        "--message",
        "m",
    ]);
    env.ok(&["queue", "run", "--at", "2020-01-01T00:00:00Z"]);
    for d in ["0d", "abc", "5y"] {
        env.refused(
            &["queue", "purge", "--older-than", d],
            b"",
            "invalid duration",
        );
    }
}

// ------------------------------------------------------------ notify / queue

#[test]
fn notify_queue_run_and_request_show_follow_a_request() {
    let env = notify_world();
    let id = env.notify(
        "ops",
        "ann",
        "Disk 91% full",
        "Clean up /var.\nThanks.",
        &["--max-retries", "5"],
    );
    assert!(id.parse::<i64>().is_ok(), "{id}");
    let show = |env: &Env| -> Value {
        serde_json::from_str(&env.ok(&["request", "show", &id, "--json"])).unwrap()
    };
    assert_eq!(show(&env)["status"], "pending");
    let pass = env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    assert!(pass.contains("delivered email 1"), "{pass}");
    let v = show(&env);
    assert_eq!(v["status"], "sent");
    assert_eq!(v["recipients"][0]["party"], "ann");
    assert_eq!(v["recipients"][0]["address"], "ann@example.com");
    assert_eq!(v["recipients"][0]["successful"], true);
    assert_eq!(v["recipients"][0]["retry_count"], 0);
    let status: Value = serde_json::from_str(&env.ok(&["queue", "status", "--json"])).unwrap();
    assert_eq!(status["requests"]["sent"], 1);
    assert_eq!(status["rows_delivered"], 1);
    // The dir transport wrote the message; its subject and body are intact.
    let eml: Vec<_> = std::fs::read_dir(env.dir.path().join("outbox"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .collect();
    assert_eq!(eml.len(), 1);
    let raw = std::fs::read(eml[0].path()).unwrap();
    let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
    assert_eq!(m.subject(), Some("Disk 91% full"));
    let text = m.body_text(0).unwrap().replace("\r\n", "\n");
    assert!(text.contains("Clean up /var.\nThanks."), "{text}");
    // Sent requests cannot be cancelled.
    env.refused(&["cancel", &id], b"", "already sent");
}

/// Issue 23: the sent journal is the queue's state, not the `dir`
/// transport's output. By default it is beside the SQLite database
/// (`t.db.journal/`), not in `outbox/journal/`; `[queue] journal_dir`
/// moves it; one that cannot be made stops `queue run` and `serve` at
/// start with one line, exit 2, and nothing written or sent.
#[test]
fn the_sent_journal_is_beside_the_database_and_a_bad_directory_is_refused() {
    let env = notify_world();
    let notify = |subject: &str| {
        env.notify("ops", "ann", subject, "x", &[]);
    };
    notify("First");
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let outbox = env.dir.path().join("outbox");
    assert!(!outbox.join("journal").exists());
    let beside = env.dir.path().join("t.db.journal");
    let left: Vec<_> = std::fs::read_dir(&beside)
        .expect("the journal directory beside the database")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    // A pass that finished leaves no journal behind.
    assert!(left.is_empty(), "{left:?}");

    // A directory that cannot be made: under a plain file.
    let file = env.dir.path().join("plain");
    std::fs::write(&file, "not a directory").unwrap();
    let bad = file.join("journal");
    std::fs::write(
        &env.config,
        format!("[queue]\njournal_dir = {:?}\n", bad.display().to_string()),
    )
    .unwrap();
    notify("Second");
    let eml = || {
        std::fs::read_dir(&outbox)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
            .count()
    };
    assert_eq!(eml(), 1);
    env.refused(
        &["queue", "run", "--at", "2026-11-23T10:00:00Z"],
        b"",
        "config: queue.journal_dir",
    );
    assert_eq!(eml(), 1, "nothing sent");
    // `serve` stops at start too, before it listens or ticks.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_digestd"))
        .args([
            "--config",
            env.config.to_str().unwrap(),
            "--db",
            &env.url,
            "serve",
        ])
        .current_dir(env.dir.path())
        .env("DIGESTD_HTTP__LISTEN", "127.0.0.1:0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("serve ran with a journal directory it cannot make");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("config: queue.journal_dir"), "{err}");
    assert_eq!(eml(), 1, "nothing sent");

    // Named, it is used (and made).
    let named = env.dir.path().join("state/j");
    std::fs::write(
        &env.config,
        format!("[queue]\njournal_dir = {:?}\n", named.display().to_string()),
    )
    .unwrap();
    env.ok(&["queue", "run", "--at", "2026-11-23T10:00:00Z"]);
    assert_eq!(eml(), 2);
    assert!(named.is_dir());
    assert!(!outbox.join("journal").exists());
}

#[test]
fn cancel_before_the_queue_runs_sends_nothing() {
    let env = notify_world();
    let id = env.notify("ops", "ann", "Oops", "ignore", &[]);
    assert_eq!(env.ok(&["cancel", &id]).trim(), format!("cancelled {id}"));
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let v = env.request_json(&id);
    assert_eq!(v["status"], "cancelled");
    // Nothing was written to the outbox (the sent journal is beside the
    // database, `t.db.journal/`).
    let sent: Vec<_> = std::fs::read_dir(env.dir.path().join("outbox"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .collect();
    assert!(sent.is_empty(), "sent: {sent:?}");
    env.refused(&["cancel", "999999"], b"", "no request 999999");
    env.refused(&["request", "show", "999999"], b"", "no request 999999");
}

#[test]
fn notify_refuses_hostile_input_and_writes_nothing() {
    let env = notify_world();
    let big = "x".repeat(256 * 1024 + 1);
    let base = ["notify", "--from", "ops", "--to", "ann"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--subject", "Hi\r\nBcc: evil@example.com", "--message", "m"],
            "control character",
        ),
        (
            vec!["--subject", "Hi", "--message", "a\u{7}b"],
            "control character",
        ),
        (
            vec!["--subject", "   ", "--message", "m"],
            "subject is empty",
        ),
        (
            vec!["--subject", "Hi", "--message", "  "],
            "message is empty",
        ),
        (
            vec!["--subject", "Hi", "--message", "m", "--max-retries", "0"],
            "use 1-100",
        ),
        (
            vec!["--subject", "Hi", "--message", "m", "--channel", "pigeon"],
            "unknown channel",
        ),
        (
            vec!["--subject", "Hi", "--message", "m", "--expand-group"],
            "is not a group",
        ),
    ];
    for (extra, needle) in cases {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(extra);
        env.refused(&args, b"", needle);
    }
    let stdin = [
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "s",
        "--message",
        "-",
    ];
    env.refused(&stdin, big.as_bytes(), "larger than");
    env.refused(&stdin, b"caf\xe9", "not valid UTF-8");
    env.refused(
        &[
            "notify",
            "--from",
            "mallory",
            "--to",
            "ann",
            "--subject",
            "s",
            "--message",
            "m",
        ],
        b"",
        "no user or group named",
    );
    let status: Value = serde_json::from_str(&env.ok(&["queue", "status", "--json"])).unwrap();
    assert_eq!(status["requests"], json!({}));
}

#[cfg(unix)]
#[test]
fn notify_refuses_a_non_utf8_message() {
    use std::os::unix::ffi::OsStrExt;
    let env = notify_world();
    let bad = OsStr::from_bytes(b"caf\xe9");
    let args: Vec<&OsStr> = [
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "s",
        "--message",
    ]
    .iter()
    .map(OsStr::new)
    .chain([bad])
    .collect();
    let out = env.run(&args);
    assert_eq!(out.code, 2, "{out:?}");
}
