//! Black-box tests of deleting and renaming: `user delete|rename`,
//! `group delete|rename|remove-member`, `collection delete|rename`,
//! `subscription end`. Deleting what has history (runs, sent and pending
//! requests) is shown with row counts: everything in one transaction,
//! history kept, nothing left to send. Bad input: exit 2, nothing written.

use crate::common;

use common::cli::*;
use diesel::prelude::*;
use digestd::db::schema;
use serde_json::{json, Value};

const NOW: &str = "2026-11-23T08:30:00Z";

/// Runs with `--now NOW`.
fn at(env: &Env, args: &[&str]) -> String {
    let mut all = vec!["--now", NOW];
    all.extend_from_slice(args);
    env.ok(&all)
}

fn runs(env: &Env) -> i64 {
    let c = &mut SqliteConnection::establish(env.db_path.to_str().unwrap()).unwrap();
    schema::subscription_runs::table
        .count()
        .get_result(c)
        .unwrap()
}

fn status(env: &Env, id: &str) -> Value {
    serde_json::from_str(&env.ok(&["request", "show", id, "--json"])).unwrap()
}

fn notify(env: &Env, to: &str, subject: &str) -> String {
    let out = env.ok(&[
        "notify",
        "--from",
        "bob",
        "--to",
        to,
        "--subject",
        subject,
        "--message",
        "m",
    ]);
    out.lines().last().unwrap().to_string()
}

/// alice (email) with two subscriptions that have run and posted a
/// digest each (send-empty), one sent notification and one pending; bob
/// and alice in team.
fn history() -> (Env, String, Vec<String>) {
    let (env, c) = world();
    env.add_user("bob", &["--email", "bob@example.com"]);
    env.add_group("team");
    env.add_member("team", "alice");
    env.add_member("team", "bob");
    for extra in [&["--collection", c.as_str()][..], &["--all"]] {
        let mut args = vec![
            "subscribe",
            "alice",
            "--frequency",
            "hourly",
            "--kind",
            "modification",
            "--send-empty",
        ];
        args.extend_from_slice(extra);
        at(&env, &args);
    }
    let sent = notify(&env, "alice", "Sent");
    env.ok(&["queue", "run", "--at", "2026-11-23T08:40:00Z"]);
    assert_eq!(status(&env, &sent)["status"], "sent");
    let out = env.ok(&[
        "--now",
        "2026-11-23T09:00:00Z",
        "tick",
        "--at",
        "2026-11-23T09:00:00Z",
    ]);
    assert_eq!(out.lines().count(), 2, "{out}");
    let pending = notify(&env, "alice", "Pending");
    (env, c, vec![sent, pending])
}

#[test]
fn deleting_a_user_ends_cancels_and_removes_in_one_go_and_keeps_history() {
    let (env, _, ids) = history();
    let before = env.snapshot();
    assert_eq!(before["subscriptions"], 2);
    assert_eq!(before["nt_requests"], 4, "2 notifications, 2 digests");
    assert_eq!(before["memberships"], 2);
    assert_eq!(before["contact_points"], 2);
    assert_eq!(runs(&env), 2);
    let out = env.ok(&["user", "delete", "alice"]);
    assert_eq!(
        out.trim(),
        "deleted user alice: 2 subscriptions ended, 3 pending messages cancelled, \
         1 memberships removed, 1 contact points removed"
    );
    let after = env.snapshot();
    assert_eq!(after["subscriptions"], 0);
    assert_eq!(runs(&env), 0);
    assert_eq!(after["users"], before["users"] - 1);
    assert_eq!(after["memberships"], 1, "bob stays in team");
    assert_eq!(after["contact_points"], 1);
    // History stays: every request, message and log row is still there.
    for t in [
        "nt_requests",
        "nt_messages",
        "nt_queue",
        "delivery_log",
        "parties",
    ] {
        assert_eq!(after[t], before[t], "{t}");
    }
    let sent = status(&env, &ids[0]);
    assert_eq!(sent["status"], "sent");
    assert!(
        sent["recipients"][0]["party"]
            .as_str()
            .unwrap()
            .starts_with("alice (deleted #"),
        "{sent}"
    );
    assert_eq!(status(&env, &ids[1])["status"], "cancelled");
    // A queue pass has nothing left to send.
    let pass = env.ok(&["queue", "run", "--at", "2026-11-23T10:00:00Z"]);
    assert!(
        pass.starts_with("expanded 0 request(s); delivered nothing"),
        "{pass}"
    );
    // The name is free again; lists do not show the tombstone.
    assert_eq!(env.usernames(&["user", "list", "--json"]), ["bob"]);
    env.add_user("alice", &[]);
    assert_eq!(
        env.usernames(&["group", "expand", "team", "--json"]),
        ["bob"]
    );
}

#[test]
fn deleting_a_group_ends_its_subscriptions_and_cancels_requests_to_it() {
    let (env, _, _) = history();
    at(
        &env,
        &[
            "subscribe",
            "team",
            "--frequency",
            "daily",
            "--kind",
            "forward",
            "--all",
        ],
    );
    let to_team = notify(&env, "team", "Team");
    let before = env.snapshot();
    let out = env.ok(&["group", "delete", "team"]);
    assert_eq!(
        out.trim(),
        "deleted group team: 1 subscriptions ended, 1 pending messages cancelled, \
         2 memberships removed"
    );
    let after = env.snapshot();
    assert_eq!(after["subscriptions"], before["subscriptions"] - 1);
    assert_eq!(after["memberships"], 0);
    assert_eq!(after["users"], before["users"], "members stay");
    assert_eq!(after["nt_requests"], before["nt_requests"]);
    assert_eq!(status(&env, &to_team)["status"], "cancelled");
    env.refused(&["group", "expand", "team"], b"", "no user or group");
}

#[test]
fn deleting_a_collection_keeps_shared_items_and_drops_its_log() {
    let (env, c, _) = history();
    let d = env.add_collection("Other");
    env.ok_in(
        &["item", "put"],
        item_json(&c, "Lunch").to_string().as_bytes(),
    );
    let shared = json!({
        "uuid": ITEM_B, "collections": [c, d], "kind": "event",
        "title": "Shared", "start": "2026-03-01T12:00:00Z", "actor": "alice",
    });
    env.ok_in(&["item", "put"], shared.to_string().as_bytes());
    let before = env.snapshot();
    assert_eq!(before["items"], 2);
    assert_eq!(before["modifications"], 3, "two in c, one in d");
    let out = env.ok(&["collection", "delete", &c]);
    assert_eq!(
        out.trim(),
        format!(
            "deleted collection {c}: 1 subscriptions ended, 1 pending messages cancelled, \
             1 items deleted, 1 items kept (in other collections), 2 modifications deleted"
        )
    );
    let after = env.snapshot();
    assert_eq!(after["collections"], before["collections"] - 1);
    assert_eq!(after["items"], 1);
    assert_eq!(after["collection_items"], 1);
    assert_eq!(after["modifications"], 1);
    assert_eq!(
        after["subscriptions"], 1,
        "the one to all collections stays"
    );
    assert_eq!(after["nt_requests"], before["nt_requests"]);
    env.refused(&["collection", "delete", &c], b"", "no collection");
}

#[test]
fn ending_a_subscription_cancels_its_unsent_digest_and_forgets_its_runs() {
    let (env, _, _) = history();
    let list: Value = serde_json::from_str(&env.ok(&["subscription", "list", "--json"])).unwrap();
    let id = list[0]["id"].to_string();
    let before = env.snapshot();
    let out = env.ok(&["subscription", "end", &id]);
    assert_eq!(
        out.trim(),
        format!("ended subscription {id}: 1 pending messages cancelled, 1 runs forgotten")
    );
    assert_eq!(env.count("subscriptions"), before["subscriptions"] - 1);
    assert_eq!(runs(&env), 1);
    assert_eq!(env.count("nt_requests"), before["nt_requests"]);
    let c = &mut SqliteConnection::establish(env.db_path.to_str().unwrap()).unwrap();
    let linked: Vec<(Option<i64>, String)> = schema::nt_requests::table
        .filter(schema::nt_requests::kind.eq("digest"))
        .select((
            schema::nt_requests::subscription_id,
            schema::nt_requests::status,
        ))
        .order(schema::nt_requests::request_id)
        .load(c)
        .unwrap();
    let other = list[1]["id"].as_i64();
    assert!(
        linked.contains(&(None, "cancelled".into())) && linked.contains(&(other, "pending".into())),
        "{linked:?}"
    );
    env.refused(
        &["subscription", "end", &id],
        b"",
        &format!("no subscription {id}"),
    );
    env.usage_error(&["subscription", "end", "x"]);
}

#[test]
fn renames_keep_ids_and_history() {
    let (env, c) = world();
    env.add_group("team");
    env.add_member("team", "alice");
    assert_eq!(
        env.ok(&["user", "rename", "alice", "ann"]).trim(),
        "renamed user alice to ann"
    );
    assert_eq!(
        env.ok(&["group", "rename", "team", "crew"]).trim(),
        "renamed group team to crew"
    );
    assert_eq!(
        env.usernames(&["group", "expand", "crew", "--json"]),
        ["ann"]
    );
    assert_eq!(
        env.ok(&["collection", "rename", &c, "Team calendar"])
            .trim(),
        format!("renamed collection {c} to Team calendar")
    );
    assert!(env.ok(&["collection", "list"]).contains("Team calendar"));
    assert_eq!(
        env.ok(&["group", "remove-member", "crew", "ann"]).trim(),
        "ann is no longer in crew"
    );
    assert_eq!(env.count("memberships"), 0);
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let (env, c, _) = history();
    env.add_user("carol", &[]);
    let cases: &[(&[&str], &str)] = &[
        (&["user", "delete", "nobody"], "no user named \"nobody\""),
        (
            &["user", "delete", "team"],
            "\"team\" is a group, not a user",
        ),
        (&["user", "delete", "a\nb"], "no user named"),
        (&["user", "delete", "digestd"], "is a group, not a user"),
        (&["group", "delete", "alice"], "is a user, not a group"),
        (&["group", "delete", "nobody"], "no group named"),
        (
            &["group", "delete", "digestd"],
            "reserved for digestd itself",
        ),
        (
            &["group", "rename", "digestd", "x"],
            "reserved for digestd itself",
        ),
        (&["user", "rename", "alice", "bob"], "already exists"),
        (
            &["user", "rename", "alice", "bad name"],
            "invalid user name",
        ),
        (&["user", "rename", "alice", "a\r\nb"], "invalid user name"),
        (&["user", "rename", "alice", "digestd"], "reserved"),
        (&["user", "rename", "nobody", "x"], "no user named"),
        (&["user", "rename", "team", "x"], "is a group"),
        (&["group", "rename", "team", "alice"], "already exists"),
        (
            &["group", "remove-member", "team", "carol"],
            "\"carol\" is not in \"team\"",
        ),
        (
            &["group", "remove-member", "team", "nobody"],
            "no user or group",
        ),
        (
            &["group", "remove-member", "alice", "bob"],
            "is a user, not a group",
        ),
        (&["collection", "delete", "not-a-uuid"], "collection"),
        (
            &["collection", "delete", NO_SUCH_COLLECTION],
            "no collection",
        ),
        (
            &["collection", "rename", &c, ""],
            "collection name is empty",
        ),
        (
            &["collection", "rename", &c, "a\u{FFFF}b"],
            "collection name",
        ),
        (
            &["collection", "rename", NO_SUCH_COLLECTION, "x"],
            "no collection",
        ),
        (&["subscription", "end", "999999"], "no subscription 999999"),
    ];
    for (args, needle) in cases {
        env.refused(args, b"", needle);
    }
    assert_eq!(runs(&env), 2);
}
