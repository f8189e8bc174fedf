//! `GET /admin/requests?status=&sender=&recipient=&before=`: requests,
//! newest first, 50 a page (`before` is the last id of the page shown);
//! every filter value is checked (a status from the list, party names that
//! exist, a numeric id) and a bad one is 400 with the form and one line in
//! the operator's language ([`Refused`]).
//! `GET /admin/requests/{id}`: one request (`deliver::queue::show`, as
//! `digestd request show`), each recipient's state and every attempt with
//! its reply code and text; `POST /admin/requests/{id}/cancel` cancels it
//! with `deliver::queue::cancel_request`, as `digestd cancel`.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::deliver::queue::{self, Attempt, RequestFilter, RequestRow, RequestView};
use crate::error::Error;
use crate::ids::RequestId;

use super::super::super::body::RawBody;
use super::super::super::{ApiError, App};
use super::super::{Page, PageResult, Words};
use super::home::stamp;
use super::{field, fields, form_fields, gated, party, refused, render, Admin, Refused};

const PAGE: i64 = 50;

/// The filter as the form shows it again.
#[derive(Default)]
pub struct FilterView {
    pub status: String,
    pub sender: String,
    pub recipient: String,
}

pub struct RowView {
    pub r: RequestRow,
    pub requested: String,
    pub fulfilled: String,
}

#[derive(Template)]
#[template(path = "pages/admin/requests.html")]
struct ListPage<'a> {
    t: Words,
    a: &'a Admin,
    statuses: &'static [RequestStatus],
    filter: FilterView,
    rows: Vec<RowView>,
    /// The query of the next page, when there may be one.
    next: Option<String>,
    error: Option<String>,
}

/// Reads and checks the filter; the names are resolved to parties.
fn filter(
    c: &mut DbConn,
    q: &HashMap<String, String>,
) -> Result<(RequestFilter, FilterView), Refused> {
    let mut f = RequestFilter {
        limit: PAGE,
        ..Default::default()
    };
    let mut v = FilterView::default();
    if let Some(s) = field(q, "status") {
        f.status = Some(
            s.parse::<RequestStatus>()
                .map_err(|_| Refused::Status(s.to_string()))?,
        );
        v.status = s.to_string();
    }
    for (key, slot, shown) in [
        ("sender", &mut f.sender, &mut v.sender),
        ("recipient", &mut f.recipient, &mut v.recipient),
    ] {
        if let Some(n) = field(q, key) {
            let (id, n) = party(c, n)?;
            *slot = Some(id);
            *shown = n;
        }
    }
    if let Some(b) = field(q, "before") {
        let id = b
            .parse::<i64>()
            .map_err(|_| Refused::NotId(b.to_string()))?;
        f.before = Some(RequestId(id));
    }
    Ok((f, v))
}

pub async fn list(State(app): State<App>, headers: HeaderMap, RawQuery(q): RawQuery) -> PageResult {
    let raw = q.unwrap_or_default();
    gated(&app, &headers, None, move |c, a| {
        let page = |filter, rows, next, error: Option<String>| ListPage {
            t: a.t,
            a,
            statuses: &RequestStatus::ALL,
            filter,
            rows,
            next,
            error,
        };
        let parsed = fields(raw.as_bytes()).and_then(|q| filter(c, &q));
        let (f, view) = match parsed {
            Ok(x) => x,
            Err(r) => {
                let (_, line) = r.said(&a.t)?;
                return Ok(render(
                    StatusCode::BAD_REQUEST,
                    &page(FilterView::default(), Vec::new(), None, Some(line)),
                ));
            }
        };
        let rows = queue::list(c, &f)?;
        let next = (rows.len() as i64 == PAGE).then(|| {
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("status", &view.status)
                .append_pair("sender", &view.sender)
                .append_pair("recipient", &view.recipient)
                .append_pair("before", &rows[rows.len() - 1].id.to_string())
                .finish()
        });
        let rows = rows
            .into_iter()
            .map(|r| RowView {
                requested: stamp(r.requested_at),
                fulfilled: r.fulfilled_at.map(stamp).unwrap_or_default(),
                r,
            })
            .collect();
        Ok(render(StatusCode::OK, &page(view, rows, next, None)))
    })
    .await
}

pub struct AttemptView {
    pub a: Attempt,
    pub at: String,
}

#[derive(Template)]
#[template(path = "pages/admin/request.html")]
struct ShowPage<'a> {
    t: Words,
    a: &'a Admin,
    /// "Request 42".
    title: String,
    r: RequestView,
    attempts: Vec<AttemptView>,
    cancellable: bool,
    notice: Option<String>,
}

/// A request id from the path: anything else is the not-found page.
fn id_of(s: &str) -> Option<RequestId> {
    s.parse::<i64>().ok().filter(|i| *i > 0).map(RequestId)
}

pub async fn show(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> PageResult {
    let cancelled = q.as_deref() == Some("done=cancelled");
    gated(&app, &headers, None, move |c, a| {
        let back = a.at("/requests");
        let Some(id) = id_of(&id) else {
            return refused(a.t, Refused::NoRequest, &back);
        };
        let r = match queue::show(c, id) {
            Ok(r) => r,
            Err(Error::NotFound(_)) => return refused(a.t, Refused::NoRequest, &back),
            Err(e) => return refused(a.t, e, &back),
        };
        let attempts = queue::attempts(c, id)?
            .into_iter()
            .map(|x| AttemptView {
                at: stamp(x.attempted_at),
                a: x,
            })
            .collect();
        Ok(render(
            StatusCode::OK,
            &ShowPage {
                t: a.t,
                a,
                title: a.t.f1("admin-request", "id", &id.0.to_string()),
                cancellable: r.status.is_open(),
                r,
                attempts,
                notice: cancelled.then(|| a.t.t("admin-cancelled").into_owned()),
            },
        ))
    })
    .await
}

pub async fn cancel(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: std::result::Result<RawBody, ApiError>,
) -> PageResult {
    let f = form_fields(&app, &headers, body, "/requests")?;
    let now = app.clock.now();
    gated(&app, &headers, Some(f.get("csrf").cloned()), move |c, a| {
        let Some(id) = id_of(&id) else {
            return refused(a.t, Refused::NoRequest, &a.at("/requests"));
        };
        let here = a.at(&format!("/requests/{}", id.0));
        match queue::cancel_request(c, id, now) {
            Ok(()) => Ok(Ok(Page::see_other(format!("{here}?done=cancelled")))),
            Err(Error::NotFound(_)) => refused(a.t, Refused::NoRequest, &here),
            // Finished already: said with the status it finished in.
            Err(Error::Conflict(e)) => match queue::show(c, id) {
                Ok(r) => refused(
                    a.t,
                    Refused::NotOpen {
                        status: r.status.as_str().to_string(),
                    },
                    &here,
                ),
                Err(_) => refused(a.t, Error::Conflict(e), &here),
            },
            Err(e) => refused(a.t, e, &here),
        }
    })
    .await
}
