//! Start-up failures: each is one line on stderr naming what failed, exit
//! 2, no panic, and nothing written.
//!
//! Here, those of the long-running commands (`serve`, `web`, `queue run`)
//! with the SMTP transport configured (its listener, on the process's
//! runtime, is dropped inside `serve`'s async code when start-up fails,
//! and must not block there); in [`settings`], a settings file or
//! variable that is refused, and a variable that is warned about; in
//! [`database`], a database that is not there or cannot be opened.

use crate::common;
#[path = "startup/database.rs"]
mod database;
#[path = "startup/settings.rs"]
mod settings;

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

/// Runs `digestd --config CFG --db sqlite://t.db ARGS` (a minute at most).
fn run(dir: &Path, cfg: &Path, args: &[&str]) -> Output {
    let cfg = cfg.to_str().unwrap();
    let all = [&["--config", cfg, "--db", "sqlite://t.db"][..], args].concat();
    digestd_in(dir, &all, &[("RUST_BACKTRACE", "1".as_ref())])
}

/// Runs `digestd ARGS` in `dir` with no `DIGESTD_*` variable but `vars`,
/// waiting at most a minute (a server that started would never end).
fn digestd_in(dir: &Path, args: &[&str], vars: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
    cmd.current_dir(dir)
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DIGESTD_") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(vars.iter().copied());
    let mut child = cmd.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("{args:?} did not end");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The one line on stderr of a refused command (exit 2, nothing on
/// stdout, no control character), without `digestd: `.
fn refusal(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: stdout {:?}", out.stdout);
    let line = err
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{what}: {err:?}"));
    assert!(!line.chars().any(char::is_control), "{what}: {err:?}");
    line.strip_prefix("digestd: ")
        .unwrap_or_else(|| panic!("{what}: {err:?}"))
        .to_string()
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
