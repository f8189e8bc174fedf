//! The nt queue's transports, on each back end: SMTP over real TCP on
//! loopback (batching per sender and recipient, reply codes kept, transient
//! failures retried with backoff, permanent ones given up, a connection cut
//! in the middle of DATA, a server that is down and then back, cancel,
//! pipelined sessions that survive refusals), Postfix's `smtp-sink` for
//! volume, the sendmail-style pipe and the database outbox. The scripted
//! server is in `common/smtp.rs`, the shared helpers in `common/delivery.rs`.

use crate::common;

use chrono::Duration;
use common::delivery::{notify, parse, smtp, smtp_pool, user, T0};
use common::smtp::{free_port, FaultSmtp, Sink};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{delivery_log, nt_queue};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::RequestId;

fn happy_path_batches_per_sender_and_recipient(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "ann", "ok.ann@example.com");
    user(&mut c, "bob", "fwd.bob@example.com");
    let a: Vec<RequestId> = (1..=3)
        .map(|i| notify(&mut c, "sys", "ann", &format!("Build {i} finished")))
        .collect();
    let b = notify(&mut c, "sys", "bob", "Disk almost full");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(
        (r.expanded, r.finished, r.gave_up, r.retrying),
        (4, 4, 0, 0)
    );
    assert_eq!(
        r.written.get("email"),
        Some(&2),
        "one message per recipient"
    );
    let got = server.received();
    assert_eq!(got.len(), 2);
    let to_ann = got.iter().find(|m| m.to == ["ok.ann@example.com"]).unwrap();
    let m = parse(&to_ann.data);
    assert_eq!(m.subject(), Some("Build 1 finished (and 2 more)"));
    let text = m.body_text(0).unwrap();
    for i in 1..=3 {
        assert!(
            text.contains(&format!("regarding Build {i} finished")),
            "{text}"
        );
    }
    assert_eq!(
        // 09:00 UTC in ann's zone (Europe/Paris) and clock (en-US).
        text.matches("Message sent on Mon, Nov 23, 10:00 AM CET")
            .count(),
        3
    );
    assert!(m
        .body_html(0)
        .unwrap()
        .contains("regarding Build 2 finished</h3>"));
    assert_eq!(to_ann.from, "digestd@localhost");
    for id in a.iter().chain([&b]) {
        let v = queue::show(&mut c, *id).unwrap();
        assert_eq!(v.status, "sent", "{v:?}");
        assert!(v
            .recipients
            .iter()
            .all(|r| r.successful && r.retry_count == 0));
    }
    // A 251 (will forward) at RCPT is delivery; the code kept is the reply
    // to the message itself.
    let vb = queue::show(&mut c, b).unwrap();
    assert_eq!(vb.recipients[0].reply_code, Some(250));
    // A second pass sends nothing again.
    let again = queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    assert!(again.written.is_empty());
    assert_eq!(server.received().len(), 2);
}

fn transient_failures_back_off_then_give_up_and_permanent_ones_stop_at_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "carl", "busy.carl@example.com");
    user(&mut c, "dora", "gone.dora@example.com");
    let rc = notify(&mut c, "sys", "carl", "Weekly report");
    let rd = notify(&mut c, "sys", "dora", "Weekly report");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    let t0 = at(T0);
    queue::run_pass(&mut c, &mut d, t0).unwrap();
    let carl = queue::show(&mut c, rc).unwrap();
    let dora = queue::show(&mut c, rd).unwrap();
    assert_eq!(
        (carl.status.as_str(), dora.status.as_str()),
        ("sending", "failed")
    );
    let (cr, dr) = (&carl.recipients[0], &dora.recipients[0]);
    assert_eq!(
        (cr.retry_count, cr.reply_code, cr.gave_up),
        (1, Some(451), false)
    );
    assert!(
        cr.reply_message
            .as_deref()
            .unwrap()
            .contains("mailbox busy"),
        "{cr:?}"
    );
    assert_eq!(
        (dr.retry_count, dr.reply_code, dr.gave_up),
        (1, Some(550), true)
    );
    let next = |c: &mut DbConn| -> chrono::DateTime<chrono::Utc> {
        nt_queue::table
            .filter(nt_queue::request_id.eq(rc.0))
            .select(nt_queue::next_attempt_at)
            .first::<chrono::NaiveDateTime>(c)
            .unwrap()
            .and_utc()
    };
    // Base 5 minutes, doubling: +5 min after the first failure.
    assert_eq!(next(&mut c), t0 + Duration::minutes(5));
    // Not due before then: nothing is attempted.
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(4)).unwrap();
    assert_eq!(
        queue::show(&mut c, rc).unwrap().recipients[0].retry_count,
        1
    );
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(5)).unwrap();
    assert_eq!(
        queue::show(&mut c, rc).unwrap().recipients[0].retry_count,
        2
    );
    assert_eq!(next(&mut c), t0 + Duration::minutes(15));
    // The third attempt is the last (max_retries 3): given up, request failed.
    queue::run_pass(&mut c, &mut d, t0 + Duration::minutes(15)).unwrap();
    let carl = queue::show(&mut c, rc).unwrap();
    assert_eq!(carl.status, "failed");
    // Every attempt is in the delivery log, in order.
    let log: Vec<(String, Option<i32>)> = delivery_log::table
        .filter(delivery_log::request_id.eq(rc.0))
        .select((delivery_log::outcome, delivery_log::reply_code))
        .order(delivery_log::id.asc())
        .load(&mut c)
        .unwrap();
    let want: Vec<(String, Option<i32>)> = vec![
        ("transient".into(), Some(451)),
        ("transient".into(), Some(451)),
        ("gave_up".into(), Some(451)),
    ];
    assert_eq!(log, want);
    let dora_log: Vec<String> = delivery_log::table
        .filter(delivery_log::request_id.eq(rd.0))
        .select(delivery_log::outcome)
        .load(&mut c)
        .unwrap();
    assert_eq!(dora_log, ["permanent"]);
    assert_eq!(
        (carl.recipients[0].retry_count, carl.recipients[0].gave_up),
        (3, true)
    );
    assert!(server.received().is_empty());
}

fn a_cut_connection_is_retried_and_the_pass_goes_on(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "erin", "cut.erin@example.com");
    user(&mut c, "finn", "ok.finn@example.com");
    let re = notify(&mut c, "sys", "erin", "Release notes");
    let rf = notify(&mut c, "sys", "finn", "Release notes");
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let erin = queue::show(&mut c, re).unwrap();
    let finn = queue::show(&mut c, rf).unwrap();
    assert_eq!(
        finn.status, "sent",
        "finn's message went out on a new connection"
    );
    assert_eq!(erin.status, "sending");
    assert_eq!(
        (
            erin.recipients[0].retry_count,
            erin.recipients[0].reply_code
        ),
        (1, None)
    );
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, re).unwrap().status, "sent");
    // Each delivered exactly once.
    let got = server.received();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got.iter()
            .filter(|m| m.to == ["cut.erin@example.com"])
            .count(),
        1
    );
}

fn a_server_that_is_down_then_back_gets_the_message_once(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "gus", "ok.gus@example.com");
    let r = notify(&mut c, "sys", "gus", "Outage report");
    let port = free_port();
    let mut d = smtp(&format!("smtp://127.0.0.1:{port}"));
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert_eq!(
        v.recipients[0].reply_code, None,
        "no reply from a closed port"
    );
    let server = FaultSmtp::start_on(port);
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(server.received().len(), 1);
}

fn cancel_stops_what_was_not_sent(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "hal", "busy.hal@example.com");
    user(&mut c, "ivy", "ok.ivy@example.com");
    let rh = notify(&mut c, "sys", "hal", "Maintenance");
    let ri = notify(&mut c, "sys", "ivy", "Maintenance");
    queue::cancel_request(&mut c, ri, at(T0)).unwrap();
    let server = FaultSmtp::start();
    let mut d = smtp(&server.url());
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    // hal's failed once; cancel it while it waits for its retry.
    queue::cancel_request(&mut c, rh, at(T0)).unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    assert!(server.received().is_empty());
    assert_eq!(queue::show(&mut c, rh).unwrap().status, "cancelled");
    assert_eq!(queue::show(&mut c, ri).unwrap().status, "cancelled");
    assert!(
        queue::cancel_request(&mut c, ri, at(T0)).is_err(),
        "only once"
    );
}

fn smtp_sink_receives_every_message_once(db: &TestDb) {
    let Some(sink) = Sink::start() else { return };
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    let n = 120;
    for i in 0..n {
        user(&mut c, &format!("u{i}"), &format!("user{i}@example.com"));
        notify(&mut c, "sys", &format!("u{i}"), &format!("Report {i}"));
    }
    let mut d = smtp(&format!("smtp://127.0.0.1:{}", sink.port));
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.written.get("email"), Some(&n), "{r}");
    assert_eq!(r.finished, n);
    let mut seen = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(sink.dir.path()).unwrap().flatten() {
        let raw = std::fs::read(e.path()).unwrap();
        let m = parse(&raw);
        let rcpt = m.header_raw("X-Rcpt-Args").unwrap().trim().to_string();
        let subject = m.subject().unwrap().to_string();
        assert!(m.body_html(0).is_some() && m.body_text(0).is_some());
        *seen.entry((rcpt, subject)).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), n, "one file per recipient");
    assert!(seen.values().all(|k| *k == 1), "no duplicates");
    assert!(seen.contains_key(&("<user7@example.com>".to_string(), "Report 7".to_string())));
}

/// A sendmail stand-in: appends its arguments and the message to `log`
/// and exits with the code found in `code` (0 when the file is absent).
fn fake_sendmail(dir: &std::path::Path) -> (String, std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("sendmail");
    let (log, code) = (dir.join("log"), dir.join("code"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"args: $*\" >> {log}\ncat >> {log}\necho '--end--' >> {log}\n[ -f {code} ] && exit $(cat {code})\nexit 0\n",
            log = log.display(),
            code = code.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (format!("{} -t -i -f {{from}}", script.display()), log, code)
}

fn the_pipe_transport_reads_exit_codes_like_sendmail(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "lea", "lea@example.com");
    let r = notify(&mut c, "sys", "lea", "Via sendmail");
    let dir = tempfile::tempdir().unwrap();
    let (cmd, log, code) = fake_sendmail(dir.path());
    let mut d = Delivery::new(
        &EmailConfig {
            transport: digestd::config::EmailTransport::Pipe,
            pipe_command: cmd,
            ..EmailConfig::default()
        },
        crate::common::rt(),
    )
    .unwrap();
    // 75: try again later.
    std::fs::write(&code, "75").unwrap();
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].retry_count),
        ("sending", 1)
    );
    assert!(v.recipients[0]
        .reply_message
        .as_deref()
        .unwrap()
        .contains("exited 75"));
    // 0: delivered; the command got one whole message.
    std::fs::remove_file(&code).unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let got = std::fs::read_to_string(&log).unwrap();
    let last = got
        .split("--end--\n")
        .filter(|m| !m.is_empty())
        .last()
        .unwrap();
    // The envelope sender is the configured address, so bounces come back.
    let (args, last) = last.split_once('\n').unwrap();
    assert_eq!(args, "args: -t -i -f digestd@localhost");
    let m = parse(last.as_bytes());
    assert_eq!(m.subject(), Some("Via sendmail"));
    // Any other code: given up at once.
    let r2 = notify(&mut c, "sys", "lea", "Refused");
    std::fs::write(&code, "67").unwrap();
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(6)).unwrap();
    let v = queue::show(&mut c, r2).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].gave_up),
        ("failed", true)
    );
}

fn the_db_transport_fills_an_sqlite_outbox_a_relay_can_drain(db: &TestDb) {
    use diesel::sql_types::{Binary, Text};
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        envelope_from: String,
        #[diesel(sql_type = Text)]
        recipient: String,
        #[diesel(sql_type = Binary)]
        message: Vec<u8>,
    }
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "lea", "lea@example.com");
    user(&mut c, "max", "max@example.com");
    let a = notify(&mut c, "sys", "lea", "First");
    let b = notify(&mut c, "sys", "lea", "Second");
    let m = notify(&mut c, "sys", "max", "Third");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay/outbox.db");
    let mut d = Delivery::new(
        &EmailConfig {
            transport: digestd::config::EmailTransport::Db,
            db_path: path.display().to_string(),
            dir: dir.path().join("files").display().to_string(),
            ..EmailConfig::default()
        },
        crate::common::rt(),
    )
    .unwrap();
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    for r in [a, b, m] {
        assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    }
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::hours(1)).unwrap();
    // What a relay sees: one message per recipient, batched, valid MIME.
    let mut relay = diesel::SqliteConnection::establish(&path.display().to_string()).unwrap();
    let rows: Vec<Row> =
        diesel::sql_query("SELECT envelope_from, recipient, message FROM outbox ORDER BY id")
            .load(&mut relay)
            .unwrap();
    let got: Vec<(&str, &str, String)> = rows
        .iter()
        .map(|r| {
            let msg = parse(&r.message);
            (
                r.envelope_from.as_str(),
                r.recipient.as_str(),
                msg.subject().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "digestd@localhost");
    assert_eq!(got[0].1, "lea@example.com");
    assert_eq!(got[0].2, "First (and 1 more)");
    let text = parse(&rows[0].message).body_text(0).unwrap().to_string();
    assert!(text.contains("Body of Second."), "{text}");
    assert_eq!((got[1].1, got[1].2.as_str()), ("max@example.com", "Third"));
}

/// With PIPELINING, a refused recipient is answered with RSET and the
/// session goes on to the next message; nothing needs a new connection.
fn a_refusal_keeps_the_pipelined_session(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "bea", "busy.bea@example.com");
    user(&mut c, "gus", "gone.gus@example.com");
    user(&mut c, "oli", "ok.oli@example.com");
    let b = notify(&mut c, "sys", "bea", "One");
    let g = notify(&mut c, "sys", "gus", "Two");
    let o = notify(&mut c, "sys", "oli", "Three");
    let server = FaultSmtp::start();
    let mut d = smtp_pool(&server.url(), 1);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let code = |c: &mut DbConn, r| queue::show(c, r).unwrap().recipients[0].reply_code;
    assert_eq!(code(&mut c, b), Some(451));
    assert_eq!(code(&mut c, g), Some(550));
    assert_eq!(queue::show(&mut c, o).unwrap().status, "sent");
    assert_eq!(server.received().len(), 1);
    assert_eq!(server.sessions(), 1, "one session for all three");
}

/// On one session each message's body, final dot and the next message's
/// commands go in one write. A refused dot leaves the next message's
/// commands standing; a hang-up instead of the dot's reply sends the next
/// message (whose commands had gone out, not its body) on a new session,
/// once.
fn a_pipelined_run_survives_a_refused_dot_and_a_hang_up(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    // Queue order is by recipient id: the order they are created in.
    let names = ["ok.a", "late.b", "ok.c", "cut.d", "ok.e", "ok.f"];
    let mut reqs = Vec::new();
    for n in names {
        let name = n.replace('.', "_");
        user(&mut c, &name, &format!("{n}@example.com"));
        reqs.push(notify(&mut c, "sys", &name, n));
    }
    let server = FaultSmtp::start();
    let mut d = smtp_pool(&server.url(), 1);
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let show = |c: &mut DbConn, i: usize| queue::show(c, reqs[i]).unwrap();
    assert_eq!(show(&mut c, 1).status, "failed");
    assert_eq!(show(&mut c, 1).recipients[0].reply_code, Some(554));
    assert_eq!(show(&mut c, 3).status, "sending", "cut: retried later");
    assert_eq!(show(&mut c, 3).recipients[0].retry_count, 1);
    for i in [0, 2, 4, 5] {
        assert_eq!(show(&mut c, i).status, "sent", "{}", names[i]);
    }
    assert_eq!(server.sessions(), 2, "a new session after the hang-up only");
    queue::run_pass(&mut c, &mut d, at(T0) + Duration::minutes(5)).unwrap();
    assert_eq!(show(&mut c, 3).status, "sent");
    let mut got: Vec<String> = server.received().iter().map(|m| m.to.join(",")).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "cut.d@example.com",
            "ok.a@example.com",
            "ok.c@example.com",
            "ok.e@example.com",
            "ok.f@example.com"
        ],
        "each once, the refused one not at all"
    );
}

backend_tests!(
    a_pipelined_run_survives_a_refused_dot_and_a_hang_up,
    a_refusal_keeps_the_pipelined_session,
    the_db_transport_fills_an_sqlite_outbox_a_relay_can_drain,
    happy_path_batches_per_sender_and_recipient,
    transient_failures_back_off_then_give_up_and_permanent_ones_stop_at_once,
    a_cut_connection_is_retried_and_the_pass_goes_on,
    a_server_that_is_down_then_back_gets_the_message_once,
    cancel_stops_what_was_not_sent,
    smtp_sink_receives_every_message_once,
    the_pipe_transport_reads_exit_codes_like_sendmail,
);
