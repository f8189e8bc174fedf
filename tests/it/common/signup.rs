//! Shared by the sign-up tests (`http_pages_signup*.rs`): a world with one
//! public collection, the form token, a sign-up as a browser sends it
//! (directly, or through a proxy as a forwarded client), and what a
//! sign-up writes.

use diesel::prelude::*;
use digestd::db::schema::{nt_messages, nt_requests, users};
use digestd::db::DbConn;

use super::at;
use super::pages::{csrf, post_form, world, NOW};
use super::web::{Answer, Web};

/// A world with Calendar public and "Private" not; returns their UUIDs.
pub fn setup(c: &mut DbConn) -> (String, String) {
    let w = world(c);
    digestd::items::set_public(c, &w.cal, true).unwrap();
    let private = digestd::items::create_collection(c, at(NOW), "Private", None)
        .unwrap()
        .uuid;
    (w.cal, private)
}

/// The sign-up form's token, fetched as `client` (through a trusted proxy's
/// `X-Forwarded-For`) or directly.
pub fn form_token_as(web: &Web, client: Option<&str>) -> String {
    let a = web.send(|c| {
        let r = c.get(web.url("/subscribe"));
        match client {
            Some(ip) => r.header("x-forwarded-for", ip),
            None => r,
        }
    });
    assert_eq!(a.status, 200, "{}", a.text);
    csrf(&a.text)
}

pub fn form_token(web: &Web) -> String {
    form_token_as(web, None)
}

pub fn sign_up(web: &Web, fields: &[(&str, &str)]) -> Answer {
    let token = form_token(web);
    let mut f: Vec<(&str, &str)> = vec![("csrf", &token)];
    f.extend_from_slice(fields);
    post_form(web, "/subscribe", &f)
}

/// A form POST to `/subscribe` through a proxy, as `client`, with `token`.
pub fn post_via(web: &Web, client: &str, token: &str, fields: &[(&str, &str)]) -> Answer {
    let mut f: Vec<(&str, &str)> = vec![("csrf", token)];
    f.extend_from_slice(fields);
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&f)
        .finish();
    web.send(|c| {
        c.post(web.url("/subscribe"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-forwarded-for", client)
            .body(body)
    })
}

/// A sign-up through a proxy, as `client` (its `X-Forwarded-For`), with a
/// form fetched the same way.
pub fn sign_up_via(web: &Web, client: &str, email: &str, cal: &str) -> Answer {
    let token = form_token_as(web, Some(client));
    post_via(web, client, &token, &daily(email, cal))
}

pub fn daily<'a>(email: &'a str, cal: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("email", email),
        ("collection", cal),
        ("frequency", "daily"),
        ("hour", "9"),
        ("day", "mon"),
        ("timezone", "Europe/Berlin"),
    ]
}

/// Sign-up rows, verification requests, users.
pub fn counts(c: &mut DbConn) -> (i64, i64, i64) {
    let signups: i64 = digestd::db::schema::signups::table
        .count()
        .get_result(c)
        .unwrap();
    let reqs: i64 = nt_requests::table.count().get_result(c).unwrap();
    let users_: i64 = users::table.count().get_result(c).unwrap();
    (signups, reqs, users_)
}

/// The newest verification message's stored text and HTML.
pub fn stored_mail(c: &mut DbConn) -> (String, Option<String>) {
    nt_requests::table
        .inner_join(nt_messages::table)
        .filter(nt_requests::subject.eq(digestd::signup::SUBJECT))
        .order(nt_requests::request_id.desc())
        .select((nt_messages::message, nt_messages::message_html))
        .first(c)
        .unwrap()
}

/// The confirm token in the newest verification message (before it is
/// sent: the queue scrubs it then).
pub fn token_in_mail(c: &mut DbConn) -> String {
    let text = stored_mail(c).0;
    let mark = "/subscribe/confirm/";
    let i = text.find(mark).unwrap_or_else(|| panic!("{text}")) + mark.len();
    text[i..i + 64].to_string()
}
