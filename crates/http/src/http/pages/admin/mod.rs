//! The operator's pages (`/admin…`): an `admin` API token exchanged at
//! `/admin/login` ([`login`]) for a session cookie (`access::session`),
//! then the queue and the last ticks ([`home`]), requests with their
//! attempts and a cancel button ([`requests`]), subscribers with their
//! addresses and a re-enable button ([`subscribers`]), one subscription
//! with the members who opted out of it and a clear button
//! ([`subscription`]), and the week grid ([`grid`]).
//!
//! Every page without a live session answers 303 to the login page; every
//! state-changing form carries `csrf`, an HMAC of the session id under the
//! pages' key ([`FormKey`]), and a POST without the right one is 403 with
//! nothing done. Changes go through the CLI's library calls
//! (`deliver::queue::cancel_request`, `parties::change_contact`,
//! `subscriptions::clear_optout`). Same
//! headers as the person's pages (strict CSP, no script, `no-store`).
//!
//! Their words are in the operator's language (`[i18n] operator_locale`,
//! `admin.ftl`): the names of statuses, kinds, outcomes and channels (the
//! stored word stays in links, filters and forms), what a filter or form
//! refused ([`refused`]), the week grid's drawing and table. Times are in
//! UTC or, for a subscriber's subscriptions, in their zone and clock.

mod grid;
mod home;
mod login;
mod refused;
mod requests;
mod subscribers;
mod subscription;

use std::collections::HashMap;

use askama::Template;
use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::Router;

use crate::access::session::{self, Session};
use crate::db::DbConn;
use crate::error::Error;
use crate::i18n::Arg;
use crate::ids::PartyId;
use crate::{parties, validate};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::manage::{prefix, render_failed};
use super::{FormKey, Page, PageResult, Words};

pub use refused::Refused;

/// The session cookie's name.
pub const COOKIE: &str = "digestd_admin";

/// Longest value of a query or form field the admin pages read.
const MAX_FIELD: usize = 200;

pub fn routes() -> Router<App> {
    Router::new()
        .route("/admin/login", get(login::show).post(login::act))
        .route("/admin/logout", post(login::logout))
        .route("/admin", get(home::show))
        .route("/admin/requests", get(requests::list))
        .route("/admin/requests/{id}", get(requests::show))
        .route("/admin/requests/{id}/cancel", post(requests::cancel))
        .route("/admin/subscribers", get(subscribers::list))
        .route("/admin/subscribers/enable", post(subscribers::enable))
        .route("/admin/subscriptions/{id}", get(subscription::show))
        .route("/admin/subscriptions/{id}/optin", post(subscription::optin))
        .route("/admin/grid", get(grid::show))
        // One failure count per server (not a global: each test server,
        // each process its own).
        .layer(axum::Extension(std::sync::Arc::new(
            login::Failures::default(),
        )))
}

/// A request inside a live session.
pub struct Admin {
    pub session: Session,
    /// The form token of this session.
    pub csrf: String,
    /// The path prefix of `[digest] base_url` (`""` or `/digest`).
    pub prefix: String,
    /// The words, in the operator's language.
    pub t: Words,
}

impl Admin {
    /// `path` under the admin pages: `{prefix}/admin{path}`.
    pub fn at(&self, path: &str) -> String {
        format!("{}/admin{path}", self.prefix)
    }
}

/// The value of the session cookie, if the request carries one.
pub fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.trim().to_string())
}

/// What the form token is made from: the session id, for this purpose.
fn csrf_input(sid: &str) -> String {
    format!("admin session {sid}")
}

fn to_login(prefix: &str) -> Page {
    Page::see_other(format!("{prefix}/admin/login"))
}

/// Runs `f` inside the request's session: no live session is a 303 to the
/// login page; with `csrf` (a form's field), a wrong or missing token is
/// 403 before `f` runs. One blocking call, one connection.
pub async fn gated<F>(
    app: &App,
    headers: &HeaderMap,
    csrf: Option<Option<String>>,
    f: F,
) -> PageResult
where
    F: FnOnce(&mut DbConn, &Admin) -> crate::Result<PageResult> + Send + 'static,
{
    let sid = cookie(headers);
    let now = app.clock.now();
    let pre = prefix(app);
    let t = operator(app);
    app.blocking(move |c| {
        let Some(sid) = sid else {
            return Ok(Err(to_login(&pre)));
        };
        let Some(session) = session::check(c, now, &sid)? else {
            return Ok(Err(to_login(&pre)));
        };
        let key = FormKey::load(c)?;
        if let Some(given) = csrf {
            if !key.verify(&csrf_input(&sid), given.as_deref()) {
                return Ok(Err(Page::forbidden(t.lang)));
            }
        }
        let a = Admin {
            session,
            csrf: key.token(&csrf_input(&sid)),
            prefix: pre,
            t,
        };
        f(c, &a)
    })
    .await?
}

/// The words of the operator's pages: `[i18n] operator_locale`'s language.
pub fn operator(app: &App) -> Words {
    Words::new(app.cfg.i18n.operator_lang())
}

/// The message `key` as HTML: its words escaped, each of `codes` (a
/// variable and its text: a command, a metric) set in `<code>` where the
/// language puts it.
pub fn with_code(t: &Words, key: &str, codes: &[(&str, &str)]) -> String {
    let marks: Vec<String> = (0..codes.len()).map(|i| format!("\u{1}{i}\u{1}")).collect();
    let args: Vec<(&str, Arg)> = codes
        .iter()
        .zip(&marks)
        .map(|((k, _), m)| (*k, Arg::Str(m)))
        .collect();
    let mut html = escape_html(&t.f(key, &args));
    for ((_, code), m) in codes.iter().zip(&marks) {
        html = html.replace(m.as_str(), &format!("<code>{}</code>", escape_html(code)));
    }
    html
}

/// `s` escaped for HTML text and attribute values by askama's own HTML
/// escaper, the one the templates use.
fn escape_html(s: &str) -> String {
    let Ok(escaped) = askama::filters::escape(s, askama::filters::Html);
    escaped.to_string()
}

/// A page that says one thing, inside the admin pages.
#[derive(Template)]
#[template(path = "pages/admin/message.html")]
struct MessagePage<'a> {
    t: Words,
    title: &'a str,
    text: &'a str,
    back: &'a str,
}

pub fn message(status: StatusCode, t: Words, title: &str, text: &str, back: &str) -> Page {
    let html = MessagePage {
        t,
        title,
        text,
        back,
    }
    .render()
    .unwrap_or_else(|_| text.to_string());
    Page::with(status, html)
}

/// A refusal as a page in `t`'s language: bad input (not found,
/// conflict, invalid) is its 4xx with its one line ([`Refused::said`]) and
/// a link back; anything else stays an error (500, said in the log).
pub fn refused(t: Words, r: impl Into<Refused>, back: &str) -> crate::Result<PageResult> {
    let (status, text) = r.into().said(&t)?;
    Ok(Err(message(status, t, &t.t("admin-not-done"), &text, back)))
}

/// A form's body as fields, or the page in the operator's language that
/// refuses it (a body that is no form (415), too large, a field too long
/// or with a control character), with a link back to `back` (a path under
/// `/admin`). Read before the session is checked: nothing is done either
/// way.
pub fn form_fields(
    app: &App,
    headers: &HeaderMap,
    body: std::result::Result<RawBody, ApiError>,
    back: &str,
) -> std::result::Result<HashMap<String, String>, Page> {
    let t = operator(app);
    if !super::is_form(headers) {
        return Err(Page::not_a_form(t.lang));
    }
    let body = body.map_err(Page::failed(t.lang))?;
    fields(&body.0).map_err(|r| {
        let back = format!("{}/admin{back}", prefix(app));
        let text = r.line(&t);
        message(
            StatusCode::BAD_REQUEST,
            t,
            &t.t("admin-not-done"),
            &text,
            &back,
        )
    })
}

/// Renders a template into a page with `status`.
pub fn render(status: StatusCode, t: &impl Template) -> PageResult {
    let html = t.render().map_err(render_failed)?;
    if status.is_success() {
        Ok(Page::with(status, html))
    } else {
        Err(Page::with(status, html))
    }
}

/// A query string or form body as fields (the first of a repeated one);
/// a value longer than [`MAX_FIELD`] or holding a control character is
/// refused, naming the field (never echoing the value).
pub fn fields(raw: &[u8]) -> Result<HashMap<String, String>, Refused> {
    let f = super::form(raw);
    for (k, v) in &f {
        if v.len() > MAX_FIELD || k.len() > MAX_FIELD {
            return Err(Refused::TooLong { field: k.clone() });
        }
        if v.chars().any(char::is_control) {
            return Err(Refused::Control { field: k.clone() });
        }
    }
    Ok(f)
}

/// A user's or group's name from a filter or a form, checked and found:
/// its id and the name.
pub fn party(c: &mut DbConn, n: &str) -> Result<(PartyId, String), Refused> {
    let n = validate::name("user", n).map_err(|_| Refused::Name(n.to_string()))?;
    match parties::find(c, &n) {
        Ok((id, _)) => Ok((id, n)),
        Err(Error::NotFound(_)) => Err(Refused::NoParty(n)),
        Err(e) => Err(Refused::Library(e)),
    }
}

/// A non-empty field, trimmed.
pub fn field<'a>(f: &'a HashMap<String, String>, k: &str) -> Option<&'a str> {
    f.get(k).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// `[digest] base_url` is https: the cookie is `Secure`.
fn secure(app: &App) -> bool {
    app.cfg
        .digest
        .base_url
        .trim()
        .to_ascii_lowercase()
        .starts_with("https:")
}
