//! `GET /admin/subscriptions/{id}`: one subscription (whose, what, when,
//! by which channels) and, for a group's, the members who opted out of it
//! with when, each with a button: `POST /admin/subscriptions/{id}/optin`
//! (`member`) clears that opt-out with `subscriptions::clear_optout`, as
//! `digestd subscription optin ID --member NAME`, so the group's digests
//! reach the member again.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use crate::digest::words::Style;
use crate::error::Error;
use crate::ids::SubscriptionId;
use crate::{items, parties, subscriptions};

use super::super::super::body::RawBody;
use super::super::super::{ApiError, App};
use super::super::view::{self, SubView};
use super::super::{Page, PageResult, Words};
use super::home::stamp;
use super::{field, fields, gated, refused, render, Admin};
use crate::i18n::Locale;

pub struct OptOutRow {
    pub member: String,
    pub at: String,
}

#[derive(Template)]
#[template(path = "pages/admin/subscription.html")]
struct ShowPage<'a> {
    a: &'a Admin,
    party: String,
    s: SubView,
    optouts: Vec<OptOutRow>,
    notice: Option<&'static str>,
}

/// A subscription id from the path: anything else is the not-found page.
fn id_of(s: &str) -> Option<SubscriptionId> {
    s.parse::<i64>().ok().filter(|i| *i > 0).map(SubscriptionId)
}

pub async fn show(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> PageResult {
    let notice = (q.as_deref() == Some("done=cleared"))
        .then_some("Cleared: the group's digests reach that member again from the next one.");
    gated(&app, &headers, None, move |c, a| {
        let back = a.at("/subscribers");
        let Some(id) = id_of(&id) else {
            return refused(Error::not_found("no such subscription"), &back);
        };
        let sub = match subscriptions::get(c, id) {
            Ok(s) => s,
            Err(e) => return refused(e, &back),
        };
        let names: HashMap<i64, String> = items::list_collections(c)?
            .into_iter()
            .map(|k| (k.id.0, k.name))
            .collect();
        // Times in the subscription's own terms (its hour is its party's
        // local hour), on the 24-hour clock.
        let style = Style::new(chrono_tz::UTC, "en-GB");
        let optouts = subscriptions::list_optouts(c, Some(id))?
            .into_iter()
            .map(|o| OptOutRow {
                member: o.member,
                at: stamp(o.created_at),
            })
            .collect();
        Ok(render(
            StatusCode::OK,
            &ShowPage {
                a,
                party: parties::name_of(c, sub.party)?,
                s: view::describe(&Words::new(Locale::En), &sub, &names, &style),
                optouts,
                notice,
            },
        ))
    })
    .await
}

pub async fn optin(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: std::result::Result<RawBody, ApiError>,
) -> PageResult {
    let f = fields(&body?.0).map_err(|e| Page::from(ApiError::bad_request(e.to_string())))?;
    gated(&app, &headers, Some(f.get("csrf").cloned()), move |c, a| {
        let Some(id) = id_of(&id) else {
            return refused(
                Error::not_found("no such subscription"),
                &a.at("/subscribers"),
            );
        };
        let here = a.at(&format!("/subscriptions/{}", id.0));
        let member = field(&f, "member").unwrap_or("");
        match subscriptions::clear_optout(c, id, member) {
            Ok(()) => Ok(Ok(Page::see_other(format!("{here}?done=cleared")))),
            Err(e) => refused(e, &here),
        }
    })
    .await
}
