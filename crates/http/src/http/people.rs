//! `/api/v1/users` and `/api/v1/groups`: people and groups through the
//! library calls `digestd user` and `digestd group` make (same validation,
//! same errors). Every route needs an admin token but `GET
//! /api/v1/users/{name}`, which a read token may call. The token is
//! checked before the body is read, so a caller without one learns nothing
//! from a 400.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{post, put};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::PartyId;
use crate::{manage, parties, remove};

use super::body::{self, Path, RawBody};
use super::error::{ApiResult, BadLines};
use super::guard::Authed;
use super::{ApiError, App};

mod code;
mod contacts;
mod groups;

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(put_user, get_user, delete_user, put_users),
    components(schemas(
        UserBody,
        UserElement,
        UserView,
        ContactView,
        BulkAnswer,
        BulkUser,
        RemovedView
    ))
)]
struct Doc;

/// Users' and groups' routes (the groups' in [`groups`], a new
/// subscriber code in [`code`]).
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = <Doc as utoipa::OpenApi>::openapi();
    doc.merge(groups::openapi());
    doc.merge(code::openapi());
    doc.merge(contacts::openapi());
    doc
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/v1/users", post(put_users))
        .route(
            "/api/v1/users/{name}",
            put(put_user).get(get_user).delete(delete_user),
        )
        .merge(groups::routes())
        .merge(code::routes())
        .merge(contacts::routes())
}

/// A body parsed as JSON after the token was checked (as `JsonBody`
/// parses it: 400 with serde's reason).
/// Refuses an `id` in a body that is not the `kind` `name`'s own (a new
/// one has none yet): what a GET answered may be put back, nothing else.
pub(super) fn own_id(
    c: &mut crate::db::DbConn,
    kind: &str,
    name: &str,
    given: Option<i64>,
) -> crate::Result<()> {
    let Some(id) = given else {
        return Ok(());
    };
    match parties::find_kind(c, kind, name) {
        Ok(known) if known.0 == id => Ok(()),
        _ => Err(crate::Error::invalid(format!(
            "id: {id} is not {name}'s id (the server gives ids; leave it out for a new {kind})"
        ))),
    }
}

pub(super) fn json<T: DeserializeOwned>(raw: &RawBody) -> ApiResult<T> {
    serde_json::from_str(raw.text()?)
        .map_err(|e| ApiError::bad_request(format!("request body: {e}")))
}

/// A user's preferences and addresses; each optional (a new user needs
/// `tz`). What `GET` answers may be put back unchanged: `id` and `name`,
/// when given, must be the user's; `contacts` (their state is the
/// server's) is ignored: addresses are set with `email`, `xmpp`, `phone`,
/// `matrix` (a webhook's or a preset's URL through `…/contacts/{channel}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserBody {
    /// The user's id, as `GET` shows it; a new user has none yet.
    id: Option<i64>,
    /// The user's name, as in the path.
    name: Option<String>,
    /// As `GET` shows them; ignored.
    #[serde(rename = "contacts")]
    #[schema(value_type = Option<Vec<Object>>)]
    _contacts: Option<serde::de::IgnoredAny>,
    /// IANA timezone, e.g. Europe/Paris.
    tz: Option<String>,
    email: Option<String>,
    /// A bare JID.
    xmpp: Option<String>,
    /// E.164, e.g. +14155550123.
    phone: Option<String>,
    /// A Matrix user ID (@alice:example.org) or room ID (!room:example.org).
    matrix: Option<String>,
    /// mon..sun (default mon).
    week_start: Option<String>,
    /// 0-23 (default 8).
    daily_hour: Option<i64>,
    /// e.g. en-US (default).
    locale: Option<String>,
    /// HH:MM-HH:MM in the user's zone (e.g. 22:00-07:00), or "" for none.
    quiet_hours: Option<String>,
}

impl UserBody {
    fn into_put(self, name: String) -> parties::UserPut {
        parties::UserPut {
            name,
            changes: parties::UserChanges {
                timezone: self.tz,
                week_start: self.week_start,
                daily_hour: self.daily_hour,
                locale: self.locale,
                quiet_hours: self.quiet_hours,
            },
            email: self.email,
            xmpp: self.xmpp,
            phone: self.phone,
            matrix: self.matrix,
        }
    }
}

/// One element of `POST /api/v1/users`: a [`UserBody`] with its name.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserElement {
    name: String,
    tz: Option<String>,
    email: Option<String>,
    xmpp: Option<String>,
    phone: Option<String>,
    matrix: Option<String>,
    week_start: Option<String>,
    daily_hour: Option<i64>,
    locale: Option<String>,
    quiet_hours: Option<String>,
}

/// A contact point and its state.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactView {
    channel: String,
    /// Shown to an `admin` token only; a webhook's or a preset's URL as
    /// `https://host/***` (its path is the receiver's credential).
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    verified: bool,
    disabled: bool,
    bounce_count: i32,
}

/// A user with every contact point.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserView {
    id: i64,
    name: String,
    tz: String,
    week_start: String,
    daily_hour: i32,
    locale: String,
    /// HH:MM-HH:MM, or "": none.
    quiet_hours: String,
    contacts: Vec<ContactView>,
}

/// What a bulk put did.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkAnswer {
    created: usize,
    updated: usize,
    users: Vec<BulkUser>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkUser {
    name: String,
    id: i64,
    created: bool,
}

/// What a deletion ended, cancelled and removed (`remove::Removed`).
#[derive(Debug, Serialize, ToSchema)]
pub struct RemovedView {
    /// `user`, `group`, `collection` or `subscription`.
    deleted: String,
    /// Its name, UUID or id.
    name: String,
    subscriptions_ended: usize,
    runs_forgotten: usize,
    requests_cancelled: usize,
    messages_given_up: usize,
    memberships_removed: usize,
    contact_points_removed: usize,
    items_deleted: usize,
    items_kept: usize,
    modifications_deleted: usize,
}

impl RemovedView {
    pub(super) fn new(deleted: &str, name: String, r: remove::Removed) -> Self {
        RemovedView {
            deleted: deleted.into(),
            name,
            subscriptions_ended: r.subscriptions_ended,
            runs_forgotten: r.runs_forgotten,
            requests_cancelled: r.requests_cancelled,
            messages_given_up: r.messages_given_up,
            memberships_removed: r.memberships_removed,
            contact_points_removed: r.contact_points_removed,
            items_deleted: r.items_deleted,
            items_kept: r.items_kept,
            modifications_deleted: r.modifications_deleted,
        }
    }
}

/// A contact point as the API shows it, a URL channel's address masked.
fn contact_view(p: parties::ContactPoint) -> ContactView {
    let p = p.shown();
    ContactView {
        channel: p.channel,
        address: Some(p.address),
        verified: p.verified,
        disabled: p.disabled,
        bounce_count: p.bounce_count,
    }
}

fn view(c: &mut crate::db::DbConn, id: PartyId) -> crate::Result<UserView> {
    let u = parties::get_user(c, id)?;
    let contacts = parties::contact_points(c, id)?
        .into_iter()
        .map(contact_view)
        .collect();
    Ok(UserView {
        id: u.id.0,
        name: u.username,
        tz: u.timezone,
        week_start: u.week_start,
        daily_hour: u.daily_hour,
        locale: u.locale,
        quiet_hours: u.quiet_hours,
        contacts,
    })
}

/// Creates the user, or changes their preferences and addresses (a new
/// timezone, week start or daily hour reschedules their subscriptions, as
/// `digestd user set` does).
#[utoipa::path(put, path = "/api/v1/users/{name}", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path)), request_body = UserBody,
    responses((status = 201, body = UserView, description = "created"), (status = 200, body = UserView, description = "updated"),
        (status = 400, description = "invalid field"), (status = 409, description = "the name is a group's")))]
async fn put_user(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
    raw: RawBody,
) -> ApiResult<(StatusCode, Json<UserView>)> {
    let body: UserBody = json(&raw)?;
    if body.name.as_ref().is_some_and(|n| *n != name) {
        return Err(ApiError::bad_request(format!(
            "name: the body names another user than the path ({name})"
        )));
    }
    let now = app.clock.now();
    let given_id = body.id;
    let put = body.into_put(name);
    let (user, created) = app
        .blocking(move |c| {
            own_id(c, "user", &put.name, given_id)?;
            let (id, created) = manage::put_user(c, now, &put)?;
            Ok((view(c, id)?, created))
        })
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(user)))
}

/// Creates or updates many users, all or nothing: every element is checked
/// first, and each bad one is listed (`lines`, 1-based).
#[utoipa::path(post, path = "/api/v1/users", tag = "users", security(("bearer" = [])),
    request_body = Vec<UserElement>,
    responses((status = 200, body = BulkAnswer), (status = 400, description = "bad elements, each listed; nothing written")))]
async fn put_users(State(app): State<App>, _: Authed, raw: RawBody) -> ApiResult<Json<BulkAnswer>> {
    let mut bad = BadLines::default();
    let mut puts = Vec::new();
    body::each_element(raw.text()?, |i, v| {
        match serde_json::from_value::<UserElement>(v) {
            Ok(e) => puts.push(
                UserBody {
                    id: None,
                    name: None,
                    _contacts: None,
                    tz: e.tz,
                    email: e.email,
                    xmpp: e.xmpp,
                    phone: e.phone,
                    matrix: e.matrix,
                    week_start: e.week_start,
                    daily_hour: e.daily_hour,
                    locale: e.locale,
                    quiet_hours: e.quiet_hours,
                }
                .into_put(e.name),
            ),
            Err(e) => bad.push(i + 1, || e.to_string()),
        }
    })?;
    if !bad.is_empty() {
        return Err(ApiError::lines(bad));
    }
    let now = app.clock.now();
    let names: Vec<String> = puts.iter().map(|p| p.name.clone()).collect();
    let done = app
        .blocking(move |c| manage::put_users(c, now, &puts))
        .await?
        .map_err(|found| {
            let mut bad = BadLines::default();
            for (line, e) in found {
                bad.push(line, || e.to_string());
            }
            ApiError::lines(bad)
        })?;
    let users: Vec<BulkUser> = names
        .into_iter()
        .zip(done)
        .map(|(name, (id, created))| BulkUser {
            name,
            id: id.0,
            created,
        })
        .collect();
    let created = users.iter().filter(|u| u.created).count();
    Ok(Json(BulkAnswer {
        created,
        updated: users.len() - created,
        users,
    }))
}

/// A user with their contact points and each one's verified and disabled
/// state. A `read` token may ask, and sees each contact point without its
/// address; an `admin` token sees the addresses too.
#[utoipa::path(get, path = "/api/v1/users/{name}", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses((status = 200, body = UserView), (status = 404, description = "no such user")))]
async fn get_user(
    State(app): State<App>,
    Authed(token): Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<UserView>> {
    let mut user = app
        .blocking(move |c| {
            let id = parties::find_kind(c, "user", &name)?;
            view(c, id)
        })
        .await?;
    if !token.scope.sees_addresses() {
        for p in &mut user.contacts {
            p.address = None;
        }
    }
    Ok(Json(user))
}

/// Deletes a user: subscriptions end, unsent messages to them are
/// cancelled, they leave every group, their contact points go; one
/// transaction. Messages already sent stay as history.
#[utoipa::path(delete, path = "/api/v1/users/{name}", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path)),
    responses((status = 200, body = RemovedView), (status = 404, description = "no such user")))]
async fn delete_user(
    State(app): State<App>,
    _: Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<RemovedView>> {
    let now = app.clock.now();
    let n = name.clone();
    let r = app.blocking(move |c| remove::user(c, now, &n)).await?;
    Ok(Json(RemovedView::new("user", name, r)))
}
