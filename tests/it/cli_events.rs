//! `digestd events list` as an operator reads it: each event's status,
//! attempts and last error, so a receiver that refuses is seen from the
//! command line (`docs/operations.md`, Alerting). On SQLite.

use crate::common;

use common::http::Gateway;
use digestd::parties;

#[test]
fn events_list_shows_attempts_and_the_last_error() {
    // docs/operations.md sends an operator whose receiver refuses to
    // `events list` for the last error: the text form shows it.
    let (dir, cfg) = common::delivery::webhook_cli();
    let gw = Gateway::start(vec![(503, vec![], "down\tfor\r\nrepairs".into())]);
    let posting = dir.path().join("posting.toml");
    let base = std::fs::read_to_string(&cfg).unwrap();
    let secret = parties::new_webhook_secret();
    let url = gw.url();
    std::fs::write(
        &posting,
        format!("{base}[events]\nurl = \"{url}\"\nsecret = \"{secret}\"\n"),
    )
    .unwrap();
    let ok = |args: &[&str]| {
        let out = common::digestd_with_config(&posting, args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    ok(&[
        "contact",
        "ana",
        "--channel",
        "email",
        "--set",
        "ana@example.com",
    ]);
    let coll = ok(&["collection", "add", "Rota"]).trim().to_string();
    let sub = [
        "subscribe",
        "ana",
        "--collection",
        &coll,
        "--frequency",
        "daily",
        "--kind",
        "modification",
    ];
    ok(&sub);
    let before = ok(&["events", "list"]);
    assert!(
        before.contains("\tsubscription.created\tpending\t0\t-\t{"),
        "{before}"
    );
    assert!(ok(&["queue", "run"]).contains("retrying 1"));
    let after = ok(&["events", "list"]);
    assert_eq!(after.lines().count(), 1, "{after}");
    assert!(
        after.contains("\tsubscription.created\tpending\t1\tevents: 503 down for  repairs\t{\""),
        "{after}"
    );
}
