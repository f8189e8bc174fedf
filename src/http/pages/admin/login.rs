//! `GET /admin/login` (the form), `POST /admin/login` (an `admin` token in
//! `token`: a session and its cookie, 303 to `/admin`; anything else the
//! form again, 401, nothing written), `POST /admin/logout` (the session
//! ended, the cookie cleared).
//!
//! The cookie: `HttpOnly`, `SameSite=Strict`, `Path={prefix}/admin`,
//! `Max-Age` of `[http] admin_session_hours` (the server checks the same
//! expiry by its own clock), `Secure` when `[digest] base_url` is https.
//!
//! [`Failures`]: after 10 failed logins from one peer address within 15
//! minutes, its logins are 429 without looking at the token until the
//! window has passed (in memory, per process; behind a proxy every login
//! comes from the proxy's address, so the limit is then one for all).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use askama::Template;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use chrono::{DateTime, Duration, Utc};

use crate::access::session;

use super::super::super::body::RawBody;
use super::super::super::{ApiError, App};
use super::super::manage::{prefix, render_failed};
use super::super::Page;
use super::{cookie, fields, gated, secure, COOKIE};

/// Failed logins allowed per address and window.
const MAX_FAILURES: u32 = 10;

fn window() -> Duration {
    Duration::minutes(15)
}

/// Entries kept before the stale ones are dropped.
const MAX_ADDRESSES: usize = 10_000;

/// Failed logins per peer address: when its window began and how many.
#[derive(Default)]
pub struct Failures(Mutex<HashMap<IpAddr, (DateTime<Utc>, u32)>>);

impl Failures {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (DateTime<Utc>, u32)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `ip` has used up its failures at `now`.
    pub fn blocked(&self, ip: IpAddr, now: DateTime<Utc>) -> bool {
        self.lock()
            .get(&ip)
            .is_some_and(|(since, n)| now - *since < window() && *n >= MAX_FAILURES)
    }

    /// Counts one failure of `ip` at `now`.
    pub fn fail(&self, ip: IpAddr, now: DateTime<Utc>) {
        let mut m = self.lock();
        if m.len() >= MAX_ADDRESSES {
            m.retain(|_, (since, _)| now - *since < window());
        }
        let e = m.entry(ip).or_insert((now, 0));
        if now - e.0 >= window() {
            *e = (now, 0);
        }
        e.1 += 1;
    }

    /// A login succeeded: the count starts over.
    pub fn clear(&self, ip: IpAddr) {
        self.lock().remove(&ip);
    }
}

#[derive(Template)]
#[template(path = "pages/admin/login.html")]
struct LoginPage {
    action: String,
    error: Option<&'static str>,
}

fn form(app: &App, status: StatusCode, error: Option<&'static str>) -> Result<Page, Page> {
    let html = LoginPage {
        action: format!("{}/admin/login", prefix(app)),
        error,
    }
    .render()
    .map_err(render_failed)?;
    Ok(Page::with(status, html))
}

pub async fn show(State(app): State<App>) -> Result<Page, Page> {
    form(&app, StatusCode::OK, None)
}

/// The `Set-Cookie` value: the session, or (`None`) one that clears it.
fn set_cookie(app: &App, sid: Option<&str>) -> HeaderValue {
    let max_age = match sid {
        Some(_) => u64::from(app.cfg.http.admin_session_hours) * 3600,
        None => 0,
    };
    let mut v = format!(
        "{COOKIE}={}; Path={}/admin; Max-Age={max_age}; HttpOnly; SameSite=Strict",
        sid.unwrap_or(""),
        prefix(app)
    );
    if secure(app) {
        v.push_str("; Secure");
    }
    HeaderValue::from_str(&v).expect("cookie text is ASCII")
}

fn with_cookie(page: Page, c: HeaderValue) -> Response {
    let mut r = page.into_response();
    r.headers_mut().insert(header::SET_COOKIE, c);
    r
}

pub async fn act(
    State(app): State<App>,
    Extension(failures): Extension<Arc<Failures>>,
    headers: axum::http::HeaderMap,
    ext: axum::http::Extensions,
    body: Result<RawBody, ApiError>,
) -> Response {
    const BAD: &str = "That is not a valid admin token. Nothing was changed.";
    const MANY: &str =
        "Too many failed logins from this address: try again in 15 minutes. Nothing was checked.";
    let now = app.clock.now();
    // Served by `serve_on`, the peer's address is there; anything else
    // (a router driven without a socket) shares one count.
    let ip = crate::http::client::address(&ext, &headers, &app.trusted_proxies)
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    if failures.blocked(ip, now) {
        return form(&app, StatusCode::TOO_MANY_REQUESTS, Some(MANY)).into_response();
    }
    let Ok(body) = body else {
        failures.fail(ip, now);
        return form(&app, StatusCode::BAD_REQUEST, Some(BAD)).into_response();
    };
    let token = fields(&body.0)
        .ok()
        .and_then(|f| f.get("token").map(|t| t.trim().to_string()))
        .unwrap_or_default();
    let lasts = chrono::Duration::hours(i64::from(app.cfg.http.admin_session_hours));
    let opened = app
        .blocking(move |c| session::open(c, now, &token, lasts))
        .await;
    match opened {
        Ok(Some((sid, _))) => {
            failures.clear(ip);
            with_cookie(
                Page::see_other(format!("{}/admin", prefix(&app))),
                set_cookie(&app, Some(&sid)),
            )
        }
        Ok(None) => {
            failures.fail(ip, now);
            form(&app, StatusCode::UNAUTHORIZED, Some(BAD)).into_response()
        }
        Err(e) => Page::from(e).into_response(),
    }
}

pub async fn logout(
    State(app): State<App>,
    headers: HeaderMap,
    body: Result<RawBody, ApiError>,
) -> Response {
    let f = match body
        .map_err(Page::from)
        .and_then(|b| fields(&b.0).map_err(|e| Page::from(ApiError::bad_request(e.to_string()))))
    {
        Ok(f) => f,
        Err(p) => return p.into_response(),
    };
    let sid = cookie(&headers).unwrap_or_default();
    let login = format!("{}/admin/login", prefix(&app));
    let done = gated(&app, &headers, Some(f.get("csrf").cloned()), move |c, _| {
        session::close(c, &sid)?;
        Ok(Ok(Page::see_other(login)))
    })
    .await;
    match done {
        Ok(p) => with_cookie(p, set_cookie(&app, None)),
        Err(p) => p.into_response(),
    }
}
