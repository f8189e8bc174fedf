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
use super::{field, form_fields, gated, refused, render, Admin, Refused};
use crate::i18n::Arg;

pub struct OptOutRow {
    pub member: String,
    pub at: String,
}

#[derive(Template)]
#[template(path = "pages/admin/subscription.html")]
struct ShowPage<'a> {
    t: Words,
    a: &'a Admin,
    /// "Subscription 7".
    title: String,
    party: String,
    s: SubView,
    /// When, in its party's time.
    when: String,
    optouts: Vec<OptOutRow>,
    notice: Option<String>,
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
    let cleared = q.as_deref() == Some("done=cleared");
    gated(&app, &headers, None, move |c, a| {
        let back = a.at("/subscribers");
        let Some(id) = id_of(&id) else {
            return refused(a.t, Refused::NoSubscription, &back);
        };
        let sub = match subscriptions::get(c, id) {
            Ok(s) => s,
            Err(Error::NotFound(_)) => return refused(a.t, Refused::NoSubscription, &back),
            Err(e) => return refused(a.t, e, &back),
        };
        let names: HashMap<i64, String> = items::list_collections(c)?
            .into_iter()
            .map(|k| (k.id.0, k.name))
            .collect();
        // Times in the subscription's own terms (its hour is its party's
        // local hour), on the 24-hour clock; the operator's words.
        let style = Style {
            lang: a.t.lang,
            ..Style::new(chrono_tz::UTC, "en-GB")
        };
        let optouts = subscriptions::list_optouts(c, Some(id))?
            .into_iter()
            .map(|o| OptOutRow {
                member: o.member,
                at: stamp(o.created_at),
            })
            .collect();
        let party = parties::name_of(c, sub.party)?;
        let s = view::describe(&a.t, &sub, &names, &style);
        let when = a.t.f(
            "admin-party-time",
            &[("when", Arg::Str(&s.when)), ("party", Arg::Str(&party))],
        );
        Ok(render(
            StatusCode::OK,
            &ShowPage {
                t: a.t,
                a,
                title: a.t.f1("admin-subscription", "id", &id.0.to_string()),
                party,
                s,
                when,
                optouts,
                notice: cleared.then(|| a.t.t("admin-cleared").into_owned()),
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
    let f = form_fields(&app, &headers, body, "/subscribers")?;
    gated(&app, &headers, Some(f.get("csrf").cloned()), move |c, a| {
        let Some(id) = id_of(&id) else {
            return refused(a.t, Refused::NoSubscription, &a.at("/subscribers"));
        };
        let here = a.at(&format!("/subscriptions/{}", id.0));
        let member = field(&f, "member").unwrap_or("");
        match subscriptions::clear_optout(c, id, member) {
            Ok(()) => Ok(Ok(Page::see_other(format!("{here}?done=cleared")))),
            // No such subscription, or no opt-out of that member's.
            Err(Error::NotFound(_)) => match subscriptions::get(c, id) {
                Err(Error::NotFound(_)) => refused(a.t, Refused::NoSubscription, &here),
                Err(e) => refused(a.t, e, &here),
                Ok(_) => refused(
                    a.t,
                    Refused::NotOptedOut {
                        member: member.to_string(),
                    },
                    &here,
                ),
            },
            Err(e) => refused(a.t, e, &here),
        }
    })
    .await
}
