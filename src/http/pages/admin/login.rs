//! `GET /admin/login` (the form), `POST /admin/login` (an `admin` token in
//! `token`: a session and its cookie, 303 to `/admin`; anything else the
//! form again, 401, nothing written), `POST /admin/logout` (the session
//! ended, the cookie cleared).
//!
//! The cookie: `HttpOnly`, `SameSite=Strict`, `Path={prefix}/admin`,
//! `Max-Age` of `[http] admin_session_hours` (the server checks the same
//! expiry by its own clock), `Secure` when `[digest] base_url` is https.

use askama::Template;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::access::session;

use super::super::super::body::RawBody;
use super::super::super::{ApiError, App};
use super::super::manage::{prefix, render_failed};
use super::super::Page;
use super::{cookie, fields, gated, secure, COOKIE};

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

pub async fn act(State(app): State<App>, body: Result<RawBody, ApiError>) -> Response {
    const BAD: &str = "That is not a valid admin token. Nothing was changed.";
    let Ok(body) = body else {
        return form(&app, StatusCode::BAD_REQUEST, Some(BAD)).into_response();
    };
    let token = fields(&body.0)
        .ok()
        .and_then(|f| f.get("token").map(|t| t.trim().to_string()))
        .unwrap_or_default();
    let now = app.clock.now();
    let lasts = chrono::Duration::hours(i64::from(app.cfg.http.admin_session_hours));
    let opened = app
        .blocking(move |c| session::open(c, now, &token, lasts))
        .await;
    match opened {
        Ok(Some((sid, _))) => with_cookie(
            Page::see_other(format!("{}/admin", prefix(&app))),
            set_cookie(&app, Some(&sid)),
        ),
        Ok(None) => form(&app, StatusCode::UNAUTHORIZED, Some(BAD)).into_response(),
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
