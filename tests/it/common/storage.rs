//! Shared by the storage tests (`storage_*.rs`): row counts of every table
//! an operation could write, a user, a bad-input assertion, and a world of
//! two collections with an item to put in them.

use super::at;
use diesel::prelude::*;
use digestd::db::schema as t;
use digestd::db::DbConn;
use digestd::items::{self, ItemInput};
use digestd::parties::{self, NewUser};
use digestd::Result;

/// Row counts of every table an operation could write.
pub fn counts(c: &mut DbConn) -> Vec<i64> {
    vec![
        t::parties::table.count().get_result(c).unwrap(),
        t::users::table.count().get_result(c).unwrap(),
        t::contact_points::table.count().get_result(c).unwrap(),
        t::memberships::table.count().get_result(c).unwrap(),
        t::collections::table.count().get_result(c).unwrap(),
        t::items::table.count().get_result(c).unwrap(),
        t::collection_items::table.count().get_result(c).unwrap(),
        t::modifications::table.count().get_result(c).unwrap(),
        t::modification_values::table.count().get_result(c).unwrap(),
        t::subscriptions::table.count().get_result(c).unwrap(),
    ]
}

pub fn user(name: &str, tz: &str) -> NewUser {
    NewUser {
        name: name.into(),
        timezone: tz.into(),
        email: Some(format!("{name}@example.com")),
        ..Default::default()
    }
}

pub fn assert_bad_input<T: std::fmt::Debug>(r: Result<T>, what: &str) {
    match r {
        Err(e) if e.is_bad_input() => {
            assert!(
                !e.to_string().contains('\n'),
                "{what}: multi-line error {e}"
            )
        }
        other => panic!("{what}: expected bad input, got {other:?}"),
    }
}

pub fn world(c: &mut DbConn) -> (items::Collection, items::Collection) {
    let now = at("2026-11-01T00:00:00Z");
    parties::create_user(c, now, &user("gr24", "America/Los_Angeles")).unwrap();
    let cal = items::create_collection(c, now, "Calendar", None).unwrap();
    let other = items::create_collection(c, now, "Other", None).unwrap();
    (cal, other)
}

pub fn item(uuid: &str, coll: &str) -> ItemInput {
    ItemInput {
        uuid: uuid.into(),
        collection: Some(coll.into()),
        kind: "event".into(),
        title: "Janitor's Pipe Dream".into(),
        start: Some("2026-11-24T23:00:00Z".into()),
        tz: Some("America/Los_Angeles".into()),
        actor: "gr24".into(),
        at: Some("2026-11-20T10:00:00Z".into()),
        ..Default::default()
    }
}
