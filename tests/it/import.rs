//! Bulk import (`user import`, `subscription import`, `group import`) on
//! SQLite and PostgreSQL: good input lands whole, in input order; one bad
//! line refuses everything, names the line, and writes nothing.

use crate::common;

use common::storage::counts;
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::users;
use digestd::db::DbConn;
use digestd::error::{Error, Result};
use digestd::import;
use digestd::items;
use digestd::parties;
use digestd::subscriptions;

const NOW: &str = "2026-11-23T08:30:00Z";

fn put_users(c: &mut DbConn, input: &str) -> Result<import::users::Imported> {
    let checked = import::users::check(c, input.as_bytes())?;
    import::users::write(c, at(NOW), &checked, &mut |_| {})
}

fn subs(c: &mut DbConn, input: &str) -> Result<Vec<digestd::ids::SubscriptionId>> {
    import::subs::import(c, at(NOW), input.as_bytes(), true, &mut |_| {})
}

fn groups(c: &mut DbConn, input: &str) -> Result<usize> {
    import::groups::import(c, at(NOW), input.as_bytes(), &mut |_| {})
}

/// The refusal is one line, names `needle`, and nothing changed.
fn refused<T: std::fmt::Debug>(r: Result<T>, c: &mut DbConn, needle: &str, before: &[i64]) {
    match r {
        Err(e @ Error::Invalid(_)) => {
            let msg = e.to_string();
            assert!(msg.contains(needle), "{msg:?} should name {needle:?}");
            assert!(!msg.contains('\n'), "one line: {msg:?}");
        }
        other => panic!("expected a refusal naming {needle:?}, got {other:?}"),
    }
    assert_eq!(counts(c), before, "a refused import wrote nothing");
}

fn users_are_created_then_updated(db: &TestDb) {
    let mut c = db.conn();
    let input = (0..2500)
        .map(|i| {
            format!(
                r#"{{"name":"u{i}","tz":"Europe/Paris","email":"u{i}@example.org","daily_hour":7}}"#
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let done = put_users(&mut c, &input).unwrap();
    assert_eq!((done.created, done.updated), (2500, 0));
    let all = parties::list_users(&mut c).unwrap();
    assert_eq!(all.len(), 2500);
    let u = all.iter().find(|u| u.username == "u1234").unwrap();
    assert_eq!(u.timezone, "Europe/Paris");
    assert_eq!(u.daily_hour, 7);
    assert_eq!(u.email.as_deref(), Some("u1234@example.org"));
    // Every user has their own subscriber code.
    let codes: std::collections::HashSet<String> = users::table
        .select(users::subscriber_code)
        .load::<String>(&mut c)
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(codes.len(), 2500);

    // Again, with one new user and a changed timezone: upsert by name.
    let again = r#"{"name":"u1","tz":"Asia/Tokyo","phone":"+14155550123"}
{"name":"new","tz":"UTC","matrix":"@new:example.org"}
"#;
    let done = put_users(&mut c, again).unwrap();
    assert_eq!((done.created, done.updated), (1, 1));
    let u1 = parties::list_users(&mut c)
        .unwrap()
        .into_iter()
        .find(|u| u.username == "u1")
        .unwrap();
    assert_eq!(u1.timezone, "Asia/Tokyo");
    assert_eq!(u1.email.as_deref(), Some("u1@example.org"), "kept");
    assert_eq!(u1.phone.as_deref(), Some("+14155550123"));
    let new = parties::find(&mut c, "new").unwrap().0;
    let matrix: Vec<String> = parties::contact_points(&mut c, new)
        .unwrap()
        .into_iter()
        .filter(|p| p.channel == "matrix")
        .map(|p| p.address)
        .collect();
    assert_eq!(matrix, ["@new:example.org"]);
}

fn a_bad_user_line_refuses_all(db: &TestDb) {
    let mut c = db.conn();
    parties::create_group(&mut c, at(NOW), "team", None).unwrap();
    let before = counts(&mut c);
    let good = r#"{"name":"ok","tz":"UTC"}"#;
    for (bad, needle) in [
        (r#"{"name":"x","tz":"Mars/Olympus"}"#, "line 2"),
        (
            r#"{"name":"x","tz":"UTC","email":"a@b\r\nBcc: c@d"}"#,
            "line 2",
        ),
        (r#"{"name":"x","tz":"UTC","xmpp":"not a jid@@"}"#, "line 2"),
        (r#"{"name":"x","tz":"UTC","phone":"12345"}"#, "line 2"),
        (
            r#"{"name":"x","tz":"UTC","matrix":"@x\u0000:b.org"}"#,
            "line 2",
        ),
        (r#"{"name":"x","tz":"UTC","daily_hour":24}"#, "line 2"),
        (
            r#"{"name":"x","tz":"UTC","week_start":"someday"}"#,
            "line 2",
        ),
        (r#"{"name":"x"}"#, "line 2: bad JSON"),
        (r#"{"name":"x","tz":"UTC","admin":true}"#, "unknown field"),
        (r#"{"name":"team","tz":"UTC"}"#, "is a group"),
        (r#"{"name":"ok","tz":"UTC"}"#, "also on line 1"),
        (r#"{"name":"a\nb","tz":"UTC"}"#, "line 2"),
        ("[1,2]", "line 2"),
    ] {
        let input = format!("{good}\n{bad}\n");
        refused(put_users(&mut c, &input), &mut c, needle, &before);
    }
    // Not UTF-8, and one line past the limit.
    let mut raw = format!("{good}\n").into_bytes();
    raw.extend_from_slice(b"{\"name\":\"\xff\",\"tz\":\"UTC\"}\n");
    let r = import::users::check(&mut c, &raw[..]);
    refused(r.map(|_| ()), &mut c, "line 2", &before);
    let huge = format!(
        "{good}\n{{\"name\":\"x\",\"tz\":\"UTC\",\"locale\":\"{}\"}}\n",
        "x".repeat(2 << 20)
    );
    refused(put_users(&mut c, &huge), &mut c, "longer than", &before);
    // Many bad lines: the count of all, the first ones listed.
    let many = (0..500)
        .map(|i| format!(r#"{{"name":"m{i}","tz":"Nowhere/{i}"}}"#))
        .collect::<Vec<_>>()
        .join("\n");
    refused(
        put_users(&mut c, &many),
        &mut c,
        "500 of 500 lines",
        &before,
    );
}

fn subscriptions_in_input_order(db: &TestDb) {
    let mut c = db.conn();
    put_users(
        &mut c,
        r#"{"name":"ann","tz":"Europe/Paris","email":"ann@example.org","xmpp":"ann@chat.example.org"}
{"name":"bo","tz":"America/New_York","email":"bo@example.org"}"#,
    )
    .unwrap();
    let cal = items::create_collection(&mut c, at(NOW), "Calendar", None).unwrap();
    let input = format!(
        r#"{{"party":"bo","frequency":"weekly","kind":"modification","all":true,"day":"fri","hour":17}}
{{"party":"ann","frequency":"daily","kind":"modification","collection":"{u}","hour":9}}
{{"party":"ann","frequency":"daily","kind":"modification","collection":"{u}","hour":9,"channels":["xmpp"]}}
{{"party":"ann","frequency":"hourly","kind":"forward","all":true,"send_empty":true}}
"#,
        u = cal.uuid
    );
    let ids = subs(&mut c, &input).unwrap();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[1], ids[2], "the xmpp line merges into the email one");
    let stored = subscriptions::list(&mut c).unwrap();
    assert_eq!(stored.len(), 3);
    let bo = stored.iter().find(|s| s.id == ids[0]).unwrap();
    assert_eq!(
        (bo.frequency.as_str(), bo.day_of_week, bo.hour_of_day),
        ("weekly", Some(4), Some(17))
    );
    let ann = stored.iter().find(|s| s.id == ids[1]).unwrap();
    assert_eq!(ann.channels, vec!["email", "xmpp"]);
    assert!(
        ids[0].0 < ids[1].0 && ids[1].0 < ids[3].0,
        "ids in input order"
    );
    // One subscription.created a subscription made, with its channels as
    // merged in the batch.
    let made = digestd::events::list(&mut c, None, None, 100).unwrap();
    let made: Vec<(i64, &str, serde_json::Value)> = made
        .iter()
        .map(|e| {
            (
                e.subscription.unwrap(),
                e.kind.as_str(),
                e.data["channels"].clone(),
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            (
                ids[0].0,
                "subscription.created",
                serde_json::json!(["email"])
            ),
            (
                ids[1].0,
                "subscription.created",
                serde_json::json!(["email", "xmpp"])
            ),
            (
                ids[3].0,
                "subscription.created",
                serde_json::json!(["email"])
            ),
        ]
    );

    // One bad line refuses every line, and nothing is stored.
    let before = counts(&mut c);
    for (bad, needle) in [
        // identical to a stored subscription
        (
            format!(r#"{{"party":"ann","frequency":"daily","kind":"modification","collection":"{}","hour":9}}"#, cal.uuid),
            "already has this digest",
        ),
        (r#"{"party":"nobody","frequency":"daily","kind":"modification","all":true}"#.to_string(), "nobody"),
        (r#"{"party":"bo","frequency":"daily","kind":"modification","all":true,"channels":["sms"]}"#.to_string(), "line 2"),
        (r#"{"party":"bo","frequency":"daily","kind":"modification","all":true,"hour":-1}"#.to_string(), "line 2"),
        (r#"{"party":"bo","frequency":"hourly","kind":"modification","all":true,"day":"mon"}"#.to_string(), "hourly"),
        (r#"{"party":"bo","frequency":"daily","kind":"modification"}"#.to_string(), "\"all\": true"),
        (format!(r#"{{"party":"bo","frequency":"daily","kind":"modification","all":true,"collection":"{}"}}"#, cal.uuid), "not both"),
        (r#"{"party":"bo","frequency":"daily","kind":"modification","collection":"00000000-0000-4000-8000-000000000000"}"#.to_string(), "line 2"),
        (r#"{"party":"bo","frequency":"yearly","kind":"modification","all":true}"#.to_string(), "line 2"),
    ] {
        let input = format!(
            "{{\"party\":\"bo\",\"frequency\":\"daily\",\"kind\":\"forward\",\"all\":true,\"hour\":6}}\n{bad}\n"
        );
        refused(subs(&mut c, &input), &mut c, needle, &before);
    }
    // The same new subscription twice in one input: the second is refused.
    let twice = r#"{"party":"bo","frequency":"daily","kind":"forward","all":true,"hour":6}
{"party":"bo","frequency":"daily","kind":"forward","all":true,"hour":6}"#;
    refused(subs(&mut c, twice), &mut c, "an earlier line", &before);
}

/// What each subscription's row holds that import and `subscription add`
/// both decide: party, collection, kind, frequency, hour, day, channels,
/// flags and the first due time.
type Decided = (
    i64,
    Option<i64>,
    String,
    String,
    Option<i32>,
    Option<i32>,
    String,
    bool,
    bool,
    Option<chrono::NaiveDateTime>,
);

fn decided(c: &mut DbConn, party: &str) -> Vec<Decided> {
    use digestd::db::schema::subscriptions as s;
    let (id, _) = parties::find(c, party).unwrap();
    s::table
        .filter(s::party_id.eq(id.0))
        .select((
            s::party_id,
            s::collection_id,
            s::kind,
            s::frequency,
            s::hour_of_day,
            s::day_of_week,
            s::channels,
            s::include_own,
            s::send_empty,
            s::next_due_at,
        ))
        .order(s::id)
        .load(c)
        .unwrap()
}

/// An import line as `subscription add` would be asked for it: the same
/// fields, email when it names no channel.
fn as_subscription_add(line: &str) -> subscriptions::SubscribeRequest {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    subscriptions::SubscribeRequest {
        party: s("party").unwrap(),
        frequency: s("frequency").unwrap(),
        kind: s("kind").unwrap(),
        collection: s("collection"),
        channels: v
            .get("channels")
            .map(|a| {
                a.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_else(|| vec!["email".into()]),
        hour: v.get("hour").and_then(|x| x.as_i64()),
        day: s("day"),
        include_own: v.get("include_own").is_some(),
        send_empty: false,
    }
}

/// The batch path decides as `subscription add` does, line by line: the
/// same defaults from the user's (or a group's) preferences, the same first
/// due times, the same merges, into stored rows and earlier lines alike.
fn import_decides_as_subscription_add(db: &TestDb) {
    let mut c = db.conn();
    // Two of each: the first imported, the second added one at a time.
    put_users(
        &mut c,
        r#"{"name":"ann","tz":"Asia/Kolkata","email":"ann@example.org","xmpp":"ann@chat.example.org","week_start":"sun","daily_hour":6}
{"name":"bo","tz":"Asia/Kolkata","email":"bo@example.org","xmpp":"bo@chat.example.org","week_start":"sun","daily_hour":6}"#,
    )
    .unwrap();
    // Groups with preferences of their own, not the defaults.
    for team in ["team1", "team2"] {
        parties::create_group(&mut c, at(NOW), team, Some("t@example.org")).unwrap();
        let tokyo = parties::UserChanges {
            timezone: Some("Asia/Tokyo".into()),
            week_start: Some("sat".into()),
            daily_hour: Some(19),
            locale: None,
            quiet_hours: None,
        };
        digestd::manage::update_group(&mut c, team, &tokyo).unwrap();
    }
    let cal = items::create_collection(&mut c, at(NOW), "Calendar", None).unwrap();
    // Stored before the import, for each of the pair: a weekly digest that
    // the import adds xmpp to, and a paused one the import may not touch.
    for who in ["ann", "bo"] {
        let weekly = subscriptions::SubscribeRequest {
            party: who.into(),
            frequency: "weekly".into(),
            kind: "forward".into(),
            collection: Some(cal.uuid.clone()),
            channels: vec!["email".into()],
            ..Default::default()
        };
        digestd::manage::subscribe(&mut c, at(NOW), &weekly).unwrap();
    }
    let lines = |who: &str, team: &str| {
        format!(
            r#"{{"party":"{who}","frequency":"daily","kind":"modification","all":true}}
{{"party":"{who}","frequency":"weekly","kind":"modification","collection":"{u}","hour":23}}
{{"party":"{who}","frequency":"weekly","kind":"forward","collection":"{u}","channels":["xmpp"]}}
{{"party":"{who}","frequency":"hourly","kind":"forward","all":true,"include_own":true}}
{{"party":"{who}","frequency":"daily","kind":"modification","all":true,"channels":["xmpp"]}}
{{"party":"{team}","frequency":"daily","kind":"modification","all":true}}
{{"party":"{team}","frequency":"weekly","kind":"modification","all":true,"day":"wed"}}"#,
            u = cal.uuid
        )
    };
    let ids = subs(&mut c, &lines("ann", "team1")).unwrap();
    assert_eq!(ids.len(), 7);
    assert_eq!(ids[0], ids[4], "the xmpp line merges into the earlier line");
    let mut one_by_one = Vec::new();
    for line in lines("bo", "team2").lines() {
        let req = as_subscription_add(line);
        one_by_one.push(
            digestd::manage::subscribe(&mut c, at(NOW), &req)
                .unwrap()
                .id(),
        );
    }
    assert_eq!(one_by_one[0], one_by_one[4]);
    // The same rows, but for the party.
    let strip = |rows: Vec<Decided>| -> Vec<Decided> {
        rows.into_iter()
            .map(|mut r| {
                r.0 = 0;
                r
            })
            .collect()
    };
    assert_eq!(strip(decided(&mut c, "ann")), strip(decided(&mut c, "bo")));
    assert_eq!(
        strip(decided(&mut c, "team1")),
        strip(decided(&mut c, "team2"))
    );
    let ann = decided(&mut c, "ann");
    assert_eq!(ann.len(), 4, "{ann:?}");
    assert!(
        ann.iter()
            .any(|r| r.3 == "weekly" && r.2 == "forward" && r.6 == "email,xmpp"),
        "the stored weekly digest got xmpp: {ann:?}"
    );

    // A stored paused twin is refused, naming it; nothing is written.
    let paused = ids[1];
    subscriptions::pause(&mut c, at("2026-11-23T09:00:00Z"), paused).unwrap();
    let before = counts(&mut c);
    let again = format!(
        r#"{{"party":"ann","frequency":"weekly","kind":"modification","collection":"{}","hour":23,"channels":["xmpp"]}}"#,
        cal.uuid
    );
    refused(
        subs(&mut c, &again),
        &mut c,
        &format!("subscription {paused}, which is paused"),
        &before,
    );
}

fn groups_are_built_and_cycles_refused(db: &TestDb) {
    let mut c = db.conn();
    put_users(
        &mut c,
        r#"{"name":"ann","tz":"UTC"}
{"name":"bo","tz":"UTC"}"#,
    )
    .unwrap();
    let n = groups(
        &mut c,
        r#"{"group":"team","member":"ann"}
{"group":"team","member":"bo"}
{"group":"all","member":"team"}
{"group":"all","member":"team"}"#,
    )
    .unwrap();
    assert_eq!(n, 4);
    let (all, _) = parties::find(&mut c, "all").unwrap();
    let names: Vec<String> = parties::expand(&mut c, all)
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    assert_eq!(names, vec!["ann", "bo"]);

    let before = counts(&mut c);
    for (bad, needle) in [
        (r#"{"group":"team","member":"all"}"#, "cycle"),
        (r#"{"group":"team","member":"team"}"#, "itself"),
        (r#"{"group":"team","member":"nobody"}"#, "nobody"),
        (r#"{"group":"ann","member":"bo"}"#, "is a user"),
        (r#"{"group":"bad\r\nname","member":"bo"}"#, "line 2"),
        (r#"{"group":"team"}"#, "bad JSON"),
    ] {
        let input = format!("{{\"group\":\"newgroup\",\"member\":\"ann\"}}\n{bad}\n");
        refused(groups(&mut c, &input), &mut c, needle, &before);
    }
}

backend_tests!(
    users_are_created_then_updated,
    a_bad_user_line_refuses_all,
    subscriptions_in_input_order,
    import_decides_as_subscription_add,
    groups_are_built_and_cycles_refused,
);
