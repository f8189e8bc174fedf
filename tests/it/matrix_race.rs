//! Two processes of one installation opening the first direct room for
//! the same person at the same instant, against a real Synapse: two
//! Matrix listeners built apart, each logged in on a device of its own
//! and holding the installation's key as a pass gives it, send a message
//! to each of several people, starting each person's on a barrier. Each
//! person is invited to one room, where both messages are, once each;
//! the account is in no room besides. The alias (`matrix::alias`) is
//! the lock: without it each listener opens a room of its own.
//!
//! The hostile answers to the alias's resolution (not JSON, a room ID
//! that is none, a 404) are scripted on a loopback server through the
//! real queue: each leaves the row to a later attempt and nothing kept.
//! So are a homeserver whose policy refuses the alias (rooms without
//! one) and one that refuses a second invitation of the same person.

use crate::common;
use crate::matrix::{delivery_with, kept_room, notify, scripted, world, ALICE, BOT};

use std::sync::{Arc, Barrier};

use common::delivery::T0;
use common::synapse::{self, Person};
use common::{at, TestDb};
use digestd::config::{EmailConfig, MatrixConfig, MatrixTransport};
use digestd::deliver::listener::{DeliveryError, Listener, MatrixRoute, Outgoing};
use digestd::deliver::matrix::MatrixListener;
use digestd::deliver::msgid::MessageKey;
use digestd::deliver::queue;

const PEOPLE: [(&str, &str); 4] = [
    ALICE,
    ("bea", "bea-password"),
    ("cai", "cai-password"),
    ("dov", "dov-password"),
];

/// The installation's secret both "processes" read from their database.
const SECRET: &str = "one installation's site key";

/// One process's listener: the service account with an access token of
/// its own (a device of its own).
fn process(s: &synapse::Synapse) -> MatrixListener {
    let token = Person::login(s, BOT.0, BOT.1).token().to_string();
    let cfg = MatrixConfig {
        transport: MatrixTransport::Matrix,
        homeserver: s.url(),
        user: format!("@{}:localhost", BOT.0),
        access_token: token,
        allow_http: true,
        timeout_seconds: 30,
        ..MatrixConfig::default()
    };
    let mut l = MatrixListener::new(&cfg, &EmailConfig::default(), common::rt()).unwrap();
    l.site_key(&MessageKey::from_secret(SECRET));
    l
}

/// Sends `subject` to `to` as the queue would: again after a transient
/// failure (the other process still creating the room), at most 20
/// times; the room it went to.
fn send(l: &mut MatrixListener, to: &str, subject: &str, txn: &str) -> (String, usize) {
    let now = at(T0).naive_utc();
    let doc = digestd::deliver::webhook::body::notification(0, subject, subject, now);
    let mut m = Outgoing::text(to, &doc.to_string(), "unused".into());
    m.matrix = Some(MatrixRoute {
        txn_id: txn.to_string(),
        room: None,
    });
    for retried in 0..20 {
        match l.send_raw(&m) {
            Ok(d) => return (d.text.trim_start_matches("sent to ").to_string(), retried),
            Err(DeliveryError::Transient { text, .. }) => eprintln!("{to}: retried: {text}"),
            Err(e) => panic!("{to}: {e:?}"),
        }
    }
    panic!("{to}: still failing after 20 attempts");
}

#[test]
fn two_processes_opening_a_persons_first_room_at_once_open_one() {
    let mut users = vec![BOT];
    users.extend(PEOPLE);
    let Some(s) = synapse::start(&users) else {
        return;
    };
    let barrier = Arc::new(Barrier::new(2));
    let racers: Vec<_> = ["one", "two"]
        .into_iter()
        .map(|who| {
            let (mut l, barrier) = (process(&s), barrier.clone());
            std::thread::spawn(move || {
                let mut rooms = Vec::new();
                for (name, _) in PEOPLE {
                    barrier.wait();
                    let to = format!("@{name}:localhost");
                    let txn = format!("race_{who}_{name}");
                    rooms.push(send(&mut l, &to, &format!("From {who}"), &txn));
                }
                rooms
            })
        })
        .collect();
    let rooms: Vec<Vec<(String, usize)>> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let retried: usize = rooms.iter().flatten().map(|(_, n)| n).sum();
    eprintln!("attempts retried while the other process created the room: {retried}");
    let people: Vec<(Person, Vec<String>)> = PEOPLE
        .iter()
        .map(|(name, password)| {
            let person = Person::login(&s, name, password);
            let invited = person.invites();
            (person, invited)
        })
        .collect();
    let invitations: Vec<usize> = people.iter().map(|(_, i)| i.len()).collect();
    assert_eq!(
        invitations,
        [1; PEOPLE.len()],
        "rooms each person is invited to"
    );
    let mut theirs = Vec::new();
    for (i, ((name, _), (person, invited))) in PEOPLE.iter().zip(&people).enumerate() {
        assert_eq!(
            rooms[0][i].0, invited[0],
            "{name}: the first process's room"
        );
        assert_eq!(
            rooms[1][i].0, invited[0],
            "{name}: the second process's room"
        );
        person.join(&invited[0]);
        let mut got: Vec<String> = person
            .messages(&invited[0])
            .iter()
            .map(|e| e["content"]["body"].as_str().unwrap().to_string())
            .collect();
        got.sort();
        assert_eq!(got.len(), 2, "{name}: {got:?}");
        assert!(got[0].starts_with("From one"), "{name}: {got:?}");
        assert!(got[1].starts_with("From two"), "{name}: {got:?}");
        theirs.push(invited[0].clone());
    }
    let bot = Person::login(&s, BOT.0, BOT.1);
    let mut joined = bot.joined_rooms();
    joined.sort();
    theirs.sort();
    assert_eq!(joined, theirs, "no room besides the people's");
}

/// The queue's pass against a loopback server that says the alias is
/// taken and then answers its resolution with `answer`: a transient
/// failure naming what was wrong, nothing kept, nobody invited.
fn a_hostile_resolution_is_retried_later(db: &TestDb) {
    use common::http::Gateway;
    let none = (404, vec![], "{\"errcode\": \"M_NOT_FOUND\"}".to_string());
    let taken = (400, vec![], "{\"errcode\": \"M_ROOM_IN_USE\"}".to_string());
    let cases = [
        (
            (200, vec![], "<html>not JSON</html>".to_string()),
            "no room_id",
        ),
        (
            (
                200,
                vec![],
                "{\"room_id\": \"!r:x\\r\\nX-Injected: 1\"}".into(),
            ),
            "is no room ID",
        ),
        (
            (200, vec![], "{\"room_id\": \"@mallory:localhost\"}".into()),
            "a user ID",
        ),
        (none.clone(), "404 M_NOT_FOUND"),
    ];
    let mut script = Vec::new();
    for (answer, _) in &cases {
        script.extend([none.clone(), taken.clone(), answer.clone()]);
    }
    let gw = Gateway::start(script);
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let mut d = delivery_with(&scripted(gw.port));
    for (n, (_, says)) in cases.iter().enumerate() {
        // A request of its own each time, due now; the earlier ones wait.
        let r = notify(&mut c, &format!("Resolved? {n}"));
        queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
        let v = queue::show(&mut c, r).unwrap();
        assert_eq!(v.status, "sending", "case {n}");
        let rec = &v.recipients[0];
        assert!(!rec.gave_up, "case {n}");
        let text = rec.reply_message.as_deref().unwrap();
        assert!(text.contains(says), "case {n}: {text}");
        assert!(!text.contains(['\r', '\n']), "case {n}: {text}");
        assert_eq!(kept_room(&mut c), None, "case {n}");
    }
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 3 * cases.len(), "{reqs:?}");
    for (n, three) in reqs.chunks(3).enumerate() {
        assert!(
            three[0].path.contains("/account_data/org.digestd.direct."),
            "{n}"
        );
        assert_eq!(three[1].path, "/_matrix/client/v3/createRoom", "{n}");
        let body: serde_json::Value = serde_json::from_str(&three[1].body).unwrap();
        let local = body["room_alias_name"].as_str().unwrap();
        assert!(local.starts_with("digestd.direct."), "{local}");
        assert!(!local.contains("alice"), "{local}");
        assert_eq!(
            three[2].path,
            format!("/_matrix/client/v3/directory/room/%23{local}:localhost"),
            "{n}"
        );
        assert_eq!(three[2].method, "GET");
    }
    // The same name on every attempt: the lock is one name.
    assert!(reqs.chunks(3).all(|t| t[1].body == reqs[1].body));
}

/// A homeserver whose policy refuses the alias (Synapse's
/// `alias_creation_rules`: 403): the room is opened without one, and the
/// listener asks for no alias again.
fn a_homeserver_refusing_the_alias_gets_rooms_without_one(db: &TestDb) {
    use common::http::Gateway;
    use digestd::parties::{self, Channel, ContactChange};
    let ok = |body: &str| (200, vec![], body.to_string());
    let none = (404, vec![], "{\"errcode\": \"M_NOT_FOUND\"}".to_string());
    let policy = "{\"errcode\": \"M_FORBIDDEN\", \"error\": \"Not allowed to create alias\"}";
    let opened = |room: &str, event: &str| {
        vec![
            ok(&format!("{{\"room_id\": \"{room}\"}}")),
            none.clone(),
            ok("{}"),
            none.clone(),
            ok("{}"),
            ok("{\"event_id\": \"$invite\"}"),
            ok(&format!("{{\"event_id\": \"{event}\"}}")),
        ]
    };
    let mut script = vec![none.clone(), (403, vec![], policy.to_string())];
    script.extend(opened("!one:localhost", "$one"));
    script.push(none.clone());
    script.extend(opened("!two:localhost", "$two"));
    let gw = Gateway::start(script);
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let mut d = delivery_with(&scripted(gw.port));
    let r = notify(&mut c, "Without an alias");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_deref(), Some("!one:localhost"));
    let bob = ContactChange::Set("@bob:localhost".into());
    parties::change_contact(&mut c, at(T0), "ana", Channel::Matrix, &bob).unwrap();
    let r = notify(&mut c, "Still without");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_deref(), Some("!two:localhost"));
    let reqs = gw.requests();
    let creations: Vec<serde_json::Value> = reqs
        .iter()
        .filter(|q| q.path == "/_matrix/client/v3/createRoom")
        .map(|q| serde_json::from_str(&q.body).unwrap())
        .collect();
    assert_eq!(creations.len(), 3, "{reqs:?}");
    assert!(creations[0]["room_alias_name"].is_string());
    assert!(creations[1].get("room_alias_name").is_none());
    assert!(creations[2].get("room_alias_name").is_none(), "asked once");
    assert_eq!(reqs.len(), 2 + 7 + 1 + 7, "{reqs:?}");
}

/// The loser of the race on a homeserver that refuses a second
/// invitation (Synapse takes it as a no-op): the alias is taken, the room
/// it names joined by the account and not yet holding the person, who is
/// invited by the other process meanwhile; the refusal, then a look that
/// finds them invited, is no error. Found gone instead, the refusal
/// stands (permanent, the contact point kept).
fn an_invitation_refused_as_made_already_is_no_error(db: &TestDb) {
    use common::http::Gateway;
    let ok = |body: &str| (200, vec![], body.to_string());
    let none = (404, vec![], "{\"errcode\": \"M_NOT_FOUND\"}".to_string());
    let forbidden = (403, vec![], "{\"errcode\": \"M_FORBIDDEN\"}".to_string());
    let lost = |theirs_after: &str, sent: Option<&str>| {
        let mut v = vec![
            none.clone(),
            (400, vec![], "{\"errcode\": \"M_ROOM_IN_USE\"}".to_string()),
            ok("{\"room_id\": \"!r:localhost\"}"),
            ok("{\"membership\": \"join\"}"),
            none.clone(),
            none.clone(),
            ok("{}"),
            none.clone(),
            ok("{}"),
            forbidden.clone(),
            ok(&format!("{{\"membership\": \"{theirs_after}\"}}")),
        ];
        v.extend(sent.map(|e| ok(&format!("{{\"event_id\": \"{e}\"}}"))));
        v
    };
    let mut script = lost("invite", Some("$sent"));
    script.extend(lost("leave", None));
    let gw = Gateway::start(script);
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let r = notify(&mut c, "Invited already");
    queue::run_pass(&mut c, &mut delivery_with(&scripted(gw.port)), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_deref(), Some("!r:localhost"));
    assert_eq!(gw.requests().len(), 12);
    // Another world: the same answers, but the person is gone.
    let set = digestd::parties::ContactChange::Set("@alice:localhost".into());
    let matrix = digestd::parties::Channel::Matrix;
    digestd::parties::change_contact(&mut c, at(T0), "ana", matrix, &set).unwrap();
    let r = notify(&mut c, "Gone");
    queue::run_pass(&mut c, &mut delivery_with(&scripted(gw.port)), at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    let rec = &v.recipients[0];
    assert_eq!((v.status.as_str(), rec.gave_up), ("failed", true));
    assert_eq!(
        rec.reply_code, None,
        "a refused invitation disables nothing"
    );
    let text = rec.reply_message.as_deref().unwrap();
    assert!(text.contains("Invite: 403"), "{text}");
    assert_eq!(gw.requests().len(), 23);
}

backend_tests!(
    a_hostile_resolution_is_retried_later,
    a_homeserver_refusing_the_alias_gets_rooms_without_one,
    an_invitation_refused_as_made_already_is_no_error,
);
