//! Black-box tests of `digestd subscription optouts [ID]` and
//! `digestd subscription optin ID --member NAME`: the operator sees which
//! members opted out of a group's subscription and clears one. Bad input
//! (an unknown subscription or member, no such opt-out, an id that is no
//! number) is one line on stderr, exit 2, nothing written. The opt-outs
//! are made as the pages make them (`remove::opt_out_in_tx`); the pages
//! and the queue are `tests/it/http_pages_group_optout.rs`.

use crate::common;

use common::cli::*;
use common::{at, TestDb};
use digestd::ids::{PartyId, SubscriptionId};
use serde_json::Value;

/// team (ana, ben) with a daily digest of every collection; ana and ben
/// opted out of it. Returns the subscription's id.
fn world(env: &Env) -> i64 {
    env.add_user("ana", &["--email", "ana@example.com"]);
    env.add_user("ben", &["--email", "ben@example.com"]);
    env.add_user("zed", &[]);
    env.add_group("team");
    env.add_member("team", "ana");
    env.add_member("team", "ben");
    let out = env.ok(&[
        "subscribe",
        "team",
        "--frequency",
        "daily",
        "--kind",
        "modification",
        "--all",
    ]);
    let sub = assert_integer_last_line(&out);
    let mut c = TestDb::existing(&env.url).conn();
    let who =
        |c: &mut digestd::db::DbConn, n: &str| PartyId(digestd::parties::find(c, n).unwrap().0 .0);
    for name in ["ben", "ana"] {
        let p = who(&mut c, name);
        c.write_tx(|c| {
            digestd::remove::opt_out_in_tx(
                c,
                at("2026-11-22T10:00:00Z"),
                p,
                &[SubscriptionId(sub)],
                digestd::remove::Via::Page,
            )
        })
        .unwrap();
    }
    sub
}

#[test]
fn optouts_lists_them_and_optin_clears_one() {
    let env = Env::init();
    let sub = world(&env);
    let s = sub.to_string();
    let out = env.ok(&["subscription", "optouts", &s]);
    assert_eq!(
        out,
        format!(
            "subscription {sub}: ana opted out at 2026-11-22T10:00:00Z\n\
             subscription {sub}: ben opted out at 2026-11-22T10:00:00Z\n"
        )
    );
    assert_eq!(
        env.ok(&["subscription", "optouts"]),
        out,
        "every subscription's"
    );
    let json: Value =
        serde_json::from_str(&env.ok(&["subscription", "optouts", &s, "--json"])).unwrap();
    assert_eq!(json[1]["member"], "ben");
    assert_eq!(json[1]["subscription"], sub);
    assert_eq!(json[1]["created_at"], "2026-11-22T10:00:00Z");
    assert_eq!(
        env.ok(&["subscription", "optin", &s, "--member", "ben"]),
        format!("cleared ben's opt-out from subscription {sub}\n")
    );
    assert_eq!(
        env.ok(&["subscription", "optouts", &s]),
        format!("subscription {sub}: ana opted out at 2026-11-22T10:00:00Z\n")
    );
    assert_eq!(env.count("subscription_optouts"), 1);
    // The group keeps its subscription throughout.
    assert!(!env.ok(&["subscription", "list"]).contains("paused"));
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let env = Env::init();
    let sub = world(&env);
    let s = sub.to_string();
    let other = (sub + 100).to_string();
    env.refused(
        &["subscription", "optouts", &other],
        b"",
        &format!("no subscription {other}"),
    );
    env.refused(
        &["subscription", "optin", &other, "--member", "ben"],
        b"",
        &format!("no subscription {other}"),
    );
    env.refused(
        &["subscription", "optin", &s, "--member", "nobody"],
        b"",
        "no user or group named",
    );
    env.refused(
        &["subscription", "optin", &s, "--member", "bad\u{7}name"],
        b"",
        "no user or group named",
    );
    env.refused(
        &["subscription", "optin", &s, "--member", "zed"],
        b"",
        "zed has not opted out of subscription",
    );
    env.usage_error(&["subscription", "optin", "abc", "--member", "ben"]);
    env.usage_error(&["subscription", "optin", &s]);
    env.usage_error(&["subscription", "optouts", "x"]);
    assert_eq!(env.count("subscription_optouts"), 2);
}
