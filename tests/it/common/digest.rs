//! Shared by the digest tests (`digest_*.rs`): users, items, the requests
//! the composer posted, and a calendar that gr24 edits and ann follows.
//! Expected texts are written out by hand from the scenario, not computed
//! with the code under test.

use super::at;
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::{nt_bodies, nt_messages, nt_requests};
use digestd::db::DbConn;
use digestd::digest::render::{fill, Links};
use digestd::digest::Composer;
use digestd::ids::PartyId;
use digestd::items::{self, ItemInput};
use digestd::manage;
use digestd::parties::{self, NewUser};
use digestd::subscriptions::SubscribeRequest;

pub const CREATED: &str = "2026-11-22T00:00:00Z";

pub fn user(c: &mut DbConn, name: &str, tz: &str, locale: &str, phone: Option<&str>) -> PartyId {
    parties::create_user(
        c,
        at("2026-11-01T00:00:00Z"),
        &NewUser {
            name: name.into(),
            timezone: tz.into(),
            email: Some(format!("{name}@example.com")),
            phone: phone.map(String::from),
            locale: Some(locale.into()),
            ..Default::default()
        },
    )
    .unwrap()
}

pub fn item(
    uuid: u128,
    coll: &str,
    title: &str,
    start: &str,
    actor: &str,
    when: &str,
) -> ItemInput {
    ItemInput {
        uuid: uuid::Uuid::from_u128(uuid).to_string(),
        collection: Some(coll.into()),
        kind: "event".into(),
        title: title.into(),
        start: Some(start.into()),
        actor: actor.into(),
        at: Some(when.into()),
        ..Default::default()
    }
}

pub fn put(c: &mut DbConn, i: &ItemInput) {
    items::put_item(c, at(i.at.as_deref().unwrap()), i).unwrap();
}

pub struct Req {
    pub subject: String,
    pub text: String,
    pub html: String,
    pub chat: String,
    pub sms: String,
    pub from: i64,
    pub status: String,
    pub period: String,
}

impl Req {
    /// The digest's first line: what it holds and since when (the subject
    /// names only the subscription).
    pub fn heading(&self) -> &str {
        self.text.lines().next().unwrap_or_default()
    }
}

/// A request's bodies as its recipient reads them: a digest's shared
/// rendering (`nt_bodies`) filled with the request's links, as the queue
/// does when it sends.
#[derive(Debug, Clone)]
pub struct Bodies {
    pub request_id: i64,
    pub text: String,
    pub html: Option<String>,
    pub chat: Option<String>,
    pub sms: Option<String>,
    /// Whether the text, HTML and chat text came from a shared rendering.
    pub shared: bool,
}

type BodyRow = (
    i64,
    (String, Option<String>, Option<String>, Option<String>),
    Option<(String, Option<String>, Option<String>)>,
    (Option<String>, Option<String>, Option<String>),
);

/// Every request's bodies, in order of request id.
pub fn bodies(c: &mut DbConn) -> Vec<Bodies> {
    let rows: Vec<BodyRow> = nt_requests::table
        .inner_join(nt_messages::table.left_join(nt_bodies::table))
        .select((
            nt_requests::request_id,
            (
                nt_messages::message,
                nt_messages::message_html,
                nt_messages::message_chat,
                nt_messages::message_sms,
            ),
            (
                nt_bodies::message,
                nt_bodies::message_html,
                nt_bodies::message_chat,
            )
                .nullable(),
            (
                nt_requests::unsubscribe_url,
                nt_messages::manage_url,
                nt_messages::full_url,
            ),
        ))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    rows.into_iter()
        .map(
            |(request_id, (text, html, chat, sms), body, (unsub, manage, full))| {
                let Some((b_text, b_html, b_chat)) = body else {
                    return Bodies {
                        request_id,
                        text,
                        html,
                        chat,
                        sms,
                        shared: false,
                    };
                };
                let links = Links {
                    manage_url: manage.as_deref().unwrap(),
                    unsubscribe_url: unsub.as_deref(),
                    full_url: full.as_deref().unwrap(),
                };
                Bodies {
                    request_id,
                    text: fill(&b_text, &links, false),
                    html: b_html.map(|h| fill(&h, &links, true)),
                    chat: b_chat.map(|t| fill(&t, &links, false)),
                    sms,
                    shared: true,
                }
            },
        )
        .collect()
}

type ReqRow = (String, i64, String, Option<String>);

pub fn requests(c: &mut DbConn) -> Vec<Req> {
    let rows: Vec<ReqRow> = nt_requests::table
        .select((
            nt_requests::subject,
            nt_requests::party_from,
            nt_requests::status,
            nt_requests::period,
        ))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let bodies = bodies(c);
    assert_eq!(bodies.len(), rows.len(), "every request has its bodies");
    rows.into_iter()
        .zip(bodies)
        .map(|((subject, from, status, period), b)| Req {
            subject,
            text: b.text,
            html: b.html.unwrap_or_default(),
            chat: b.chat.unwrap_or_default(),
            sms: b.sms.unwrap_or_default(),
            from,
            status,
            period: period.unwrap_or_default(),
        })
        .collect()
}

pub fn composer() -> Composer {
    Composer::new(&DigestConfig::default(), &EmailConfig::default()).unwrap()
}

pub fn subscribe(c: &mut DbConn, r: SubscribeRequest) {
    manage::subscribe(c, at(CREATED), &r).unwrap();
}

/// ann in Los Angeles follows a calendar that gr24 edits; 09:00 PST is 17:00Z.
pub fn calendar_world(c: &mut DbConn) -> (String, PartyId) {
    user(c, "ann", "America/Los_Angeles", "en-US", None);
    let gr24 = user(c, "gr24", "Europe/Paris", "fr-FR", None);
    let cal = items::create_collection(c, at("2026-11-01T00:00:00Z"), "Calendar", None)
        .unwrap()
        .uuid;
    let before = "2026-11-21T12:00:00Z";
    // 3:00 PM PST on Monday the 23rd.
    put(
        c,
        &item(
            1,
            &cal,
            "Janitor's Pipe Dream",
            "2026-11-23T23:00:00Z",
            "gr24",
            before,
        ),
    );
    put(
        c,
        &item(
            2,
            &cal,
            "Budget sync",
            "2026-11-24T18:00:00Z",
            "gr24",
            before,
        ),
    );
    put(
        c,
        &item(
            3,
            &cal,
            "Ann's own meeting",
            "2026-11-25T18:00:00Z",
            "ann",
            before,
        ),
    );
    put(
        c,
        &item(
            4,
            &cal,
            "Old offsite",
            "2026-11-26T18:00:00Z",
            "gr24",
            before,
        ),
    );
    (cal, gr24)
}

pub fn calendar_week(c: &mut DbConn, cal: &str) {
    // Moved to 4:00 PM PST.
    put(
        c,
        &item(
            1,
            cal,
            "Janitor's Pipe Dream",
            "2026-11-24T00:00:00Z",
            "gr24",
            "2026-11-22T10:00:00Z",
        ),
    );
    // Moved and moved back: nothing to report.
    put(
        c,
        &item(
            2,
            cal,
            "Budget sync",
            "2026-11-24T19:00:00Z",
            "gr24",
            "2026-11-22T11:00:00Z",
        ),
    );
    put(
        c,
        &item(
            2,
            cal,
            "Budget sync",
            "2026-11-24T18:00:00Z",
            "gr24",
            "2026-11-22T11:30:00Z",
        ),
    );
    // ann's own change.
    put(
        c,
        &item(
            3,
            cal,
            "Ann's own meeting",
            "2026-11-25T19:00:00Z",
            "ann",
            "2026-11-22T12:00:00Z",
        ),
    );
    // Deleted.
    put(
        c,
        &ItemInput {
            deleted: true,
            ..item(
                4,
                cal,
                "Old offsite",
                "2026-11-26T18:00:00Z",
                "gr24",
                "2026-11-22T13:00:00Z",
            )
        },
    );
    // Created and deleted inside the window: nothing to report.
    put(
        c,
        &item(
            5,
            cal,
            "Phantom",
            "2026-11-27T18:00:00Z",
            "gr24",
            "2026-11-22T14:00:00Z",
        ),
    );
    put(
        c,
        &ItemInput {
            deleted: true,
            ..item(
                5,
                cal,
                "Phantom",
                "2026-11-27T18:00:00Z",
                "gr24",
                "2026-11-22T14:10:00Z",
            )
        },
    );
}

pub fn daily(party: &str, coll: &str) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        collection: Some(coll.into()),
        hour: Some(9),
        ..Default::default()
    }
}
