//! Shared by the page tests (`http_pages*.rs`): two people with their
//! subscriptions, their subscriber codes, the form token read from a page,
//! a form POST, and a fingerprint of every table a page may write, to
//! prove that a refused request wrote nothing.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use digestd::db::schema::{nt_requests, subscriptions, users};
use digestd::db::DbConn;
use digestd::ids::{PartyId, SubscriptionId};
use digestd::parties::{self, Channel, ContactChange, NewUser};
use digestd::subscriptions::{SubscribeRequest, Subscribed};
use digestd::{items, manage};

use super::at;
use super::web::{Answer, Web};

pub const CREATED: &str = "2026-11-22T00:00:00Z";
/// Where the tests' server clock starts.
pub const NOW: &str = "2026-11-22T00:30:00Z";
pub const EVIL: &str = "<script>alert(1)</script>";

pub struct World {
    pub asha: PartyId,
    pub bo: PartyId,
    pub cal: String,
    /// asha: Calendar daily at 09:00, all collections weekly (forward) on
    /// Monday at 08:00, the hostile collection daily at 18:00.
    pub asha_daily: SubscriptionId,
    pub asha_weekly: SubscriptionId,
    pub asha_evil: SubscriptionId,
    /// bo: Calendar daily at 07:00.
    pub bo_daily: SubscriptionId,
}

fn sub(c: &mut DbConn, r: SubscribeRequest) -> SubscriptionId {
    match manage::subscribe(c, at(CREATED), &r).unwrap() {
        Subscribed::Created(id) => id,
        other => panic!("{other:?}"),
    }
}

fn daily(party: &str, coll: &str, hour: i64) -> SubscribeRequest {
    SubscribeRequest {
        party: party.into(),
        frequency: "daily".into(),
        kind: "modification".into(),
        collection: Some(coll.into()),
        hour: Some(hour),
        ..Default::default()
    }
}

/// asha in Madrid reads the 24-hour clock (en-GB); bo in New York the
/// 12-hour one (en-US).
pub fn world(c: &mut DbConn) -> World {
    let t0 = at("2026-11-01T00:00:00Z");
    let asha = parties::create_user(
        c,
        t0,
        &NewUser {
            name: "asha".into(),
            timezone: "Europe/Madrid".into(),
            email: Some("asha@example.com".into()),
            phone: Some("+34600111222".into()),
            locale: Some("en-GB".into()),
            ..Default::default()
        },
    )
    .unwrap();
    parties::change_contact(c, t0, "asha", Channel::Email, &ContactChange::Verify).unwrap();
    let bo = parties::create_user(
        c,
        t0,
        &NewUser {
            name: "bo".into(),
            timezone: "America/New_York".into(),
            email: Some("bo@example.org".into()),
            locale: Some("en-US".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let cal = items::create_collection(c, t0, "Calendar", None)
        .unwrap()
        .uuid;
    let evil = items::create_collection(c, t0, EVIL, None).unwrap().uuid;
    let asha_daily = sub(c, daily("asha", &cal, 9));
    let asha_weekly = sub(
        c,
        SubscribeRequest {
            party: "asha".into(),
            frequency: "weekly".into(),
            kind: "forward".into(),
            hour: Some(8),
            day: Some("mon".into()),
            ..Default::default()
        },
    );
    let asha_evil = sub(c, daily("asha", &evil, 18));
    let bo_daily = sub(c, daily("bo", &cal, 7));
    World {
        asha,
        bo,
        cal,
        asha_daily,
        asha_weekly,
        asha_evil,
        bo_daily,
    }
}

/// A user's subscriber code.
pub fn code(c: &mut DbConn, who: PartyId) -> String {
    users::table
        .filter(users::party_id.eq(who.0))
        .select(users::subscriber_code)
        .first(c)
        .unwrap()
}

/// The form token a page carries.
pub fn csrf(html: &str) -> String {
    let mark = "name=\"csrf\" value=\"";
    let i = html.find(mark).expect("a form with a token") + mark.len();
    html[i..i + html[i..].find('"').unwrap()].to_string()
}

/// A GET from a browser that asks for `accept_language`.
pub fn get_as(web: &Web, path: &str, accept_language: &str) -> Answer {
    web.send(|c| {
        c.get(web.url(path))
            .header("accept-language", accept_language)
    })
}

/// A form POST, as a browser sends it.
pub fn post_form(web: &Web, path: &str, fields: &[(&str, &str)]) -> Answer {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    post_raw(web, path, "application/x-www-form-urlencoded", body)
}

pub fn post_raw(web: &Web, path: &str, content_type: &str, body: String) -> Answer {
    web.send(|c| {
        c.post(web.url(path))
            .header("content-type", content_type)
            .body(body)
    })
}

type SubRow = (
    i64,
    bool,
    Option<i32>,
    Option<i32>,
    Option<NaiveDateTime>,
    NaiveDateTime,
);

/// Each subscription's id, pause, hour, day, next due instant and active
/// start (what a change or a reschedule writes).
pub fn schedule(c: &mut DbConn) -> Vec<SubRow> {
    subscriptions::table
        .select((
            subscriptions::id,
            subscriptions::paused,
            subscriptions::hour_of_day,
            subscriptions::day_of_week,
            subscriptions::next_due_at,
            subscriptions::active_since,
        ))
        .order(subscriptions::id.asc())
        .load(c)
        .unwrap()
}

/// Everything a page may write: subscriptions, users and their contact
/// points, requests and their statuses.
pub fn snapshot(c: &mut DbConn) -> String {
    let reqs: Vec<(i64, String)> = nt_requests::table
        .select((nt_requests::request_id, nt_requests::status))
        .order(nt_requests::request_id.asc())
        .load(c)
        .unwrap();
    let mut contacts = Vec::new();
    for u in parties::list_users(c).unwrap() {
        contacts.push(parties::contact_points(c, u.id).unwrap());
    }
    format!(
        "{:?}\n{:?}\n{:?}\n{contacts:?}\n{reqs:?}",
        schedule(c),
        digestd::subscriptions::list(c).unwrap(),
        parties::list_users(c).unwrap(),
    )
}

/// Whether subscription `id` is paused.
pub fn paused(c: &mut DbConn, id: SubscriptionId) -> bool {
    digestd::subscriptions::get(c, id).unwrap().paused
}

/// The `.eml` files the `dir` transport wrote into `dir`, read whole (none
/// when the directory does not exist yet).
pub fn mails_in(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect()
}

/// Group `team` of `members`, subscribed to the Calendar (`cal`) daily at
/// `hour` UTC (a group without preferences), from `CREATED`.
pub fn team(c: &mut DbConn, cal: &str, members: &[&str], hour: i64) -> SubscriptionId {
    let t0 = at("2026-11-01T00:00:00Z");
    parties::create_group(c, t0, "team", None).unwrap();
    for m in members {
        parties::add_member(c, "team", m).unwrap();
    }
    sub(c, daily("team", cal, hour))
}

/// ops (already there) puts the event `title` (its UUID from `n`, on the
/// 27th at 09:00Z) into collection `cal` at `when`.
pub fn ops_puts(c: &mut DbConn, cal: &str, n: u128, title: &str, when: &str) {
    let item = items::ItemInput {
        uuid: uuid::Uuid::from_u128(n).to_string(),
        collection: Some(cal.into()),
        kind: "event".into(),
        title: title.into(),
        start: Some("2026-11-27T09:00:00Z".into()),
        actor: "ops".into(),
        at: Some(when.into()),
        ..Default::default()
    };
    items::put_item(c, at(when), &item).unwrap();
}

/// ops (made here) adds the event `title` (its UUID from `n`) to
/// collection `cal` at 10:00Z on the 22nd; then the tick runs at
/// `tick_at` with the default composer.
pub fn ops_adds_then_tick(c: &mut DbConn, cal: &str, n: u128, title: &str, tick_at: &str) {
    let ops = NewUser {
        name: "ops".into(),
        timezone: "UTC".into(),
        ..Default::default()
    };
    parties::create_user(c, at(NOW), &ops).unwrap();
    ops_puts(c, cal, n, title, "2026-11-22T10:00:00Z");
    let mut comp = digestd::digest::Composer::new(
        &digestd::config::DigestConfig::default(),
        &digestd::config::EmailConfig::default(),
    )
    .unwrap();
    digestd::schedule::tick::tick(c, at(tick_at), &mut comp).unwrap();
}
