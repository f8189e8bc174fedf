//! `/api/v1/users/{name}/contacts/{channel}` and
//! `/api/v1/groups/{name}/contacts/{channel}` (admin tokens): one contact
//! point set, removed, or (a webhook's) given a new signing secret, through
//! the library calls `digestd contact` makes. A webhook or preset URL is
//! checked against `[webhook]`'s policy (the SSRF guard) by
//! `parties::set_webhook` / `set_preset`; a webhook's secret is in the
//! answer once and never again. Every other channel's address goes through
//! `parties::change_contact`, as `contact --set` does.

use axum::extract::State;
use axum::routing::{post, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::parties::{self, Channel, ContactChange};

use super::{contact_view, json, ContactView};
use crate::http::body::{Path, RawBody};
use crate::http::error::{ApiError, ApiResult};
use crate::http::guard::Authed;
use crate::http::App;

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(
        put_user_contact,
        delete_user_contact,
        rotate_user_secret,
        put_group_contact,
        delete_group_contact,
        rotate_group_secret
    ),
    components(schemas(ContactBody, SecretBody, ContactAnswer, SecretAnswer, RemovedContact))
)]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route(
            "/api/v1/users/{name}/contacts/{channel}",
            put(put_user_contact).delete(delete_user_contact),
        )
        .route(
            "/api/v1/users/{name}/contacts/{channel}/secret",
            post(rotate_user_secret),
        )
        .route(
            "/api/v1/groups/{name}/contacts/{channel}",
            put(put_group_contact).delete(delete_group_contact),
        )
        .route(
            "/api/v1/groups/{name}/contacts/{channel}/secret",
            post(rotate_group_secret),
        )
}

/// A new address on one channel.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactBody {
    /// Checked for the channel: an https URL for `webhook`, `slack`,
    /// `discord`, `teams`, `ntfy` (against `[webhook]`'s policy: no
    /// private, loopback or link-local address, no credentials); a Matrix
    /// user or room ID; an email address, bare JID or E.164 number.
    address: String,
    /// `webhook` only: the signing secret (`whsec_` and the base64 of
    /// 24-32 random bytes) instead of a new one.
    secret: Option<String>,
}

/// A webhook's new signing secret, given instead of a made one; optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretBody {
    secret: Option<String>,
}

/// The contact point after the change, and a webhook's secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactAnswer {
    name: String,
    /// A URL channel's address as `https://host/***`.
    contact: ContactView,
    /// `webhook` only: the signing secret, shown this once.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

/// A webhook's new signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct SecretAnswer {
    name: String,
    channel: String,
    secret: String,
}

/// The contact point that was removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct RemovedContact {
    name: String,
    removed: ContactView,
}

/// Sets `name`'s (a `kind`'s) address on `channel`.
async fn set(
    app: App,
    kind: &'static str,
    name: String,
    channel: String,
    raw: RawBody,
) -> ApiResult<Json<ContactAnswer>> {
    let channel = Channel::parse(&channel)?;
    let body: ContactBody = json(&raw)?;
    if body.secret.is_some() && channel != Channel::Webhook {
        return Err(ApiError::bad_request(format!(
            "secret: only a webhook has one, not {}",
            channel.as_str()
        )));
    }
    let (now, policy) = (app.clock.now(), app.cfg.webhook.policy());
    let n = name.clone();
    let (point, secret) = app
        .blocking(move |c| {
            parties::find_kind(c, kind, &n)?;
            let (address, secret) = (body.address.as_str(), body.secret.as_deref());
            match channel {
                Channel::Webhook => parties::set_webhook(c, now, &n, address, secret, policy)
                    .map(|(p, s)| (p, Some(s))),
                ch if ch.is_preset() => {
                    parties::set_preset(c, now, &n, ch, address, policy).map(|p| (p, None))
                }
                ch => {
                    let set = ContactChange::Set(address.to_string());
                    parties::change_contact(c, now, &n, ch, &set).map(|p| (p, None))
                }
            }
        })
        .await?;
    Ok(Json(ContactAnswer {
        name,
        contact: contact_view(point),
        secret,
    }))
}

/// Removes `name`'s (a `kind`'s) contact point on `channel`.
async fn unset(
    app: App,
    kind: &'static str,
    name: String,
    channel: String,
) -> ApiResult<Json<RemovedContact>> {
    let channel = Channel::parse(&channel)?;
    let n = name.clone();
    let point = app
        .blocking(move |c| {
            parties::find_kind(c, kind, &n)?;
            parties::remove_contact(c, &n, channel)
        })
        .await?;
    Ok(Json(RemovedContact {
        name,
        removed: contact_view(point),
    }))
}

/// Gives `name`'s (a `kind`'s) webhook a new secret, or the one given.
async fn rotate(
    app: App,
    kind: &'static str,
    name: String,
    channel: String,
    raw: RawBody,
) -> ApiResult<Json<SecretAnswer>> {
    let channel = Channel::parse(&channel)?;
    if channel != Channel::Webhook {
        return Err(ApiError::bad_request(format!(
            "only a webhook has a secret, not {}",
            channel.as_str()
        )));
    }
    let body: SecretBody = if raw.0.iter().all(u8::is_ascii_whitespace) {
        SecretBody::default()
    } else {
        json(&raw)?
    };
    let n = name.clone();
    let secret = app
        .blocking(move |c| {
            parties::find_kind(c, kind, &n)?;
            parties::rotate_webhook_secret(c, &n, body.secret.as_deref())
        })
        .await?;
    Ok(Json(SecretAnswer {
        name,
        channel: Channel::Webhook.as_str().into(),
        secret,
    }))
}

/// Sets the user's address on one channel: a webhook's or a preset's URL
/// (checked against `[webhook]`'s policy; a webhook's secret made, or
/// taken from `secret`, and answered once), or any other channel's
/// address. Enabled, not verified, bounces reset; added when missing.
#[utoipa::path(put, path = "/api/v1/users/{name}/contacts/{channel}", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path)), request_body = ContactBody,
    responses((status = 200, body = ContactAnswer), (status = 400, description = "a bad address, URL, secret or channel; nothing written"),
        (status = 404, description = "no such user")))]
async fn put_user_contact(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
    raw: RawBody,
) -> ApiResult<Json<ContactAnswer>> {
    set(app, "user", name, channel, raw).await
}

/// Removes the user's contact point on one channel.
#[utoipa::path(delete, path = "/api/v1/users/{name}/contacts/{channel}", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path)),
    responses((status = 200, body = RemovedContact), (status = 404, description = "no such user, or no address there")))]
async fn delete_user_contact(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
) -> ApiResult<Json<RemovedContact>> {
    unset(app, "user", name, channel).await
}

/// Gives the user's webhook a new signing secret (or the body's
/// `secret`), answered once; messages already queued are signed with it.
#[utoipa::path(post, path = "/api/v1/users/{name}/contacts/{channel}/secret", tag = "users", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path, description = "webhook")),
    request_body(content = Option<SecretBody>, description = "optional"),
    responses((status = 200, body = SecretAnswer), (status = 400, description = "not the webhook channel, or a bad secret"),
        (status = 404, description = "no such user, or no webhook")))]
async fn rotate_user_secret(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
    raw: RawBody,
) -> ApiResult<Json<SecretAnswer>> {
    rotate(app, "user", name, channel, raw).await
}

/// Sets the group's address on one channel, as for a user.
#[utoipa::path(put, path = "/api/v1/groups/{name}/contacts/{channel}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path)), request_body = ContactBody,
    responses((status = 200, body = ContactAnswer), (status = 400, description = "a bad address, URL, secret or channel; nothing written"),
        (status = 404, description = "no such group")))]
async fn put_group_contact(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
    raw: RawBody,
) -> ApiResult<Json<ContactAnswer>> {
    set(app, "group", name, channel, raw).await
}

/// Removes the group's contact point on one channel.
#[utoipa::path(delete, path = "/api/v1/groups/{name}/contacts/{channel}", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path)),
    responses((status = 200, body = RemovedContact), (status = 404, description = "no such group, or no address there")))]
async fn delete_group_contact(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
) -> ApiResult<Json<RemovedContact>> {
    unset(app, "group", name, channel).await
}

/// Gives the group's webhook a new signing secret, as for a user.
#[utoipa::path(post, path = "/api/v1/groups/{name}/contacts/{channel}/secret", tag = "groups", security(("bearer" = [])),
    params(("name" = String, Path), ("channel" = String, Path, description = "webhook")),
    request_body(content = Option<SecretBody>, description = "optional"),
    responses((status = 200, body = SecretAnswer), (status = 400, description = "not the webhook channel, or a bad secret"),
        (status = 404, description = "no such group, or no webhook")))]
async fn rotate_group_secret(
    State(app): State<App>,
    _: Authed,
    Path((name, channel)): Path<(String, String)>,
    raw: RawBody,
) -> ApiResult<Json<SecretAnswer>> {
    rotate(app, "group", name, channel, raw).await
}
