//! DKIM: every email is signed (single and batched messages, non-ASCII
//! subjects, a digest with its thread and list headers, a forward digest
//! with its calendar), checked with an independent verifier — dkimpy, through
//! `tests/fixtures/dkim/verify.py`, the selector's TXT record given to it
//! instead of DNS — for RSA-2048 and Ed25519 keys made by `openssl` at test
//! time; a tampered message fails the same check; bad settings are
//! refused at start with exit 2 and one line.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use common::delivery::{notify, user, T0};
use common::smtp::FaultSmtp;
use common::{at, TestDb};
use digestd::config::EmailConfig;
use digestd::deliver::queue::{self, Delivery};

fn openssl(args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A new private key (PEM, PKCS#8 as `openssl genpkey` writes it) and the
/// `p=` of its DNS record.
fn key(dir: &Path, alg: &str) -> (PathBuf, String) {
    let path = dir.join(format!("{alg}.pem"));
    let p = path.to_str().unwrap();
    match alg {
        "rsa" => openssl(&[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            p,
        ]),
        _ => openssl(&["genpkey", "-algorithm", "ed25519", "-out", p]),
    };
    let spki = openssl(&["pkey", "-in", p, "-pubout", "-outform", "DER"]);
    // RSA publishes the SubjectPublicKeyInfo, Ed25519 the raw 32 bytes (RFC 8463).
    let public = if alg == "rsa" {
        &spki[..]
    } else {
        &spki[spki.len() - 32..]
    };
    (
        path,
        base64::engine::general_purpose::STANDARD.encode(public),
    )
}

/// What the verifier says of each message: `true` when it passes.
fn verify(dir: &Path, record: &str, messages: &[Vec<u8>]) -> Vec<bool> {
    let paths: Vec<PathBuf> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let p = dir.join(format!("m{i}.eml"));
            std::fs::write(&p, m).unwrap();
            p
        })
        .collect();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dkim/verify.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("mail2026._domainkey.example.org")
        .arg(record)
        .args(&paths)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "the verifier (pip install dkimpy pynacl) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<bool> = text.lines().map(|l| l.ends_with(" True")).collect();
    assert_eq!(got.len(), messages.len(), "{text}");
    if got.iter().any(|ok| !ok) {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        eprintln!("{}", String::from_utf8_lossy(&messages[0]));
    }
    got
}

/// A digest (its thread and list headers) and a forward digest (its
/// calendar attached), sent through `d` to `server`, verify with `record`.
fn digests_verify(
    c: &mut digestd::db::DbConn,
    d: &mut Delivery,
    server: &FaultSmtp,
    dir: &Path,
    record: &str,
) {
    // A digest, with its thread and list headers, verifies too.
    use common::digest::{calendar_week, calendar_world, composer, daily, subscribe};
    let (cal, _) = calendar_world(c);
    subscribe(c, daily("ann", &cal));
    calendar_week(c, &cal);
    let t = at("2026-11-22T17:00:00Z");
    digestd::schedule::tick::tick(c, t, &mut composer()).unwrap();
    queue::run_pass(c, d, t).unwrap();
    let digest = server.received().pop().unwrap().data;
    let head = String::from_utf8_lossy(&digest);
    assert!(
        head.contains("\r\nList-Id: ") && head.contains("\r\nIn-Reply-To: <nt.thread."),
        "{head}"
    );
    assert_eq!(verify(dir, record, &[digest]), [true], "a digest");
    // A forward digest, its calendar attached, verifies too.
    use common::digest::{item, put};
    put(
        c,
        &digestd::items::ItemInput {
            tz: Some("America/Los_Angeles".into()),
            ..item(
                9,
                &cal,
                "Café; plan, Q1 \\ 東京",
                "2026-11-23T01:00:00Z",
                "gr24",
                "2026-11-22T16:00:00Z",
            )
        },
    );
    let forward = digestd::subscriptions::SubscribeRequest {
        kind: "forward".into(),
        ..daily("ann", &cal)
    };
    subscribe(c, forward);
    digestd::schedule::tick::tick(c, t, &mut composer()).unwrap();
    queue::run_pass(c, d, t).unwrap();
    let digest = server.received().pop().unwrap().data;
    let text = String::from_utf8_lossy(&digest);
    assert!(
        text.contains("multipart/mixed")
            && text.contains("text/calendar; method=PUBLISH")
            && text.contains("SUMMARY:Caf"),
        "{text}"
    );
    assert_eq!(verify(dir, record, &[digest]), [true], "with a calendar");
}

/// `test-alert` signs with `key` too: the message it writes under `dir`
/// verifies with `record`.
fn test_alert_verifies(dir: &Path, key: &Path, alg: &str, record: &str) {
    let alert_dir = dir.join(format!("alert-{alg}"));
    let line = queue::test_alert(
        &EmailConfig {
            transport: digestd::config::EmailTransport::Dir,
            dir: alert_dir.display().to_string(),
            dkim_domain: "example.org".into(),
            dkim_selector: "mail2026".into(),
            dkim_key: key.display().to_string(),
            ..EmailConfig::default()
        },
        crate::common::rt(),
        "ops@example.com",
        at(T0),
    )
    .unwrap();
    let alert: Vec<Vec<u8>> = std::fs::read_dir(&alert_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(alert.len(), 1, "{line}");
    assert_eq!(verify(dir, record, &alert), [true], "{alg} test-alert");
}

fn signed_messages_pass_an_independent_verifier(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    for alg in ["rsa", "ed25519"] {
        let mut c = db.conn();
        let (key, p) = key(dir.path(), alg);
        let server = FaultSmtp::start();
        let mut d = Delivery::new(
            &EmailConfig {
                transport: digestd::config::EmailTransport::Smtp,
                smtp_url: server.url(),
                dir: dir.path().join("outbox").display().to_string(),
                dkim_domain: "example.org".into(),
                dkim_selector: "mail2026".into(),
                dkim_key: key.display().to_string(),
                ..EmailConfig::default()
            },
            crate::common::rt(),
        )
        .unwrap();
        let (amy, bob) = (format!("amy-{alg}"), format!("bob-{alg}"));
        let sys = format!("sys-{alg}");
        user(&mut c, &sys, &format!("{sys}@example.com"));
        user(&mut c, &amy, &format!("ok.{amy}@example.com"));
        user(&mut c, &bob, &format!("ok.{bob}@example.com"));
        // One message alone, and two batched into one.
        notify(
            &mut c,
            &sys,
            &amy,
            "Änderungen in München — 3 neue Termine ✓",
        );
        notify(&mut c, &sys, &bob, "Réunion déplacée à 15 h");
        notify(&mut c, &sys, &bob, "日程の変更");
        queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
        let got: Vec<Vec<u8>> = server.received().into_iter().map(|m| m.data).collect();
        assert_eq!(got.len(), 2, "one single and one batched message");
        let record = format!(
            "v=DKIM1; k={}; p={p}",
            if alg == "rsa" { "rsa" } else { "ed25519" }
        );
        for m in &got {
            let head = String::from_utf8_lossy(m);
            assert!(head.contains("DKIM-Signature:"), "{head}");
            assert!(head.contains("d=example.org") && head.contains("s=mail2026"));
        }
        assert_eq!(verify(dir.path(), &record, &got), [true, true], "{alg}");
        if alg == "rsa" {
            digests_verify(&mut c, &mut d, &server, dir.path(), &record);
        }
        // The check can fail: a changed body, or another key's record.
        let mut tampered = got[0].clone();
        let n = tampered.len();
        tampered[n - 5] ^= 0x01;
        let elsewhere = dir.path().join("other");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let (_, other) = self::key(&elsewhere, alg);
        let wrong = record.replace(&p, &other);
        assert_eq!(verify(dir.path(), &record, &[tampered]), [false]);
        assert_eq!(verify(dir.path(), &wrong, &got[..1]), [false]);
        test_alert_verifies(dir.path(), &key, alg, &record);
    }
}

backend_tests!(signed_messages_pass_an_independent_verifier);

/// A bad key or incomplete settings stop any command at start: exit 2,
/// one line, nothing else done.
#[test]
fn bad_dkim_settings_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(
        &bad,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let db = format!("sqlite://{}/t.db", dir.path().display());
    for (domain, selector, key, says) in [
        ("example.org", "s1", "/nonexistent.pem", "cannot read"),
        (
            "example.org",
            "s1",
            bad.to_str().unwrap(),
            "[email] dkim_key",
        ),
        ("example.org", "", "", "go together"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_digestd"))
            .current_dir(dir.path())
            .args(["--db", &db, "queue", "status"])
            .env_remove("DIGESTD_DATABASE_URL")
            .env("DIGESTD_EMAIL__DKIM_DOMAIN", domain)
            .env("DIGESTD_EMAIL__DKIM_SELECTOR", selector)
            .env("DIGESTD_EMAIL__DKIM_KEY", key)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!dir.path().join("t.db").exists(), "nothing opened");
    }
}
