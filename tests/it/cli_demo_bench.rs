//! Black-box tests of the `digestd` binary: `demo` writes a week of real
//! digests to its own outbox and leaves the real one alone; `bench`
//! commands refuse bad sizes and run at toy sizes; usage errors keep
//! clap's message.
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`.

use crate::common;

use std::path::PathBuf;

use common::cli::*;

// ------------------------------------------------------- demo and benches

#[test]
fn demo_writes_a_week_of_real_digests_to_its_own_outbox() {
    let env = Env::new();
    let out = env.run_raw(&["demo"], b"");
    assert_eq!(out.code, 0, "{out:?}");
    // Its summary, not the daemon's line per tick and pass.
    assert!(
        !out.stderr.contains(" INFO "),
        "{} lines on stderr",
        out.stderr.lines().count()
    );
    for needle in [
        "A week of ticks (",
        "digests delivered",
        "One of them, data/demo-outbox/",
        "An XMPP chat message (not sent), data/demo-outbox/xmpp/",
        "An SMS (not sent), data/demo-outbox/sms/",
        "A Slack post (not sent), data/demo-outbox/slack/",
        "A Matrix message (not sent), data/demo-outbox/matrix/",
        " in webhook/, ",
        " in matrix/.",
    ] {
        assert!(out.stdout.contains(needle), "{needle:?} in {}", out.stdout);
    }
    let outbox = env.dir.path().join("data/demo-outbox");
    let emls: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    assert!(emls.len() >= 30, "{} .eml files", emls.len());
    for p in &emls {
        let raw = std::fs::read(p).unwrap();
        let m = mail_parser::MessageParser::default()
            .parse(&raw)
            .expect("a parseable message");
        assert!(m.subject().is_some_and(|s| !s.is_empty()), "{p:?}");
        assert!(
            m.body_text(0).is_some() && m.body_html(0).is_some(),
            "{p:?}"
        );
    }
    assert!(std::fs::read_dir(outbox.join("xmpp")).unwrap().count() > 0);
    assert!(std::fs::read_dir(outbox.join("sms")).unwrap().count() > 0);
    // What Matrix would be sent: the user ID, no room yet (the dir
    // transport opens none), the event's content as JSON.
    let matrix: Vec<_> = std::fs::read_dir(outbox.join("matrix"))
        .unwrap()
        .flatten()
        .collect();
    assert!(!matrix.is_empty(), "matrix/ is empty");
    let text = std::fs::read_to_string(matrix[0].path()).unwrap();
    assert!(text.contains("@dai:example.org"), "{text}");
    assert!(text.contains("\"msgtype\": \"m.text\""), "{text}");
    // What the webhook and Slack would be posted: a request line, headers,
    // a blank line, the JSON body.
    for (ch, shape) in [("webhook", "\"type\":\"digest\""), ("slack", "\"blocks\":")] {
        let files: Vec<_> = std::fs::read_dir(outbox.join(ch))
            .unwrap()
            .flatten()
            .collect();
        assert!(!files.is_empty(), "{ch}/ is empty");
        let text = std::fs::read_to_string(files[0].path()).unwrap();
        let (head, body) = text.split_once("\n\n").unwrap();
        assert!(head.starts_with("POST https://"), "{head}");
        assert!(body.contains(shape), "{body}");
    }
    // Its own files only: the database, its lock files and the outbox of
    // messages; the queue's sent journal, beside the database while the
    // demo runs, is gone with it (and never in the outbox).
    let mut data: Vec<String> = std::fs::read_dir(env.dir.path().join("data"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("demo.db-"))
        .collect();
    data.sort();
    assert_eq!(
        data,
        [
            "demo-outbox",
            "demo.db",
            "demo.db.queue.lock",
            "demo.db.tick.lock"
        ],
        "{data:?}"
    );
    assert!(!outbox.join("journal").exists());
    // A second run replaces the first one's files instead of adding to them.
    let again = env.run_raw(&["demo"], b"");
    assert_eq!(again.code, 0, "{again:?}");
    let n = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .count();
    assert_eq!(n, emls.len());
}

/// The "first hour" report: a real `queue run` wrote
/// `outbox/00001000-asha.eml`, then `digestd demo` removed it as "a file
/// from an earlier demo" (both number requests from 1000). The demo must
/// write and clear only a directory of its own.
#[test]
fn demo_leaves_the_real_outbox_alone() {
    let env = Env::init();
    env.add_user("ops", &["--email", "ops@example.com"]);
    env.add_user("asha", &["--email", "asha@example.com"]);
    env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "asha",
        "--subject",
        "Real mail",
        "--message",
        "Not a demo.",
    ]);
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let outbox = env.dir.path().join("outbox");
    let real = outbox.join("00001000-asha.eml");
    let bytes = std::fs::read(&real).expect("the real queue run wrote its message");
    let listing = |dir: &std::path::Path| {
        let mut v = walk(dir);
        v.sort();
        v
    };
    let before = listing(&outbox);

    for run in 0..2 {
        let out = env.run_raw(&["demo"], b"");
        assert_eq!(out.code, 0, "demo run {run}: {out:?}");
        assert_eq!(std::fs::read(&real).unwrap(), bytes, "demo run {run}");
        assert_eq!(listing(&outbox), before, "demo run {run} wrote to ./outbox");
        // The second run clears the first one's files, in its own directory.
        assert_eq!(
            out.stdout.contains("from an earlier demo removed first"),
            run == 1,
            "demo run {run}: {}",
            out.stdout
        );
        assert!(out.stdout.contains("data/demo-outbox/"), "{}", out.stdout);
    }
    let demo = env.dir.path().join("data/demo-outbox");
    let emls = std::fs::read_dir(&demo)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .count();
    assert!(emls >= 30, "{emls} .eml files in {}", demo.display());
    assert!(std::fs::read_dir(demo.join("xmpp")).unwrap().count() > 0);
    assert!(std::fs::read_dir(demo.join("sms")).unwrap().count() > 0);
}

#[test]
fn demo_refuses_a_real_outbox_in_its_own_directory() {
    let env = Env::new();
    std::fs::write(&env.config, "[email]\ndir = \"./data/demo-outbox/\"\n").unwrap();
    let real = env.dir.path().join("data/demo-outbox/00001000-alice.eml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "real").unwrap();
    let config = env.config.to_str().unwrap();
    let out = env.run_raw(&["--config", config, "demo"], b"");
    assert_refused(&out, "the demo's own outbox", &os_args(&["demo"]));
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "real");
    assert!(!env.dir.path().join("data/demo.db").exists());
}

/// Every file under `dir`, recursively (none when it does not exist).
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bench_simulate_and_tick_refuse_bad_sizes_and_write_nothing() {
    let env = Env::new();
    for args in [
        &["bench", "simulate", "--users", "0"][..],
        &["bench", "http", "--connections", "0"][..],
        &["bench", "http", "--write-rounds", "0"][..],
        &["bench", "simulate", "--days", "0"][..],
        &["bench", "simulate", "--days", "3661"][..],
        &["bench", "simulate", "--days=-5"][..],
        &["bench", "tick", "--subs", "10", "--idle-factor", "170"][..],
    ] {
        let out = env.run_raw(args, b"");
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{args:?}: {out:?}");
        assert!(out.stderr.starts_with("digestd: "), "{args:?}: {out:?}");
    }
    // Not a number: clap's own usage error, exit 2 as well.
    let out = env.run_raw(&["bench", "simulate", "--users", "ten"], b"");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!env.dir.path().join("data/bench-simulate.db").exists());
    assert!(!env.dir.path().join("data/bench-tick.db").exists());
}

#[test]
fn benches_run_at_toy_sizes() {
    let env = Env::new();
    let compose = [
        "bench",
        "compose",
        "--subs",
        "60",
        "--mods",
        "3000",
        "--collections",
        "3",
        "--items",
        "20",
        "--days",
        "3",
    ];
    let on_workers = [&compose[..], &["--workers", "2", "--rounds", "2"]].concat();
    for (args, needle) in [
        (
            // Two idle subscriptions per user, each a digest of its own.
            &["bench", "tick", "--subs", "300", "--idle-factor", "3"][..],
            "total tick time",
        ),
        (&compose[..], "compose rate"),
        // The workers' pairs, each way round, and the bound.
        (&on_workers[..], "from scratch: the first batch's plan"),
        (
            &["bench", "ingest", "--rows", "2000", "--batch", "500"][..],
            "ratio record/floor",
        ),
        // Fails unless the simulated runs equal the periods of the rules.
        (
            &["bench", "simulate", "--users", "20", "--days", "3"][..],
            "simulate (the real tick)",
        ),
        // Fails unless every answer has its status (304, 200 with 50
        // entries, 201 for each batch).
        (
            &[
                "bench",
                "http",
                "--requests",
                "40",
                "--connections",
                "4",
                "--batches",
                "2",
                "--write-rounds",
                "2",
            ][..],
            "median of 2 alternated rounds",
        ),
    ] {
        let out = env.run_raw(args, b"");
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert!(out.stdout.contains(needle), "{args:?}: {}", out.stdout);
        // Its own report, not the server's line per request or tick.
        assert!(!out.stderr.contains(" INFO "), "{args:?}: {}", out.stderr);
    }
    // bench smtp needs Postfix's smtp-sink and smtp-source (CI installs them).
    if std::path::Path::new("/usr/sbin/smtp-sink").exists() || std::env::var_os("CI").is_some() {
        let args = [
            "bench",
            "smtp",
            "--messages",
            "40",
            "--sessions",
            "2",
            "--repeat",
            "2",
        ];
        let out = env.run_raw(&args, b"");
        assert_eq!(out.code, 0, "{out:?}");
        for needle in [
            "ratio digestd/smtp-source (medians)",
            "cpu per message, digestd: digestd",
        ] {
            assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
        }
        // Two digestd runs between three smtp-source runs.
        let runs = |label: &str| {
            let line = out.stdout.lines().find(|l| l.starts_with(label)).unwrap();
            line.split_whitespace().filter(|w| w.contains('.')).count()
        };
        assert_eq!(
            (runs("smtp-source runs"), runs("digestd runs")),
            (3, 2),
            "{}",
            out.stdout
        );
        let out = env.run_raw(&["bench", "smtp", "--messages", "40", "--repeat", "0"], b"");
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("--repeat"), "{out:?}");
    }
}

/// A usage error is clap's whole message: the missing argument by name,
/// the similar subcommand it suggests, the usage line; exit 2, nothing
/// written.
#[test]
fn usage_errors_keep_clap_s_message() {
    let env = Env::init();
    for (args, needles) in [
        (
            &["subscribe", "asha", "--frequency", "daily", "--all"][..],
            &["--kind"][..],
        ),
        (&["user", "add", "x"], &["--tz"]),
        (&["token", "add", "x"], &["--scope"]),
        (&["usr", "add"], &["similar subcommand", "'user'"]),
        (&["record", "--nope"], &["unexpected argument '--nope'"]),
    ] {
        let out = env.usage_error(args);
        for n in needles {
            assert!(
                out.stderr.contains(n),
                "{args:?}: want {n:?} in {}",
                out.stderr
            );
        }
    }
}
