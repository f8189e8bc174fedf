//! What a queue pass leaves in the `dir` transport's outbox, on each back
//! end: a message holding several requests heads each with when it was
//! sent, in its recipient's zone and clock, and the sent journal lives
//! outside the outbox (an old release's journal there is still replayed).
//! The queue's other semantics are `delivery_queue.rs`; the shared helpers
//! are in `common/delivery.rs`.

use crate::common;

use std::path::Path;

use common::delivery::{into_dir, notify, parse, user, T0};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::EmailConfig;
use digestd::db::schema::{delivery_log, nt_queue};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, NewNotification};
use digestd::parties;

/// sys, nyc (New York, en-US) and ber (Berlin, de-DE), and the group team
/// of nyc and ber with an address of its own.
fn two_zones_and_a_team(c: &mut DbConn) {
    user(c, "sys", "sys@example.com");
    for (name, tz, locale) in [
        ("nyc", "America/New_York", "en-US"),
        ("ber", "Europe/Berlin", "de-DE"),
    ] {
        parties::create_user(
            c,
            at("2026-11-01T00:00:00Z"),
            &parties::NewUser {
                name: name.into(),
                timezone: tz.into(),
                email: Some(format!("{name}@example.com")),
                locale: Some(locale.into()),
                ..Default::default()
            },
        )
        .unwrap();
    }
    parties::create_group(c, at(T0), "team", Some("team@example.com")).unwrap();
    parties::add_member(c, "team", "nyc").unwrap();
    parties::add_member(c, "team", "ber").unwrap();
}

/// A notification from sys to `to` posted at `when`.
fn post(c: &mut DbConn, to: &str, expand: bool, subject: &str, when: &str) {
    queue::post_request(
        c,
        &EmailConfig::default(),
        &NewNotification {
            from: "sys".into(),
            to: to.into(),
            expand_group: expand,
            subject: subject.into(),
            message: format!("About {subject}."),
            ..Default::default()
        },
        at(when),
    )
    .unwrap();
}

/// The text and HTML parts of the one message in `outbox` to `party`.
fn text_to(outbox: &Path, party: &str) -> (String, String) {
    let eml: Vec<_> = std::fs::read_dir(outbox)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(&format!("-{party}.eml")))
        .collect();
    assert_eq!(eml.len(), 1, "one message to {party}: {eml:?}");
    let raw = std::fs::read(&eml[0]).unwrap();
    let m = parse(&raw);
    (
        m.body_text(0).unwrap().replace("\r\n", "\n"),
        m.body_html(0).unwrap().to_string(),
    )
}

/// Issue 23, part 5: a message holding several requests heads each with
/// "Message sent on …", and that time is the recipient's: a New York user
/// with en-US reads 12-hour with AM/PM and EST, a Berlin user 24-hour and
/// CET, each in the message the `dir` transport wrote; a group's members
/// read their own times, a group sent to as one reads UTC. The journal of
/// the pass is not in the outbox.
fn a_batched_message_says_when_in_the_recipients_zone_and_clock(db: &TestDb) {
    let mut c = db.conn();
    two_zones_and_a_team(&mut c);
    // 04:00 and 09:00 UTC: 11 PM the day before and 4 AM in New York,
    // 05:00 and 10:00 in Berlin.
    for to in ["nyc", "ber"] {
        post(&mut c, to, false, "Early", "2026-11-23T04:00:00Z");
    }
    post(&mut c, "team", true, "Team news", T0);
    post(&mut c, "team", false, "To the list", "2026-11-23T04:00:00Z");
    post(&mut c, "team", false, "To the list again", T0);
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    let mut d = into_dir(&outbox);
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.written.get("email"), Some(&3), "{r:?}");
    let (nyc, nyc_html) = text_to(&outbox, "nyc");
    assert!(
        nyc.contains("Message sent on Sun, Nov 22, 11:00 PM EST regarding Early\n"),
        "{nyc}"
    );
    assert!(
        nyc.contains("Message sent on Mon, Nov 23, 4:00 AM EST regarding Team news\n"),
        "{nyc}"
    );
    assert!(nyc_html.contains("Message sent on Mon, Nov 23, 4:00 AM EST regarding Team news</h3>"));
    let (ber, _) = text_to(&outbox, "ber");
    assert!(
        ber.contains("Nachricht vom Mo., 23. Nov., 05:00 CET zu Early\n"),
        "{ber}"
    );
    assert!(
        ber.contains("Nachricht vom Mo., 23. Nov., 10:00 CET zu Team news\n"),
        "{ber}"
    );
    for t in [&nyc, &ber] {
        assert!(!t.contains("UTC"), "{t}");
    }
    assert!(!ber.contains(" AM ") && !ber.contains(" PM "), "{ber}");
    // The group as one has no zone of its own.
    let (team, _) = text_to(&outbox, "team");
    assert!(
        team.contains("Message sent on Mon 23 Nov, 04:00 UTC regarding To the list\n"),
        "{team}"
    );
    assert!(
        team.contains("Message sent on Mon 23 Nov, 09:00 UTC regarding To the list again\n"),
        "{team}"
    );
    // The queue's state is not the transport's output.
    assert!(!outbox.join("journal").exists());
}

/// The sent journal moved out of the outbox (`[queue] journal_dir`); a
/// journal the release before left in `[email] dir`/`journal/` (a process
/// killed before the upgrade) is still replayed: its message is written
/// delivered and not sent again, and the old directory goes once empty.
/// A journal of another database in the same directory is left alone.
fn an_old_releases_journal_is_replayed_and_another_databases_left_alone(db: &TestDb) {
    let mut c = db.conn();
    user(&mut c, "sys", "sys@example.com");
    user(&mut c, "amy", "ok.amy@example.com");
    user(&mut c, "bob", "ok.bob@example.com");
    let ra = notify(&mut c, "sys", "amy", "Sent before the crash");
    let rb = notify(&mut c, "sys", "bob", "Named by another database");
    queue::expand(&mut c, at(T0)).unwrap();
    let row = |c: &mut DbConn, id: digestd::ids::RequestId| -> i64 {
        nt_queue::table
            .filter(nt_queue::request_id.eq(id.0))
            .select(nt_queue::party_to)
            .first(c)
            .unwrap()
    };
    let (amy, bob) = (row(&mut c, ra), row(&mut c, rb));
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    let journals = dir.path().join("state/journal");
    let line = |id: i64, party: i64| {
        format!("{{\"code\":250,\"remote_id\":\"q{id}\",\"rows\":[[{id},{party},\"email\"]]}}\n")
    };
    std::fs::create_dir_all(outbox.join("journal")).unwrap();
    let old = outbox.join("journal/4242-00000000000000ff.sent");
    std::fs::write(&old, line(ra.0, amy)).unwrap();
    std::fs::create_dir_all(&journals).unwrap();
    let other = journals.join("ffffffffffffffff-4242-00000000000000ff.sent");
    std::fs::write(&other, line(rb.0, bob)).unwrap();
    let mut d = into_dir(&outbox).with_journal_dir(&journals).unwrap();
    let r = queue::run_pass(&mut c, &mut d, at(T0)).unwrap();
    assert_eq!(r.written.get("email"), Some(&2), "{r:?}");
    for id in [ra, rb] {
        assert_eq!(queue::show(&mut c, id).unwrap().status, "sent");
    }
    let log: Vec<(i64, Option<String>)> = delivery_log::table
        .select((delivery_log::request_id, delivery_log::reply_message))
        .order(delivery_log::request_id)
        .load(&mut c)
        .unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log[0].1.as_deref().unwrap().contains("from its journal"),
        "{log:?}"
    );
    assert!(!log[1].1.as_deref().unwrap().contains("journal"), "{log:?}");
    let emls: Vec<String> = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // amy's went out before the crash; bob's now; the old journal and its
    // directory are gone.
    assert_eq!(emls, [format!("{:08}-bob.eml", rb.0)], "{emls:?}");
    assert!(other.exists(), "another database's journal was read");
    let mine: Vec<_> = std::fs::read_dir(&journals)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| *p != other)
        .collect();
    assert_eq!(mine.len(), 1, "this process's own journal: {mine:?}");
    drop(d);
    assert!(!mine[0].exists(), "an empty journal goes with its process");
}

backend_tests!(
    a_batched_message_says_when_in_the_recipients_zone_and_clock,
    an_old_releases_journal_is_replayed_and_another_databases_left_alone,
);
