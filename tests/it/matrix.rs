//! The Matrix listener against a real Synapse on loopback
//! (`common::synapse`), through the real queue, on each back end: a
//! direct room opened at the first delivery and reused, a row sent again
//! after a "crash" kept as one event (the same transaction id), a person
//! who left disabled, a room the account may not join disabled. The 429
//! answer is scripted on a loopback server; hostile IDs go through the
//! CLI; the `dir` transport writes the message file.

use crate::common;

use common::delivery::T0;
use common::synapse::{self, Person, Synapse};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::{MatrixConfig, MatrixTransport};
use digestd::db::schema::{contact_points, delivery_log, nt_queue, nt_requests};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::ids::RequestId;
use digestd::parties::{self, Channel, ContactChange};

pub(crate) const BOT: (&str, &str) = ("digestd", "bot-password");
pub(crate) const ALICE: (&str, &str) = ("alice", "alice-password");

/// `ops` and `ana`; ana's Matrix address is `address`.
pub(crate) fn world(c: &mut DbConn, address: &str) {
    for name in ["ops", "ana"] {
        common::delivery::user(c, name, &format!("{name}@example.com"));
    }
    let set = ContactChange::Set(address.into());
    parties::change_contact(c, at("2026-11-01T00:00:00Z"), "ana", Channel::Matrix, &set).unwrap();
}

/// A delivery whose Matrix listener follows `cfg`, writing and
/// journaling under a fresh directory.
pub(crate) fn delivery_with(cfg: &MatrixConfig) -> Delivery {
    let (d, email) = common::delivery::in_fresh_dir();
    d.with_matrix(cfg, &email).unwrap()
}

/// The service account on `s`, logging in with its password.
pub(crate) fn account(s: &Synapse) -> MatrixConfig {
    MatrixConfig {
        transport: MatrixTransport::Matrix,
        homeserver: s.url(),
        user: format!("@{}:localhost", BOT.0),
        password: BOT.1.into(),
        allow_http: true,
        timeout_seconds: 10,
        ..MatrixConfig::default()
    }
}

/// The service account with a token, on a scripted server at `port`.
pub(crate) fn scripted(port: u16) -> MatrixConfig {
    MatrixConfig {
        transport: MatrixTransport::Matrix,
        homeserver: format!("http://127.0.0.1:{port}"),
        user: "@digestd:localhost".into(),
        access_token: "syt_token".into(),
        allow_http: true,
        ..MatrixConfig::default()
    }
}

/// A Synapse with the account and alice, ana's address alice's, and a
/// first message sent to her by the queue: the room it opened. `None`
/// (skip) without Synapse.
fn first_room(db: &TestDb) -> Option<(Synapse, DbConn, MatrixConfig, String)> {
    let s = synapse::start(&[BOT, ALICE])?;
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let cfg = account(&s);
    let r = notify(&mut c, "First");
    queue::run_pass(&mut c, &mut delivery_with(&cfg), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let room = kept_room(&mut c).unwrap();
    Some((s, c, cfg, room))
}

pub(crate) fn notify(c: &mut DbConn, subject: &str) -> RequestId {
    common::delivery::notify_on(c, "ops", "ana", subject, &["matrix"])
}

pub(crate) fn kept_room(c: &mut DbConn) -> Option<String> {
    contact_points::table
        .filter(contact_points::channel.eq("matrix"))
        .select(contact_points::matrix_room)
        .first(c)
        .unwrap()
}

fn disabled(c: &mut DbConn) -> bool {
    common::delivery::disabled(c, Channel::Matrix)
}

fn a_digest_opens_a_direct_room_and_the_next_message_reuses_it(db: &TestDb) {
    let Some(s) = synapse::start(&[BOT, ALICE]) else {
        return;
    };
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let mut d = delivery_with(&account(&s));
    common::one_change_digest(
        &mut c,
        "ana",
        "matrix",
        8,
        "Guardia de noche",
        "2026-11-23T07:00:00Z",
    );
    let pass = queue::run_pass(&mut c, &mut d, at("2026-11-23T07:00:00Z")).unwrap();
    assert_eq!(pass.written.get("matrix"), Some(&1), "{pass}");
    let room = kept_room(&mut c).expect("the direct room is kept");
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    alice.join(&room);
    let got = alice.messages(&room);
    assert_eq!(got.len(), 1, "{got:?}");
    let content = &got[0]["content"];
    assert_eq!(got[0]["sender"], "@digestd:localhost");
    assert_eq!(content["msgtype"], "m.text");
    assert_eq!(content["format"], "org.matrix.custom.html");
    assert!(content["body"]
        .as_str()
        .unwrap()
        .contains("Guardia de noche"));
    let html = content["formatted_body"].as_str().unwrap();
    assert!(
        html.contains("Guardia de noche") && html.contains("<strong>"),
        "{html}"
    );
    // The next message goes to the same room, by a new listener too.
    let r = notify(&mut c, "Disk almost full");
    let mut d = delivery_with(&account(&s));
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_deref(), Some(room.as_str()));
    let got = alice.messages(&room);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[1]["content"]["body"]
        .as_str()
        .unwrap()
        .starts_with("Disk almost full"));
}

/// Request `r`'s rows put back as if the pass had died after sending and
/// before writing: unsent, the request still sending.
fn rewind(c: &mut DbConn, r: RequestId) {
    diesel::update(nt_queue::table.filter(nt_queue::request_id.eq(r.0)))
        .set((
            nt_queue::is_successful.eq(false),
            nt_queue::gave_up.eq(false),
            nt_queue::retry_count.eq(0),
            nt_queue::next_attempt_at.eq(at(T0).naive_utc()),
        ))
        .execute(c)
        .unwrap();
    diesel::update(nt_requests::table.filter(nt_requests::request_id.eq(r.0)))
        .set((
            nt_requests::status.eq("sending"),
            nt_requests::fulfill_date.eq(None::<chrono::NaiveDateTime>),
        ))
        .execute(c)
        .unwrap();
}

fn a_row_sent_again_after_a_crash_is_one_event(db: &TestDb) {
    let Some(s) = synapse::start(&[BOT, ALICE]) else {
        return;
    };
    let mut c = db.conn();
    world(&mut c, "@alice:localhost");
    let r = notify(&mut c, "Queue depth high");
    queue::run_pass(&mut c, &mut delivery_with(&account(&s)), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    rewind(&mut c, r);
    // Another process (a new login, the same device) sends it again.
    queue::run_pass(&mut c, &mut delivery_with(&account(&s)), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let ids: Vec<Option<String>> = delivery_log::table
        .filter(delivery_log::request_id.eq(r.0))
        .filter(delivery_log::outcome.eq("sent"))
        .select(delivery_log::remote_id)
        .load(&mut c)
        .unwrap();
    assert_eq!(ids.len(), 2, "two sends: {ids:?}");
    assert_eq!(ids[0], ids[1], "one event");
    let room = kept_room(&mut c).unwrap();
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    alice.join(&room);
    assert_eq!(alice.messages(&room).len(), 1);
}

fn a_person_who_left_or_a_forbidden_room_is_disabled(db: &TestDb) {
    let Some((s, mut c, cfg, room)) = first_room(db) else {
        return;
    };
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    alice.join(&room);
    alice.leave(&room);
    let r = notify(&mut c, "Second");
    queue::run_pass(&mut c, &mut delivery_with(&cfg), at(T0)).unwrap();
    common::delivery::given_up_at_once(&queue::show(&mut c, r).unwrap(), 403, "no longer in");
    assert!(disabled(&mut c));
    // Enabled again: a new direct room, since she left the old one.
    let on = ContactChange::Enable;
    parties::change_contact(&mut c, at(T0), "ana", Channel::Matrix, &on).unwrap();
    assert_eq!(kept_room(&mut c), None);
    let r = notify(&mut c, "Third");
    queue::run_pass(&mut c, &mut delivery_with(&cfg), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let new = kept_room(&mut c).unwrap();
    assert_ne!(new, room);
    // The room she left stays in m.direct, passed over, the new one after it.
    let bot = Person::login(&s, BOT.0, BOT.1);
    let direct = bot.direct_rooms("@digestd:localhost", "@alice:localhost");
    assert_eq!(direct, [room.clone(), new]);
    // A room the account was not invited to: the homeserver's
    // M_FORBIDDEN disables the address.
    let private = alice.create_room();
    let set = ContactChange::Set(private);
    parties::change_contact(&mut c, at(T0), "ana", Channel::Matrix, &set).unwrap();
    let r = notify(&mut c, "Fourth");
    queue::run_pass(&mut c, &mut delivery_with(&cfg), at(T0)).unwrap();
    common::delivery::given_up_at_once(&queue::show(&mut c, r).unwrap(), 403, "M_FORBIDDEN");
    assert!(disabled(&mut c));
}

/// A room the service account is no longer in (an operator made it
/// leave): once the contact point is set again, the person's alias names
/// that room, which is passed over for the next name's, a new room the
/// person is invited to, which another process finds by that name.
fn a_room_the_account_left_is_passed_over_for_the_next_alias(db: &TestDb) {
    use digestd::deliver::matrix::alias::{Namer, PURPOSE};
    let Some((s, mut c, cfg, room)) = first_room(db) else {
        return;
    };
    let key = digestd::deliver::msgid::MessageKey::load(&mut c).unwrap();
    let names = Namer::new(key.derived(PURPOSE), "@digestd:localhost").unwrap();
    let alias = |g| names.alias(&names.localpart("@alice:localhost", g));
    let bot = Person::login(&s, BOT.0, BOT.1);
    assert_eq!(bot.resolve(&alias(0)).as_deref(), Some(room.as_str()));
    bot.leave(&room);
    let set = ContactChange::Set("@alice:localhost".into());
    parties::change_contact(&mut c, at(T0), "ana", Channel::Matrix, &set).unwrap();
    let r = notify(&mut c, "Second");
    queue::run_pass(&mut c, &mut delivery_with(&cfg), at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let new = kept_room(&mut c).unwrap();
    assert_ne!(new, room);
    assert_eq!(bot.resolve(&alias(1)).as_deref(), Some(new.as_str()));
    assert_eq!(bot.joined_rooms(), std::slice::from_ref(&new));
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    assert!(alice.invites().contains(&new));
    alice.join(&new);
    let got = alice.messages(&new);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0]["content"]["body"]
        .as_str()
        .unwrap()
        .starts_with("Second"));
}

fn a_rate_limit_waits_retry_after_ms_and_keeps_the_transaction(db: &TestDb) {
    use common::http::Gateway;
    let limited = "{\"errcode\": \"M_LIMIT_EXCEEDED\", \"retry_after_ms\": 899500}";
    let gw = Gateway::start(vec![
        (200, vec![], "{}".into()),
        (429, vec![], limited.into()),
        (200, vec![], "{\"event_id\": \"$one\"}".into()),
    ]);
    let mut c = db.conn();
    world(&mut c, "!room:localhost");
    let mut d = delivery_with(&scripted(gw.port));
    let r = notify(&mut c, "Slow down");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    let v = queue::show(&mut c, r).unwrap();
    assert_eq!(
        (v.status.as_str(), v.recipients[0].reply_code),
        ("sending", Some(429))
    );
    // 899.5 s, rounded up: longer than the backoff, so it wins.
    let due = common::delivery::next_attempt(&mut c, r);
    assert_eq!(due, at(T0) + chrono::Duration::seconds(900));
    queue::run_pass(&mut c, &mut d, due).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let reqs = gw.requests();
    assert_eq!(reqs.len(), 3, "one join, two sends");
    assert_eq!(reqs[0].path, "/_matrix/client/v3/join/!room:localhost");
    assert_eq!(reqs[1].path, reqs[2].path, "the same transaction");
    assert!(reqs[1]
        .path
        .starts_with("/_matrix/client/v3/rooms/!room:localhost/send/m.room.message/msg_"));
    assert_eq!(reqs[1].method, "PUT");
    assert_eq!(reqs[1].header("authorization"), Some("Bearer syt_token"));
}

fn the_dir_transport_writes_the_message_file(db: &TestDb) {
    let mut c = db.conn();
    world(&mut c, "@alice:example.org");
    let mut d = delivery_with(&MatrixConfig::default());
    let r = notify(&mut c, "Written <here>");
    queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let dir = d.outbox.root().join("matrix");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{dir:?}");
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(text.starts_with("To: @alice:example.org\n"), "{text}");
    assert!(
        text.contains(&format!("Transaction: msg_{}_", r.0)),
        "{text}"
    );
    assert!(text.contains("\"formatted_body\""), "{text}");
    assert!(text.contains("Written &lt;here&gt;"), "{text}");
}

backend_tests!(
    a_digest_opens_a_direct_room_and_the_next_message_reuses_it,
    a_row_sent_again_after_a_crash_is_one_event,
    a_person_who_left_or_a_forbidden_room_is_disabled,
    a_room_the_account_left_is_passed_over_for_the_next_alias,
    a_rate_limit_waits_retry_after_ms_and_keeps_the_transaction,
    the_dir_transport_writes_the_message_file,
);

/// Hostile Matrix IDs through the CLI: exit 2, one line, nothing written.
#[test]
fn hostile_ids_are_refused_by_the_cli_and_nothing_is_written() {
    let (_dir, cfg) = common::delivery::webhook_cli();
    let run = |args: &[&str]| common::digestd_with_config(&cfg, args);
    for bad in [
        "alice:example.org",
        "@alice",
        "@:example.org",
        "@alice :example.org",
        "@alice:example.org\r\nX-Injected: 1",
        "@ali\u{7}ce:example.org",
        "@alice:exa mple.org",
        "@alice:example.org:99999",
        &format!("@{}:example.org", "a".repeat(300)),
    ] {
        let out = run(&["contact", "ana", "--channel", "matrix", "--set", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{bad:?}: {err}");
    }
    let out = run(&["contact", "ana", "--json"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("matrix"),
        "{out:?}"
    );
    let ok = run(&[
        "contact",
        "ana",
        "--channel",
        "matrix",
        "--set",
        "@alice:example.org",
    ]);
    assert!(ok.status.success(), "{ok:?}");
    // The default transport writes the test alert under the outbox.
    let out = run(&["test-alert", "--channel", "matrix", "--to", "ana"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("sent to @alice:example.org: written to"),
        "{said}"
    );
    // --to names the user; a Matrix ID there is told so, in one line.
    let out = run(&[
        "test-alert",
        "--channel",
        "matrix",
        "--to",
        "@alice:example.org",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--to names the user or group"), "{err}");
}
