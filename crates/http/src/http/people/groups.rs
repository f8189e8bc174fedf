//! `/api/v1/groups`: create, change, fill, empty, expand and delete groups
//! (admin tokens), through the library calls `digestd group` makes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{manage, parties, remove};

use super::{json, RemovedView};
use crate::http::body::{Path, RawBody};
use crate::http::error::{ApiError, ApiResult};
use crate::http::guard::Authed;
use crate::http::App;

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(put_group, delete_group, put_member, delete_member, expand_group),
    components(schemas(GroupBody, GroupView, UserRow))
)]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/v1/groups/{name}", put(put_group).delete(delete_group))
        .route(
            "/api/v1/groups/{name}/members/{member}",
            put(put_member).delete(delete_member),
        )
        .route("/api/v1/groups/{name}/expand", get(expand_group))
}

/// A user as a group expands to it.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserRow {
    id: i64,
    name: String,
    tz: String,
    email: Option<String>,
    xmpp: Option<String>,
    phone: Option<String>,
}

/// A group's own address and preferences, each optional (the fields of
/// `digestd group add` and `group set`). What the `PUT` answers may be put
/// back unchanged: `id` and `name`, when given, must be the group's.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupBody {
    /// The group's id, as answered; a new group has none yet.
    id: Option<i64>,
    /// The group's name, as in the path.
    name: Option<String>,
    /// The group's own address (kept for an existing group).
    email: Option<String>,
    /// IANA timezone its digests are scheduled in (default UTC).
    tz: Option<String>,
    /// mon..sun (default mon).
    week_start: Option<String>,
    /// 0-23 (default 8).
    daily_hour: Option<i64>,
    /// e.g. en-GB (default).
    locale: Option<String>,
    /// HH:MM-HH:MM in the group's zone, or "" for none (default none).
    quiet_hours: Option<String>,
}

/// A group and its preferences.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupView {
    id: i64,
    name: String,
    tz: String,
    week_start: String,
    daily_hour: i32,
    locale: String,
    /// HH:MM-HH:MM, or "": none.
    quiet_hours: String,
    email: Option<String>,
}

/// Creates a group (201), or changes an existing one's preferences, its
/// subscriptions rescheduled (200).
#[utoipa::path(put, path = "/api/v1/groups/{name}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path)), request_body(content = Option<GroupBody>, description = "optional"),
    responses((status = 201, body = GroupView), (status = 200, body = GroupView), (status = 400, description = "invalid field"),
        (status = 409, description = "the name is a user's")))]
async fn put_group(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
    raw: RawBody,
) -> ApiResult<(StatusCode, Json<GroupView>)> {
    let body: GroupBody = if raw.0.iter().all(u8::is_ascii_whitespace) {
        GroupBody::default()
    } else {
        json(&raw)?
    };
    if body.name.as_ref().is_some_and(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "name: the body names another group than the path ({name})"
        )));
    }
    let given_id = body.id;
    let now = app.clock.now();
    let new = parties::NewGroup {
        name,
        email: body.email,
        prefs: parties::UserChanges {
            timezone: body.tz,
            week_start: body.week_start,
            daily_hour: body.daily_hour,
            locale: body.locale,
            quiet_hours: body.quiet_hours,
        },
    };
    let (g, created) = app
        .blocking(move |c| {
            super::own_id(c, "group", &new.name, given_id)?;
            let (_, created) = manage::put_group(c, now, &new)?;
            Ok((parties::get_group(c, &new.name)?, created))
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(GroupView {
            id: g.id.0,
            name: g.name,
            tz: g.timezone,
            week_start: g.week_start,
            daily_hour: g.daily_hour,
            locale: g.locale,
            quiet_hours: g.quiet_hours,
            email: g.email,
        }),
    ))
}

/// Deletes a group: its memberships and subscriptions end, unsent messages
/// to it are cancelled; its members stay.
#[utoipa::path(delete, path = "/api/v1/groups/{name}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses((status = 200, body = RemovedView), (status = 404, description = "no such group")))]
async fn delete_group(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<RemovedView>> {
    let now = app.clock.now();
    let n = name.clone();
    let r = app.blocking(move |c| remove::group(c, now, &n)).await?;
    Ok(Json(RemovedView::new("group", name, r)))
}

/// Puts a user or group into a group (a cycle is 409).
#[utoipa::path(put, path = "/api/v1/groups/{name}/members/{member}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path), ("member" = String, Path)),
    responses((status = 200, description = "{\"group\": …, \"member\": …}"), (status = 404, description = "no such group or member"),
        (status = 409, description = "it would make a cycle")))]
async fn put_member(
    State(app): State<App>,
    _: Authed,
    Path((group, member)): Path<(String, String)>,
) -> ApiResult<Json<serde_json::Value>> {
    let (g, m) = (group.clone(), member.clone());
    app.blocking(move |c| parties::add_member(c, &g, &m))
        .await?;
    Ok(Json(serde_json::json!({"group": group, "member": member})))
}

/// Takes a member out of a group (404 when it is not in it).
#[utoipa::path(delete, path = "/api/v1/groups/{name}/members/{member}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path), ("member" = String, Path)),
    responses((status = 200, description = "{\"group\": …, \"removed\": …}"), (status = 404, description = "not a member")))]
async fn delete_member(
    State(app): State<App>,
    _: Authed,
    Path((group, member)): Path<(String, String)>,
) -> ApiResult<Json<serde_json::Value>> {
    let (g, m) = (group.clone(), member.clone());
    app.blocking(move |c| parties::remove_member(c, &g, &m))
        .await?;
    Ok(Json(serde_json::json!({"group": group, "removed": member})))
}

/// The users a group expands to, recursively, each once, by name.
#[utoipa::path(get, path = "/api/v1/groups/{name}/expand", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses((status = 200, body = Vec<UserRow>), (status = 404, description = "no such group")))]
async fn expand_group(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<Vec<UserRow>>> {
    let users = app
        .blocking(move |c| {
            let id = parties::find_kind(c, "group", &name)?;
            parties::expand(c, id)
        })
        .await?;
    Ok(Json(
        users
            .into_iter()
            .map(|u| UserRow {
                id: u.id.0,
                name: u.username,
                tz: u.timezone,
                email: u.email,
                xmpp: u.xmpp,
                phone: u.phone,
            })
            .collect(),
    ))
}
