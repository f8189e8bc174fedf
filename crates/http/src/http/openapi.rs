//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document, generated from the
//! handlers' `#[utoipa::path]` attributes and their types' `ToSchema`
//! derivations, never written by hand. Each route module exposes its own
//! `openapi()`; this merges them.

use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;

use super::{atom, health, metrics, App};

#[derive(OpenApi)]
#[openapi(info(
    title = "digestd",
    description = "Hourly, daily and weekly digests in each user's timezone, by email, XMPP and SMS. Errors are JSON: {\"error\": \"one line\"}."
))]
struct Base;

/// The whole document.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = Base::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    doc.merge(health::openapi());
    doc.merge(metrics::openapi());
    doc.merge(super::ingest::openapi());
    doc.merge(super::seen::openapi());
    doc.merge(super::requests::openapi());
    doc.merge(atom::openapi());
    doc.merge(super::people::openapi());
    doc.merge(super::subscriptions::openapi());
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    doc
}

pub fn routes() -> Router<App> {
    Router::new().route("/api/v1/openapi.json", get(|| async { Json(document()) }))
}
