//! `GET /admin/login` (the form), `POST /admin/login` (an `admin` token in
//! `token`: a session and its cookie, 303 to `/admin`; anything else the
//! form again, 401, nothing written), `POST /admin/logout` (the session
//! ended, the cookie cleared).
//!
//! The cookie: `HttpOnly`, `SameSite=Strict`, `Path={prefix}/admin`,
//! `Max-Age` of `[http] admin_session_hours` (the server checks the same
//! expiry by its own clock), `Secure` when `[digest] base_url` is https.
//!
//! The form carries a client token ([`FormKey::client_token`]: the
//! client's /24 or /64 and the hour it was served); a login without it is
//! 403 and counts as a failure, so a page elsewhere cannot make a
//! browser log in with a token of its choosing.
//!
//! [`Failures`]: after 10 failed logins from one client block (its IPv4
//! /24 or IPv6 /64, behind a trusted proxy the forwarded client's) within
//! 15 minutes, its logins are 429 without looking at the token until the
//! window has passed. In memory, per process, and bounded: past
//! 10,000 blocks the stale ones go, then the oldest.

use std::collections::HashMap;
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
use super::super::{FormKey, Page, Words};
use super::{cookie, fields, gated, operator, secure, with_code, COOKIE};

/// Failed logins allowed per address and window.
const MAX_FAILURES: u32 = 10;

fn window() -> Duration {
    Duration::minutes(15)
}

/// Client blocks kept at most.
const MAX_BLOCKS: usize = 10_000;

/// The purpose in the login form's client token.
const FORM: &str = "admin login";

/// Failed logins per client block: when its window began and how many.
pub struct Failures {
    map: Mutex<HashMap<String, (DateTime<Utc>, u32)>>,
    cap: usize,
}

impl Default for Failures {
    fn default() -> Self {
        Failures::with_capacity(MAX_BLOCKS)
    }
}

impl Failures {
    /// Keeping at most `cap` blocks.
    pub fn with_capacity(cap: usize) -> Self {
        Failures {
            map: Mutex::default(),
            cap: cap.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (DateTime<Utc>, u32)>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `block` has used up its failures at `now`.
    pub fn blocked(&self, block: &str, now: DateTime<Utc>) -> bool {
        self.lock()
            .get(block)
            .is_some_and(|(since, n)| now - *since < window() && *n >= MAX_FAILURES)
    }

    /// Counts one failure of `block` at `now`. A new block in a full map
    /// first drops the stale ones, then, if none was, the one whose window
    /// began first.
    pub fn fail(&self, block: &str, now: DateTime<Utc>) {
        let mut m = self.lock();
        if !m.contains_key(block) && m.len() >= self.cap {
            m.retain(|_, (since, _)| now - *since < window());
            if m.len() >= self.cap {
                let oldest = m
                    .iter()
                    .min_by_key(|(_, (since, _))| *since)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    m.remove(&k);
                }
            }
        }
        let e = m.entry(block.to_string()).or_insert((now, 0));
        if now - e.0 >= window() {
            *e = (now, 0);
        }
        e.1 += 1;
    }

    /// A login succeeded: the count starts over.
    pub fn clear(&self, block: &str) {
        self.lock().remove(block);
    }

    /// How many blocks are counted.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no block is counted.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Template)]
#[template(path = "pages/admin/login.html")]
struct LoginPage {
    t: Words,
    action: String,
    csrf: String,
    /// The note that names the command that makes a token, as HTML.
    note: String,
    error: Option<String>,
}

/// The client's block: behind a trusted proxy the forwarded client's.
/// Served by `serve_on`, the peer's address is there; anything else (a
/// router driven without a socket) shares one count.
fn block(app: &App, ext: &axum::http::Extensions, headers: &HeaderMap) -> String {
    crate::signup::limits::network(&super::super::signup::client(app, ext, headers))
}

async fn form(
    app: &App,
    block: &str,
    status: StatusCode,
    error: Option<&'static str>,
) -> Result<Page, Page> {
    let hour = app.clock.now().timestamp().div_euclid(3600);
    let key = app.blocking(FormKey::load).await?;
    let t = operator(app);
    let html = LoginPage {
        action: format!("{}/admin/login", prefix(app)),
        csrf: key.client_token(FORM, block, hour),
        note: with_code(
            &t,
            "admin-login-note",
            &[("command", "digestd token add NAME --scope admin")],
        ),
        error: error.map(|key| t.t(key).into_owned()),
        t,
    }
    .render()
    .map_err(render_failed)?;
    Ok(Page::with(status, html))
}

pub async fn show(
    State(app): State<App>,
    headers: HeaderMap,
    ext: axum::http::Extensions,
) -> Result<Page, Page> {
    form(&app, &block(&app, &ext, &headers), StatusCode::OK, None).await
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
    // Catalogue keys, said in the operator's language.
    const BAD: &str = "admin-login-bad";
    const MANY: &str = "admin-login-many";
    const EXPIRED: &str = "admin-login-expired";
    let now = app.clock.now();
    let hour = now.timestamp().div_euclid(3600);
    let block = block(&app, &ext, &headers);
    if failures.blocked(&block, now) {
        return form(&app, &block, StatusCode::TOO_MANY_REQUESTS, Some(MANY))
            .await
            .into_response();
    }
    let Ok(body) = body else {
        failures.fail(&block, now);
        return form(&app, &block, StatusCode::BAD_REQUEST, Some(BAD))
            .await
            .into_response();
    };
    // A token field the checks refuse (too long, a control character)
    // is a bad token (401); the form token is read on its own.
    let token = fields(&body.0)
        .ok()
        .and_then(|f| f.get("token").map(|t| t.trim().to_string()))
        .unwrap_or_default();
    let csrf = super::super::form(&body.0).remove("csrf");
    let lasts = chrono::Duration::hours(i64::from(app.cfg.http.admin_session_hours));
    let b = block.clone();
    let opened = app
        .blocking(move |c| {
            if !FormKey::load(c)?.client_token_ok(FORM, &b, csrf.as_deref(), hour) {
                return Ok(Err(()));
            }
            session::open(c, now, &token, lasts).map(Ok)
        })
        .await;
    match opened {
        Ok(Err(())) => {
            failures.fail(&block, now);
            form(&app, &block, StatusCode::FORBIDDEN, Some(EXPIRED))
                .await
                .into_response()
        }
        Ok(Ok(Some((sid, _)))) => {
            failures.clear(&block);
            with_cookie(
                Page::see_other(format!("{}/admin", prefix(&app))),
                set_cookie(&app, Some(&sid)),
            )
        }
        Ok(Ok(None)) => {
            failures.fail(&block, now);
            form(&app, &block, StatusCode::UNAUTHORIZED, Some(BAD))
                .await
                .into_response()
        }
        Err(e) => Page::from(e).into_response(),
    }
}

pub async fn logout(
    State(app): State<App>,
    headers: HeaderMap,
    body: Result<RawBody, ApiError>,
) -> Response {
    let f = match super::form_fields(&app, &headers, body, "") {
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_failure_map_stays_bounded_and_evicts_the_oldest() {
        let t0 = Utc.with_ymd_and_hms(2026, 11, 22, 0, 0, 0).unwrap();
        let f = Failures::with_capacity(3);
        for (i, b) in ["a", "b", "c"].iter().enumerate() {
            for _ in 0..MAX_FAILURES {
                f.fail(b, t0 + Duration::seconds(i as i64));
            }
        }
        assert!(f.blocked("a", t0 + Duration::seconds(5)));
        // A fourth block, all three still in their window: the oldest goes.
        f.fail("d", t0 + Duration::seconds(10));
        assert_eq!(f.len(), 3);
        assert!(!f.blocked("a", t0 + Duration::seconds(10)), "a was evicted");
        assert!(f.blocked("b", t0 + Duration::seconds(10)));
        assert!(f.blocked("c", t0 + Duration::seconds(10)));
        // Once their windows are over, the stale ones go first.
        let later = t0 + window() + Duration::seconds(5);
        f.fail("e", later);
        assert_eq!(f.len(), 2, "b and c were stale: {:?}", f.len());
        // A known block in a full map evicts nothing.
        let g = Failures::with_capacity(1);
        g.fail("x", t0);
        g.fail("x", t0);
        assert_eq!(g.len(), 1);
        g.clear("x");
        assert!(g.is_empty());
    }
}
