//! Black-box tests of the `digestd` binary, the commands of no one area:
//! help and version, `init`, bad `--db` and `--config`, the characters no
//! message can carry (refused at every door); `demo` and `bench` are in
//! `cli_demo_bench.rs`.
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use std::ffi::OsStr;

use common::cli::*;
use serde_json::{json, Value};

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
fn every_channel_flag_names_every_channel() {
    // Each `--channel` takes all nine channels; its help must say so.
    let env = Env::new();
    for cmd in ["subscribe", "notify", "contact", "test-alert"] {
        let help = env.run_raw(&[cmd, "--help"], b"").stdout;
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("--channel"))
            .unwrap_or_else(|| panic!("{cmd}: no --channel in {help}"));
        for ch in digestd::parties::Channel::ALL {
            assert!(
                line.contains(ch.as_str()),
                "{cmd} --channel omits {ch:?}: {line}"
            );
        }
    }
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

// ------------------------------------------------------------------- init

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

/// The audit's finding 11: a password in a URL is never printed, whether
/// the URL is refused or accepted.
#[test]
fn passwords_in_urls_are_never_printed() {
    let env = Env::new();
    let dir = env.dir.path();
    let cases: &[(&str, &str, &str)] = &[
        (
            "db.toml",
            "[database]\nurl = \"mysql://root:Secret1@db/x\"\n",
            "database URL",
        ),
        (
            "smtp.toml",
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"smtp://bob:Secret1@mail:25?tls=maybe\"\n",
            "[email] smtp_url",
        ),
        (
            "sms.toml",
            "[sms]\ntransport = \"http\"\nendpoint = \"ftp://u:Secret1@gw/send\"\n",
            "endpoint",
        ),
    ];
    for (name, text, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = env.run_raw(&["--config", path.to_str().unwrap(), "init"], b"");
        assert_refused(&out, needle, &[name.to_string()]);
        assert!(!out.stderr.contains("Secret1"), "{name}: {}", out.stderr);
        assert!(out.stderr.contains(":***@"), "{name}: {}", out.stderr);
    }
    // An accepted URL is printed without its password too.
    let url = format!("sqlite://{}", env.db_path.display());
    let out = env.run_raw(
        &[
            "--config",
            env.config.to_str().unwrap(),
            "--db",
            &url,
            "init",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with("database ready: sqlite://"));
}

#[test]
fn bad_config_files_are_refused() {
    let env = Env::new();
    let dir = env.dir.path();
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("missing.toml", None, "missing.toml: cannot read the settings file"),
        (
            "garbage.toml",
            Some("not toml at all ["),
            "garbage.toml:1:5: not valid TOML",
        ),
        (
            "section.toml",
            Some("[nope]\nx = 1\n"),
            "section.toml:1:2: [nope] is not a section",
        ),
        (
            "key.toml",
            Some("[database]\nunknown = 1\n"),
            "key.toml:2:11: [database] unknown is not a setting",
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
            "type.toml:2:13: [database] pool_size must be a whole number",
        ),
        (
            "xmpp.toml",
            Some("[xmpp]\ntransport = \"xmpp\"\njid = \"a@b\"\npassword = \"p\"\ntls = false\nserver = \"chat.example.com:5222\"\n"),
            "[xmpp] tls",
        ),
        (
            "db.toml",
            Some("[email]\ntransport = \"db\"\ndb_path = \"out\\nbox.db\"\n"),
            "db.toml:3:11: [email] db_path",
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
    assert_refused(&out, "is a directory", &["<dir>".to_string()]);
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
    assert_refused(&out, "log.toml:2:9: [log] level", &["log.toml".to_string()]);
    assert!(!env.db_path.exists());
}

// ----------------------------------- hostile: characters XML cannot carry

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
        // At the lines' own time: only the character is wrong.
        env.refused(&["--now", "2026-01-01T09:00:00Z", "record"], &input, needle);
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
