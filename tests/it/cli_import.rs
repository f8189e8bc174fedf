//! Black-box tests of `user import`, `subscription import` and `group
//! import`: the binary reads JSON lines on stdin, prints a count (or the
//! new ids, in input order), and refuses bad input with exit 2, one line
//! naming the bad lines, and nothing written. The back-end behaviour is in
//! `tests/it/import.rs`.

use crate::common;

use common::cli::*;

#[test]
fn the_three_imports_through_the_binary() {
    let env = Env::init();
    let out = env.ok_in(
        &["user", "import"],
        br#"{"name":"ann","tz":"Europe/Paris","email":"ann@example.org"}
{"name":"bo","tz":"UTC","email":"bo@example.org","daily_hour":6}
"#,
    );
    assert_eq!(out.trim(), "imported 2 users: 2 created, 0 updated");
    assert_eq!(
        env.usernames(&["user", "list", "--json"]),
        vec!["ann", "bo"]
    );
    let out = env.ok_in(&["user", "import"], br#"{"name":"bo","tz":"Asia/Tokyo"}"#);
    assert_eq!(out.trim(), "imported 1 users: 0 created, 1 updated");

    let out = env.ok_in(
        &["group", "import"],
        b"{\"group\":\"team\",\"member\":\"ann\"}\n{\"group\":\"team\",\"member\":\"bo\"}\n",
    );
    assert_eq!(out.trim(), "imported 2 memberships");

    let cal = env.add_collection("Calendar");
    let input = format!(
        "{{\"party\":\"team\",\"frequency\":\"daily\",\"kind\":\"modification\",\"all\":true,\"hour\":9}}\n\
         {{\"party\":\"ann\",\"frequency\":\"weekly\",\"kind\":\"forward\",\"collection\":\"{cal}\",\"day\":\"mon\"}}\n"
    );
    let out = env.ok_in(&["subscription", "import"], input.as_bytes());
    let ids: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{out}");
    assert!(ids[0] < ids[1], "in input order: {out}");
    assert_eq!(env.count("subscriptions"), 2);
}

#[test]
fn bad_lines_are_named_and_nothing_is_written() {
    let env = Env::init();
    env.add_user("ann", &[]);
    env.refused(
        &["user", "import"],
        b"{\"name\":\"ok\",\"tz\":\"UTC\"}\n{\"name\":\"x\",\"tz\":\"Mars/Base\"}\n",
        "1 of 2 lines are invalid, nothing was written: line 2:",
    );
    env.refused(
        &["user", "import"],
        b"{\"name\":\"ok\",\"tz\":\"UTC\"}\n\xff\xfe\n",
        "line 2: bad JSON",
    );
    env.refused(
        &["group", "import"],
        b"{\"group\":\"g\",\"member\":\"ann\"}\n{\"group\":\"ann\",\"member\":\"g\"}\n",
        "line 2",
    );
    env.refused(
        &["subscription", "import"],
        b"{\"party\":\"ann\",\"frequency\":\"daily\",\"kind\":\"modification\",\"all\":true,\"channels\":[\"email\"]}\n",
        "line 1",
    );
}
