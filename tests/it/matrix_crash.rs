//! A Matrix direct room across a crash, against a real Synapse on each
//! back end: `digestd queue run` killed (SIGKILL) at a point seen on a
//! loopback relay in front of Synapse (`synapse::Hold`: Synapse did what
//! was asked, the process never heard back), then a pass of its own.
//!
//! Killed once the room was recorded (the message sent, its outcome not
//! written): the next pass finds the room in the account's record of the
//! person, and the person has one room with the service account and the
//! message once, even when another process's stale write of `m.direct`
//! dropped the room from there meanwhile.
//! Killed right after `createRoom` (not yet recorded): the next pass
//! finds the room by its alias, records it and invites the person to it;
//! no room is left empty. The room a person left is never taken from
//! its record again (`matrix.rs`, the person who left).

use crate::common;
use crate::matrix::{account, delivery_with, kept_room, notify, world, ALICE, BOT};

use std::process::{Command, Stdio};

use common::delivery::T0;
use common::synapse::{self, Hold, Person, Synapse};
use common::{at, TestDb};
use digestd::db::DbConn;
use digestd::deliver::queue;
use digestd::ids::RequestId;

const ME: &str = "@digestd:localhost";
const HER: &str = "@alice:localhost";

/// `digestd queue run` at T0 through a relay to `s` that holds the
/// answer to the first request holding `pattern`, killed with SIGKILL
/// once Synapse has answered it.
fn killed_at(db: &TestDb, s: &Synapse, pattern: &'static str) {
    let hold = Hold::start(s.port, pattern);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    let toml = format!(
        "[matrix]\ntransport = \"matrix\"\nhomeserver = \"http://127.0.0.1:{}\"\n\
         user = \"{ME}\"\npassword = \"{}\"\nallow_http = true\n",
        hold.port, BOT.1
    );
    std::fs::write(&cfg, toml).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_digestd"))
        .current_dir(dir.path())
        .arg("--config")
        .arg(&cfg)
        .args(["--db", &db.url, "queue", "run", "--at", T0])
        .env_remove("DIGESTD_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !hold.wait(50) {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the pass ended before {pattern}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(started.elapsed().as_secs() < 60, "no {pattern} in 60 s");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The next pass, in this process, straight to Synapse, once the dead
/// one's claims have expired.
fn next_pass(c: &mut DbConn, s: &Synapse) {
    let later = at(T0) + chrono::Duration::minutes(11);
    queue::run_pass(c, &mut delivery_with(&account(s)), later).unwrap();
}

/// A Synapse with the account and alice, ana's address alice's, a
/// message `subject` to her, and `queue run` killed at `pattern`; the
/// pass wrote nothing. `None` (skip) without Synapse.
fn killed_sending(
    db: &TestDb,
    subject: &str,
    pattern: &'static str,
) -> Option<(Synapse, DbConn, RequestId)> {
    let s = synapse::start(&[BOT, ALICE])?;
    let mut c = db.conn();
    world(&mut c, HER);
    let r = notify(&mut c, subject);
    killed_at(db, &s, pattern);
    assert_eq!(kept_room(&mut c), None, "killed before the outcome");
    Some((s, c, r))
}

fn a_room_recorded_before_a_crash_is_found_again(db: &TestDb) {
    let Some((s, mut c, r)) = killed_sending(db, "After the crash", "/send/m.room.message/") else {
        return;
    };
    let bot = Person::login(&s, BOT.0, BOT.1);
    let recorded = bot.direct_rooms(ME, HER);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    assert_eq!(alice.invites(), recorded);
    let invite = bot.state(&recorded[0], "m.room.member", HER);
    assert_eq!(invite["membership"], "invite");
    assert_eq!(invite["is_direct"], true, "{invite}");
    next_pass(&mut c, &s);
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_ref(), Some(&recorded[0]));
    assert_eq!(bot.joined_rooms(), recorded, "no second room");
    assert_eq!(bot.direct_rooms(ME, HER), recorded);
    assert_eq!(alice.invites(), recorded);
    alice.join(&recorded[0]);
    let got = alice.messages(&recorded[0]);
    assert_eq!(got.len(), 1, "{got:?}");
    let body = got[0]["content"]["body"].as_str().unwrap();
    assert!(body.starts_with("After the crash"), "{body}");
}

fn a_crash_before_the_record_invites_the_person_once(db: &TestDb) {
    let pattern = "POST /_matrix/client/v3/createRoom";
    let Some((s, mut c, r)) = killed_sending(db, "Created, then killed", pattern) else {
        return;
    };
    let bot = Person::login(&s, BOT.0, BOT.1);
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    let created = bot.joined_rooms();
    assert_eq!(created.len(), 1, "the room was created: {created:?}");
    assert!(bot.direct_rooms(ME, HER).is_empty(), "not recorded");
    assert!(alice.invites().is_empty(), "nobody was invited to it");
    next_pass(&mut c, &s);
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    let room = kept_room(&mut c).unwrap();
    assert_eq!(room, created[0], "found again by its alias");
    assert_eq!(bot.joined_rooms(), created, "no room left empty");
    assert_eq!(bot.direct_rooms(ME, HER), created);
    assert_eq!(alice.invites(), created, "one invitation");
    // The alias is not the room's name: the person's client names it
    // after the account.
    let canonical = bot.state(&room, "m.room.canonical_alias", "");
    assert!(canonical.get("alias").is_none(), "{canonical}");
    alice.join(&room);
    assert_eq!(alice.messages(&room).len(), 1);
}

/// Another process of the same account that read `m.direct` before the
/// room was recorded writes it back afterwards with a room of its own:
/// the room drops out of `m.direct`, but the person's own record keeps
/// it, and the next pass finds it there instead of opening a second one.
fn a_stale_m_direct_write_does_not_hide_the_room(db: &TestDb) {
    let Some((s, mut c, r)) = killed_sending(db, "Despite the race", "/send/m.room.message/")
    else {
        return;
    };
    let bot = Person::login(&s, BOT.0, BOT.1);
    let recorded = bot.direct_rooms(ME, HER);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let theirs = serde_json::json!({"@bob:localhost": ["!theirs:localhost"]});
    bot.put_account_data(ME, "m.direct", &theirs);
    assert!(bot.direct_rooms(ME, HER).is_empty(), "the race lost it");
    next_pass(&mut c, &s);
    assert_eq!(queue::show(&mut c, r).unwrap().status, "sent");
    assert_eq!(kept_room(&mut c).as_ref(), Some(&recorded[0]));
    assert_eq!(bot.joined_rooms(), recorded, "no second room");
    let alice = Person::login(&s, ALICE.0, ALICE.1);
    alice.join(&recorded[0]);
    assert_eq!(alice.messages(&recorded[0]).len(), 1);
}

backend_tests!(
    a_stale_m_direct_write_does_not_hide_the_room,
    a_room_recorded_before_a_crash_is_found_again,
    a_crash_before_the_record_invites_the_person_once,
);
