//! Start-up failures of the long-running commands (`serve`, `web`, `queue
//! run`) with the SMTP transport configured: each is one line on stderr
//! naming what failed, exit 2, and no panic — the SMTP transport's own
//! runtime used to panic when it was dropped inside `serve`'s.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A config with the SMTP transport (to a port nothing listens on: no
/// connection is made before the first message) and `extra` appended.
fn config(dir: &Path, extra: &str) -> std::path::PathBuf {
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let p = dir.join("digestd.toml");
    std::fs::write(
        &p,
        format!(
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://127.0.0.1:{port}\"\n\
             from = \"digests@example.org\"\n{extra}"
        ),
    )
    .unwrap();
    p
}

/// Runs `digestd --config CFG --db sqlite://t.db ARGS` and waits at most a
/// minute (a server that started would never end by itself).
fn run(dir: &Path, cfg: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir)
        .arg("--config")
        .arg(cfg)
        .args(["--db", "sqlite://t.db"])
        .args(args)
        .env_remove("DIGESTD_DATABASE_URL")
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("{args:?} did not fail at start-up");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn assert_one_line(out: &Output, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines.last().copied().unwrap_or("");
    assert!(
        last.starts_with("digestd: ") && last.contains(needle),
        "{what}: want one line naming {needle:?}, got {err}"
    );
    // Only the error line, or log lines before it (serve logs at info).
    assert!(
        lines.iter().filter(|l| l.starts_with("digestd: ")).count() == 1,
        "{what}: {err}"
    );
}

fn init(dir: &Path, cfg: &Path) {
    let out = run(dir, cfg, &["init"]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_busy_http_port_is_one_line_and_exit_2_for_serve_and_web() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        &format!("[http]\nenabled = true\nlisten = \"{addr}\"\n"),
    );
    init(dir.path(), &cfg);
    for cmd in ["serve", "web"] {
        let out = run(dir.path(), &cfg, &[cmd]);
        assert_one_line(&out, "http.listen", cmd);
    }
}

#[test]
fn a_journal_directory_that_cannot_be_made_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // A directory under a regular file cannot be made.
    std::fs::write(dir.path().join("file"), "").unwrap();
    let journal = dir.path().join("file").join("journal");
    let cfg = config(
        dir.path(),
        &format!(
            "[queue]\njournal_dir = \"{}\"\n[http]\nenabled = false\n",
            journal.display()
        ),
    );
    init(dir.path(), &cfg);
    for args in [&["serve"][..], &["queue", "run"][..]] {
        let out = run(dir.path(), &cfg, args);
        assert_one_line(&out, "queue.journal_dir", &format!("{args:?}"));
    }
}
