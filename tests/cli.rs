//! Black-box tests of the `digestd` binary: every test runs the real
//! executable against a throwaway SQLite database in its own temporary
//! directory (also its working directory, so nothing lands in the repo).
//!
//! Bad input must give exit code 2 and write nothing: hostile cases compare
//! the row count of every table the command could touch before and after.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use digestd::db::schema;
use serde_json::{json, Value};

// ---------------------------------------------------------------- helpers

/// What one run of the binary produced.
#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A temporary directory holding an empty config file and the database.
struct Env {
    dir: tempfile::TempDir,
    config: PathBuf,
    db_path: PathBuf,
    url: String,
}

impl Env {
    /// A fresh directory; the database does not exist yet.
    fn new() -> Self {
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
    fn init() -> Self {
        let env = Env::new();
        let out = env.ok(&["init"]);
        assert!(out.starts_with("database ready"), "{out}");
        env
    }

    /// Runs `digestd` with exactly `args` (no --config/--db added).
    fn run_raw<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> Out {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_digestd"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DIGESTD_") {
                cmd.env_remove(key);
            }
        }
        cmd.env_remove("RUST_LOG");
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

    /// Runs `digestd --config <empty> --db <url> args…` with `stdin`.
    fn run_in<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> Out {
        let mut all: Vec<&OsStr> = vec![
            OsStr::new("--config"),
            self.config.as_os_str(),
            OsStr::new("--db"),
            OsStr::new(&self.url),
        ];
        all.extend(args.iter().map(AsRef::as_ref));
        self.run_raw(&all, stdin)
    }

    fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Out {
        self.run_in(args, b"")
    }

    /// Runs and requires success with a clean stderr; returns stdout.
    fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        self.ok_in(args, b"")
    }

    fn ok_in<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8]) -> String {
        let out = self.run_in(args, stdin);
        assert_eq!(out.code, 0, "{:?} failed: {out:?}", os_args(args));
        assert_eq!(out.stderr, "", "{:?} wrote to stderr", os_args(args));
        out.stdout
    }

    /// Row counts of every table a command could write.
    fn snapshot(&self) -> BTreeMap<&'static str, i64> {
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
        ])
    }

    fn count(&self, table: &str) -> i64 {
        self.snapshot()[table]
    }

    /// Runs a command that must be refused with exit 2, a single
    /// `digestd: …` line containing `needle`, and no row written.
    fn refused<S: AsRef<OsStr>>(&self, args: &[S], stdin: &[u8], needle: &str) -> Out {
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

    /// Like [`Env::refused`], for clap's own usage errors (multi-line).
    fn usage_error<S: AsRef<OsStr>>(&self, args: &[S]) -> Out {
        let before = self.snapshot();
        let out = self.run(args);
        assert_usage_error(&out, &os_args(args));
        assert_eq!(self.snapshot(), before, "{:?} wrote rows", os_args(args));
        out
    }

    fn add_user(&self, name: &str, extra: &[&str]) {
        let mut args = vec!["user", "add", name, "--tz", "UTC"];
        args.extend_from_slice(extra);
        let out = self.ok(&args);
        assert_integer_last_line(&out);
    }

    fn add_group(&self, name: &str) {
        assert_integer_last_line(&self.ok(&["group", "add", name]));
    }

    fn add_member(&self, group: &str, member: &str) {
        let out = self.ok(&["group", "add-member", group, member]);
        assert_eq!(out.trim(), format!("{member} is in {group}"));
    }

    fn add_collection(&self, name: &str) -> String {
        let out = self.ok(&["collection", "add", name]);
        let uuid = out.lines().last().expect("a line").to_string();
        assert_uuid_shape(&uuid);
        uuid
    }

    fn users_json(&self, args: &[&str]) -> Vec<Value> {
        let out = self.ok(args);
        match serde_json::from_str::<Value>(&out).expect("valid JSON") {
            Value::Array(v) => v,
            other => panic!("expected a JSON array, got {other}"),
        }
    }

    fn usernames(&self, args: &[&str]) -> Vec<String> {
        self.users_json(args)
            .iter()
            .map(|u| u["username"].as_str().expect("username").to_string())
            .collect()
    }
}

fn os_args<S: AsRef<OsStr>>(args: &[S]) -> Vec<String> {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect()
}

/// Exit 2, nothing on stdout, and exactly one `digestd: …` line on stderr
/// that mentions `needle` and carries no control or line-separator
/// character that a terminal or a log reader would act on.
fn assert_refused(out: &Out, needle: &str, what: &[String]) {
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
fn assert_usage_error(out: &Out, what: &[String]) {
    assert_eq!(out.code, 2, "{what:?}: want exit 2, got {out:?}");
    assert_eq!(out.stdout, "", "{what:?}: stdout should be empty");
    assert!(
        out.stderr.starts_with("error: "),
        "{what:?}: want a clap usage error: {:?}",
        out.stderr
    );
}

fn assert_integer_last_line(out: &str) -> i64 {
    let last = out.lines().last().expect("output has a line");
    last.parse::<i64>()
        .unwrap_or_else(|_| panic!("last line should be an integer id: {out:?}"))
}

fn assert_uuid_shape(s: &str) {
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

const ITEM_A: &str = "11111111-1111-4111-8111-111111111111";
const ITEM_B: &str = "22222222-2222-4222-8222-222222222222";
const NO_SUCH_COLLECTION: &str = "99999999-9999-4999-8999-999999999999";

/// One good `record` line as a JSON value, to be edited by tests.
fn mod_line(collection: &str, item: &str, action: &str, at: &str) -> Value {
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

fn lines(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// An initialised database with user `alice` (email only) and one collection.
fn world() -> (Env, String) {
    let env = Env::init();
    env.add_user("alice", &["--email", "alice@example.com"]);
    let c = env.add_collection("Calendar");
    (env, c)
}

fn item_json(collection: &str, title: &str) -> Value {
    json!({
        "uuid": ITEM_A,
        "collection": collection,
        "kind": "event",
        "title": title,
        "start": "2026-03-01T12:00:00Z",
        "actor": "alice",
    })
}

// ------------------------------------------------------------------- help

#[test]
fn help_works_for_the_top_level_and_every_subcommand() {
    let env = Env::new();
    let cases: &[&[&str]] = &[
        &[],
        &["init"],
        &["user", "add"],
        &["user", "list"],
        &["group", "add"],
        &["group", "add-member"],
        &["group", "expand"],
        &["collection", "add"],
        &["item", "put"],
        &["record"],
        &["subscribe"],
        &["purge"],
        &["queue", "purge"],
        &["demo"],
        &["bench", "ingest"],
    ];
    for path in cases {
        let mut args = path.to_vec();
        args.push("--help");
        let out = env.run_raw(&args, b"");
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert_eq!(out.stderr, "", "{args:?}");
        let usage = format!("Usage: digestd {}", path.join(" "));
        assert!(
            out.stdout.contains(usage.trim_end()),
            "{args:?}: want {usage:?} in {}",
            out.stdout
        );
    }
    let top = env.run_raw(&["--help"], b"").stdout;
    for cmd in [
        "init",
        "user",
        "group",
        "collection",
        "item",
        "record",
        "subscribe",
        "purge",
        "demo",
        "bench",
    ] {
        assert!(top.contains(&format!("  {cmd} ")), "--help lists {cmd}");
    }
    assert!(!env.db_path.exists(), "--help must not create a database");
}

#[test]
fn version_prints_the_crate_version() {
    let out = Env::new().run_raw(&["--version"], b"");
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout.trim(),
        format!("digestd {}", env!("CARGO_PKG_VERSION"))
    );
}

// ------------------------------------------------------------ happy paths

#[test]
fn init_creates_the_database_and_can_run_twice() {
    let env = Env::new();
    assert!(!env.db_path.exists());
    let out = env.ok(&["init"]);
    assert_eq!(out, format!("database ready: {}\n", env.url));
    assert!(env.db_path.exists());
    assert_eq!(env.ok(&["init"]), out, "init is idempotent");
    assert!(
        env.snapshot().values().all(|n| *n == 0),
        "init adds no rows"
    );
    assert!(
        !env.dir.path().join("data").exists(),
        "the default database must not be touched"
    );
}

#[test]
fn user_list_json_is_an_empty_array_on_a_fresh_database() {
    let env = Env::init();
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_then_list_json_shows_every_field_normalised() {
    let env = Env::init();
    let out = env.ok(&[
        "user",
        "add",
        "alice",
        "--tz",
        "Europe/Paris",
        "--email",
        "Alice.B+tag@Example.COM",
        "--xmpp",
        "alice@Localhost",
        "--phone",
        "+14155550123",
        "--week-start",
        "sunday",
        "--daily-hour",
        "7",
        "--locale",
        "fr_FR",
    ]);
    let id = assert_integer_last_line(&out);
    env.add_user("bob", &[]);
    let users = env.users_json(&["user", "list", "--json"]);
    assert_eq!(users.len(), 2);
    let alice = &users[0];
    assert_eq!(alice["id"], json!(id));
    assert_eq!(alice["username"], "alice");
    assert_eq!(alice["timezone"], "Europe/Paris");
    assert_eq!(
        alice["email"], "Alice.B+tag@example.com",
        "domain lower-cased"
    );
    assert_eq!(alice["xmpp"], "alice@localhost");
    assert_eq!(alice["phone"], "+14155550123");
    assert_eq!(alice["week_start"], "sun");
    assert_eq!(alice["daily_hour"], 7);
    assert_eq!(alice["locale"], "fr-FR");
    let bob = &users[1];
    assert_eq!(bob["username"], "bob");
    assert_eq!(bob["timezone"], "UTC");
    assert_eq!(bob["week_start"], "mon", "default week start");
    assert_eq!(bob["daily_hour"], 8, "default daily hour");
    assert_eq!(bob["locale"], "en-US", "default locale");
    assert_eq!(bob["email"], Value::Null);
    assert_eq!(bob["xmpp"], Value::Null);
    assert_eq!(bob["phone"], Value::Null);
    assert_eq!(env.count("contact_points"), 3);
}

#[test]
fn nested_groups_expand_to_each_user_once() {
    let env = Env::init();
    for u in ["alice", "bob", "carol", "dave"] {
        env.add_user(u, &[]);
    }
    for g in ["team", "devs", "ops"] {
        env.add_group(g);
    }
    env.add_member("devs", "alice");
    env.add_member("devs", "bob");
    env.add_member("ops", "bob");
    env.add_member("ops", "carol");
    env.add_member("team", "devs");
    env.add_member("team", "ops");
    env.add_member("team", "alice"); // reachable directly and through devs
    env.add_member("team", "alice"); // adding twice is harmless
    assert_eq!(env.count("memberships"), 7);

    let team = env.users_json(&["group", "expand", "team", "--json"]);
    let names: Vec<&str> = team
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "bob", "carol"], "each user once, by name");
    assert_eq!(team[0]["timezone"], "UTC", "full user objects");
    assert_eq!(
        env.usernames(&["group", "expand", "devs", "--json"]),
        ["alice", "bob"]
    );
    assert_eq!(
        env.usernames(&["group", "expand", "ops", "--json"]),
        ["bob", "carol"]
    );
    assert_eq!(
        env.usernames(&["group", "expand", "dave", "--json"]),
        ["dave"],
        "a user expands to itself"
    );
    // Groups are not users.
    assert_eq!(
        env.usernames(&["user", "list", "--json"]),
        ["alice", "bob", "carol", "dave"]
    );
}

#[test]
fn group_add_with_its_own_email_prints_an_id() {
    let env = Env::init();
    let out = env.ok(&["group", "add", "staff", "--email", "staff@Example.org"]);
    assert_integer_last_line(&out);
    assert_eq!(env.count("parties"), 1);
    assert_eq!(env.count("contact_points"), 1);
    assert_eq!(env.count("users"), 0);
}

#[test]
fn collection_add_prints_a_fresh_uuid() {
    let env = Env::init();
    let a = env.add_collection("Calendar");
    let b = env.add_collection("Calendar");
    assert_ne!(a, b, "each collection gets its own UUID");
    assert_eq!(env.count("collections"), 2);
    let listed = env.ok(&["collection", "list"]);
    assert!(listed.contains(&a) && listed.contains(&b), "{listed}");
}

#[test]
fn subscribe_prints_integer_ids() {
    let (env, c) = world();
    env.add_user(
        "bob",
        &["--xmpp", "bob@localhost", "--phone", "+33612345678"],
    );
    env.add_group("team");
    let mut ids = Vec::new();
    for args in [
        vec![
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "modification",
            "--collection",
            c.as_str(),
        ],
        vec![
            "alice",
            "--frequency",
            "weekly",
            "--kind",
            "forward",
            "--all",
            "--hour",
            "6",
            "--day",
            "fri",
        ],
        vec![
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--all",
        ],
        vec![
            "bob",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            c.as_str(),
            "--channel",
            "xmpp,sms",
            "--hour",
            "0",
        ],
        vec![
            "team",
            "--frequency",
            "weekly",
            "--kind",
            "modification",
            "--all",
        ],
    ] {
        let mut full = vec!["subscribe"];
        full.extend(args);
        ids.push(assert_integer_last_line(&env.ok(&full)));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 5, "distinct ids: {ids:?}");
    assert_eq!(env.count("subscriptions"), 5);
}

#[test]
fn item_put_records_created_then_edited_then_nothing() {
    let (env, c) = world();
    let first = env.ok_in(
        &["item", "put"],
        item_json(&c, "Lunch").to_string().as_bytes(),
    );
    let v: Value = serde_json::from_str(&first).expect("JSON outcome");
    assert_eq!(v["uuid"], ITEM_A);
    assert_eq!(v["actions"], json!(["created"]));
    assert!(v["changes"]
        .as_array()
        .unwrap()
        .contains(&json!({"attribute": "title", "old": null, "new": "Lunch"})));
    assert_eq!(env.count("items"), 1);
    assert_eq!(env.count("collection_items"), 1);
    assert_eq!(env.count("modifications"), 1);

    let second = env.ok_in(
        &["item", "put"],
        item_json(&c, "Team lunch").to_string().as_bytes(),
    );
    let v: Value = serde_json::from_str(&second).expect("JSON outcome");
    assert_eq!(v["actions"], json!(["edited"]));
    assert_eq!(
        v["changes"],
        json!([{"attribute": "title", "old": "Lunch", "new": "Team lunch"}])
    );
    assert_eq!(env.count("modifications"), 2);

    let third = env.ok_in(
        &["item", "put"],
        item_json(&c, "Team lunch").to_string().as_bytes(),
    );
    let v: Value = serde_json::from_str(&third).expect("JSON outcome");
    assert_eq!(v["actions"], json!([]), "same state records nothing");
    assert_eq!(env.count("modifications"), 2);
    assert_eq!(env.count("items"), 1);
}

#[test]
fn record_prints_the_count_and_stores_each_line() {
    let (env, c) = world();
    let mut crlf = lines(&[mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z")]);
    crlf.insert(crlf.len() - 1, b'\r'); // a CRLF line is fine
    let mut input = crlf;
    input.extend(b"\n   \n"); // blank lines are skipped
    input.extend(lines(&[
        mod_line(&c, ITEM_A, "edited", "2026-01-01T10:00:00+02:00"),
        mod_line(&c, ITEM_B, "now", "2026-01-02T00:00:00.123456789Z"),
    ]));
    assert_eq!(env.ok_in(&["record"], &input), "3\n");
    assert_eq!(env.count("modifications"), 3);
    assert_eq!(env.count("modification_values"), 3);
    assert_eq!(env.ok_in(&["record"], b""), "0\n", "empty input records 0");
    assert_eq!(env.count("modifications"), 3);
}

#[test]
fn purge_deletes_only_older_modifications_and_prints_a_summary() {
    let (env, c) = world();
    let input = lines(&[
        mod_line(&c, ITEM_A, "created", "2020-01-01T00:00:00Z"),
        mod_line(&c, ITEM_A, "edited", "2020-01-02T00:00:00Z"),
        mod_line(&c, ITEM_B, "created", "2999-01-01T00:00:00Z"),
    ]);
    assert_eq!(env.ok_in(&["record"], &input), "3\n");
    let out = env.ok(&["purge", "--older-than", "90d"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("purged 2 modifications and 2 values older than "),
        "{out}"
    );
    assert_eq!(env.count("modifications"), 1);
    assert_eq!(env.count("modification_values"), 1);
    let again = env.ok(&["purge", "--older-than", "1w"]);
    assert!(
        again.starts_with("purged 0 modifications and 0 values"),
        "{again}"
    );
}

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
            "purged 1 finished requests, 1 queue rows and 1 delivery log rows from before "
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

// ------------------------------------------------------ hostile: user add

#[test]
fn user_add_refuses_invalid_timezones() {
    let env = Env::init();
    for tz in ["Mars/Phobos", "", "Europe/Paris\r\nX: y", "../etc/passwd"] {
        env.refused(&["user", "add", "bob", "--tz", tz], b"", "timezone");
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_invalid_emails() {
    let env = Env::init();
    let long = format!("{}@{}.com", "a".repeat(60), "b".repeat(235)); // 300 octets
    assert_eq!(long.len(), 300);
    for email in [
        "alice.example.com",
        "a@b.com\r\nBcc: x@y.com",
        "a@b.com\nBcc: x@y.com",
        "bøb@example.com",
        "alice@exämple.com",
        "\"alice\"@example.com",
        "alice@example",
        "alice@[127.0.0.1]",
        "",
        long.as_str(),
    ] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--email", email],
            b"",
            "invalid email address",
        );
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_invalid_jids() {
    let env = Env::init();
    for jid in [
        "alice@localhost/res",
        "@localhost",
        "localhost",
        " alice@localhost",
        "alice@localhost\r\n",
        "",
    ] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--xmpp", jid],
            b"",
            "invalid JID",
        );
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_invalid_phones() {
    let env = Env::init();
    for phone in [
        "14155550123",
        "+1415555012a",
        "+1234567890123456", // 16 digits
        "+0123456789",
        "+1 415 555 0123",
        "+",
    ] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--phone", phone],
            b"",
            "invalid phone number",
        );
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_with_one_bad_contact_writes_no_user_and_no_contact() {
    let env = Env::init();
    env.refused(
        &[
            "user",
            "add",
            "bob",
            "--tz",
            "UTC",
            "--email",
            "bob@example.com",
            "--xmpp",
            "bob@localhost",
            "--phone",
            "0612345678",
        ],
        b"",
        "invalid phone number",
    );
    assert_eq!(env.count("contact_points"), 0);
    assert_eq!(env.count("parties"), 0);
}

#[test]
fn user_add_refuses_bad_week_start() {
    let env = Env::init();
    for day in ["funday", "m", "mo", "0", "", "sun\n"] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--week-start", day],
            b"",
            "invalid day",
        );
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_daily_hour_out_of_range() {
    let env = Env::init();
    for hour in ["24", "-1", "100"] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--daily-hour", hour],
            b"",
            "invalid hour",
        );
    }
    env.usage_error(&["user", "add", "bob", "--tz", "UTC", "--daily-hour", "7am"]);
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_bad_locales() {
    let env = Env::init();
    for locale in ["", "e", "english", "12-US", "en-US\r\n", "en-$$", "en US"] {
        env.refused(
            &["user", "add", "bob", "--tz", "UTC", "--locale", locale],
            b"",
            "invalid locale",
        );
    }
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_bad_names() {
    let env = Env::init();
    let long = "a".repeat(65);
    for name in [
        "-rf",
        "a b",
        "al/ice",
        "ålice",
        "al\nice",
        "",
        long.as_str(),
    ] {
        // After `--`, clap hands even "-rf" to our validator.
        env.refused(
            &["user", "add", "--tz", "UTC", "--", name],
            b"",
            "invalid user name",
        );
    }
    for reserved in [
        &["user", "add", "--tz", "UTC", "DigestD"][..],
        &["group", "add", "digestd"],
    ] {
        env.refused(reserved, b"", "is reserved for digestd itself");
    }
    // Without `--`, "-rf" is an unknown flag to clap.
    env.usage_error(&["user", "add", "-rf", "--tz", "UTC"]);
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[cfg(unix)]
#[test]
fn user_add_refuses_a_non_utf8_argument() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::init();
    let args: [&OsStr; 5] = [
        OsStr::new("user"),
        OsStr::new("add"),
        OsStr::from_bytes(b"al\xffce"),
        OsStr::new("--tz"),
        OsStr::new("UTC"),
    ];
    env.usage_error(&args);
    assert_eq!(env.ok(&["user", "list", "--json"]).trim(), "[]");
}

#[test]
fn user_add_refuses_a_duplicate_name() {
    let env = Env::init();
    env.add_user("alice", &["--email", "alice@example.com"]);
    env.add_group("staff");
    env.refused(
        &[
            "user",
            "add",
            "alice",
            "--tz",
            "Asia/Tokyo",
            "--phone",
            "+14155550123",
        ],
        b"",
        "already exists",
    );
    env.refused(
        &["user", "add", "staff", "--tz", "UTC"],
        b"",
        "already exists",
    );
    let users = env.users_json(&["user", "list", "--json"]);
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["timezone"], "UTC", "the first alice is untouched");
    assert_eq!(users[0]["phone"], Value::Null);
}

// ---------------------------------------------------------- hostile: groups

#[test]
fn group_add_refuses_bad_names_emails_and_duplicates() {
    let env = Env::init();
    env.add_user("alice", &[]);
    env.refused(&["group", "add", "a b"], b"", "invalid group name");
    env.refused(&["group", "add", "--", "-rf"], b"", "invalid group name");
    env.refused(
        &[
            "group",
            "add",
            "staff",
            "--email",
            "staff@x.com\r\nBcc: y@z.com",
        ],
        b"",
        "invalid email address",
    );
    env.refused(&["group", "add", "alice"], b"", "already exists");
    env.add_group("staff"); // the refused "staff" left nothing behind
}

#[test]
fn group_add_member_refuses_cycles() {
    let env = Env::init();
    env.add_user("alice", &[]);
    for g in ["a", "b", "c"] {
        env.add_group(g);
    }
    env.add_member("a", "alice");
    env.add_member("a", "b");
    env.add_member("b", "c");
    env.refused(
        &["group", "add-member", "a", "a"],
        b"",
        "cannot contain itself",
    );
    env.refused(&["group", "add-member", "b", "a"], b"", "cycle"); // a→b→a
    env.refused(&["group", "add-member", "c", "a"], b"", "cycle"); // a→b→c→a
    env.refused(&["group", "add-member", "c", "b"], b"", "cycle"); // b→c→b
    assert_eq!(env.count("memberships"), 3);
    for g in ["a", "b", "c"] {
        // Expansion still terminates and is unchanged.
        let want: &[&str] = if g == "a" { &["alice"] } else { &[] };
        assert_eq!(env.usernames(&["group", "expand", g, "--json"]), want);
    }
}

#[test]
fn group_add_member_refuses_unknown_parties_and_user_as_group() {
    let env = Env::init();
    env.add_user("alice", &[]);
    env.add_user("bob", &[]);
    env.add_group("staff");
    env.refused(
        &["group", "add-member", "staff", "nobody"],
        b"",
        "no user or group named \"nobody\"",
    );
    env.refused(
        &["group", "add-member", "nogroup", "alice"],
        b"",
        "no user or group named \"nogroup\"",
    );
    env.refused(
        &["group", "add-member", "alice", "bob"],
        b"",
        "is a user, not a group",
    );
    assert_eq!(env.count("memberships"), 0);
}

#[test]
fn group_expand_refuses_an_unknown_group() {
    let env = Env::init();
    env.refused(
        &["group", "expand", "nobody", "--json"],
        b"",
        "no user or group named",
    );
}

// ------------------------------------------------------ hostile: collections

#[test]
fn collection_add_refuses_control_characters_empty_and_long_names() {
    let env = Env::init();
    let long = "x".repeat(1001);
    for (name, needle) in [
        ("Calendar\r\nBcc: x@y.com", "control character"),
        ("Cal\nendar", "control character"),
        ("Cal\tendar", "control character"),
        ("Cal\u{1b}[2Jendar", "control character"),
        ("   ", "is empty"),
        ("", "is empty"),
        (long.as_str(), "longer than"),
    ] {
        env.refused(&["collection", "add", name], b"", needle);
    }
    assert_eq!(env.ok(&["collection", "list", "--json"]).trim(), "[]");
}

// ------------------------------------------------------ hostile: subscribe

/// The "first hour" report: the same subscription twice was stored twice,
/// and every digest came twice.
#[test]
fn subscribe_refuses_a_twin_and_merges_new_channels() {
    let (env, c) = world();
    env.ok(&[
        "contact",
        "alice",
        "--channel",
        "sms",
        "--set",
        "+33612345678",
    ]);
    let sub = |extra: &[&str]| {
        let mut args = vec![
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "modification",
            "--collection",
            c.as_str(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let id = assert_integer_last_line(&env.ok(&sub(&[])));
    let named = format!("subscription {id}");
    // The same digest: refused, naming the subscription, nothing written.
    for extra in [
        &[][..],
        &["--hour", "8"],
        &["--channel", "email"],
        &["--send-empty"],
        &["--include-own", "--channel", "sms"],
    ] {
        let out = env.refused(&sub(extra), b"", &named);
        assert!(out.stderr.contains("already has this digest"), "{out:?}");
    }
    // Only the channels differ: merged.
    let out = env.ok(&sub(&["--channel", "sms"]));
    assert_eq!(
        out,
        format!("merged into subscription {id}: channels email,sms\n{id}\n")
    );
    assert_eq!(env.count("subscriptions"), 1);
    let list = env.ok(&["subscription", "list"]);
    assert!(list.contains("via email,sms"), "{list}");
    // Paused: refused, saying how to resume it.
    env.ok(&["subscription", "pause", &id.to_string()]);
    let out = env.refused(&sub(&["--channel", "sms"]), b"", &named);
    assert!(
        out.stderr
            .contains(&format!("digestd subscription resume {id}")),
        "{out:?}"
    );
    // Another hour is another digest.
    assert_integer_last_line(&env.ok(&sub(&["--hour", "9"])));
    assert_eq!(env.count("subscriptions"), 2);
}

#[test]
fn subscribe_refuses_bad_frequency_and_kind() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "minutely",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "invalid frequency",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "Daily",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "invalid frequency",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "digest",
            "--collection",
            &c,
        ],
        b"",
        "invalid kind",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_day_on_daily_and_hour_or_day_on_hourly() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--all",
            "--day",
            "mon",
        ],
        b"",
        "daily subscription takes --hour, not --day",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--collection",
            &c,
            "--hour",
            "3",
        ],
        b"",
        "hourly subscription",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--all",
            "--day",
            "tue",
        ],
        b"",
        "hourly subscription",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_bad_hour_and_day() {
    let (env, _c) = world();
    for hour in ["24", "-1"] {
        env.refused(
            &[
                "subscribe",
                "alice",
                "--frequency",
                "daily",
                "--kind",
                "forward",
                "--all",
                "--hour",
                hour,
            ],
            b"",
            "invalid hour",
        );
    }
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "weekly",
            "--kind",
            "forward",
            "--all",
            "--day",
            "funday",
        ],
        b"",
        "invalid day",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_needs_exactly_one_of_collection_and_all() {
    let (env, c) = world();
    env.usage_error(&[
        "subscribe",
        "alice",
        "--frequency",
        "daily",
        "--kind",
        "forward",
        "--collection",
        &c,
        "--all",
    ]);
    env.usage_error(&[
        "subscribe",
        "alice",
        "--frequency",
        "daily",
        "--kind",
        "forward",
    ]);
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_unknown_or_malformed_collection_and_unknown_party() {
    let (env, c) = world();
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            NO_SUCH_COLLECTION,
        ],
        b"",
        "no collection",
    );
    env.refused(
        &[
            "subscribe",
            "alice",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            "not-a-uuid",
        ],
        b"",
        "invalid collection UUID",
    );
    env.refused(
        &[
            "subscribe",
            "nobody",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--collection",
            &c,
        ],
        b"",
        "no user or group named",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

#[test]
fn subscribe_refuses_a_channel_the_user_has_no_address_for() {
    let (env, _c) = world(); // alice has only an email address
    env.add_user("bob", &[]); // bob has no address at all
    for (party, channel, needle) in [
        ("alice", "sms", "alice has no sms address"),
        ("alice", "xmpp", "alice has no xmpp address"),
        ("alice", "email,sms", "alice has no sms address"),
        ("bob", "email", "bob has no email address"),
        ("alice", "fax", "unknown channel"),
    ] {
        env.refused(
            &[
                "subscribe",
                party,
                "--frequency",
                "daily",
                "--kind",
                "forward",
                "--all",
                "--channel",
                channel,
            ],
            b"",
            needle,
        );
    }
    // bob's default channel is email, which he lacks.
    env.refused(
        &[
            "subscribe",
            "bob",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--all",
        ],
        b"",
        "bob has no email address",
    );
    assert_eq!(env.count("subscriptions"), 0);
}

// ---------------------------------------------------------- hostile: purge

#[test]
fn purge_refuses_bad_durations_before_touching_the_database() {
    let env = Env::new();
    for d in ["0d", "abc", "5y", "90", "d", "", "100001d", "-5d", "1.5d"] {
        let arg = format!("--older-than={d}");
        let out = env.run(&["purge", arg.as_str()]);
        assert_refused(&out, "invalid duration", std::slice::from_ref(&arg));
    }
    assert!(
        !env.db_path.exists(),
        "a refused purge must not create the database"
    );
}

#[test]
fn purge_with_a_bad_duration_deletes_nothing() {
    let (env, c) = world();
    let input = lines(&[mod_line(&c, ITEM_A, "created", "2020-01-01T00:00:00Z")]);
    assert_eq!(env.ok_in(&["record"], &input), "1\n");
    for d in ["0d", "abc", "5y"] {
        env.refused(&["purge", "--older-than", d], b"", "invalid duration");
    }
    assert_eq!(env.count("modifications"), 1);
}

// ------------------------------------------------- hostile: --db, --config

#[test]
fn db_url_must_be_sqlite_or_postgres() {
    let env = Env::new();
    for url in ["mysql://x", "sqlite://", "t.db", ""] {
        let out = env.run_raw(
            &[
                "--config",
                env.config.to_str().unwrap(),
                "--db",
                url,
                "init",
            ],
            b"",
        );
        assert_refused(&out, "database URL", &[url.to_string()]);
    }
    let entries: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, [OsStr::new("digestd.toml")], "nothing was created");
}

#[test]
fn bad_config_files_are_refused() {
    let env = Env::new();
    let dir = env.dir.path();
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("missing.toml", None, "config"),
        ("garbage.toml", Some("not toml at all ["), "config"),
        (
            "section.toml",
            Some("[nope]\nx = 1\n"),
            "config: unknown field",
        ),
        (
            "key.toml",
            Some("[database]\nunknown = 1\n"),
            "config: unknown field",
        ),
        (
            "pool.toml",
            Some("[database]\npool_size = 0\n"),
            "pool_size",
        ),
        (
            "batch.toml",
            Some("[record]\nbatch_size = 0\n"),
            "batch_size",
        ),
        (
            "url.toml",
            Some("[database]\nurl = \"mysql://x\"\n"),
            "database URL",
        ),
        (
            "type.toml",
            Some("[database]\npool_size = \"four\"\n"),
            "config",
        ),
        (
            "xmpp.toml",
            Some("[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\"\ntls = false\nserver = \"chat.example.com:5222\"\n"),
            "config: xmpp.tls",
        ),
        (
            "db.toml",
            Some("[email]\ntransport = \"db\"\ndb_path = \"out\\nbox.db\"\n"),
            "config: email.db_path",
        ),
    ];
    for (name, text, needle) in cases {
        let path = dir.join(name);
        if let Some(t) = text {
            std::fs::write(&path, t).unwrap();
        }
        let out = env.run_raw(
            &["--config", path.to_str().unwrap(), "--db", &env.url, "init"],
            b"",
        );
        assert_refused(&out, needle, &[name.to_string()]);
    }
    // A directory is not a config file either.
    let out = env.run_raw(
        &["--config", dir.to_str().unwrap(), "--db", &env.url, "init"],
        b"",
    );
    assert_refused(&out, "config", &["<dir>".to_string()]);
    assert!(
        !env.db_path.exists(),
        "a refused config must not create the database"
    );
    assert!(!dir.join("data").exists());
}

#[test]
fn bad_config_log_level_is_refused() {
    let env = Env::new();
    let path = env.dir.path().join("log.toml");
    std::fs::write(&path, "[log]\nlevel = \"[[[bad\"\n").unwrap();
    let out = env.run_raw(
        &["--config", path.to_str().unwrap(), "--db", &env.url, "init"],
        b"",
    );
    assert_refused(&out, "config", &["log.toml".to_string()]);
    assert!(!env.db_path.exists());
}

// --------------------------------------------------------- hostile: record

#[test]
fn record_is_all_or_nothing_and_names_every_bad_line() {
    let (env, c) = world();
    let input = lines(&[
        mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z"),
        mod_line(&c, ITEM_A, "exploded", "2026-01-01T10:00:00Z"),
        mod_line(&c, ITEM_B, "created", "2026-01-01T11:00:00Z"),
        mod_line(&c, ITEM_B, "edited", "yesterday"),
        mod_line(&c, ITEM_B, "now", "2026-01-01T12:00:00Z"),
    ]);
    let out = env.refused(&["record"], &input, "nothing was written");
    assert!(out.stderr.contains("2 of 5 lines"), "{}", out.stderr);
    assert!(
        out.stderr.contains("line 2: unknown action"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("line 4: invalid at"), "{}", out.stderr);
    for good in ["line 1:", "line 3:", "line 5:"] {
        assert!(!out.stderr.contains(good), "{good} is fine: {}", out.stderr);
    }
    assert_eq!(env.count("modifications"), 0);
    assert_eq!(env.count("modification_values"), 0);
}

#[test]
fn record_refuses_non_utf8_bytes_on_a_line() {
    let (env, c) = world();
    let mut input = lines(&[mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z")]);
    let second = mod_line(&c, ITEM_B, "created", "2026-01-01T09:00:00Z").to_string();
    let at = second.find("Team").expect("title in line");
    input.extend_from_slice(&second.as_bytes()[..at]);
    input.extend_from_slice(b"\xff\xfe\xc3"); // invalid UTF-8 inside the title
    input.extend_from_slice(&second.as_bytes()[at..]);
    input.push(b'\n');
    let out = env.refused(&["record"], &input, "line 2: not valid UTF-8");
    assert!(!out.stderr.contains("line 1"), "{}", out.stderr);
}

#[test]
fn record_refuses_a_line_over_one_mebibyte() {
    let (env, c) = world();
    let mut big = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    big["title"] = json!("x".repeat((1 << 20) + 10));
    let mut input = lines(&[mod_line(&c, ITEM_B, "created", "2026-01-01T09:00:00Z")]);
    input.extend(lines(&[big]));
    assert!(input.len() > 1 << 20);
    env.refused(&["record"], &input, "line 2: longer than 1048576 bytes");
}

#[test]
fn record_refuses_an_unknown_field() {
    let (env, c) = world();
    let mut line = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    line["priority"] = json!("high");
    env.refused(&["record"], &lines(&[line]), "unknown field");
    let mut change = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    change["changes"][0]["was"] = json!("x");
    env.refused(&["record"], &lines(&[change]), "unknown field");
}

#[test]
fn record_refuses_a_duplicated_attribute() {
    let (env, c) = world();
    let mut twice = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    twice["changes"] = json!([
        {"attribute": "title", "old": "a", "new": "b"},
        {"attribute": "title", "old": "b", "new": "c"},
    ]);
    env.refused(&["record"], &lines(&[twice]), "changed twice");
    let mut padded = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    padded["changes"] = json!([
        {"attribute": "title", "old": "a", "new": "b"},
        {"attribute": " title ", "old": "b", "new": "c"},
    ]);
    env.refused(&["record"], &lines(&[padded]), "changed twice");
}

#[test]
fn record_refuses_nul_and_control_characters_in_values_and_actors() {
    let (env, c) = world();
    let good = mod_line(&c, ITEM_B, "created", "2026-01-01T09:00:00Z");
    for bad in [
        "Room\u{0}1",
        "a\r\nForged: line",
        "\u{1b}[2J",
        "\u{202e}txt.exe",
    ] {
        let mut line = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
        line["changes"] = json!([{"attribute": "location", "old": null, "new": bad}]);
        env.refused(
            &["record"],
            &lines(&[good.clone(), line]),
            "line 2: new value contains",
        );
    }
    let mut actor = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    actor["actor"] = json!("alice\u{0}");
    env.refused(
        &["record"],
        &lines(&[good, actor]),
        "line 2: no user or group named",
    );
    assert_eq!(env.count("modifications"), 0);
    assert_eq!(env.count("modification_values"), 0);
}

#[test]
fn record_refuses_an_unknown_actor() {
    let (env, c) = world();
    let mut line = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    line["actor"] = json!("mallory");
    let good = mod_line(&c, ITEM_B, "created", "2026-01-01T09:00:00Z");
    env.refused(
        &["record"],
        &lines(&[good, line]),
        "line 2: no user or group named \"mallory\"",
    );
}

#[test]
fn record_refuses_an_unknown_or_malformed_collection() {
    let (env, c) = world();
    let good = mod_line(&c, ITEM_B, "created", "2026-01-01T09:00:00Z");
    let unknown = mod_line(
        NO_SUCH_COLLECTION,
        ITEM_A,
        "created",
        "2026-01-01T09:00:00Z",
    );
    env.refused(
        &["record"],
        &lines(&[unknown, good.clone()]),
        &format!("line 1: no collection {NO_SUCH_COLLECTION}"),
    );
    let malformed = mod_line("calendar", ITEM_A, "created", "2026-01-01T09:00:00Z");
    env.refused(
        &["record"],
        &lines(&[good, malformed]),
        "line 2: invalid collection UUID",
    );
}

#[test]
fn record_refuses_other_hostile_lines() {
    let (env, c) = world();
    let base = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        lines(&[v])
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"{\"collection\":".to_vec(), "bad JSON"),
        (b"[1,2,3]\n".to_vec(), "bad JSON"),
        (
            edit(&|v| v["title"] = json!("a\r\nBcc: x@y.com")),
            "title contains a control",
        ),
        (edit(&|v| v["kind"] = json!("")), "kind is empty"),
        (
            edit(&|v| v["item"] = json!("not-a-uuid")),
            "invalid item UUID",
        ),
        (
            edit(&|v| v["at"] = json!("2026-13-01T00:00:00Z")),
            "invalid at",
        ),
        (edit(&|v| v["changes"] = Value::Null), "bad JSON"),
        (
            edit(&|v| v["changes"][0]["new"] = json!("v".repeat(64 * 1024 + 1))),
            "longer than 65536 bytes",
        ),
        (
            edit(&|v| {
                v.as_object_mut().unwrap().remove("actor");
            }),
            "missing field",
        ),
    ];
    for (input, needle) in cases {
        env.refused(&["record"], &input, needle);
    }
}

#[test]
fn record_after_refusals_stores_exactly_the_good_lines() {
    let (env, c) = world();
    let bad = lines(&[
        mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z"),
        mod_line(&c, ITEM_A, "bogus", "2026-01-01T09:00:00Z"),
    ]);
    env.refused(&["record"], &bad, "line 2");
    let good = lines(&[
        mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z"),
        mod_line(&c, ITEM_A, "edited", "2026-01-01T10:00:00Z"),
        mod_line(&c, ITEM_B, "created", "2026-01-01T11:00:00Z"),
        mod_line(&c, ITEM_B, "deleted", "2026-01-01T12:00:00Z"),
    ]);
    assert_eq!(env.ok_in(&["record"], &good), "4\n");
    assert_eq!(env.count("modifications"), 4);
    assert_eq!(env.count("modification_values"), 4);
    env.refused(&["record"], &bad, "line 2");
    assert_eq!(env.count("modifications"), 4);
}

// ------------------------------------------------------- hostile: item put

#[test]
fn item_put_refuses_non_utf8_stdin() {
    let (env, c) = world();
    let mut input = item_json(&c, "Lunch").to_string().into_bytes();
    input.extend_from_slice(b"\xff\xfe");
    env.refused(&["item", "put"], &input, "not valid UTF-8");
    assert_eq!(env.count("items"), 0);
}

#[test]
fn item_put_refuses_more_than_one_mebibyte() {
    let (env, c) = world();
    let mut input = item_json(&c, "Lunch").to_string().into_bytes();
    input.resize((1 << 20) + 1, b' '); // trailing white space is still too much
    env.refused(&["item", "put"], &input, "larger than 1048576 bytes");
    let big = item_json(&c, &"x".repeat(2 << 20)).to_string();
    env.refused(
        &["item", "put"],
        big.as_bytes(),
        "larger than 1048576 bytes",
    );
    assert_eq!(env.count("items"), 0);
}

#[test]
fn item_put_refuses_malformed_json_and_unknown_fields() {
    let (env, c) = world();
    env.refused(&["item", "put"], b"", "bad JSON");
    env.refused(&["item", "put"], b"{\"uuid\":", "bad JSON");
    env.refused(&["item", "put"], b"[]", "bad JSON");
    let two = format!("{0}\n{0}", item_json(&c, "Lunch"));
    env.refused(&["item", "put"], two.as_bytes(), "bad JSON");
    let mut extra = item_json(&c, "Lunch");
    extra["owner"] = json!("root");
    env.refused(
        &["item", "put"],
        extra.to_string().as_bytes(),
        "unknown field",
    );
    assert_eq!(env.count("items"), 0);
}

#[test]
fn item_put_refuses_a_title_with_cr_lf() {
    let (env, c) = world();
    for title in ["Lunch\r\nBcc: x@y.com", "Lun\nch", "\u{7}"] {
        let input = item_json(&c, title).to_string();
        env.refused(&["item", "put"], input.as_bytes(), "title");
    }
    assert_eq!(env.count("items"), 0);
}

#[test]
fn item_put_refuses_an_unknown_collection_or_actor() {
    let (env, c) = world();
    let input = item_json(NO_SUCH_COLLECTION, "Lunch").to_string();
    env.refused(&["item", "put"], input.as_bytes(), "no collection");
    let mut both = item_json(&c, "Lunch");
    both["collections"] = json!([NO_SUCH_COLLECTION]);
    env.refused(
        &["item", "put"],
        both.to_string().as_bytes(),
        "no collection",
    );
    let mut actor = item_json(&c, "Lunch");
    actor["actor"] = json!("mallory");
    env.refused(
        &["item", "put"],
        actor.to_string().as_bytes(),
        "no user or group named",
    );
    assert_eq!(env.count("items"), 0);
    assert_eq!(env.count("modifications"), 0);
}

#[test]
fn item_put_refuses_other_hostile_fields() {
    let (env, c) = world();
    let base = item_json(&c, "Lunch");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("uuid", json!("not-a-uuid"), "invalid item UUID"),
        ("collection", json!("calendar"), "invalid collection UUID"),
        ("start", json!("tomorrow"), "invalid start"),
        ("tz", json!("Mars/Phobos"), "timezone"),
        ("rrule", json!("BYDAY=MO"), "invalid rrule"),
        ("rrule", json!("FREQ=SOMETIMES"), "invalid rrule"),
        (
            "rrule",
            json!("FREQ=DAILY;INTERVAL=0"),
            "INTERVAL must be at least 1",
        ),
        (
            "rrule",
            json!("FREQ=MONTHLY;BYMONTHDAY=40"),
            "invalid rrule",
        ),
        (
            "rrule",
            json!("FREQ=DAILY\r\nX: y"),
            "rrule contains a control",
        ),
        ("kind", json!("   "), "kind is empty"),
        ("actor", json!("alice\u{0}"), "no user or group named"),
        (
            "rrule",
            json!("FREQ=SECONDLY"),
            "FREQ=MINUTELY and FREQ=SECONDLY are refused",
        ),
        (
            "rrule",
            json!("FREQ=MINUTELY;INTERVAL=5"),
            "FREQ=MINUTELY and FREQ=SECONDLY are refused",
        ),
        (
            "rrule",
            json!("FREQ=DAILY;COUNT=100000"),
            "COUNT is at most 1000",
        ),
        (
            "rrule",
            json!("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29"),
            "periods apart",
        ),
    ];
    for (field, value, needle) in cases {
        let mut v = base.clone();
        v[field] = value;
        env.refused(&["item", "put"], v.to_string().as_bytes(), needle);
    }
    let mut none = base.clone();
    none.as_object_mut().unwrap().remove("collection");
    env.refused(
        &["item", "put"],
        none.to_string().as_bytes(),
        "needs \"collection\"",
    );
    let mut delete_unknown = base.clone();
    delete_unknown["deleted"] = json!(true);
    env.refused(
        &["item", "put"],
        delete_unknown.to_string().as_bytes(),
        "cannot delete unknown item",
    );
    assert_eq!(env.count("items"), 0);
}

/// U+FFFF (and the other characters XML or a chat client cannot carry)
/// is refused at every door that stores text a message is built from, with
/// exit 2, the field named, and nothing written.
#[test]
fn characters_xml_cannot_carry_are_refused_everywhere_and_nothing_is_written() {
    let (env, c) = world();
    for title in [
        "Lunch \u{FFFF}",
        "\u{FFFE}Lunch",
        "Lu\0nch",
        "Lunch \u{FDD0}",
    ] {
        let input = item_json(&c, title).to_string();
        env.refused(&["item", "put"], input.as_bytes(), "title contains a");
        let mut kind = item_json(&c, "Lunch");
        kind["kind"] = json!(title);
        env.refused(
            &["item", "put"],
            kind.to_string().as_bytes(),
            "kind contains a",
        );
    }
    env.refused(
        &["item", "put"],
        item_json(&c, "Lunch \u{FFFF}").to_string().as_bytes(),
        "title contains a Unicode noncharacter (U+FFFF)",
    );
    let line = |f: &dyn Fn(&mut Value)| {
        let mut v = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
        f(&mut v);
        lines(&[v])
    };
    for (input, needle) in [
        (
            line(&|v| v["title"] = json!("Lunch \u{FFFF}")),
            "line 1: title contains a Unicode noncharacter (U+FFFF)",
        ),
        (
            line(&|v| v["kind"] = json!("ev\u{FFFF}ent")),
            "line 1: kind contains a Unicode noncharacter (U+FFFF)",
        ),
        (
            line(&|v| v["changes"][0]["new"] = json!("Team \u{FFFF} lunch")),
            "line 1: new value contains a Unicode noncharacter (U+FFFF)",
        ),
        (
            line(&|v| v["changes"][0]["old"] = json!("Lunch\u{1}")),
            "control character (U+0001)",
        ),
    ] {
        env.refused(&["record"], &input, needle);
    }
    env.refused(
        &["collection", "add", "Cal \u{FFFF}"],
        b"",
        "collection name contains a Unicode noncharacter (U+FFFF)",
    );
    let notify = |subject: &str, message: &str| {
        let args = [
            "notify",
            "--from",
            "alice",
            "--to",
            "alice",
            "--channel",
            "xmpp",
            "--subject",
            subject,
            "--message",
            message,
        ];
        args.map(String::from)
    };
    env.refused(
        &notify("Disk \u{FFFF} full", "m"),
        b"",
        "subject contains a Unicode noncharacter (U+FFFF)",
    );
    env.refused(
        &notify("Disk full", "on \u{FFFF} db-2"),
        b"",
        "message contains a Unicode noncharacter (U+FFFF)",
    );
    assert_eq!(env.count("items"), 0);
    assert_eq!(env.count("modifications"), 0);
    assert_eq!(env.count("nt_requests"), 0);
    // Ordinary Unicode in the same places goes in.
    let ok = item_json(&c, "会議 🍱 שלום");
    env.ok_in(&["item", "put"], ok.to_string().as_bytes());
    assert_eq!(env.count("items"), 1);
}

#[test]
fn item_put_refusal_leaves_an_existing_item_unchanged() {
    let (env, c) = world();
    env.ok_in(
        &["item", "put"],
        item_json(&c, "Lunch").to_string().as_bytes(),
    );
    let before = env.snapshot();
    let mut bad = item_json(&c, "Dinner");
    bad["collections"] = json!([NO_SUCH_COLLECTION]);
    env.refused(
        &["item", "put"],
        bad.to_string().as_bytes(),
        "no collection",
    );
    assert_eq!(env.snapshot(), before);
    // The stored title is still "Lunch": putting it again changes nothing.
    let out = env.ok_in(
        &["item", "put"],
        item_json(&c, "Lunch").to_string().as_bytes(),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["actions"], json!([]), "{out}");
}

// ------------------------------------------- hostile: error message hygiene

#[test]
fn error_messages_never_echo_raw_control_characters() {
    let (env, c) = world();
    let hostile = "x\u{b}y\u{c}z\u{1b}[2J\u{85}w\u{2028}v";
    let mut line = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    line[hostile] = json!(1);
    env.refused(&["record"], &lines(&[line]), "unknown field");
    let mut item = item_json(&c, "Lunch");
    item[hostile] = json!(1);
    env.refused(
        &["item", "put"],
        item.to_string().as_bytes(),
        "unknown field",
    );
}

// ------------------------------------------------------- demo and benches

#[test]
fn demo_writes_a_week_of_real_digests_to_its_own_outbox() {
    let env = Env::new();
    let out = env.run_raw(&["demo"], b"");
    assert_eq!(out.code, 0, "{out:?}");
    for needle in [
        "A week of hourly ticks",
        "digests delivered",
        "One of them, data/demo-outbox/",
        "An XMPP chat message (not sent), data/demo-outbox/xmpp/",
        "An SMS (not sent), data/demo-outbox/sms/",
    ] {
        assert!(out.stdout.contains(needle), "{needle:?} in {}", out.stdout);
    }
    let outbox = env.dir.path().join("data/demo-outbox");
    let emls: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    assert!(emls.len() >= 30, "{} .eml files", emls.len());
    for p in &emls {
        let raw = std::fs::read(p).unwrap();
        let m = mail_parser::MessageParser::default()
            .parse(&raw)
            .expect("a parseable message");
        assert!(m.subject().is_some_and(|s| !s.is_empty()), "{p:?}");
        assert!(
            m.body_text(0).is_some() && m.body_html(0).is_some(),
            "{p:?}"
        );
    }
    assert!(std::fs::read_dir(outbox.join("xmpp")).unwrap().count() > 0);
    assert!(std::fs::read_dir(outbox.join("sms")).unwrap().count() > 0);
    // A second run replaces the first one's files instead of adding to them.
    let again = env.run_raw(&["demo"], b"");
    assert_eq!(again.code, 0, "{again:?}");
    let n = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .count();
    assert_eq!(n, emls.len());
}

/// The "first hour" report: a real `queue run` wrote
/// `outbox/00001000-asha.eml`, then `digestd demo` removed it as "a file
/// from an earlier demo" (both number requests from 1000). The demo must
/// write and clear only a directory of its own.
#[test]
fn demo_leaves_the_real_outbox_alone() {
    let env = Env::init();
    env.add_user("ops", &["--email", "ops@example.com"]);
    env.add_user("asha", &["--email", "asha@example.com"]);
    env.ok(&[
        "notify",
        "--from",
        "ops",
        "--to",
        "asha",
        "--subject",
        "Real mail",
        "--message",
        "Not a demo.",
    ]);
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let outbox = env.dir.path().join("outbox");
    let real = outbox.join("00001000-asha.eml");
    let bytes = std::fs::read(&real).expect("the real queue run wrote its message");
    let listing = |dir: &std::path::Path| {
        let mut v = walk(dir);
        v.sort();
        v
    };
    let before = listing(&outbox);

    for run in 0..2 {
        let out = env.run_raw(&["demo"], b"");
        assert_eq!(out.code, 0, "demo run {run}: {out:?}");
        assert_eq!(std::fs::read(&real).unwrap(), bytes, "demo run {run}");
        assert_eq!(listing(&outbox), before, "demo run {run} wrote to ./outbox");
        // The second run clears the first one's files, in its own directory.
        assert_eq!(
            out.stdout.contains("from an earlier demo removed first"),
            run == 1,
            "demo run {run}: {}",
            out.stdout
        );
        assert!(out.stdout.contains("data/demo-outbox/"), "{}", out.stdout);
    }
    let demo = env.dir.path().join("data/demo-outbox");
    let emls = std::fs::read_dir(&demo)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .count();
    assert!(emls >= 30, "{emls} .eml files in {}", demo.display());
    assert!(std::fs::read_dir(demo.join("xmpp")).unwrap().count() > 0);
    assert!(std::fs::read_dir(demo.join("sms")).unwrap().count() > 0);
}

#[test]
fn demo_refuses_a_real_outbox_in_its_own_directory() {
    let env = Env::new();
    std::fs::write(&env.config, "[email]\ndir = \"./data/demo-outbox/\"\n").unwrap();
    let real = env.dir.path().join("data/demo-outbox/00001000-alice.eml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "real").unwrap();
    let config = env.config.to_str().unwrap();
    let out = env.run_raw(&["--config", config, "demo"], b"");
    assert_refused(&out, "the demo's own outbox", &os_args(&["demo"]));
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "real");
    assert!(!env.dir.path().join("data/demo.db").exists());
}

/// Every file under `dir`, recursively (none when it does not exist).
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn bench_simulate_and_tick_refuse_bad_sizes_and_write_nothing() {
    let env = Env::new();
    for args in [
        &["bench", "simulate", "--users", "0"][..],
        &["bench", "simulate", "--days", "0"][..],
        &["bench", "simulate", "--days", "3661"][..],
        &["bench", "simulate", "--days=-5"][..],
        &["bench", "tick", "--subs", "10", "--idle-factor", "170"][..],
    ] {
        let out = env.run_raw(args, b"");
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{args:?}: {out:?}");
        assert!(out.stderr.starts_with("digestd: "), "{args:?}: {out:?}");
    }
    // Not a number: clap's own usage error, exit 2 as well.
    let out = env.run_raw(&["bench", "simulate", "--users", "ten"], b"");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!env.dir.path().join("data/bench-simulate.db").exists());
    assert!(!env.dir.path().join("data/bench-tick.db").exists());
}

#[test]
fn benches_run_at_toy_sizes() {
    let env = Env::new();
    for (args, needle) in [
        (
            // Two idle subscriptions per user, each a digest of its own.
            &["bench", "tick", "--subs", "300", "--idle-factor", "3"][..],
            "total tick time",
        ),
        (
            &[
                "bench",
                "compose",
                "--subs",
                "60",
                "--mods",
                "3000",
                "--collections",
                "3",
                "--items",
                "20",
                "--days",
                "3",
            ][..],
            "compose rate",
        ),
        (
            &["bench", "ingest", "--rows", "2000", "--batch", "500"][..],
            "ratio record/floor",
        ),
        // Fails unless the simulated runs equal the periods of the rules.
        (
            &["bench", "simulate", "--users", "20", "--days", "3"][..],
            "simulate (the real tick)",
        ),
    ] {
        let out = env.run_raw(args, b"");
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert!(out.stdout.contains(needle), "{args:?}: {}", out.stdout);
    }
    // bench smtp needs Postfix's smtp-sink and smtp-source (CI installs them).
    if std::path::Path::new("/usr/sbin/smtp-sink").exists() || std::env::var_os("CI").is_some() {
        let args = [
            "bench",
            "smtp",
            "--messages",
            "40",
            "--sessions",
            "2",
            "--repeat",
            "2",
        ];
        let out = env.run_raw(&args, b"");
        assert_eq!(out.code, 0, "{out:?}");
        for needle in [
            "ratio digestd/smtp-source (medians)",
            "cpu per message, digestd: digestd",
        ] {
            assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
        }
        // Two digestd runs between three smtp-source runs.
        let runs = |label: &str| {
            let line = out.stdout.lines().find(|l| l.starts_with(label)).unwrap();
            line.split_whitespace().filter(|w| w.contains('.')).count()
        };
        assert_eq!(
            (runs("smtp-source runs"), runs("digestd runs")),
            (3, 2),
            "{}",
            out.stdout
        );
        let out = env.run_raw(&["bench", "smtp", "--messages", "40", "--repeat", "0"], b"");
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("--repeat"), "{out:?}");
    }
}

// ------------------------------------------------------------ notify / queue

fn notify_world() -> Env {
    let env = Env::init();
    env.ok(&[
        "user",
        "add",
        "ops",
        "--tz",
        "UTC",
        "--email",
        "ops@example.com",
    ]);
    env.ok(&[
        "user",
        "add",
        "ann",
        "--tz",
        "Europe/Paris",
        "--email",
        "ann@example.com",
    ]);
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
    let v: Value = serde_json::from_str(&env.ok(&["request", "show", &id, "--json"])).unwrap();
    assert_eq!(v["status"], "cancelled");
    assert!(!env.dir.path().join("outbox").exists());
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

#[test]
fn hard_bounces_disable_an_address_and_the_queue_then_gives_up() {
    let env = notify_world();
    for _ in 1..=2 {
        let out = env.ok_in(&["inbound"], DSN_TO_ANN.as_bytes());
        assert_eq!(out.trim(), "bounce hard ann@example.com");
    }
    // The third disables the address, and says so in the log too.
    let third = env.run_in(&["inbound"], DSN_TO_ANN.as_bytes());
    assert_eq!(third.code, 0, "{third:?}");
    assert_eq!(
        third.stdout.trim(),
        "bounce hard ann@example.com (address disabled)"
    );
    assert!(third.stderr.contains("address disabled after hard bounces"));
    assert!(
        !third.stderr.contains('\u{1b}'),
        "no colour codes in a log file"
    );
    let soft = DSN_TO_ANN
        .replace("Action: failed", "Action: delayed")
        .replace("Status: 5.1.1", "Status: 4.4.1");
    assert_eq!(
        env.ok_in(&["inbound"], soft.as_bytes()).trim(),
        "bounce soft ann@example.com"
    );
    let stranger = DSN_TO_ANN.replace("ann@example.com", "zed@example.org");
    assert!(env
        .ok_in(&["inbound"], stranger.as_bytes())
        .contains("ignored: zed@example.org is no address of ours"));
    // The disabled address is not used: the row is given up at once.
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
    let id = out.lines().last().unwrap().trim().to_string();
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let v: Value = serde_json::from_str(&env.ok(&["request", "show", &id, "--json"])).unwrap();
    assert_eq!(v["status"], "failed");
    assert_eq!(v["recipients"][0]["reply_message"], "no email address");
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
    for bad in ["not-an-address", "a@b.c\r\nBcc: x@y.z", ""] {
        env.refused(&["test-alert", "--to", bad], b"", "invalid");
    }
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

#[test]
fn contact_points_are_set_verified_disabled_and_enabled() {
    let env = Env::new();
    env.add_user("ops", &["--email", "ops@example.com"]);
    env.add_user("bob", &["--xmpp", "bob@localhost"]);
    // Hostile or wrong input: exit 2, nothing changed.
    for (args, needle) in [
        (
            vec!["contact", "bob", "--channel", "xmpp", "--set", "bob@@x"],
            "invalid JID",
        ),
        (
            vec!["contact", "bob", "--channel", "sms", "--set", "0612 345"],
            "invalid phone number",
        ),
        (
            vec![
                "contact",
                "bob",
                "--channel",
                "email",
                "--set",
                "bob@example.com\r\nBcc: x@evil",
            ],
            "invalid",
        ),
        (
            vec![
                "contact",
                "bob",
                "--channel",
                "xmpp",
                "--verify",
                "--disable",
            ],
            "exactly one of",
        ),
        (
            vec!["contact", "bob", "--channel", "fax", "--verify"],
            "unknown channel",
        ),
        (
            vec!["contact", "bob", "--channel", "sms", "--disable"],
            "bob has no sms address",
        ),
        (
            vec!["contact", "nobody", "--channel", "sms", "--disable"],
            "nobody",
        ),
    ] {
        let before = env.snapshot();
        env.refused(&args, b"", needle);
        assert_eq!(env.snapshot(), before, "{args:?}");
    }
    let users = env.users_json(&["user", "list", "--json"]);
    assert_eq!(users[0]["xmpp"], "bob@localhost", "unchanged");
    assert_eq!(users[0]["email"], Value::Null);
    assert_eq!(
        env.ok(&[
            "contact",
            "bob",
            "--channel",
            "sms",
            "--set",
            "+34600111222"
        ])
        .trim(),
        "bob sms +34600111222 (not verified, enabled, 0 bounces)"
    );
    assert_eq!(
        env.ok(&["contact", "bob", "--channel", "sms", "--verify"])
            .trim(),
        "bob sms +34600111222 (verified, enabled, 0 bounces)"
    );
    // A disabled address gets nothing: the queue gives the row up.
    env.ok(&["contact", "bob", "--channel", "xmpp", "--disable"]);
    let notify = |subject: &str| -> String {
        let out = env.ok(&[
            "notify",
            "--from",
            "ops",
            "--to",
            "bob",
            "--subject",
            subject,
            "--message",
            "m",
            "--channel",
            "xmpp",
        ]);
        out.lines().last().unwrap().to_string()
    };
    let first = notify("While disabled");
    env.ok(&["queue", "run", "--at", "2026-11-23T09:00:00Z"]);
    let shown: Value =
        serde_json::from_str(&env.ok(&["request", "show", &first, "--json"])).unwrap();
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["recipients"][0]["reply_message"], "no xmpp address");
    // Enabled again, the next one goes (to the outbox: no server configured).
    env.ok(&["contact", "bob", "--channel", "xmpp", "--enable"]);
    let second = notify("Enabled again");
    env.ok(&["queue", "run", "--at", "2026-11-23T10:00:00Z"]);
    let shown: Value =
        serde_json::from_str(&env.ok(&["request", "show", &second, "--json"])).unwrap();
    assert_eq!(shown["status"], "sent");
    assert!(
        env.dir
            .path()
            .join("outbox/xmpp")
            .read_dir()
            .unwrap()
            .count()
            == 1
    );
}
