//! `[email] tls`, `tls_ca_file` and AUTH against a real SMTP server with
//! STARTTLS and AUTH PLAIN (tests/it/common/smtp_tls.rs, a self-signed
//! certificate made by openssl): `required` verifies or refuses,
//! `opportunistic` encrypts without verifying and sends plain when there is
//! no STARTTLS, a wrong password is one line naming authentication with the
//! server's code (exit 2, no `storage:`), and bad settings are refused at
//! start. The queue case runs on SQLite and on PostgreSQL.

use crate::common;

use common::cli::{Env, Out};
use common::smtp_tls::{TlsSmtp, PASSWORD, USER};
use common::TestDb;

/// An environment whose config sends through `server` with `extra`
/// `[email]` lines.
fn env(server: &TlsSmtp, user: &str, password: &str, extra: &str) -> Env {
    let env = Env::init();
    std::fs::write(
        &env.config,
        format!(
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://{user}:{password}@localhost:{}\"\ntimeout_seconds = 10\n{extra}",
            server.port
        ),
    )
    .unwrap();
    env
}

fn alert(env: &Env) -> Out {
    env.run(&["test-alert", "--to", "ops@example.com"])
}

#[test]
fn required_verifies_with_the_ca_file_and_encrypts() {
    let server = TlsSmtp::start(true);
    let ca = server.cert.display().to_string();
    let e = env(
        &server,
        USER,
        PASSWORD,
        &format!("tls = \"required\"\ntls_ca_file = \"{ca}\"\n"),
    );
    let out = alert(&e);
    assert_eq!(out.code, 0, "{out:?}");
    let got = server.received();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].tls, "sent inside TLS");
    assert_eq!(got[0].rcpt, "ops@example.com");
}

#[test]
fn required_refuses_a_certificate_it_cannot_verify() {
    let server = TlsSmtp::start(true);
    let e = env(&server, USER, PASSWORD, "tls = \"required\"\n");
    let out = alert(&e);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("TLS"), "{out:?}");
    assert!(!out.stderr.contains("storage:"), "{out:?}");
    assert!(server.received().is_empty());
}

#[test]
fn opportunistic_encrypts_without_verifying() {
    // Postfix's snakeoil case: a certificate nobody vouches for.
    let server = TlsSmtp::start(true);
    let e = env(&server, USER, PASSWORD, "tls = \"opportunistic\"\n");
    let out = alert(&e);
    assert_eq!(out.code, 0, "{out:?}");
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert!(got[0].tls, "STARTTLS was offered, so it was used");
}

#[test]
fn opportunistic_sends_plain_when_there_is_no_starttls() {
    let server = TlsSmtp::start(false);
    let e = env(&server, USER, PASSWORD, "tls = \"opportunistic\"\n");
    let out = alert(&e);
    assert_eq!(out.code, 0, "{out:?}");
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert!(!got[0].tls);
}

#[test]
fn a_wrong_password_is_one_line_naming_authentication() {
    let server = TlsSmtp::start(true);
    let ca = server.cert.display().to_string();
    let e = env(
        &server,
        USER,
        "wrong",
        &format!("tls = \"required\"\ntls_ca_file = \"{ca}\"\n"),
    );
    let out = alert(&e);
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
    assert!(
        out.stderr
            .contains("authentication failed: 535 5.7.8 Authentication credentials invalid"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("storage:"), "{out:?}");
    assert!(
        !out.stderr.contains("wrong"),
        "the password is not shown: {out:?}"
    );
    assert!(server.received().is_empty());
}

/// `required` against a server without STARTTLS: the pass sends nothing
/// and marks nothing sent; the request waits for a retry.
fn required_without_starttls_sends_nothing(db_url: &str) {
    let server = TlsSmtp::start(false);
    let e = env(&server, USER, PASSWORD, "tls = \"required\"\n");
    let run = |args: &[&str]| {
        let mut all = vec!["--config", e.config.to_str().unwrap(), "--db", db_url];
        all.extend(args);
        e.run_raw(&all, b"")
    };
    assert_eq!(run(&["init"]).code, 0);
    let out = run(&[
        "user",
        "add",
        "ann",
        "--tz",
        "UTC",
        "--email",
        "ann@example.com",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = run(&[
        "notify",
        "--from",
        "ann",
        "--to",
        "ann",
        "--subject",
        "s",
        "--message",
        "m",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let id = out.stdout.lines().last().unwrap().to_string();
    let out = run(&["queue", "run"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("retrying 1"), "{out:?}");
    let show = run(&["request", "show", &id, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_ne!(v["status"], "sent", "{v}");
    let text = v.to_string();
    assert!(text.contains("STARTTLS required but not offered"), "{text}");
    assert!(server.received().is_empty());
    // And test-alert says so in one line.
    let out = alert(&e);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("STARTTLS required but not offered"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("storage:"), "{out:?}");
}

#[test]
fn required_without_starttls_sends_nothing_on_sqlite() {
    let db = TestDb::sqlite();
    required_without_starttls_sends_nothing(&db.url);
}

#[test]
fn required_without_starttls_sends_nothing_on_postgres() {
    match TestDb::postgres() {
        Some(db) => required_without_starttls_sends_nothing(&db.url),
        None => eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set"),
    }
}

#[test]
fn bad_tls_settings_are_refused_at_start() {
    let server = TlsSmtp::start(false);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let junk = dir.path().join("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let cut = dir.path().join("cut.pem");
    std::fs::write(&cut, "-----BEGIN CERTIFICATE-----\nMIIB\n").unwrap();
    let missing = dir.path().join("missing.pem");
    let cases = [
        (
            format!("tls_ca_file = \"{}\"\n", missing.display()),
            "[email] tls_ca_file",
        ),
        (
            format!("tls_ca_file = \"{}\"\n", empty.display()),
            "no PEM certificate",
        ),
        (
            format!("tls_ca_file = \"{}\"\n", junk.display()),
            "[email] tls_ca_file",
        ),
        (
            format!("tls_ca_file = \"{}\"\n", cut.display()),
            "no END line",
        ),
        ("tls = \"maybe\"\n".to_string(), "[email] tls"),
        ("tls = \"Required\"\n".to_string(), "[email] tls"),
        ("tls = \"none\\r\\nX: y\"\n".to_string(), "[email] tls"),
        (
            "tls = 1\n".to_string(),
            "[email] tls must be text in double quotes",
        ),
    ];
    for (extra, needle) in cases {
        let e = env(&server, USER, PASSWORD, &extra);
        e.refused(&["queue", "status"], b"", needle);
        let out = alert(&e);
        assert_eq!(out.code, 2, "{extra}: {out:?}");
    }
    // The URL and the setting may not disagree.
    let e = Env::init();
    std::fs::write(
        &e.config,
        format!(
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://localhost:{}?tls=required\"\ntls = \"none\"\n",
            server.port
        ),
    )
    .unwrap();
    e.refused(&["queue", "status"], b"", "say it once");
    assert!(server.received().is_empty());
}
