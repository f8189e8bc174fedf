//! Black-box tests of the `digestd` binary: `test-alert` on each channel and the `stdout` transport (`src/cli/queue.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use std::ffi::OsStr;

use common::cli::*;

#[test]
fn test_alert_sends_one_message_through_the_transport() {
    let env = Env::init();
    let out = env.ok(&["test-alert", "--to", "ops@example.com"]);
    assert!(out.starts_with("sent to ops@example.com"), "{out}");
    let eml: Vec<_> = std::fs::read_dir(env.dir.path().join("outbox"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(eml.len(), 1);
    let raw = std::fs::read(eml[0].path()).unwrap();
    let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
    assert_eq!(m.subject(), Some("digestd test alert"));
    // The address alone, not the address again as an encoded display name.
    let to = m.to().and_then(|a| a.first()).expect("a To: address");
    assert_eq!(to.address(), Some("ops@example.com"));
    assert_eq!(to.name(), None, "no display name");
    let head = String::from_utf8_lossy(&raw);
    let line = head
        .lines()
        .find(|l| l.starts_with("To:"))
        .expect("a To: header");
    assert_eq!(line, "To: ops@example.com");
    for bad in ["not-an-address", "a@b.c\r\nBcc: x@y.z", ""] {
        env.refused(&["test-alert", "--to", bad], b"", "invalid");
    }
}

/// On the default `dir` transports an XMPP or SMS test alert is written
/// where the queue's `dir` listeners write: `outbox/xmpp/`, `outbox/sms/`.
#[test]
fn test_alert_on_xmpp_and_sms_writes_to_the_outbox_by_default() {
    let env = Env::init();
    let out = env.ok(&[
        "--now",
        "2026-11-23T08:00:00Z",
        "test-alert",
        "--channel",
        "xmpp",
        "--to",
        "ops@chat.example.org",
    ]);
    assert!(
        out.starts_with("sent to ops@chat.example.org: written to "),
        "{out}"
    );
    let file = env
        .dir
        .path()
        .join("outbox/xmpp/test-alert-1795420800000000.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("To: ops@chat.example.org\nType: chat\n\n"),
        "{text}"
    );
    assert!(text.contains("digestd test alert, 2026-11-23 08:00 UTC"));
    let out = env.ok(&[
        "--now",
        "2026-11-23T08:00:00Z",
        "test-alert",
        "--channel",
        "sms",
        "--to",
        "+34600111222",
    ]);
    assert!(
        out.starts_with("sent to +34600111222: written to "),
        "{out}"
    );
    let text = std::fs::read_to_string(
        env.dir
            .path()
            .join("outbox/sms/test-alert-1795420800000000.txt"),
    )
    .unwrap();
    assert!(text.starts_with("To: +34600111222\n\n"), "{text}");
    // Hostile addresses: refused, nothing written anywhere.
    for (channel, bad, needle) in [
        ("xmpp", "ops@chat.example.org\r\nType: x", "invalid"),
        ("xmpp", "not a jid", "invalid"),
        ("xmpp", "", "invalid"),
        ("sms", "+34 600\n111", "invalid"),
        ("sms", "0612", "invalid"),
        ("fax", "+34600111222", "unknown channel"),
    ] {
        env.refused(
            &["test-alert", "--channel", channel, "--to", bad],
            b"",
            needle,
        );
    }
    let count = |d: &str| std::fs::read_dir(env.dir.path().join(d)).unwrap().count();
    assert_eq!((count("outbox/xmpp"), count("outbox/sms")), (1, 1));
}

#[test]
fn the_stdout_transport_prints_each_message() {
    let env = notify_world();
    env.notify("ops", "ann", "Printed", "hello", &[]);
    let cfg = env.dir.path().join("stdout.toml");
    std::fs::write(&cfg, "[email]\ntransport = \"stdout\"\n").unwrap();
    let out = env.run_raw(
        &[
            OsStr::new("--config"),
            cfg.as_os_str(),
            OsStr::new("--db"),
            OsStr::new(&env.url),
            OsStr::new("queue"),
            OsStr::new("run"),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("From digestd@localhost \n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Subject: Printed"));
    assert!(out.stdout.contains("delivered email 1"));
}

/// The audit's finding 15: a server's reply with terminal escapes and a
/// newline (an SMS gateway's 400 body) forged a line in `request show`.
#[test]
fn request_show_prints_a_remote_reply_escaped() {
    use diesel::prelude::*;
    let env = notify_world();
    let id: i64 = env.notify("ops", "ann", "s", "m", &[]).parse().unwrap();
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let mut c = diesel::SqliteConnection::establish(env.db_path.to_str().unwrap()).unwrap();
    diesel::sql_query(
        "UPDATE nt_queue SET smtp_reply_code = 400, smtp_reply_message = 'bad\x1b[2J\nrequest 1 (notification): sent' ",
    )
    .execute(&mut c)
    .unwrap();
    let shown = env.ok(&["request", "show", &id.to_string()]);
    assert_eq!(shown.lines().count(), 2, "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(shown.contains("400 bad"), "{shown}");
}

/// An XMPP test alert with the server down fails within `[xmpp]
/// timeout_seconds`, naming it, rather than retrying for ever: a closed
/// port (connection refused) and an address nobody answers on.
#[test]
fn an_xmpp_test_alert_with_the_server_down_fails_within_its_timeout() {
    let env = Env::init();
    for server in ["127.0.0.1:1", "10.255.255.1:5222"] {
        std::fs::write(
            &env.config,
            format!(
                "[xmpp]\ntransport = \"xmpp\"\njid = \"bot@example.org\"\npassword = \"x\"\n\
                 server = \"{server}\"\ntimeout_seconds = 2\n"
            ),
        )
        .unwrap();
        let started = std::time::Instant::now();
        let out = env.run(&["test-alert", "--channel", "xmpp", "--to", "amy@example.org"]);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stderr.contains(
                "test alert to amy@example.org failed: xmpp: login did not complete in 2s"
            ),
            "{}",
            out.stderr
        );
        // Not a speed figure: without the bound, tokio-xmpp retries for ever.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{server}"
        );
    }
}
