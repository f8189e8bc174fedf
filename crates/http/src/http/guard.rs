//! What a request must show before a byte of its body is read: the one
//! table of routes ([`RULES`]) with the token scope each needs and the body
//! it may carry, and the middleware ([`guard`]) that applies it. A request
//! without a valid token is answered 401 (403 for a token without the
//! scope) from its headers, with `Connection: close`; a body sent to an API
//! route that writes must say it is JSON (NDJSON where [`NDJSON_ROUTES`]
//! takes it), else 415 ([`media`]); a declared body over
//! the route's limit is 413 at once; and the bodies in flight share one
//! budget (`[http] max_body_bytes_in_flight`), past which a request waits
//! briefly, then is answered 503 with `Retry-After`.
//!
//! Handlers take the verified token as [`Authed`]; the scope is written
//! only here.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{Layer, ServiceExt};
use tracing::Instrument;

use crate::access::{Scope, Token};
use crate::config::HttpConfig;

use super::error::ApiError;
use super::media::{self, Media};
use super::{auth, App};

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Access {
    /// No credential: public, or one the pages check themselves (a
    /// subscriber code, an admin session, a form token).
    Public,
    /// A read ticket or a token, which the handler checks itself (the Atom
    /// feeds: from its cache, with the feed's head, so that a conditional
    /// GET asks the database nothing). These routes take no body.
    Own,
    /// A bearer token with this scope (`None`: any scope).
    Bearer(Option<Scope>),
}

/// How large a body a route takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BodyKind {
    /// Bulk data: `[http] max_body_bytes`.
    Bulk,
    /// Every other API route: `[http] max_api_body_bytes`.
    Api,
    /// A page's form: `[http] max_form_bytes`; refusals are pages.
    Form,
}

/// One route: method, path as the router matches it, access, body.
#[derive(Debug)]
pub struct Rule {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
    pub body: BodyKind,
}

const fn rule(method: &'static str, path: &'static str, access: Access, body: BodyKind) -> Rule {
    Rule {
        method,
        path,
        access,
        body,
    }
}

use Access::Bearer;
use BodyKind::{Api, Bulk, Form};
const ADMIN: Access = Bearer(Some(Scope::Admin));
const INGEST: Access = Bearer(Some(Scope::Ingest));
const READ: Access = Bearer(Some(Scope::Read));
const ANY: Access = Bearer(None);

/// Every route that takes a token, and every route with a body. A route
/// not listed takes no token here and the small body limit of its kind.
pub const RULES: &[Rule] = &[
    rule("GET", "/api/v1/token", ANY, Api),
    rule("GET", "/metrics", Bearer(Some(Scope::Metrics)), Api),
    rule("GET", "/atom/collection/{uuid}/changed", Access::Own, Api),
    rule("GET", "/atom/collection/{uuid}/range", Access::Own, Api),
    rule("POST", "/api/v1/modifications", INGEST, Bulk),
    rule("PUT", "/api/v1/items/{uuid}", INGEST, Bulk),
    rule("POST", "/api/v1/seen", INGEST, Bulk),
    rule("POST", "/api/v1/collections", ADMIN, Api),
    rule("GET", "/api/v1/collections", READ, Api),
    rule("POST", "/api/v1/requests", ADMIN, Bulk),
    rule("GET", "/api/v1/requests/{id}", READ, Api),
    rule("POST", "/api/v1/requests/{id}/cancel", ADMIN, Api),
    rule("GET", "/api/v1/queue", READ, Api),
    rule("POST", "/api/v1/users", ADMIN, Bulk),
    rule("PUT", "/api/v1/users/{name}", ADMIN, Api),
    rule("GET", "/api/v1/users/{name}", READ, Api),
    rule("DELETE", "/api/v1/users/{name}", ADMIN, Api),
    rule("POST", "/api/v1/users/{name}/code", ADMIN, Api),
    rule("PUT", "/api/v1/users/{name}/contacts/{channel}", ADMIN, Api),
    rule(
        "DELETE",
        "/api/v1/users/{name}/contacts/{channel}",
        ADMIN,
        Api,
    ),
    rule(
        "POST",
        "/api/v1/users/{name}/contacts/{channel}/secret",
        ADMIN,
        Api,
    ),
    rule(
        "PUT",
        "/api/v1/groups/{name}/contacts/{channel}",
        ADMIN,
        Api,
    ),
    rule(
        "DELETE",
        "/api/v1/groups/{name}/contacts/{channel}",
        ADMIN,
        Api,
    ),
    rule(
        "POST",
        "/api/v1/groups/{name}/contacts/{channel}/secret",
        ADMIN,
        Api,
    ),
    rule("PUT", "/api/v1/groups/{name}", ADMIN, Api),
    rule("DELETE", "/api/v1/groups/{name}", ADMIN, Api),
    rule("PUT", "/api/v1/groups/{name}/members/{member}", ADMIN, Api),
    rule(
        "DELETE",
        "/api/v1/groups/{name}/members/{member}",
        ADMIN,
        Api,
    ),
    rule("GET", "/api/v1/groups/{name}/expand", ADMIN, Api),
    rule("GET", "/api/v1/subscriptions", READ, Api),
    rule("POST", "/api/v1/subscriptions", ADMIN, Api),
    rule("PATCH", "/api/v1/subscriptions/{id}", ADMIN, Api),
    rule("DELETE", "/api/v1/subscriptions/{id}", ADMIN, Api),
    rule("POST", "/api/v1/subscriptions/{id}/flush", ADMIN, Api),
    rule("GET", "/api/v1/subscriptions/{id}/optouts", ADMIN, Api),
    rule(
        "DELETE",
        "/api/v1/subscriptions/{id}/optouts/{member}",
        ADMIN,
        Api,
    ),
];

/// The routes whose body may be NDJSON as well as JSON.
pub const NDJSON_ROUTES: &[&str] = &["/api/v1/modifications"];

/// What a request's body must be, from its method and matched path: JSON
/// for a method that sends one (POST, PUT, PATCH) to an API route; `None`
/// for the pages (their forms check their own) and the rest.
pub(crate) fn media_for(method: &str, path: &str) -> Option<Media> {
    let api = path.starts_with("/api/");
    match (api, method) {
        (true, "POST" | "PUT" | "PATCH") if NDJSON_ROUTES.contains(&path) => {
            Some(Media::JsonOrNdjson)
        }
        (true, "POST" | "PUT" | "PATCH") => Some(Media::Json),
        _ => None,
    }
}

/// The rule for a request, by method and matched path. HEAD is GET's
/// (the router answers it with the GET handler).
pub fn rule_for(method: &str, path: &str) -> Option<&'static Rule> {
    let method = if method == "HEAD" { "GET" } else { method };
    RULES.iter().find(|r| r.method == method && r.path == path)
}

/// The body kind of a route not in [`RULES`]: API routes take the small
/// API limit, everything else is a page.
fn default_kind(path: &str) -> BodyKind {
    match path.starts_with("/api/") || path == "/metrics" {
        true => Api,
        false => Form,
    }
}

/// How long a request waits for room in the body budget before its 503.
const BUDGET_WAIT: Duration = Duration::from_secs(2);

/// The body limits and the budget the bodies in flight share.
pub struct Bodies {
    bulk: usize,
    api: usize,
    form: usize,
    budget: Arc<Semaphore>,
}

impl Bodies {
    pub fn from_config(c: &HttpConfig) -> Bodies {
        // Checked when the settings were loaded; a Config built in code
        // with a budget smaller than a bulk body gets one that fits.
        let budget = c.max_body_bytes_in_flight.max(c.max_body_bytes);
        Bodies {
            bulk: c.max_body_bytes,
            api: c.max_api_body_bytes,
            form: c.max_form_bytes,
            budget: Arc::new(Semaphore::new(budget.min(u32::MAX as usize))),
        }
    }

    pub fn limit(&self, kind: BodyKind) -> usize {
        match kind {
            Bulk => self.bulk,
            Api => self.api,
            Form => self.form,
        }
    }

    /// Room for `bytes` of body, waiting at most [`BUDGET_WAIT`].
    async fn reserve(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(bytes).unwrap_or(u32::MAX);
        let wait = self.budget.clone().acquire_many_owned(n);
        tokio::time::timeout(BUDGET_WAIT, wait).await.ok()?.ok()
    }
}

/// The token the guard verified for this request. A handler that takes it
/// on a route without a token rule refuses (401): the table is the only
/// place a scope is written, and forgetting it fails closed.
#[derive(Debug, Clone)]
pub struct Authed(pub Token);

impl<S: Send + Sync> FromRequestParts<S> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts.extensions.get::<Authed>().cloned().ok_or_else(|| {
            let route = parts.extensions.get::<axum::extract::MatchedPath>().map(|p| p.as_str().to_string());
            tracing::error!(route = ?route, "route takes a token but has no rule in http::guard::RULES");
            ApiError::unauthorized()
        })
    }
}

/// The request's body is JSON (or NDJSON) and is to be read as such: the
/// body extractor refuses a key twice in an object ([`media::unique_keys`]).
#[derive(Debug, Clone, Copy)]
pub struct JsonBodyOf {
    pub ndjson: bool,
}

/// The body limit the guard chose for this request (for the 413's text).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// The middleware: token, then media type, then declared length, then
/// body budget; then the handler, with the route's limit on what it reads.
/// Everything it and the handler log is in a span naming the method and
/// the route template (never the path), which the answer carries on to
/// the request log ([`super::log`]).
pub async fn guard(State(app): State<App>, req: Request, next: Next) -> Response {
    let path = super::log::template(&req);
    let span = tracing::debug_span!("http", method = %req.method(), route = %path);
    let mut r = checked(app, path.clone(), req, next).instrument(span).await;
    r.extensions_mut().insert(super::log::Route(path));
    r
}

async fn checked(app: App, path: String, mut req: Request, next: Next) -> Response {
    let rule = rule_for(req.method().as_str(), &path);
    let kind = rule.map_or_else(|| default_kind(&path), |r| r.body);
    if let Some(Rule {
        access: Bearer(scope),
        ..
    }) = rule
    {
        match auth::verify(&app, req.headers(), *scope).await {
            Ok(token) => {
                req.extensions_mut().insert(Authed(token));
            }
            // The body is never read: the connection closes after the answer.
            Err(e) => return closing(e.into_response()),
        }
    }
    let declared = content_length(req.headers());
    // A page's refusal is in the language the browser asks for; the
    // operator's pages' in the operator's.
    let lang = if path.starts_with("/admin") {
        app.cfg.i18n.operator_lang()
    } else {
        super::pages::Asked::of(
            req.uri().query(),
            req.headers()
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok()),
        )
        .visitor()
    };
    let json = media_for(req.method().as_str(), &path);
    if let (Some(m), true) = (json, has_body(req.headers(), declared)) {
        match media::accepts(req.headers(), m) {
            Ok(ndjson) => {
                req.extensions_mut().insert(JsonBodyOf { ndjson });
            }
            Err(e) => return closing(e.into_response()),
        }
    }
    let limit = app.bodies.limit(kind);
    if declared.is_some_and(|n| n > limit as u64) {
        return closing(refusal(kind, ApiError::too_large(limit), lang));
    }
    let permit = match has_body(req.headers(), declared) {
        // A chunked body may come to the limit: room for all of it.
        true => {
            let want = declared.map_or(limit, |n| n as usize);
            match app.bodies.reserve(want).await {
                Some(p) => Some(p),
                None => return closing(busy(kind, lang)),
            }
        }
        false => None,
    };
    req.extensions_mut().insert(BodyLimit(limit));
    // The extractors read at most `limit` bytes (413 beyond).
    let response = DefaultBodyLimit::max(limit).layer(next).oneshot(req).await;
    drop(permit);
    match response {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// `Content-Length`, when the request declares one that parses.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a body follows the head: a length above 0, or chunks.
fn has_body(headers: &HeaderMap, declared: Option<u64>) -> bool {
    declared.is_some_and(|n| n > 0) || headers.contains_key(header::TRANSFER_ENCODING)
}

/// An API refusal as JSON, a page's as a page in `lang`.
fn refusal(kind: BodyKind, e: ApiError, lang: crate::i18n::Locale) -> Response {
    match kind {
        Form => super::pages::Page::error(lang, e).into_response(),
        Bulk | Api => e.into_response(),
    }
}

/// 503 with `Retry-After`: the body budget stayed full.
fn busy(kind: BodyKind, lang: crate::i18n::Locale) -> Response {
    let e = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "too many request bodies in flight; retry shortly",
    );
    let mut r = refusal(kind, e, lang);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The answer, and the connection closed after it: its body is unread.
fn closing(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation the OpenAPI document lists has a rule exactly when
    /// it declares a bearer token, so the table and the documented routes
    /// cannot drift apart.
    #[test]
    fn the_table_matches_the_openapi_document() {
        let doc = serde_json::to_value(super::super::openapi::document()).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        let mut seen = 0;
        for (path, item) in paths {
            for (method, op) in item.as_object().unwrap() {
                let method = method.to_ascii_uppercase();
                if !["GET", "PUT", "POST", "PATCH", "DELETE"].contains(&method.as_str()) {
                    continue;
                }
                let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
                let rule = rule_for(&method, path);
                assert_eq!(
                    rule.is_some_and(|r| r.access != Access::Public),
                    secured,
                    "{method} {path}: the table and the document disagree"
                );
                seen += usize::from(rule.is_some());
            }
        }
        // And every rule is a documented operation.
        assert_eq!(seen, RULES.len());
    }

    #[test]
    fn pages_and_unlisted_api_routes_get_their_kind() {
        assert_eq!(default_kind("/s/{code}"), Form);
        assert_eq!(default_kind("/admin/login"), Form);
        assert_eq!(default_kind("/api/v1/openapi.json"), Api);
        assert_eq!(
            rule_for("POST", "/api/v1/modifications").unwrap().body,
            Bulk
        );
        assert!(rule_for("GET", "/healthz").is_none());
        assert_eq!(rule_for("HEAD", "/api/v1/queue").unwrap().access, READ);
        assert_eq!(
            media_for("POST", "/api/v1/modifications"),
            Some(Media::JsonOrNdjson)
        );
        assert_eq!(
            media_for("PATCH", "/api/v1/subscriptions/{id}"),
            Some(Media::Json)
        );
        assert_eq!(media_for("GET", "/api/v1/queue"), None);
        assert_eq!(media_for("POST", "/s/{code}"), None);
    }
}
