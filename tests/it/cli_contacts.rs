//! Black-box tests of the `digestd` binary: contact points set, verified,
//! disabled, enabled and shown; what `user add` and `group add` print;
//! `user rotate-code` (`src/cli/parties.rs`, `src/cli/contact.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use serde_json::Value;

use common::cli::*;

// --------------------------------------------------------- contact points

/// Hostile or wrong `contact` input for bob: exit 2, nothing changed.
fn hostile_contact_changes_write_nothing(env: &Env) {
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
            "at most one of",
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
}

#[test]
fn contact_points_are_set_verified_disabled_and_enabled() {
    let env = Env::init();
    env.add_user("ops", &["--email", "ops@example.com"]);
    env.add_user("bob", &["--xmpp", "bob@localhost"]);
    hostile_contact_changes_write_nothing(&env);
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

#[test]
fn contact_with_no_action_shows_the_addresses_and_their_state() {
    let env = Env::init();
    env.add_user("ops", &["--email", "ops@example.com"]);
    env.add_user(
        "bob",
        &["--email", "bob@example.com", "--xmpp", "bob@localhost"],
    );
    env.add_user("quiet", &[]);
    env.ok(&["contact", "bob", "--channel", "xmpp", "--verify"]);
    env.ok(&["contact", "bob", "--channel", "email", "--disable"]);
    let before = env.snapshot();
    assert_eq!(
        env.ok(&["contact", "bob"]),
        "bob email bob@example.com (not verified, disabled, 0 bounces)\n\
         bob xmpp bob@localhost (verified, enabled, 0 bounces)\n"
    );
    assert_eq!(
        env.ok(&["contact", "bob", "--channel", "xmpp"]),
        "bob xmpp bob@localhost (verified, enabled, 0 bounces)\n"
    );
    let json: Value = serde_json::from_str(&env.ok(&["contact", "bob", "--json"])).unwrap();
    let v = json.as_array().unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["channel"], "email");
    assert_eq!(v[0]["address"], "bob@example.com");
    assert_eq!(v[0]["disabled"], true);
    assert_eq!(v[1]["verified"], true);
    assert_eq!(v[1]["bounce_count"], 0);
    let one: Value =
        serde_json::from_str(&env.ok(&["contact", "bob", "--channel", "email", "--json"])).unwrap();
    assert_eq!(one.as_array().unwrap().len(), 1);
    // No address at all: nothing listed, an empty array.
    assert_eq!(env.ok(&["contact", "quiet"]), "");
    assert_eq!(env.ok(&["contact", "quiet", "--json"]).trim(), "[]");
    assert_eq!(env.snapshot(), before, "showing writes nothing");
    // Hostile or wrong input: exit 2, one line, nothing written.
    env.refused(
        &["contact", "bob", "--channel", "sms"],
        b"",
        "bob has no sms address",
    );
    env.refused(&["contact", "nobody"], b"", "no user or group named");
    env.refused(&["contact", "bob\r\nX"], b"", "no user or group named");
    env.refused(&["contact", ""], b"", "no user or group named");
    env.refused(
        &["contact", "bob", "--channel", "fax"],
        b"",
        "unknown channel",
    );
    env.refused(
        &["contact", "bob", "--channel", "xm\r\npp"],
        b"",
        "unknown channel",
    );
    env.refused(&["contact", "bob", "--verify"], b"", "need --channel");
    env.usage_error(&["contact", "bob", "--channel", "xmpp", "--verify", "--json"]);
    use std::os::unix::ffi::OsStrExt;
    let out = env.run(&[
        std::ffi::OsStr::new("contact"),
        std::ffi::OsStr::from_bytes(b"b\xffob"),
    ]);
    assert_usage_error(&out, &["contact".into()]);
    assert_eq!(env.snapshot(), before);
}

/// `user add` and `group add` say what they stored; the id stays the last
/// line, for scripts.
#[test]
fn user_and_group_add_say_what_they_added_then_the_id() {
    let env = Env::init();
    let out = env.ok(&[
        "user",
        "add",
        "asha",
        "--tz",
        "Asia/Kolkata",
        "--email",
        "asha@example.com",
        "--daily-hour",
        "7",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        lines[0],
        "added user asha: Asia/Kolkata, week starts mon, daily 07:00, asha@example.com"
    );
    assert_integer_last_line(&out);
    let out = env.ok(&["user", "add", "bo", "--tz", "UTC"]);
    assert!(
        out.starts_with("added user bo: UTC, week starts mon, daily 08:00, no addresses\n"),
        "{out}"
    );
    let out = env.ok(&["group", "add", "team"]);
    assert_eq!(
        out.lines().next(),
        Some("added group team: UTC, week starts mon, daily 08:00, en-GB")
    );
    assert_integer_last_line(&out);
    let out = env.ok(&["group", "add", "ops", "--email", "ops@example.com"]);
    assert_eq!(
        out.lines().next(),
        Some("added group ops: UTC, week starts mon, daily 08:00, en-GB, email ops@example.com")
    );
}

#[test]
fn user_rotate_code_prints_the_new_link_and_ends_the_old_code() {
    let env = Env::init();
    env.add_user("alice", &["--email", "alice@example.org"]);
    env.add_group("team");
    let rotate = |env: &Env| -> String {
        let out = env.ok(&["user", "rotate-code", "alice"]);
        let link = out.lines().last().unwrap().to_string();
        assert!(link.contains("/s/"), "{out}");
        let code = link.rsplit('/').next().unwrap().to_string();
        assert_eq!(code.len(), 64, "{out}");
        code
    };
    let first = rotate(&env);
    assert_eq!(env.count("retired_codes"), 1);
    let second = rotate(&env);
    assert_ne!(first, second);
    assert_eq!(
        env.count("retired_codes"),
        2,
        "each old code is kept as a hash"
    );
    // Refused with one line, exit 2, nothing written.
    env.refused(&["user", "rotate-code", "nobody"], b"", "nobody");
    env.refused(&["user", "rotate-code", "team"], b"", "only users");
    env.refused(&["user", "rotate-code", "a\r\nb"], b"", "");
    env.usage_error(&["user", "rotate-code"]);
}
