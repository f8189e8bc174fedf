//! Black-box tests of the `digestd` binary: collections, items, `record`
//! and `purge` (`src/cli/content.rs`); what they refuse is in
//! `cli_record_refusals.rs` and `cli_item_refusals.rs`.
//!
//! Each test runs the real executable against a throwaway SQLite database
//! in its own temporary directory; the harness is in `common/cli.rs`. Bad
//! input must give exit code 2 and write nothing.

use crate::common;

use common::cli::*;
use serde_json::{json, Value};

// ------------------------------------------------------------ happy paths

/// The clock of the `record` commands: their lines' `at` are about then.
pub(crate) const NOW: &str = "2026-01-02T00:00:00Z";

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
