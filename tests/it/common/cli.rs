//! The harness for black-box tests of the `digestd` binary, shared by the
//! `cli_*` test files: every test runs the real executable against a
//! throwaway SQLite database in its own temporary directory (also its
//! working directory, so nothing lands in the repo).
//!
//! Bad input must give exit code 2 and write nothing: [`Env::refused`]
//! compares the row count of every table the command could touch before
//! and after.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use digestd::db::schema;
use serde_json::{json, Value};

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A temporary directory holding an empty config file and the database.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub db_path: PathBuf,
    pub url: String,
}

impl Env {
    /// A fresh directory; the database does not exist yet.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("digestd.toml");
        std::fs::write(&config, "").expect("write empty config");
        let db_path = dir.path().join("t.db");
        let url = format!("sqlite://{}", db_path.display());
        Env {
            dir,
            config,
            db_path,
            url,
        }
    }

    /// A fresh directory with an initialised database.
    pub fn init() -> Self {
        let env = Env::new();
        let out = env.ok(&["init"]);
        assert!(out.starts_with("database ready"), "{out}");
        env
    }

    /// `digestd` with exactly `args` (no --config/--db added), in the
    /// directory, with no `DIGESTD_*` variable and no `RUST_LOG`.
    pub fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
        cmd.args(args).current_dir(self.dir.path());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DIGESTD_") {
                cmd.env_remove(key);
            }
        }
        cmd.env_remove("RUST_LOG");
        cmd
    }

    /// Runs `digestd` with exactly `args` (no --config/--db added).
    pub fn run_raw<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> Out {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn digestd");
        let mut pipe = child.stdin.take().expect("stdin");
        let input = stdin.to_vec();
        // A writer thread, so a child that stops reading (input too large)
        // cannot deadlock us; its EPIPE is expected and ignored.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
        let out = child.wait_with_output().expect("wait digestd");
        writer.join().expect("stdin writer");
        Out {
            code: out.status.code().expect("exited normally, not by a signal"),
            stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `args` after `--config <config> --db <url>`.
    fn with_config<'s, S: AsRef<OsStr>>(&'s self, args: &'s [S]) -> Vec<&'s OsStr> {
        let mut all: Vec<&OsStr> = vec![
            OsStr::new("--config"),
            self.config.as_os_str(),
            OsStr::new("--db"),
            OsStr::new(&self.url),
        ];
        all.extend(args.iter().map(AsRef::as_ref));
        all
    }

    /// Runs `digestd --config <empty> --db <url> args…` with `stdin`.
    pub fn run_in<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> Out {
        self.run_raw(&self.with_config(args), stdin)
    }

    /// [`Env::command`] of `digestd --config <config> --db <url> args…`.
    pub fn command_in<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        self.command(&self.with_config(args))
    }

    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Out {
        self.run_in(args, b"")
    }

    /// Runs and requires success with a clean stderr; returns stdout.
    pub fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        self.ok_in(args, b"")
    }

    pub fn ok_in<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> String {
        let out = self.run_in(args, stdin);
        assert_eq!(out.code, 0, "{:?} failed: {out:?}", os_args(args));
        assert_eq!(out.stderr, "", "{:?} wrote to stderr", os_args(args));
        out.stdout
    }

    /// Row counts of every table a command could write.
    pub fn snapshot(&self) -> BTreeMap<&'static str, i64> {
        assert!(self.db_path.exists(), "snapshot needs an existing database");
        let path = self.db_path.to_str().expect("UTF-8 path");
        let c = &mut SqliteConnection::establish(path).expect("open the test database");
        let n = |r: QueryResult<i64>| r.expect("count rows");
        BTreeMap::from([
            // Besides the system party the digests migration creates.
            (
                "parties",
                n(schema::parties::table
                    .filter(schema::parties::name.ne("digestd"))
                    .count()
                    .get_result(c)),
            ),
            ("users", n(schema::users::table.count().get_result(c))),
            (
                "group_prefs",
                n(schema::group_prefs::table.count().get_result(c)),
            ),
            (
                "contact_points",
                n(schema::contact_points::table.count().get_result(c)),
            ),
            (
                "memberships",
                n(schema::memberships::table.count().get_result(c)),
            ),
            (
                "collections",
                n(schema::collections::table.count().get_result(c)),
            ),
            ("items", n(schema::items::table.count().get_result(c))),
            (
                "api_tokens",
                n(schema::api_tokens::table.count().get_result(c)),
            ),
            (
                "collection_tickets",
                n(schema::collection_tickets::table.count().get_result(c)),
            ),
            (
                "collection_items",
                n(schema::collection_items::table.count().get_result(c)),
            ),
            (
                "modifications",
                n(schema::modifications::table.count().get_result(c)),
            ),
            (
                "modification_values",
                n(schema::modification_values::table.count().get_result(c)),
            ),
            (
                "subscriptions",
                n(schema::subscriptions::table.count().get_result(c)),
            ),
            (
                "nt_requests",
                n(schema::nt_requests::table.count().get_result(c)),
            ),
            (
                "nt_messages",
                n(schema::nt_messages::table.count().get_result(c)),
            ),
            ("nt_queue", n(schema::nt_queue::table.count().get_result(c))),
            (
                "delivery_log",
                n(schema::delivery_log::table.count().get_result(c)),
            ),
            (
                "email_bounces",
                n(schema::email_bounces::table.count().get_result(c)),
            ),
            (
                "subscription_optouts",
                n(schema::subscription_optouts::table.count().get_result(c)),
            ),
            (
                "retired_codes",
                n(schema::retired_codes::table.count().get_result(c)),
            ),
        ])
    }

    pub fn count(&self, table: &str) -> i64 {
        self.snapshot()[table]
    }

    /// Runs a command that must be refused with exit 2, a single
    /// `digestd: …` line containing `needle`, and no row written.
    pub fn refused<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8], needle: &str) -> Out {
        let before = self.snapshot();
        let out = self.run_in(args, stdin);
        assert_refused(&out, needle, &os_args(args));
        assert_eq!(
            self.snapshot(),
            before,
            "{:?} was refused but wrote rows",
            os_args(args)
        );
        out
    }

    /// Like [`Env::refused`], for clap's own usage errors (one line too).
    pub fn usage_error<S: AsRef<OsStr>>(&self, args: &[S]) -> Out {
        let before = self.snapshot();
        let out = self.run(args);
        assert_usage_error(&out, &os_args(args));
        assert_eq!(self.snapshot(), before, "{:?} wrote rows", os_args(args));
        out
    }

    pub fn add_user(&self, name: &str, extra: &[&str]) {
        let mut args = vec!["user", "add", name, "--tz", "UTC"];
        args.extend_from_slice(extra);
        let out = self.ok(&args);
        assert_integer_last_line(&out);
    }

    /// The operator `ops` (UTC, ops@example.com) and `name` in `tz` at
    /// `email`: the two ends of most notification tests.
    pub fn ops_and(&self, name: &str, tz: &str, email: &str) {
        self.add_user("ops", &["--email", "ops@example.com"]);
        let mut args = vec!["user", "add", name, "--tz", tz];
        args.extend_from_slice(&["--email", email]);
        assert_integer_last_line(&self.ok(&args));
    }

    /// `notify --from FROM --to TO --subject S --message M` with `extra`
    /// arguments; the request's id.
    pub fn notify(
        &self,
        from: &str,
        to: &str,
        subject: &str,
        message: &str,
        extra: &[&str],
    ) -> String {
        let mut args = vec!["notify", "--from", from, "--to", to];
        args.extend_from_slice(&["--subject", subject, "--message", message]);
        args.extend_from_slice(extra);
        let out = self.ok(&args);
        out.lines().last().unwrap().trim().to_string()
    }

    /// `request show ID --json`.
    pub fn request_json(&self, id: &str) -> Value {
        serde_json::from_str(&self.ok(&["request", "show", id, "--json"])).unwrap()
    }

    pub fn add_group(&self, name: &str) {
        assert_integer_last_line(&self.ok(&["group", "add", name]));
    }

    pub fn add_member(&self, group: &str, member: &str) {
        let out = self.ok(&["group", "add-member", group, member]);
        assert_eq!(out.trim(), format!("{member} is in {group}"));
    }

    /// Subscribes `party` at `now` to hourly digests of what changed in
    /// `collection`; returns the subscription's id.
    pub fn subscribe_hourly(&self, now: &str, party: &str, collection: &str) -> String {
        let args = [
            "--now",
            now,
            "subscribe",
            party,
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--collection",
            collection,
        ];
        let out = self.ok(&args);
        out.lines().last().expect("the id").to_string()
    }

    pub fn add_collection(&self, name: &str) -> String {
        let out = self.ok(&["collection", "add", name]);
        let uuid = out.lines().last().expect("a line").to_string();
        assert_uuid_shape(&uuid);
        uuid
    }

    pub fn users_json(&self, args: &[&str]) -> Vec<Value> {
        let out = self.ok(args);
        match serde_json::from_str::<Value>(&out).expect("valid JSON") {
            Value::Array(v) => v,
            other => panic!("expected a JSON array, got {other}"),
        }
    }

    pub fn usernames(&self, args: &[&str]) -> Vec<String> {
        self.users_json(args)
            .iter()
            .map(|u| u["username"].as_str().expect("username").to_string())
            .collect()
    }
}

pub fn os_args<S: AsRef<OsStr>>(args: &[S]) -> Vec<String> {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect()
}

/// Exit 2, nothing on stdout, and exactly one `digestd: …` line on stderr
/// that mentions `needle` and carries no control or line-separator
/// character that a terminal or a log reader would act on.
pub fn assert_refused(out: &Out, needle: &str, what: &[String]) {
    assert_eq!(out.code, 2, "{what:?}: want exit 2, got {out:?}");
    assert_eq!(out.stdout, "", "{what:?}: stdout should be empty");
    let Some(line) = out.stderr.strip_suffix('\n') else {
        panic!("{what:?}: stderr should be one newline-terminated line: {out:?}");
    };
    assert!(
        !line.contains('\n'),
        "{what:?}: stderr has more than one line: {:?}",
        out.stderr
    );
    assert!(
        !line
            .chars()
            .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')),
        "{what:?}: stderr carries a raw control/line-separator character: {line:?}"
    );
    assert!(
        line.starts_with("digestd: "),
        "{what:?}: error should start with 'digestd: ': {line:?}"
    );
    assert!(
        line.contains(needle),
        "{what:?}: error should mention {needle:?}: {line:?}"
    );
}

/// clap's usage errors: exit 2, nothing on stdout, `error: …` on stderr.
pub fn assert_usage_error(out: &Out, what: &[String]) {
    assert_eq!(out.code, 2, "{what:?}: want exit 2, got {out:?}");
    assert_eq!(out.stdout, "", "{what:?}: stdout should be empty");
    // clap's own message, whole: what is wrong, the usage, where help is.
    assert!(
        out.stderr.starts_with("error: ") && out.stderr.contains("--help"),
        "{what:?}: want clap's usage error: {:?}",
        out.stderr
    );
}

pub fn assert_integer_last_line(out: &str) -> i64 {
    let last = out.lines().last().expect("output has a line");
    last.parse::<i64>()
        .unwrap_or_else(|_| panic!("last line should be an integer id: {out:?}"))
}

pub fn assert_uuid_shape(s: &str) {
    assert_eq!(s.len(), 36, "{s:?} is not a UUID");
    for (i, c) in s.chars().enumerate() {
        if [8, 13, 18, 23].contains(&i) {
            assert_eq!(c, '-', "{s:?}: want '-' at {i}");
        } else {
            assert!(
                c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
                "{s:?}: want lower-case hex at {i}"
            );
        }
    }
}

pub const ITEM_A: &str = "11111111-1111-4111-8111-111111111111";
pub const ITEM_B: &str = "22222222-2222-4222-8222-222222222222";
pub const NO_SUCH_COLLECTION: &str = "99999999-9999-4999-8999-999999999999";

/// One good `record` line as a JSON value, to be edited by tests.
pub fn mod_line(collection: &str, item: &str, action: &str, at: &str) -> Value {
    json!({
        "collection": collection,
        "item": item,
        "actor": "alice",
        "action": action,
        "at": at,
        "title": "Team lunch",
        "kind": "event",
        "changes": [{"attribute": "title", "old": "Lunch", "new": "Team lunch"}],
    })
}

pub fn lines(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// An initialised database with user `alice` (email only) and one collection.
pub fn world() -> (Env, String) {
    let env = Env::init();
    env.add_user("alice", &["--email", "alice@example.com"]);
    let c = env.add_collection("Calendar");
    (env, c)
}

pub fn item_json(collection: &str, title: &str) -> Value {
    json!({
        "uuid": ITEM_A,
        "collection": collection,
        "kind": "event",
        "title": title,
        "start": "2026-03-01T12:00:00Z",
        "actor": "alice",
    })
}

/// ops (ops@example.com) and ann (Europe/Paris, ann@example.com), for the
/// notification tests.
pub fn notify_world() -> Env {
    world_with_ann_at("ann@example.com")
}

/// ops (ops@example.com) and ann (Europe/Paris) at `ann_email`.
pub fn world_with_ann_at(ann_email: &str) -> Env {
    let env = Env::init();
    env.ops_and("ann", "Europe/Paris", ann_email);
    env
}
