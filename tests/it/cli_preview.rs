//! Black-box tests of `digestd preview`: the digest a subscription would
//! get, through the real composer, with nothing posted and the schedule
//! left where it was (row counts, runs and `next_due_at` compared). Bad
//! input: exit 2, one line, nothing written.

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use common::cli::*;
use diesel::prelude::*;
use digestd::db::schema;

/// alice (email, xmpp, phone) subscribed hourly to Calendar at 08:00, and
/// one change to it at 08:10; returns the env and the subscription id.
fn subscribed() -> (Env, String) {
    let env = Env::init();
    env.add_user(
        "alice",
        &[
            "--email",
            "alice@example.com",
            "--xmpp",
            "alice@example.com",
            "--phone",
            "+14155550123",
        ],
    );
    env.add_user("bob", &["--email", "bob@example.com"]);
    let c = env.add_collection("Calendar");
    let out = env.ok(&[
        "--now",
        "2026-11-23T08:00:00Z",
        "subscribe",
        "alice",
        "--frequency",
        "hourly",
        "--kind",
        "modification",
        "--collection",
        &c,
        "--channel",
        "email,xmpp,sms",
    ]);
    let id = out.lines().last().unwrap().to_string();
    let mut line = mod_line(&c, ITEM_A, "edited", "2026-11-23T08:10:00Z");
    line["actor"] = "bob".into();
    env.ok_in(
        &["--now", "2026-11-23T08:20:00Z", "record"],
        &lines(&[line]),
    );
    (env, id)
}

/// What a preview must leave alone besides the row counts: the runs and
/// every subscription's schedule.
fn schedule_state(env: &Env) -> (i64, Vec<Option<chrono::NaiveDateTime>>) {
    let c = &mut SqliteConnection::establish(env.db_path.to_str().unwrap()).unwrap();
    let runs = schema::subscription_runs::table
        .count()
        .get_result(c)
        .unwrap();
    let next = schema::subscriptions::table
        .select(schema::subscriptions::next_due_at)
        .order(schema::subscriptions::id)
        .load(c)
        .unwrap();
    (runs, next)
}

fn preview(env: &Env, now: &str, args: &[&str]) -> Out {
    let mut all = vec!["--now", now, "preview"];
    all.extend_from_slice(args);
    let before = (env.snapshot(), schedule_state(env));
    let out = env.run(&all);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        (env.snapshot(), schedule_state(env)),
        before,
        "preview wrote something"
    );
    out
}

#[test]
fn preview_prints_each_channel_and_writes_nothing() {
    let (env, id) = subscribed();
    let text = preview(&env, "2026-11-23T08:30:00Z", &[&id]);
    assert_eq!(text.stderr, "");
    let mut lines = text.stdout.lines();
    let subject = lines.next().unwrap();
    assert!(!subject.is_empty() && !subject.contains('<'), "{subject}");
    assert_eq!(lines.next(), Some(""), "a blank line after the subject");
    assert!(text.stdout.contains("Team lunch"), "{}", text.stdout);

    let html = preview(&env, "2026-11-23T08:30:00Z", &[&id, "--html"]).stdout;
    assert!(html.contains("<html") || html.contains("<p"), "{html}");
    assert!(html.contains("Team lunch"));
    let chat = preview(&env, "2026-11-23T08:30:00Z", &[&id, "--chat"]).stdout;
    assert!(chat.contains("Team lunch") && !chat.contains('<'), "{chat}");
    let sms = preview(&env, "2026-11-23T08:30:00Z", &[&id, "--sms"]).stdout;
    assert!(
        !sms.trim().is_empty() && sms.len() < text.stdout.len(),
        "{sms}"
    );
    // What a preset would post: its headers, a blank line, its body.
    let slack = preview(&env, "2026-11-23T08:30:00Z", &[&id, "--preset", "slack"]).stdout;
    let (head, body) = slack.split_once("\n\n").unwrap();
    assert_eq!(head, "content-type: application/json");
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["blocks"][0]["type"], "header");
    assert!(body.contains("Team lunch"), "{body}");
    let ntfy = preview(&env, "2026-11-23T08:30:00Z", &[&id, "--preset", "ntfy"]).stdout;
    assert!(
        ntfy.contains("\nmarkdown: yes\n") && ntfy.contains("Team lunch"),
        "{ntfy}"
    );
    // An explicit --at reads the same window as the clock at that instant.
    let at = preview(
        &env,
        "2026-11-23T08:31:00Z",
        &[&id, "--at", "2026-11-23T08:30:00Z"],
    );
    assert_eq!(at.stdout, text.stdout);
    // Before the change the window is empty, and stderr says so.
    let early = preview(&env, "2026-11-23T08:05:00Z", &[&id]);
    assert!(!early.stdout.contains("Team lunch"), "{}", early.stdout);
    assert!(early.stderr.contains("nothing in the window"), "{early:?}");
    assert_eq!(early.stderr.lines().count(), 1);
}

#[test]
fn preview_after_a_tick_shows_what_the_next_digest_holds_so_far() {
    let (env, id) = subscribed();
    let out = env.ok(&["--now", "2026-11-23T09:00:00Z", "tick"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    // The change went out at 09:00: the next window holds nothing yet.
    let next = preview(&env, "2026-11-23T09:30:00Z", &[&id]);
    assert!(!next.stdout.contains("Team lunch"));
    assert!(next.stderr.contains("nothing in the window"));
    // A look back at 08:30 still shows that period's window.
    let back = preview(
        &env,
        "2026-11-23T09:30:00Z",
        &[&id, "--at", "2026-11-23T08:30:00Z"],
    );
    assert!(back.stdout.contains("Team lunch"), "{back:?}");
}

#[test]
fn a_paused_subscription_previews_with_a_note_on_stderr() {
    let (env, id) = subscribed();
    env.ok(&["subscription", "pause", &id]);
    let out = preview(&env, "2026-11-23T08:30:00Z", &[&id]);
    assert!(out.stdout.contains("Team lunch"));
    assert!(out.stderr.starts_with("digestd: note: subscription"));
    assert!(out.stderr.contains("is paused"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1);
}

#[test]
fn preview_refuses_hostile_input_and_writes_nothing() {
    let (env, id) = subscribed();
    env.refused(&["preview", "999"], b"", "no subscription 999");
    env.refused(&["preview", "0"], b"", "no subscription 0");
    for bad in ["abc", "1\r\nX", "", "1.5", "99999999999999999999"] {
        env.usage_error(&["preview", bad]);
    }
    env.usage_error(&["preview", &id, "--html", "--sms"]);
    env.usage_error(&["preview", &id, "--chat", "--html"]);
    env.usage_error(&["preview", &id, "--preset", "slack", "--webhook"]);
    for bad in ["webhook", "email", "pigeon", "slack\r\nX"] {
        env.refused(&["preview", &id, "--preset", bad], b"", "--preset");
    }
    for at in [
        "2026-13-01T00:00:00Z",
        "2026-11-23T08:30:00Z\r\nBcc: x",
        "tomorrow",
        "",
    ] {
        env.refused(&["preview", &id, "--at", at], b"", "--at");
    }
    // Not UTF-8.
    let bad = OsStr::from_bytes(b"\xff\xfe");
    let before = env.snapshot();
    let out = env.run(&[OsStr::new("preview"), bad]);
    assert_usage_error(&out, &["preview".into()]);
    let out = env.run(&[
        OsStr::new("preview"),
        OsStr::new(&id),
        OsStr::new("--at"),
        bad,
    ]);
    assert_usage_error(&out, &["preview --at".into()]);
    assert_eq!(env.snapshot(), before);
}
