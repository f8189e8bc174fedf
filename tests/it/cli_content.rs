//! Black-box tests of the `digestd` binary: collections, items, `record`
//! and `purge` (`src/cli/content.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use common::cli::*;
use serde_json::{json, Value};

// ------------------------------------------------------------ happy paths

/// The clock of the `record` commands: their lines' `at` are about then.
const NOW: &str = "2026-01-02T00:00:00Z";

#[test]
fn collection_add_prints_a_fresh_uuid() {
    let env = Env::init();
    let a = env.add_collection("Calendar");
    let b = env.add_collection("Wiki");
    assert_ne!(a, b, "each collection gets its own UUID");
    assert_eq!(env.count("collections"), 2);
    let listed = env.ok(&["collection", "list"]);
    assert!(listed.contains(&a) && listed.contains(&b), "{listed}");
}

#[test]
fn collection_set_public_offers_it_for_sign_up() {
    let env = Env::init();
    let a = env.add_collection("Calendar");
    let b = env.add_collection("Rota");
    let out = env.ok(&["collection", "set", &a, "--public"]);
    assert!(out.contains("is public"), "{out}");
    let listed = env.ok(&["collection", "list"]);
    let line = |u: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(u))
            .unwrap()
            .to_string()
    };
    assert!(line(&a).ends_with("  public"), "{listed}");
    assert!(!line(&b).contains("public"), "{listed}");
    let json: Value = serde_json::from_str(&env.ok(&["collection", "list", "--json"])).unwrap();
    let public: Vec<bool> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["public"].as_bool().unwrap())
        .collect();
    assert_eq!(public, vec![true, false], "{json}");
    env.ok(&["collection", "set", &a, "--no-public"]);
    assert!(!env.ok(&["collection", "list"]).contains("public"));
    // Neither flag, both, an unknown or malformed UUID: refused, nothing written.
    let before = env.snapshot();
    env.usage_error(&["collection", "set", &a]);
    env.usage_error(&["collection", "set", &a, "--public", "--no-public"]);
    let unknown = uuid::Uuid::from_u128(5).to_string();
    env.refused(
        &["collection", "set", &unknown, "--public"],
        b"",
        "no collection",
    );
    env.refused(
        &["collection", "set", "not-a-uuid\n", "--public"],
        b"",
        "collection",
    );
    assert_eq!(env.snapshot(), before);
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
    assert_eq!(env.ok_in(&["--now", NOW, "record"], &input), "3\n");
    assert_eq!(env.count("modifications"), 3);
    assert_eq!(env.count("modification_values"), 3);
    assert_eq!(
        env.ok_in(&["--now", NOW, "record"], b""),
        "0\n",
        "empty input records 0"
    );
    assert_eq!(env.count("modifications"), 3);
}

/// A file saved by an editor that writes a UTF-8 byte order mark first
/// goes in as it would without it: `record`, `item put`, `user import`.
/// Only at the very start: a mark anywhere else is refused as before.
#[test]
fn a_byte_order_mark_at_the_start_of_an_input_is_accepted() {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let (env, c) = world();
    let input = [
        BOM,
        &lines(&[mod_line(&c, ITEM_A, "created", "2026-01-01T09:00:00Z")]),
    ]
    .concat();
    assert_eq!(env.ok_in(&["--now", NOW, "record"], &input), "1\n");
    let second = [
        lines(&[mod_line(&c, ITEM_A, "edited", "2026-01-01T10:00:00Z")]),
        BOM.to_vec(),
        lines(&[mod_line(&c, ITEM_B, "created", "2026-01-01T10:00:00Z")]),
    ]
    .concat();
    env.refused(&["--now", NOW, "record"], &second, "line 2: bad JSON");
    assert_eq!(env.count("modifications"), 1);
    let item = [BOM, item_json(&c, "Lunch").to_string().as_bytes()].concat();
    env.ok_in(&["item", "put"], &item);
    assert_eq!(env.count("items"), 1);
    let users = [BOM, br#"{"name":"bo","tz":"Asia/Tokyo"}"#.as_slice()].concat();
    let out = env.ok_in(&["user", "import"], &users);
    assert!(out.contains("imported 1 users"), "{out}");
}

#[test]
fn purge_deletes_only_older_modifications_and_prints_a_summary() {
    let (env, c) = world();
    // Each recorded on its day: an `at` is bounded by the clock.
    let old = lines(&[
        mod_line(&c, ITEM_A, "created", "2020-01-01T00:00:00Z"),
        mod_line(&c, ITEM_A, "edited", "2020-01-02T00:00:00Z"),
    ]);
    assert_eq!(
        env.ok_in(&["--now", "2020-01-02T00:00:00Z", "record"], &old),
        "2\n"
    );
    let new = lines(&[mod_line(&c, ITEM_B, "created", "2026-01-09T00:00:00Z")]);
    assert_eq!(
        env.ok_in(&["--now", "2026-01-09T00:00:00Z", "record"], &new),
        "1\n"
    );
    let out = env.ok(&[
        "--now",
        "2026-01-10T00:00:00Z",
        "purge",
        "--older-than",
        "90d",
    ]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("purged 2 modifications, 2 values and 0 seen marks older than "),
        "{out}"
    );
    assert_eq!(env.count("modifications"), 1);
    assert_eq!(env.count("modification_values"), 1);
    let again = env.ok(&[
        "--now",
        "2026-01-10T00:00:00Z",
        "purge",
        "--older-than",
        "1w",
    ]);
    assert!(
        again.starts_with("purged 0 modifications, 0 values and 0 seen marks"),
        "{again}"
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
    env.refused(&["--now", NOW, "record"], &lines(&[line]), "unknown field");
    let mut item = item_json(&c, "Lunch");
    item[hostile] = json!(1);
    env.refused(
        &["item", "put"],
        item.to_string().as_bytes(),
        "unknown field",
    );
}

#[test]
fn item_put_keeps_the_items_url_and_refuses_a_bad_one() {
    let (env, c) = world();
    let mut item = item_json(&c, "Lunch");
    item["url"] = json!("HTTPS://Wiki.Example/lunch?a=1&b=<2>");
    let v: Value = serde_json::from_str(&env.ok_in(&["item", "put"], item.to_string().as_bytes()))
        .expect("JSON outcome");
    // Stored as the URL standard writes it, and recorded like any attribute.
    assert!(v["changes"].as_array().unwrap().contains(&json!({
        "attribute": "url", "old": null, "new": "https://wiki.example/lunch?a=1&b=%3C2%3E"
    })));
    for (url, needle) in [
        (json!("javascript:alert(1)"), "use an http or https URL"),
        (json!("data:text/html,x"), "use an http or https URL"),
        (json!("https://root:secret@wiki.example/"), "credentials"),
        (
            json!("https://wiki.example/a\r\nSet-Cookie: x"),
            "control character",
        ),
        (json!("https://wiki.example/a\u{2028}"), "separator"),
        (json!("https://wiki.example/a b"), "a space"),
        (json!("wiki.example/lunch"), "invalid url"),
        (
            json!(format!("https://wiki.example/{}", "x".repeat(2048))),
            "longer than 2048 bytes",
        ),
        (json!({"href": "https://wiki.example/"}), "invalid type"),
    ] {
        let mut bad = item_json(&c, "Team lunch");
        bad["url"] = url;
        let out = env.refused(&["item", "put"], bad.to_string().as_bytes(), needle);
        assert!(!out.stderr.contains("Set-Cookie: x\n"), "{}", out.stderr);
    }
}
