//! Shared test support: a throwaway database per test on each back end.
//!
//! SQLite always; PostgreSQL when `DIGESTD_TEST_DATABASE_URL` is set, in a
//! fresh database per test, dropped when the test ends. When the variable is
//! set and the server is unreachable, or when `DIGESTD_TEST_POSTGRES=required`
//! and the variable is not set, the test fails loudly.
//!
//! `cli` is the harness the black-box tests of the binary share
//! (`tests/cli_*.rs`): a temporary directory and SQLite database per test.
//! `browser` is headless Chromium over WebDriver (`tests/it/browser.rs`).

pub mod alone;
pub mod atom;
pub mod browser;
pub mod cli;
pub mod delivery;
pub mod digest;
pub mod http;
pub mod pages;
pub mod prosody;
pub mod seen;
pub mod signup;
pub mod smtp;
pub mod smtp_tls;
pub mod source;
pub mod storage;
pub mod synapse;
pub mod web;

use std::sync::atomic::{AtomicUsize, Ordering};

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use digestd::db::{Db, DbConn};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// The test binary's one tokio runtime, as the digestd binary has one:
/// the SMTP and XMPP listeners of the tests' deliveries run on it.
pub fn rt() -> &'static tokio::runtime::Handle {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the tests' runtime")
    })
    .handle()
}

pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

impl TestDb {
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}/test.db", dir.path().display());
        TestDb {
            url,
            _dir: Some(dir),
            pg: None,
        }
    }

    /// A fresh PostgreSQL database, or `None` when the suite is not asked
    /// to run on PostgreSQL. Asked and not able to is a failure: with
    /// `DIGESTD_TEST_POSTGRES=required` (set by `.ci/run`) and no
    /// `DIGESTD_TEST_DATABASE_URL`, or with a URL whose server cannot be
    /// reached, the test panics instead of passing without having run.
    pub fn postgres() -> Option<Self> {
        let Ok(base) = std::env::var("DIGESTD_TEST_DATABASE_URL") else {
            if std::env::var("DIGESTD_TEST_POSTGRES").as_deref() == Ok("required") {
                panic!("DIGESTD_TEST_POSTGRES=required but DIGESTD_TEST_DATABASE_URL is not set");
            }
            return None;
        };
        let name = format!(
            "digestd_t_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let mut admin = PgConnection::establish(&base).unwrap_or_else(|e| {
            panic!("DIGESTD_TEST_DATABASE_URL is set but PostgreSQL is unreachable: {e}")
        });
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create test database");
        let (prefix, _) = base.rsplit_once('/').expect("URL has a database");
        Some(TestDb {
            url: format!("{prefix}/{name}"),
            _dir: None,
            pg: Some((base, name)),
        })
    }

    /// A database someone else made and keeps (e.g. a CLI test's file).
    pub fn existing(url: &str) -> Self {
        TestDb {
            url: url.to_string(),
            _dir: None,
            pg: None,
        }
    }

    pub fn open(&self) -> Db {
        Db::open(&self.url, 4).expect("open test database")
    }

    pub fn conn(&self) -> DbConn {
        let mut c = digestd::db::DbUrl::parse(&self.url)
            .unwrap()
            .connect()
            .unwrap();
        c.migrate().unwrap();
        c
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((base, name)) = &self.pg {
            if let Ok(mut admin) = PgConnection::establish(base) {
                let _ =
                    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// Declares each listed `fn name(db: &TestDb)` as a test on SQLite and on
/// PostgreSQL (the latter a no-op when DIGESTD_TEST_DATABASE_URL is unset).
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $name() { super::$name(&$crate::common::TestDb::sqlite()); } )*
        }
        mod postgres {
            $( #[test] fn $name() {
                match $crate::common::TestDb::postgres() {
                    Some(db) => super::$name(&db),
                    None => eprintln!("skipped: DIGESTD_TEST_DATABASE_URL is not set"),
                }
            } )*
        }
    };
}

pub fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// Runs the digestd binary on database `url` with `args` (global flags
/// first, then the command) and `stdin` on its input, as a client system
/// would; it must succeed. Returns what it printed.
pub fn digestd_on(url: &str, args: &[&str], stdin: &[u8]) -> String {
    let (code, out, err) = digestd_run(url, args, stdin);
    assert_eq!(code, 0, "digestd {args:?}: {err}");
    out
}

/// [`digestd_on`] whatever the outcome: exit code, stdout, stderr.
pub fn digestd_run(url: &str, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .args(["--db", url])
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("DIGESTD_DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("digestd runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (
        out.status.code().expect("an exit code"),
        text(out.stdout),
        text(out.stderr),
    )
}

/// Runs the digestd binary with `--config config` and `args`, in the
/// config's directory.
pub fn digestd_with_config(config: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(config.parent().expect("a file in a directory"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap()
}

/// A daily digest of one change, composed by the real tick: `party`
/// follows a new collection on `channel` at `hour` local, someone else adds
/// an event titled `title` the day before, and the tick at `tick_at` (the
/// subscription's hour) posts one digest. Returns the digest's text for
/// the channel (`message_chat` for xmpp, `message_sms` for sms; nothing
/// for webhook, whose document `tests/it/webhook.rs` reads as posted).
pub fn one_change_digest(
    c: &mut DbConn,
    party: &str,
    channel: &str,
    hour: i64,
    title: &str,
    tick_at: &str,
) -> String {
    let cal = digestd::items::create_collection(c, at("2026-11-01T00:00:00Z"), "Rota", None)
        .unwrap()
        .uuid;
    digestd::manage::subscribe(
        c,
        at("2026-11-22T00:00:00Z"),
        &digestd::subscriptions::SubscribeRequest {
            party: party.into(),
            frequency: "daily".into(),
            kind: "modification".into(),
            collection: Some(cal.clone()),
            hour: Some(hour),
            channels: channel.split(',').map(String::from).collect(),
            ..Default::default()
        },
    )
    .unwrap();
    let when = "2026-11-22T15:00:00Z";
    digestd::items::put_item(
        c,
        at(when),
        &digestd::items::ItemInput {
            uuid: uuid::Uuid::from_u128(7).to_string(),
            collection: Some(cal),
            kind: "event".into(),
            title: title.into(),
            start: Some("2026-11-24T21:00:00Z".into()),
            actor: "ops".into(),
            at: Some(when.into()),
            ..Default::default()
        },
    )
    .unwrap();
    let mut comp = digestd::digest::Composer::new(
        &digestd::config::DigestConfig::default(),
        &digestd::config::EmailConfig::default(),
    )
    .unwrap();
    let runs = digestd::schedule::tick::tick(c, at(tick_at), &mut comp).unwrap();
    assert_eq!(runs.len(), 1);
    if !matches!(channel, "xmpp" | "sms") {
        // The webhook and its presets: the document is read from the post.
        return String::new();
    }
    let b = digest::bodies(c).remove(0);
    let text = match channel {
        "xmpp" => b.chat,
        _ => b.sms,
    };
    let text = text.expect("the digest has a text for the channel");
    assert!(text.contains(title), "{text}");
    text
}
