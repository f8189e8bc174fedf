//! `POST /api/v1/users/{name}/code` (admin token): gives the user a new
//! subscriber code, as `digestd user rotate-code` does
//! (`parties::rotate_code_of`). The old code stops opening the manage and
//! unsubscribe pages; unsubscribe links in mail sent before still stop
//! digests with RFC 8058's one-click POST.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use utoipa::ToSchema;

use crate::parties;

use crate::http::body::Path;
use crate::http::error::ApiResult;
use crate::http::guard::Authed;
use crate::http::App;

#[derive(utoipa::OpenApi)]
#[openapi(paths(rotate_code), components(schemas(NewCode)))]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new().route("/api/v1/users/{name}/code", post(rotate_code))
}

/// The user's new code and the manage link made of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct NewCode {
    pub name: String,
    pub code: String,
    pub manage_url: String,
}

/// Replaces the user's subscriber code; the answer holds the new one.
#[utoipa::path(post, path = "/api/v1/users/{name}/code", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses((status = 200, body = NewCode), (status = 404, description = "no such user"),
        (status = 400, description = "a group, not a user")))]
async fn rotate_code(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<NewCode>> {
    let now = app.clock.now();
    let n = name.clone();
    let code = app
        .blocking(move |c| parties::rotate_code_of(c, now, &n))
        .await?;
    Ok(Json(NewCode {
        manage_url: parties::manage_url(&app.cfg.digest.base_url, &code),
        name,
        code,
    }))
}
