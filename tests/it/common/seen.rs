//! The seen tests' fixtures: bob's (or anyone's) changes and a person's
//! marks, written through the library as the API and the CLI write them,
//! and the subscription every seen test follows Docs with.

use digestd::config::RecordConfig;
use digestd::db::DbConn;
use digestd::ingest;
use digestd::seen::MarkInput;
use digestd::subscriptions::SubscribeRequest;
use serde_json::json;

use super::at;

/// Item `n`'s UUID.
pub fn uuid(n: u128) -> String {
    uuid::Uuid::from_u128(n).to_string()
}

/// bob's change to item `item` of `coll` at `when`, recorded then.
pub fn change(c: &mut DbConn, coll: &str, item: u128, action: &str, title: &str, when: &str) {
    change_by(c, "bob", coll, item, action, title, when);
}

/// [`change`] by `actor`.
pub fn change_by(
    c: &mut DbConn,
    actor: &str,
    coll: &str,
    item: u128,
    action: &str,
    title: &str,
    when: &str,
) {
    let line = json!({
        "collection": coll, "item": uuid(item), "actor": actor, "action": action,
        "at": when, "title": title, "kind": "note",
        "changes": [{"attribute": "status", "old": null, "new": title}],
    })
    .to_string();
    let bounds = RecordConfig::default().at_bounds(at(when));
    let mods = ingest::parse_all(c, line.as_bytes(), &bounds).unwrap();
    ingest::write_batched(c, &mods, 100, &mut |_| {}).unwrap();
}

/// `who` saw `item` at `when`, through the library as the API and CLI call it.
pub fn mark(c: &mut DbConn, who: &str, item: u128, when: &str) {
    let m = MarkInput {
        party: who.into(),
        item: uuid(item),
        at: when.into(),
    };
    let marks = digestd::seen::check(c, &[m], &RecordConfig::default().at_bounds(at(when)))
        .unwrap()
        .unwrap();
    digestd::seen::record(c, &marks).unwrap();
}

/// `party`'s hourly modification digest of `coll`.
pub fn hourly(party: &str, coll: &str) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: "hourly".into(),
        kind: "modification".into(),
        collection: Some(coll.into()),
        ..Default::default()
    }
}

/// Alpha, Beta and Gamma created in `docs` at 08:40, 08:41 and 08:42.
pub fn three_changes(c: &mut DbConn, docs: &str) {
    change(c, docs, 1, "created", "Alpha", "2026-11-23T08:40:00Z");
    change(c, docs, 2, "created", "Beta", "2026-11-23T08:41:00Z");
    change(c, docs, 3, "created", "Gamma", "2026-11-23T08:42:00Z");
}
