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
//! [`csrf`], the views (masking, times in the person's style) in [`view`],
//! the words in the reader's language and the branding in [`words`].
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
mod words;

use std::collections::HashMap;

use askama::Template;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::db::DbConn;
use crate::i18n::Locale;
use crate::ids::PartyId;
use crate::parties;

use super::{ApiError, App};

pub use csrf::FormKey;
pub use words::{Asked, Words};

/// Pages carry their own style (in the layout) and post their own forms;
/// no script, no other source but the operator's logo.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// The pages' CSP: [`CSP`], plus `img-src` of the origin of `[branding]
/// logo_url` when there is one (an https URL, checked at start), plus
/// `extra` (the sign-up page's script).
pub fn csp(extra: &str) -> String {
    let img = url::Url::parse(&crate::config::branding().logo_url)
        .ok()
        .filter(|u| u.scheme() == "https")
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o.bytes().all(|b| b.is_ascii_graphic() && b != b';'))
        .map_or_else(String::new, |o| format!("; img-src {o}"));
    format!("{CSP}{img}{extra}")
}

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
    pub(crate) fn see_other(to: String) -> Page {
        Page {
            status: StatusCode::SEE_OTHER,
            html: String::new(),
            location: Some(to),
        }
    }
    /// A page that says one thing in `lang`: the 404 of a bad link, a
    /// 403, a 500. `title` and `text` are catalogue keys.
    pub fn say(status: StatusCode, lang: Locale, title: &'static str, text: &'static str) -> Page {
        let t = Words::new(lang);
        Page::message(status, t, &t.t(title), &t.t(text))
    }
    /// A page that says `text` under `title`.
    pub fn message(status: StatusCode, t: Words, title: &str, text: &str) -> Page {
        let html = view::MessagePage {
            t,
            title,
            text,
            manage: None,
        }
        .render()
        .unwrap_or_else(|_| text.to_string());
        Page::with(status, html)
    }
    pub fn not_found(lang: Locale) -> Page {
        Page::say(
            StatusCode::NOT_FOUND,
            lang,
            "page-bad-link-title",
            "page-bad-link",
        )
    }
    /// 415: a form's route was sent a body that is not a form.
    pub(crate) fn not_a_form(lang: Locale) -> Page {
        Page::say(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            lang,
            "page-not-done",
            "page-not-a-form",
        )
    }
    pub fn forbidden(lang: Locale) -> Page {
        Page::say(
            StatusCode::FORBIDDEN,
            lang,
            "page-expired-title",
            "page-expired",
        )
    }
    /// Library and storage errors as pages in `lang`: a 404 is the
    /// bad-link page, a 5xx says only that something failed (the log says
    /// why), another refusal gives its one line.
    pub fn error(lang: Locale, e: ApiError) -> Page {
        match e.status {
            StatusCode::NOT_FOUND => Page::not_found(lang),
            s @ StatusCode::PAYLOAD_TOO_LARGE => {
                Page::say(s, lang, "page-not-done", "page-too-large")
            }
            s @ StatusCode::SERVICE_UNAVAILABLE => Page::say(s, lang, "page-not-done", "page-busy"),
            s if s.is_server_error() => Page::say(s, lang, "page-failed-title", "page-failed"),
            s => {
                let t = Words::new(lang);
                Page::message(s, t, &t.t("page-not-done"), &e.message)
            }
        }
    }
    /// [`Page::error`] as a function, for `map_err`.
    pub fn failed(lang: Locale) -> impl Fn(ApiError) -> Page {
        move |e| Page::error(lang, e)
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
        if let Ok(v) = HeaderValue::from_str(&csp("")) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(l) = self.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            h.insert(header::LOCATION, l);
        }
        r
    }
}

/// Library and storage errors as pages, in English: where the request's
/// language is not known. Handlers and the body limits use
/// [`Page::error`].
impl From<ApiError> for Page {
    fn from(e: ApiError) -> Page {
        Page::error(Locale::En, e)
    }
}

pub type PageResult = Result<Page, Page>;

/// The one line a page shows when `e` refused a form's input, in `lang`:
/// a field's own check (a zone, a locale tag, an hour, quiet hours, a Matrix ID,
/// an email address) said from the catalogue with the value escaped; any
/// other refusal as the library wrote it (the pages' own are in `lang`
/// already). Hostile characters are escaped either way.
pub fn refusal_line(e: &crate::error::Error, lang: Locale) -> String {
    match e.refusal() {
        Some(r) => r.say(lang),
        None => crate::validate::escape_for_line(&e.to_string()),
    }
}

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
pub(crate) fn is_form(headers: &HeaderMap) -> bool {
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
