//! Black-box tests of the `digestd` binary: `queue purge`, `notify`,
//! `queue run`, `cancel`, `request show`, `inbound` and `test-alert`
//! (`src/cli/queue.rs`).
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

fn notify_world() -> Env {
    world_with_ann_at("ann@example.com")
}

/// ops (ops@example.com) and ann (Europe/Paris) at `ann_email`.
fn world_with_ann_at(ann_email: &str) -> Env {
    let env = Env::init();
    env.ops_and("ann", "Europe/Paris", ann_email);
    env
}

#[test]
fn notify_queue_run_and_request_show_follow_a_request() {
    let env = notify_world();
    let out = env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "Disk 91% full",
        "--message",
        "Clean up /var.\nThanks.",
        "--max-retries",
        "5",
    ]);
    let id = out.lines().last().unwrap().trim().to_string();
    assert!(id.parse::<i64>().is_ok(), "{out}");
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
        env.ok(&[
            "notify",
            "--from",
            "ops",
            "--to",
            "ann",
            "--subject",
            subject,
            "--message",
            "x",
        ]);
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
    let out = env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "Oops",
        "--message",
        "ignore",
    ]);
    let id = out.lines().last().unwrap().trim().to_string();
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

// ------------------------------------------------------- inbound / test-alert

const DSN_TO_ANN: &str = "From: MAILER-DAEMON@mx.example.net\r\n\
To: digestd@localhost\r\n\
Subject: Undelivered Mail Returned to Sender\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/report; report-type=delivery-status; boundary=\"B1\"\r\n\
\r\n\
--B1\r\n\
Content-Type: text/plain\r\n\
\r\n\
Your message could not be delivered.\r\n\
\r\n\
--B1\r\n\
Content-Type: message/delivery-status\r\n\
\r\n\
Reporting-MTA: dns; mx.example.net\r\n\
\r\n\
Final-Recipient: rfc822; ann@example.com\r\n\
Action: failed\r\n\
Status: 5.1.1\r\n\
Diagnostic-Code: smtp; 550 5.1.1 User unknown\r\n\
\r\n\
--B1--\r\n";

/// Notifies ann and delivers it to the outbox; answers the Message-ID the
/// message carries.
fn sent_to_ann(env: &Env) -> String {
    let out = env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "s",
        "--message",
        "m",
    ]);
    let id: i64 = out.lines().last().unwrap().trim().parse().unwrap();
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let file = env
        .dir
        .path()
        .join("outbox")
        .join(format!("{id:08}-ann.eml"));
    let raw = std::fs::read(&file).unwrap();
    let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
    m.message_id().expect("a Message-ID").to_string()
}

/// `dsn` with the original message's headers returned, as MTAs do.
fn quoting(dsn: &str, message_id: &str) -> String {
    dsn.replace(
        "--B1--\r\n",
        &format!(
            "--B1\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <{message_id}>\r\nSubject: s\r\n\r\n--B1--\r\n"
        ),
    )
}

#[test]
fn hard_bounces_disable_an_address_and_the_queue_then_gives_up() {
    let env = notify_world();
    for _ in 1..=2 {
        let dsn = quoting(DSN_TO_ANN, &sent_to_ann(&env));
        let out = env.ok_in(&["inbound"], dsn.as_bytes());
        assert_eq!(out.trim(), "bounce hard ann@example.com");
    }
    // A soft bounce is recorded, not counted.
    let soft = quoting(DSN_TO_ANN, &sent_to_ann(&env))
        .replace("Action: failed", "Action: delayed")
        .replace("Status: 5.1.1", "Status: 4.4.1");
    assert_eq!(
        env.ok_in(&["inbound"], soft.as_bytes()).trim(),
        "bounce soft ann@example.com"
    );
    // The third hard one disables the address, and says so in the log too.
    let third = quoting(DSN_TO_ANN, &sent_to_ann(&env));
    let out = env.run_in(&["inbound"], third.as_bytes());
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        "bounce hard ann@example.com (address disabled)"
    );
    assert!(out.stderr.contains("address disabled after hard bounces"));
    assert!(
        !out.stderr.contains('\u{1b}'),
        "no colour codes in a log file"
    );
    let stranger = third.replace("ann@example.com", "zed@example.org");
    assert!(env
        .ok_in(&["inbound"], stranger.as_bytes())
        .contains("ignored: zed@example.org is no address of ours"));
    // The disabled address is not used: the row is given up at once.
    let id = env.notify("ops", "ann", "s", &[]);
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let v = env.request_json(&id);
    assert_eq!(v["status"], "failed");
    assert_eq!(v["recipients"][0]["reply_message"], "no email address");
}

/// The audit's finding 4: anyone who could mail the bounce address could
/// disable anyone. A report that quotes no message of ours, a forged or
/// predictable Message-ID, or one made for another party counts nothing;
/// one message counts once, however many reports or blocks name it.
#[test]
fn only_a_bounce_of_a_message_we_sent_to_that_address_counts_and_once() {
    let env = notify_world();
    let before = env.snapshot();
    let bare = env.ok_in(&["inbound"], DSN_TO_ANN.as_bytes());
    assert_eq!(
        bare.trim(),
        "ignored: ann@example.com: the report quotes no message digestd sent to it"
    );
    assert_eq!(env.snapshot(), before, "nothing counted for a bare report");
    let real = sent_to_ann(&env);
    let (head, _mac) = real.rsplit_once('.').unwrap();
    let forged_mac = format!("{head}.00000000000000000000@localhost");
    let id_fields: Vec<&str> = real.split(['.', '@']).collect();
    let predictable = format!("nt.{}.{}@localhost", id_fields[1], id_fields[2]);
    // ops's message quoted in a bounce for ann's address.
    let out = env.ok(&[
        "notify",
        "--from",
        "ann",
        "--to",
        "ops",
        "--subject",
        "s",
        "--message",
        "m",
    ]);
    let ops_id: i64 = out.lines().last().unwrap().trim().parse().unwrap();
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let raw = std::fs::read(
        env.dir
            .path()
            .join("outbox")
            .join(format!("{ops_id:08}-ops.eml")),
    )
    .unwrap();
    let ops_msg = mail_parser::MessageParser::default()
        .parse(&raw)
        .unwrap()
        .message_id()
        .unwrap()
        .to_string();
    for bogus in [forged_mac.as_str(), predictable.as_str(), ops_msg.as_str()] {
        let out = env.ok_in(&["inbound"], quoting(DSN_TO_ANN, bogus).as_bytes());
        assert!(
            out.contains("the report quotes no message digestd sent to it"),
            "{bogus}: {out}"
        );
    }
    assert_eq!(env.count("email_bounces"), 0);
    // The real one counts; three blocks and a second report of it do not.
    let dsn = quoting(DSN_TO_ANN, &real);
    let triple = dsn.replace(
        "Final-Recipient: rfc822; ann@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n",
        &"Final-Recipient: rfc822; ann@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n"
            .repeat(3),
    );
    let out = env.ok_in(&["inbound"], triple.as_bytes());
    assert_eq!(
        out.matches("bounce hard ann@example.com").count(),
        1,
        "{out}"
    );
    assert_eq!(out.matches("already counted").count(), 2, "{out}");
    let out = env.ok_in(&["inbound"], dsn.as_bytes());
    assert!(
        out.contains("this message's bounce is already counted"),
        "{out}"
    );
    assert_eq!(env.count("email_bounces"), 1);
}

/// The audit's findings 5 and 6: an address disabled by hand stays
/// disabled when a bounce arrives; capitals in the local part match as
/// stored, the domain in any case.
#[test]
fn bounces_keep_a_hand_disabled_address_disabled_and_match_as_stored() {
    let env = world_with_ann_at("Bob.Smith@example.com");
    let id = sent_to_ann(&env);
    let dsn = quoting(DSN_TO_ANN, &id).replace("ann@example.com", "Bob.Smith@EXAMPLE.COM");
    let lower = dsn.replace("Bob.Smith@EXAMPLE.COM", "bob.smith@example.com");
    assert!(env
        .ok_in(&["inbound"], lower.as_bytes())
        .contains("is no address of ours"));
    env.ok(&["contact", "ann", "--channel", "email", "--disable"]);
    let out = env.ok_in(&["inbound"], dsn.as_bytes());
    assert_eq!(out.trim(), "bounce hard Bob.Smith@EXAMPLE.COM");
    // One hard bounce of three: before, it set the address enabled again.
    let id = env.notify("ops", "ann", "s", &[]);
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let v = env.request_json(&id);
    assert_eq!(
        v["recipients"][0]["reply_message"], "no email address",
        "still disabled"
    );
}

/// The audit's DSN with a NUL in its fields: nobody's address, nothing
/// stored against anyone, and the status and diagnostic printed escaped.
#[test]
fn inbound_with_nul_and_escapes_in_a_dsn_names_nobody() {
    let env = notify_world();
    let nul = DSN_TO_ANN.replace("ann@example.com", "ann@example.com\u{0}");
    let out = env.ok_in(&["inbound"], nul.as_bytes());
    assert_eq!(
        out.trim(),
        "ignored: ann@example.com\\u{0} is no address of ours",
        "{out:?}"
    );
    let esc = DSN_TO_ANN.replace("ann@example.com", "\u{1b}[2Jann@example.com");
    let out = env.ok_in(&["inbound"], esc.as_bytes());
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert_eq!(env.count("email_bounces"), 0);
}

#[test]
fn inbound_ignores_other_mail_and_survives_garbage() {
    let env = notify_world();
    assert_eq!(
        env.ok_in(&["inbound"], b"From: a@b.c\r\nSubject: hi\r\n\r\nhello\r\n")
            .trim(),
        "ignored: not a delivery status notification"
    );
    assert!(env
        .ok_in(&["inbound"], &[0xff, 0xfe, 0, 0x80, b'\n', 0xc3])
        .starts_with("ignored"));
    assert!(env.ok_in(&["inbound"], b"").starts_with("ignored"));
    let huge = vec![b'x'; (10 << 20) + 1];
    env.refused(&["inbound"], &huge, "larger than");
}

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
    env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "Printed",
        "--message",
        "hello",
    ]);
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
    let out = env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "ann",
        "--subject",
        "s",
        "--message",
        "m",
    ]);
    let id: i64 = out.lines().last().unwrap().trim().parse().unwrap();
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
