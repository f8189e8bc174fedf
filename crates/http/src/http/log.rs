//! One log line per request, at `info` under the target `digestd::http`:
//! method, route, status and duration. The route is the router's template
//! (`/s/{code}`, `/api/v1/users/{name}`), never the path the client sent:
//! paths carry subscriber codes, confirm tokens and the full digest's MAC,
//! and queries carry read tickets, so neither is logged at any level. A
//! request no route matched is logged as `-`.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;

/// The route template a request matched, carried on its answer from the
/// guard (which runs after routing) to [`log`] (which runs around it).
#[derive(Debug, Clone)]
pub struct Route(pub String);

/// The route template of a request, once routed; `-` before or without.
pub fn template(req: &Request) -> String {
    req.extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "-".to_string(), |p| p.as_str().to_string())
}

/// The middleware around every request (the fallbacks' too).
pub async fn log(req: Request, next: Next) -> Response {
    // Monotonic: a duration, not an instant of the world's time.
    let started = Instant::now();
    let method = req.method().clone();
    let response = next.run(req).await;
    let route = response
        .extensions()
        .get::<Route>()
        .map_or("-", |r| r.0.as_str());
    tracing::info!(
        target: "digestd::http",
        method = %method,
        route,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}
