//! Black-box tests of the `digestd` binary: `inbound`, the bounces and replies it reads (`src/cli/queue.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use common::cli::*;

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
    let id: i64 = env.notify("ops", "ann", "s", "m", &[]).parse().unwrap();
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
    let id = env.notify("ops", "ann", "s", "m", &[]);
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
    let id = env.notify("ops", "ann", "s", "m", &[]);
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
