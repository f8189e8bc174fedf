//! The pages every digest links to, for the person it was sent to; their
//! subscriber code in the URL is the capability (`/s/{code}`, Fossil's
//! scheme). Server-rendered HTML (askama, `templates/pages/`), plain forms
//! that work without JavaScript, no script at all and a strict CSP.
//!
//! [`manage`] (`/s/{code}`), [`unsubscribe`] (`/s/{code}/unsubscribe/{ids}`
//! with its undo and the RFC 8058 one-click POST), [`digest`] (the whole
//! digest, `/d/{subscription}/{period}/{mac}`, a signed link rather than
//! the code), [`signup`] (`/subscribe`, public sign-up with double opt-in,
//! the one page with a script: optional, allowed by its hash); the
//! operator's pages under `/admin` ([`admin`], an admin token exchanged for
//! a session). Form tokens are in
//! [`csrf`], the views (masking, times in the person's style) in [`view`].
//! Every change goes through the library call the CLI uses.
//!
//! Errors are pages too: an unknown or malformed code, or a subscription
//! that is not the code owner's, is the same 404 "this link is not valid".

mod admin;
mod csrf;
mod digest;
mod manage;
mod quiet;
mod signup;
mod unsubscribe;
mod view;

use std::collections::HashMap;

use askama::Template;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::db::DbConn;
use crate::ids::PartyId;
use crate::parties;

use super::{ApiError, App};

pub use csrf::FormKey;

/// Pages carry their own style (in the layout) and post their own forms;
/// no script, no other source.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

pub fn routes() -> Router<App> {
    Router::new()
        .route("/s/{code}", get(manage::show).post(manage::act))
        .route(
            "/s/{code}/unsubscribe/{ids}",
            get(unsubscribe::show).post(unsubscribe::act),
        )
        .route("/s/{code}/unsubscribe/{ids}/undo", post(unsubscribe::undo))
        .route("/subscribe", get(signup::show).post(signup::post))
        .route(
            "/subscribe/confirm/{token}",
            get(signup::confirm_show).post(signup::confirm),
        )
        .route("/d/{subscription}/{period}", get(digest::unsigned))
        .route("/d/{subscription}/{period}/{mac}", get(digest::show))
        .merge(admin::routes())
}

/// An HTML answer: a status and a rendered page, never cached (it holds a
/// code).
pub struct Page {
    pub status: StatusCode,
    pub html: String,
    pub location: Option<String>,
}

impl Page {
    pub fn ok(html: String) -> Page {
        Page::with(StatusCode::OK, html)
    }
    pub fn with(status: StatusCode, html: String) -> Page {
        Page {
            status,
            html,
            location: None,
        }
    }
    /// 303 to `to` (after a form did its work, so a reload does not repeat it).
    pub fn see_other(to: String) -> Page {
        Page {
            status: StatusCode::SEE_OTHER,
            html: String::new(),
            location: Some(to),
        }
    }
    /// A page that says one thing: the 404 of a bad link, a 403, a 500.
    pub fn message(status: StatusCode, title: &str, text: &str) -> Page {
        let html = view::MessagePage {
            title,
            text,
            manage: None,
        }
        .render()
        .unwrap_or_else(|_| text.to_string());
        Page::with(status, html)
    }
    pub fn not_found() -> Page {
        Page::message(
            StatusCode::NOT_FOUND,
            "This link is not valid",
            "This link is not valid. Use the newest link from one of your digests.",
        )
    }
    /// 415: a form's route was sent a body that is not a form.
    pub fn not_a_form() -> Page {
        Page::message(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Not done",
            "The form must be sent as a form. Nothing was changed.",
        )
    }
    pub fn forbidden() -> Page {
        Page::message(
            StatusCode::FORBIDDEN,
            "Form expired",
            "This form is not valid any more: nothing was changed. Open the page again and retry.",
        )
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut r = (self.status, self.html).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(l) = self.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            h.insert(header::LOCATION, l);
        }
        r
    }
}

/// Library and storage errors as pages: a 404 is the bad-link page, a 5xx
/// says only that something failed (the log says why).
impl From<ApiError> for Page {
    fn from(e: ApiError) -> Page {
        match e.status {
            StatusCode::NOT_FOUND => Page::not_found(),
            s if s.is_server_error() => Page::message(
                s,
                "Something went wrong",
                "Something went wrong on our side; nothing was changed. Try again later.",
            ),
            s => Page::message(s, "Not done", &e.message),
        }
    }
}

pub type PageResult = Result<Page, Page>;

/// The code's owner and the form key, or `None` for a code that names
/// nobody.
pub fn person(c: &mut DbConn, code: &str) -> crate::Result<Option<(PartyId, FormKey)>> {
    match parties::find_by_code(c, code)? {
        Some(id) => Ok(Some((id, FormKey::load(c)?))),
        None => Ok(None),
    }
}

/// A form body (`application/x-www-form-urlencoded`) as fields; a field
/// given twice keeps its first value.
pub fn form(body: &[u8]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    out
}

/// Whether the request says its body is a form (or says nothing).
pub fn is_form(headers: &HeaderMap) -> bool {
    content_type(headers).is_none_or(|t| t == "application/x-www-form-urlencoded")
}

/// The media type of the body, lowercase, without parameters.
pub fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}
