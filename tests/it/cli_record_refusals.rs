//! Black-box tests of the `digestd` binary: what collections, `purge` and `record` refuse (`src/cli/content.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::cli_content::NOW;
use crate::common;

use common::cli::*;
use serde_json::{json, Value};

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

/// Digests, feeds and pages name a collection by its name: a second
/// collection of the same name (in any case) is refused, by `add` and by
/// `rename`, and nothing is written.
#[test]
fn a_second_collection_of_the_same_name_is_refused() {
    let env = Env::init();
    let first = env.add_collection("Team calendar");
    for name in ["Team calendar", "team CALENDAR"] {
        env.refused(
            &["collection", "add", name],
            b"",
            "a collection named \"Team calendar\" already exists",
        );
    }
    let other = env.add_collection("Wiki");
    env.refused(
        &["collection", "rename", &other, "TEAM calendar"],
        b"",
        "already exists",
    );
    // Its own name in another case is not a clash.
    env.ok(&["collection", "rename", &first, "Team Calendar"]);
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
    let input = lines(&[mod_line(&c, ITEM_A, "created", "2026-01-01T00:00:00Z")]);
    assert_eq!(env.ok_in(&["--now", NOW, "record"], &input), "1\n");
    for d in ["0d", "abc", "5y"] {
        env.refused(&["purge", "--older-than", d], b"", "invalid duration");
    }
    assert_eq!(env.count("modifications"), 1);
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
    let out = env.refused(&["--now", NOW, "record"], &input, "nothing was written");
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
    let out = env.refused(&["--now", NOW, "record"], &input, "line 2: not valid UTF-8");
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
    env.refused(
        &["--now", NOW, "record"],
        &input,
        "line 2: longer than 1048576 bytes",
    );
}

#[test]
fn record_refuses_an_unknown_field() {
    let (env, c) = world();
    let mut line = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    line["priority"] = json!("high");
    env.refused(&["--now", NOW, "record"], &lines(&[line]), "unknown field");
    let mut change = mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z");
    change["changes"][0]["was"] = json!("x");
    env.refused(
        &["--now", NOW, "record"],
        &lines(&[change]),
        "unknown field",
    );
}

#[test]
fn record_refuses_a_duplicated_attribute() {
    let (env, c) = world();
    let mut twice = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    twice["changes"] = json!([
        {"attribute": "title", "old": "a", "new": "b"},
        {"attribute": "title", "old": "b", "new": "c"},
    ]);
    env.refused(&["--now", NOW, "record"], &lines(&[twice]), "changed twice");
    let mut padded = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    padded["changes"] = json!([
        {"attribute": "title", "old": "a", "new": "b"},
        {"attribute": " title ", "old": "b", "new": "c"},
    ]);
    env.refused(
        &["--now", NOW, "record"],
        &lines(&[padded]),
        "changed twice",
    );
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
            &["--now", NOW, "record"],
            &lines(&[good.clone(), line]),
            "line 2: new value contains",
        );
    }
    let mut actor = mod_line(&c, ITEM_A, "edited", "2026-01-01T09:00:00Z");
    actor["actor"] = json!("alice\u{0}");
    env.refused(
        &["--now", NOW, "record"],
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
        &["--now", NOW, "record"],
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
        &["--now", NOW, "record"],
        &lines(&[unknown, good.clone()]),
        &format!("line 1: no collection {NO_SUCH_COLLECTION}"),
    );
    let malformed = mod_line("calendar", ITEM_A, "created", "2026-01-01T09:00:00Z");
    env.refused(
        &["--now", NOW, "record"],
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
        (
            edit(&|v| v["url"] = json!("javascript:alert(1)")),
            "use an http or https URL",
        ),
        (
            edit(&|v| v["url"] = json!("https://user:pw@wiki.example/p")),
            "credentials",
        ),
        (
            edit(&|v| v["url"] = json!("https://wiki.example/p\r\nX: y")),
            "invalid url",
        ),
        (
            edit(&|v| v["url"] = json!(format!("https://x.example/{}", "a".repeat(2048)))),
            "longer than 2048 bytes",
        ),
        (edit(&|v| v["url"] = json!(7)), "bad JSON"),
    ];
    for (input, needle) in cases {
        env.refused(&["--now", NOW, "record"], &input, needle);
    }
}

#[test]
fn record_after_refusals_stores_exactly_the_good_lines() {
    let (env, c) = world();
    let bad = lines(&[
        mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z"),
        mod_line(&c, ITEM_A, "bogus", "2026-01-01T09:00:00Z"),
    ]);
    env.refused(&["--now", NOW, "record"], &bad, "line 2");
    let good = lines(&[
        mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z"),
        mod_line(&c, ITEM_A, "edited", "2026-01-01T10:00:00Z"),
        mod_line(&c, ITEM_B, "created", "2026-01-01T11:00:00Z"),
        mod_line(&c, ITEM_B, "deleted", "2026-01-01T12:00:00Z"),
    ]);
    assert_eq!(env.ok_in(&["--now", NOW, "record"], &good), "4\n");
    assert_eq!(env.count("modifications"), 4);
    assert_eq!(env.count("modification_values"), 4);
    env.refused(&["--now", NOW, "record"], &bad, "line 2");
    assert_eq!(env.count("modifications"), 4);
}
