//! Black-box tests of the `digestd` binary: what `item put` refuses (`src/cli/content.rs`).
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::cli_content::NOW;
use crate::common;

use common::cli::*;
use serde_json::{json, Value};

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
