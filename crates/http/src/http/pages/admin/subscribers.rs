//! `GET /admin/subscribers?name=&disabled=1&after=`: users by name, 25 a
//! page, each with every contact point in full (the operator may see
//! addresses), verified, disabled, bounce count, their subscriptions (each
//! linking to its page) and the group subscriptions they opted out of.
//! `POST /admin/subscribers/enable` (`party`, `channel`) re-enables a
//! disabled address with `parties::change_contact(…, Enable)`, as
//! `digestd contact NAME --channel C --enable` (the bounce count starts
//! over).

use std::collections::HashMap;

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use crate::db::DbConn;
use crate::digest::words::Style;
use crate::error::{Error, Result};
use crate::parties::{self, Channel, ContactChange, ContactPoint, UserFilter};
use crate::{items, subscriptions, validate};

use super::super::super::body::RawBody;
use super::super::super::{ApiError, App};
use super::super::view::{self, SubView};
use super::super::{Page, PageResult, Words};
use super::{field, fields, form_fields, gated, refused, render, Admin, Refused};

const PAGE: i64 = 25;

pub struct UserView {
    pub name: String,
    pub timezone: String,
    pub contacts: Vec<ContactPoint>,
    pub subs: Vec<SubView>,
    /// The group subscriptions they opted out of (each links to its page).
    pub optouts: Vec<i64>,
}

#[derive(Template)]
#[template(path = "pages/admin/subscribers.html")]
struct ListPage<'a> {
    t: Words,
    a: &'a Admin,
    name: String,
    disabled_only: bool,
    users: Vec<UserView>,
    next: Option<String>,
    error: Option<String>,
    notice: Option<String>,
}

fn filter(q: &HashMap<String, String>) -> Result<UserFilter, Refused> {
    let name = |n: &str| validate::name("user", n).map_err(|_| Refused::Name(n.to_string()));
    let mut f = UserFilter {
        limit: PAGE,
        ..Default::default()
    };
    if let Some(n) = field(q, "name") {
        // Only what a name may hold; a part of one is fine.
        f.name_contains = Some(name(n)?);
    }
    f.disabled_only = match field(q, "disabled") {
        None | Some("0") => false,
        Some("1") => true,
        Some(v) => return Err(Refused::Disabled(v.to_string())),
    };
    if let Some(a) = field(q, "after") {
        f.after = Some(name(a)?);
    }
    Ok(f)
}

fn load(c: &mut DbConn, t: Words, f: &UserFilter) -> Result<Vec<UserView>> {
    let names: HashMap<i64, String> = items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.name))
        .collect();
    let mut out = Vec::new();
    for (id, name) in parties::page_users(c, f)? {
        let user = parties::get_user(c, id)?;
        let tz = validate::timezone(&user.timezone).unwrap_or(chrono_tz::UTC);
        // The person's zone, clock and date order; the operator's words.
        let style = Style {
            lang: t.lang,
            ..Style::new(tz, &user.locale)
        };
        let subs = subscriptions::list_for_party(c, id)?
            .iter()
            .map(|s| view::describe(&t, s, &names, &style))
            .collect();
        out.push(UserView {
            name,
            timezone: user.timezone,
            // A webhook's URL is its receiver's credential: masked.
            contacts: parties::contact_points(c, id)?
                .into_iter()
                .map(ContactPoint::shown)
                .collect(),
            subs,
            optouts: subscriptions::opted_out(c, id)?
                .iter()
                .map(|s| s.0)
                .collect(),
        });
    }
    Ok(out)
}

pub async fn list(State(app): State<App>, headers: HeaderMap, RawQuery(q): RawQuery) -> PageResult {
    let raw = q.unwrap_or_default();
    gated(&app, &headers, None, move |c, a| {
        let q = fields(raw.as_bytes());
        let notice = q
            .as_ref()
            .ok()
            .and_then(|q| field(q, "done"))
            .filter(|d| *d == "enabled")
            .map(|_| a.t.t("admin-enabled-notice").into_owned());
        let f = match q.and_then(|q| filter(&q)) {
            Ok(f) => f,
            Err(r) => {
                let (_, line) = r.said(&a.t)?;
                return Ok(render(
                    StatusCode::BAD_REQUEST,
                    &ListPage {
                        t: a.t,
                        a,
                        name: String::new(),
                        disabled_only: false,
                        users: Vec::new(),
                        next: None,
                        error: Some(line),
                        notice: None,
                    },
                ));
            }
        };
        let users = load(c, a.t, &f)?;
        let name = f.name_contains.clone().unwrap_or_default();
        let next = (users.len() as i64 == PAGE).then(|| {
            let mut s = url::form_urlencoded::Serializer::new(String::new());
            s.append_pair("name", &name);
            if f.disabled_only {
                s.append_pair("disabled", "1");
            }
            s.append_pair("after", &users[users.len() - 1].name);
            s.finish()
        });
        Ok(render(
            StatusCode::OK,
            &ListPage {
                t: a.t,
                a,
                name,
                disabled_only: f.disabled_only,
                users,
                next,
                error: None,
                notice,
            },
        ))
    })
    .await
}

pub async fn enable(
    State(app): State<App>,
    headers: HeaderMap,
    body: std::result::Result<RawBody, ApiError>,
) -> PageResult {
    let f = form_fields(&app, &headers, body, "/subscribers")?;
    let now = app.clock.now();
    gated(&app, &headers, Some(f.get("csrf").cloned()), move |c, a| {
        let back = a.at("/subscribers");
        let asked = (|| {
            let (p, c) = (
                field(&f, "party").unwrap_or(""),
                field(&f, "channel").unwrap_or(""),
            );
            let party = validate::name("user", p).map_err(|_| Refused::Name(p.to_string()))?;
            let channel = Channel::parse(c).map_err(|_| Refused::Channel(c.to_string()))?;
            Ok::<_, Refused>((party, channel))
        })();
        let (party, channel) = match asked {
            Ok(x) => x,
            Err(r) => return refused(a.t, r, &back),
        };
        match parties::change_contact(c, now, &party, channel, &ContactChange::Enable) {
            Ok(_) => Ok(Ok(Page::see_other(format!(
                "{back}?name={party}&done=enabled"
            )))),
            // No such party, or no address of theirs on that channel.
            Err(Error::NotFound(_)) => match parties::find(c, &party) {
                Err(Error::NotFound(_)) => refused(a.t, Refused::NoParty(party), &back),
                Err(e) => refused(a.t, e, &back),
                Ok(_) => refused(
                    a.t,
                    Refused::NoAddress {
                        party,
                        channel: channel.as_str().to_string(),
                    },
                    &back,
                ),
            },
            Err(e) => refused(a.t, e, &back),
        }
    })
    .await
}
