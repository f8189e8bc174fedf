//! Shared by the digest tests (`digest_*.rs`): users, items, the requests
//! the composer posted, and a calendar that gr24 edits and ann follows.
//! Expected texts are written out by hand from the scenario, not computed
//! with the code under test.

#![allow(dead_code)]

use super::at;
use diesel::prelude::*;
use digestd::config::{DigestConfig, EmailConfig};
use digestd::db::schema::{nt_messages, nt_requests};
use digestd::db::DbConn;
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

type ReqRow = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    String,
    Option<String>,
);

pub fn requests(c: &mut DbConn) -> Vec<Req> {
    let rows: Vec<ReqRow> = nt_requests::table
        .inner_join(nt_messages::table)
        .select((
            nt_requests::subject,
            nt_messages::message,
            nt_messages::message_html,
            nt_messages::message_chat,
            nt_messages::message_sms,
            nt_requests::party_from,
            nt_requests::status,
            nt_requests::period,
        ))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    rows.into_iter()
        .map(
            |(subject, text, html, chat, sms, from, status, period)| Req {
                subject,
                text,
                html: html.unwrap_or_default(),
                chat: chat.unwrap_or_default(),
                sms: sms.unwrap_or_default(),
                from,
                status,
                period: period.unwrap_or_default(),
            },
        )
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
