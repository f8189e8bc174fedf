//! Black-box tests of the `digestd` binary: users and groups
//! (`src/cli/parties.rs`) and what they refuse; contact points are in
//! `cli_contacts.rs`.
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

#[cfg(unix)]
use std::ffi::OsStr;

use common::cli::*;
use serde_json::{json, Value};

// ------------------------------------------------------------ happy paths

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
        "+1 (415) 555-0123",
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
    assert_eq!(alice["tz"], "Europe/Paris");
    assert_eq!(
        alice["email"], "Alice.B+tag@example.com",
        "domain lower-cased"
    );
    assert_eq!(alice["xmpp"], "alice@localhost");
    assert_eq!(alice["phone"], "+14155550123", "stored in E.164");
    assert_eq!(alice["week_start"], "sun");
    assert_eq!(alice["daily_hour"], 7);
    assert_eq!(alice["locale"], "fr-FR");
    let bob = &users[1];
    assert_eq!(bob["username"], "bob");
    assert_eq!(bob["tz"], "UTC");
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
    assert_eq!(team[0]["tz"], "UTC", "full user objects");
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
        "1 415 555 0123",
        "+1 415 555 0123 ext 4",
        "+1\t415 555 0123",
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
    assert_eq!(users[0]["tz"], "UTC", "the first alice is untouched");
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
