//! What a posted digest stores, on each back end (issue 24 part 4): only
//! the renderings the channels of its request read. An email digest has
//! its text and HTML parts and no chat or SMS text; an XMPP one its chat
//! text and no HTML; a group's digest what the group's channels read, since
//! its members get it on those channels. Then every channel still
//! delivers: the queue's pass writes each digest to the outbox (email as
//! MIME, XMPP and SMS as text files), every row accepted.
//!
//! Recipients of the same content in the same style share one stored
//! rendering with holes for their links; filled, each reads exactly what
//! `digestd preview` renders for them alone, with their own links; the
//! history sweep deletes a shared rendering with the last request that
//! points at it.

use crate::common;

use std::collections::BTreeMap;

use common::digest::{bodies, calendar_week, calendar_world, composer, daily, subscribe};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::config::DigestConfig;
use digestd::config::EmailConfig;
use digestd::db::schema::{
    nt_bodies, nt_messages, nt_queue, nt_requests, parties as parties_t, subscriptions,
};
use digestd::db::DbConn;
use digestd::deliver::queue::{self, Delivery};
use digestd::parties::{self, NewUser};
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;

const TITLE: &str = "Janitor's Pipe Dream";

/// A user in Los Angeles (the calendar's digests fall at 17:00Z) with an
/// address on every channel.
fn everywhere(c: &mut DbConn, name: &str, phone: &str) {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: "America/Los_Angeles".into(),
            email: Some(format!("{name}@example.com")),
            xmpp: Some(format!("{name}@localhost")),
            phone: Some(phone.into()),
            locale: Some("en-US".into()),
            ..Default::default()
        },
    )
    .unwrap();
}

/// (text, HTML, chat, SMS) of each posted request as its recipient reads
/// it, by recipient name.
type Stored = (String, Option<String>, Option<String>, Option<String>);

fn stored(c: &mut DbConn) -> BTreeMap<String, Stored> {
    let names: BTreeMap<i64, String> = nt_requests::table
        .inner_join(parties_t::table.on(parties_t::id.eq(nt_requests::party_to)))
        .filter(nt_requests::kind.eq("digest"))
        .select((nt_requests::request_id, parties_t::name))
        .load::<(i64, String)>(c)
        .unwrap()
        .into_iter()
        .collect();
    bodies(c)
        .into_iter()
        .filter_map(|b| {
            Some((
                names.get(&b.request_id)?.clone(),
                (b.text, b.html, b.chat, b.sms),
            ))
        })
        .collect()
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    out.sort();
    out
}

/// Each posted digest holds only what its channels read: email the text
/// and HTML parts, XMPP the chat text, SMS the SMS text; the group's, on
/// its members' channels, both of those.
fn each_stores_only_what_its_channels_read(c: &mut DbConn) {
    let s = stored(c);
    assert_eq!(
        s.keys().collect::<Vec<_>>(),
        vec!["ann", "sam", "team", "xavier"]
    );
    // Email: the text and HTML parts, nothing else.
    let (text, html, chat, sms) = &s["ann"];
    assert!(text.contains(TITLE), "{text}");
    assert!(html
        .as_deref()
        .unwrap()
        .contains("<strong>Janitor&#39;s Pipe Dream</strong>"));
    assert_eq!(
        (chat, sms),
        (&None, &None),
        "an email digest has no chat or SMS text"
    );
    // XMPP: the chat text only; the email text is stored empty.
    let (text, html, chat, sms) = &s["xavier"];
    assert_eq!((text.as_str(), html, sms), ("", &None, &None));
    assert!(chat.as_deref().unwrap().contains(TITLE));
    // SMS: the SMS text only.
    let (text, html, chat, sms) = &s["sam"];
    assert_eq!((text.as_str(), html, chat), ("", &None, &None));
    let sms_text = sms.as_deref().unwrap();
    assert!(
        sms_text.starts_with("3 changes in Calendar since"),
        "{sms_text}"
    );
    // The group's, rendered once for its members on the group's channels.
    let (text, html, chat, sms) = &s["team"];
    assert_eq!((text.as_str(), html), ("", &None));
    assert!(chat.as_deref().unwrap().contains(TITLE));
    let sms = sms.as_deref().unwrap();
    assert!(sms.contains(" changes in Calendar since"), "{sms}");
}

fn each_digest_stores_only_what_its_channels_read_and_every_channel_delivers(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    everywhere(&mut c, "xavier", "+33612345678");
    everywhere(&mut c, "sam", "+33612345679");
    parties::create_group(&mut c, at("2026-11-01T00:00:00Z"), "team", None).unwrap();
    parties::add_member(&mut c, "team", "xavier").unwrap();
    parties::add_member(&mut c, "team", "sam").unwrap();
    let on = |party: &str, channels: &[&str]| SubscribeRequest {
        channels: channels.iter().map(|s| s.to_string()).collect(),
        ..daily(party, &cal)
    };
    subscribe(&mut c, on("ann", &["email"]));
    subscribe(&mut c, on("xavier", &["xmpp"]));
    subscribe(&mut c, on("sam", &["sms"]));
    // A group's hours are UTC: 18:00Z, after the users' 17:00Z.
    subscribe(
        &mut c,
        SubscribeRequest {
            hour: Some(18),
            ..on("team", &["xmpp", "sms"])
        },
    );
    calendar_week(&mut c, &cal);
    let dir = tempfile::tempdir().unwrap();
    let email = EmailConfig {
        dir: dir.path().display().to_string(),
        ..EmailConfig::default()
    };
    let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
    let mut comp = composer();
    let mut t = at("2026-11-22T16:00:00Z");
    while t <= at("2026-11-22T18:00:00Z") {
        tick(&mut c, t, &mut comp).unwrap();
        t += chrono::Duration::hours(1);
    }

    each_stores_only_what_its_channels_read(&mut c);

    // Every channel delivers what was stored.
    queue::run_pass(&mut c, &mut ob, t).unwrap();
    let (rows, ok): (i64, i64) = (
        nt_queue::table.count().get_result(&mut c).unwrap(),
        nt_queue::table
            .filter(nt_queue::is_successful.eq(true))
            .count()
            .get_result(&mut c)
            .unwrap(),
    );
    // ann's email, xavier's XMPP, sam's SMS, and the team's two members
    // on XMPP and SMS each.
    assert_eq!((rows, ok), (7, 7));
    let statuses: Vec<String> = nt_requests::table
        .select(nt_requests::status)
        .load(&mut c)
        .unwrap();
    assert_eq!(statuses, vec!["sent"; 4]);
    let emls: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    assert_eq!(emls.len(), 1, "{emls:?}");
    let raw = std::fs::read(&emls[0]).unwrap();
    let m = mail_parser::MessageParser::default()
        .parse(&raw)
        .expect("parses");
    assert!(m.body_text(0).unwrap().contains(TITLE));
    assert!(m
        .body_html(0)
        .unwrap()
        .contains("<strong>Janitor&#39;s Pipe Dream</strong>"));
    // A recipient's messages of one sender go out together: xavier's own
    // digest and the team's are one XMPP message, one SMS file.
    let count = |texts: &[String], what: &str| -> usize {
        texts.iter().map(|t| t.matches(what).count()).sum()
    };
    let chats = files(&dir.path().join("xmpp"));
    assert_eq!(chats.len(), 2, "{chats:?}");
    assert_eq!(count(&chats, TITLE), 3, "{chats:?}");
    let texts = files(&dir.path().join("sms"));
    assert_eq!(texts.len(), 2, "{texts:?}");
    // Shared renderings went out filled: no hole left.
    assert!(chats.iter().chain(&texts).all(|t| !t.contains('\u{1}')));
    assert_eq!(count(&texts, " changes in Calendar since"), 3, "{texts:?}");
}

fn count(c: &mut DbConn, t: &str) -> i64 {
    match t {
        "bodies" => nt_bodies::table.count().get_result(c).unwrap(),
        _ => nt_messages::table.count().get_result(c).unwrap(),
    }
}

/// The history sweep: cat's request goes first (cancelled at 17:05); the
/// rendering bea shares with it stays while bea's request does, and bea's
/// email goes out filled with her own links. `s` is what was stored.
fn the_sweep_keeps_a_shared_rendering_while_it_is_read(
    c: &mut DbConn,
    s: &BTreeMap<String, Stored>,
) {
    // The history sweep: cat's request goes first (cancelled at 17:05);
    // the rendering bea shares with it stays while bea's request does.
    let cat: i64 = nt_requests::table
        .inner_join(parties_t::table.on(parties_t::id.eq(nt_requests::party_to)))
        .filter(parties_t::name.eq("cat"))
        .select(nt_requests::request_id)
        .first(c)
        .unwrap();
    queue::cancel_request(c, digestd::ids::RequestId(cat), at("2026-11-22T17:05:00Z")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let email = EmailConfig {
        dir: dir.path().display().to_string(),
        ..EmailConfig::default()
    };
    let mut ob = Delivery::new(&email, crate::common::rt()).unwrap();
    queue::run_pass(c, &mut ob, at("2026-11-22T18:00:00Z")).unwrap();
    let p = queue::purge(c, at("2026-11-22T17:30:00Z")).unwrap();
    assert_eq!((p.requests, p.bodies), (1, 0));
    assert_eq!((count(c, "messages"), count(c, "bodies")), (3, 1));
    assert_eq!(stored(c)["bea"], s["bea"], "bea's digest reads as before");
    let p = queue::purge(c, at("2026-11-22T19:00:00Z")).unwrap();
    assert_eq!((p.requests, p.bodies), (3, 1));
    assert_eq!((count(c, "messages"), count(c, "bodies")), (0, 0));
    // What went out: bea's email with her own links, filled by the queue.
    let emls: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-bea.eml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(emls.len(), 1);
    let m = mail_parser::MessageParser::default()
        .parse(&emls[0])
        .expect("parses");
    assert_eq!(m.body_text(0).unwrap().replace("\r\n", "\n"), s["bea"].0);
}

fn shared_renderings_are_stored_once_and_filled_with_each_recipients_links(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    everywhere(&mut c, "bea", "+33612345670");
    everywhere(&mut c, "cat", "+33612345671");
    // dan reads 24-hour times: another style, another rendering.
    parties::create_user(
        &mut c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: "dan".into(),
            timezone: "America/Los_Angeles".into(),
            email: Some("dan@example.com".into()),
            locale: Some("en-GB".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let on = |party: &str, channels: &[&str]| SubscribeRequest {
        channels: channels.iter().map(|s| s.to_string()).collect(),
        ..daily(party, &cal)
    };
    subscribe(&mut c, on("ann", &["email"]));
    subscribe(&mut c, on("bea", &["email", "xmpp"]));
    subscribe(&mut c, on("cat", &["email", "xmpp"]));
    subscribe(&mut c, on("dan", &["email"]));
    calendar_week(&mut c, &cal);
    let t = at("2026-11-22T17:00:00Z");
    // What each subscriber's digest of the tick at t is, rendered for
    // them alone (every channel), before the tick.
    let subs: Vec<(i64, String)> = subscriptions::table
        .inner_join(parties_t::table)
        .select((subscriptions::id, parties_t::name))
        .load(&mut c)
        .unwrap();
    let previews: Vec<_> = subs
        .into_iter()
        .map(|(id, name)| {
            let p = digestd::digest::preview(
                &mut c,
                &DigestConfig::default(),
                &EmailConfig::default(),
                digestd::ids::SubscriptionId(id),
                t,
            )
            .unwrap();
            (id, name, p.rendered)
        })
        .collect();
    tick(&mut c, t, &mut composer()).unwrap();

    // bea and cat (email and XMPP) read the same content in the same style
    // and share one rendering. dan is its only reader in his style, and
    // ann's digest leaves out her own change: each of theirs is rendered
    // for them alone, stored with the request as a notification's body is.
    let all = bodies(&mut c);
    let shared: Vec<bool> = all.iter().map(|b| b.shared).collect();
    assert_eq!(shared, vec![false, true, true, false]);
    assert_eq!(count(&mut c, "bodies"), 1);
    // Filled, each is what `preview` rendered for that subscriber alone
    // before the tick.
    let s = stored(&mut c);
    for (id, name, r) in previews {
        let (text, html, chat, sms) = &s[&name];
        assert_eq!(Some(text), r.text.as_ref(), "{name}");
        assert_eq!(html, &r.html, "{name}");
        let xmpp = name == "bea" || name == "cat";
        assert_eq!(chat, &r.chat.filter(|_| xmpp), "{name}");
        assert_eq!(sms, &None);
        // Their own links, no one else's.
        let code: String = digestd::db::schema::users::table
            .inner_join(parties_t::table)
            .filter(parties_t::name.eq(&name))
            .select(digestd::db::schema::users::subscriber_code)
            .first(&mut c)
            .unwrap();
        assert!(
            text.contains(&format!("/s/{code}/unsubscribe/{id}")),
            "{text}"
        );
        assert!(html.as_deref().unwrap().contains(&format!("/s/{code}\"")));
    }

    the_sweep_keeps_a_shared_rendering_while_it_is_read(&mut c, &s);
}

backend_tests!(
    each_digest_stores_only_what_its_channels_read_and_every_channel_delivers,
    shared_renderings_are_stored_once_and_filled_with_each_recipients_links,
);
