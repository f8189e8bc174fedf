//! `/api/v1/subscriptions`: subscribe (a twin refused or merged exactly as
//! `digestd subscribe` does), list by party (a read token may), pause,
//! resume and retime (frequency, hour, day, channels), send now
//! ([`flush`]), end; the members who opted out of a group's
//! subscription, listed and cleared (`digestd subscription optouts`,
//! `optin`). Admin tokens for the rest.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, patch, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::SubscriptionId;
use crate::subscriptions::{self, Retime, SubscribeRequest, Subscribed, Subscription};
use crate::{items, manage, parties, remove, validate};

use super::body::{Path, Query, RawBody};
use super::error::ApiResult;
use super::guard::Authed;
use super::people::{json, RemovedView};
use super::{ApiError, App};

mod flush;

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(subscribe, list, change, end, optouts, optin, flush::flush),
    components(schemas(SubscribeBody, Subscribed201, SubscriptionView, PatchBody, OptOutView))
)]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/v1/subscriptions", get(list).post(subscribe))
        .route("/api/v1/subscriptions/{id}", patch(change).delete(end))
        .route("/api/v1/subscriptions/{id}/flush", post(flush::flush))
        .route("/api/v1/subscriptions/{id}/optouts", get(optouts))
        .route("/api/v1/subscriptions/{id}/optouts/{member}", delete(optin))
}

/// What `digestd subscribe` takes: `collection` (a UUID) or `"all": true`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscribeBody {
    /// A user or group name.
    party: String,
    /// hourly, daily or weekly.
    frequency: String,
    /// modification or forward.
    kind: String,
    collection: Option<String>,
    #[serde(default)]
    all: bool,
    /// email, xmpp, sms, webhook, slack, discord, teams, ntfy, matrix
    /// (left out: email; empty: refused).
    channels: Option<Vec<String>>,
    /// Local hour 0-23 (default: the user's daily hour).
    hour: Option<i64>,
    /// mon..sun, weekly only (default: the user's first day of week).
    day: Option<String>,
    #[serde(default)]
    include_own: bool,
    #[serde(default)]
    send_empty: bool,
}

/// The subscription that delivers the digest; `merged` when the party had
/// it already and the request's channels were added to it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Subscribed201 {
    id: i64,
    merged: bool,
    channels: Vec<String>,
}

/// A subscription as stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriptionView {
    id: i64,
    party: String,
    /// The collection's UUID; null for all collections.
    collection: Option<String>,
    kind: String,
    frequency: String,
    /// Local hour (daily, weekly).
    hour: Option<i32>,
    /// Local day mon..sun (weekly).
    day: Option<String>,
    channels: Vec<String>,
    paused: bool,
}

/// What `PATCH` changes; each optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchBody {
    /// true pauses; false resumes from now (no burst for the paused time).
    paused: Option<bool>,
    /// hourly (no hour, no day), daily (an hour) or weekly (an hour and a
    /// day); each kept from before when not given, refused when the new
    /// frequency needs one the subscription has not.
    frequency: Option<String>,
    hour: Option<i64>,
    day: Option<String>,
    channels: Option<Vec<String>>,
}

/// A member who opted out of a group subscription: its digests leave them
/// out until they (or an operator) clear it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OptOutView {
    subscription: i64,
    /// The member's name.
    member: String,
    created_at: chrono::DateTime<chrono::Utc>,
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    party: Option<String>,
}

pub(super) fn parse_id(s: &str) -> ApiResult<SubscriptionId> {
    s.parse::<i64>()
        .ok()
        .filter(|i| *i > 0)
        .map(SubscriptionId)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "subscription id {} is not a positive integer",
                validate::quoted(s)
            ))
        })
}

fn views(
    c: &mut crate::db::DbConn,
    subs: Vec<Subscription>,
) -> crate::Result<Vec<SubscriptionView>> {
    let uuids: HashMap<i64, String> = items::list_collections(c)?
        .into_iter()
        .map(|k| (k.id.0, k.uuid))
        .collect();
    let mut names: HashMap<i64, String> = HashMap::new();
    let mut out = Vec::new();
    for s in subs {
        let party = match names.get(&s.party.0) {
            Some(n) => n.clone(),
            None => {
                let n = parties::name_of(c, s.party)?;
                names.insert(s.party.0, n.clone());
                n
            }
        };
        out.push(SubscriptionView {
            id: s.id.0,
            party,
            collection: s.collection.and_then(|k| uuids.get(&k.0).cloned()),
            kind: s.kind,
            frequency: s.frequency,
            hour: s.hour_of_day,
            day: s
                .day_of_week
                .map(|d| validate::weekday_name(d as u8).into()),
            channels: s.channels,
            paused: s.paused,
        });
    }
    Ok(out)
}

/// Subscribes a user or group. A digest the party already has is refused
/// (409, naming the subscription) or, when the request only adds channels,
/// merged into it (200 with its id).
#[utoipa::path(post, path = "/api/v1/subscriptions", tag = "subscriptions", security(("bearer" = [])),
    request_body = SubscribeBody,
    responses((status = 201, body = Subscribed201, description = "created"), (status = 200, body = Subscribed201, description = "merged"),
        (status = 400, description = "invalid"), (status = 404, description = "no such party or collection"),
        (status = 409, description = "the party has this digest: subscription N")))]
async fn subscribe(
    State(app): State<App>,
    _: Authed,
    raw: RawBody,
) -> ApiResult<(StatusCode, Json<Subscribed201>)> {
    let b: SubscribeBody = json(&raw)?;
    let collection = match (b.collection, b.all) {
        (Some(c), false) => Some(c),
        (None, true) => None,
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of collection (a UUID) or \"all\": true",
            ))
        }
    };
    let req = SubscribeRequest {
        party: b.party,
        frequency: b.frequency,
        kind: b.kind,
        collection,
        channels: super::body::channels_given(b.channels)?,
        hour: b.hour,
        day: b.day,
        include_own: b.include_own,
        send_empty: b.send_empty,
    };
    let now = app.clock.now();
    let (done, channels) = app
        .blocking(move |c| {
            let done = manage::subscribe(c, now, &req)?;
            let channels = subscriptions::get(c, done.id())?.channels;
            Ok((done, channels))
        })
        .await?;
    let (status, merged) = match done {
        Subscribed::Created(_) => (StatusCode::CREATED, false),
        Subscribed::Merged { .. } => (StatusCode::OK, true),
    };
    Ok((
        status,
        Json(Subscribed201 {
            id: done.id().0,
            merged,
            channels,
        }),
    ))
}

/// Subscriptions, of one party (`?party=NAME`) or all, by id.
#[utoipa::path(get, path = "/api/v1/subscriptions", tag = "subscriptions", security(("bearer" = [])),
    params(("party" = Option<String>, Query, description = "a user or group name")),
    responses((status = 200, body = Vec<SubscriptionView>), (status = 404, description = "no such party")))]
async fn list(
    State(app): State<App>,
    _: Authed,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<Vec<SubscriptionView>>> {
    let subs = app
        .blocking(move |c| {
            let subs = match &q.party {
                Some(name) => {
                    let (id, _) = parties::find(c, name)?;
                    subscriptions::list_for_party(c, id)?
                }
                None => subscriptions::list(c)?,
            };
            views(c, subs)
        })
        .await?;
    Ok(Json(subs))
}

/// Pauses or resumes (from now, no burst) a subscription, or changes its
/// frequency, hour, day or channels (checked as `subscribe` checks them; a
/// new frequency, hour or day reschedules it, and its next digest holds
/// everything since its last).
#[utoipa::path(patch, path = "/api/v1/subscriptions/{id}", tag = "subscriptions", security(("bearer" = [])),
    params(("id" = i64, Path)), request_body = PatchBody,
    responses((status = 200, body = SubscriptionView), (status = 404, description = "no such subscription"),
        (status = 409, description = "the party has the digest the new frequency, hour and day make")))]
async fn change(
    State(app): State<App>,
    _: Authed,
    Path(id): Path<String>,
    raw: RawBody,
) -> ApiResult<Json<SubscriptionView>> {
    let id = parse_id(&id)?;
    let b: PatchBody = json(&raw)?;
    let retime = Retime {
        frequency: b.frequency,
        hour: b.hour,
        day: b.day,
        channels: b.channels,
    };
    let now = app.clock.now();
    let view = app
        .blocking(move |c| {
            manage::change_subscription(c, now, id, b.paused, &retime)?;
            let s = subscriptions::get(c, id)?;
            Ok(views(c, vec![s])?.remove(0))
        })
        .await?;
    Ok(Json(view))
}

/// Ends a subscription for good: its unsent digests are cancelled, its run
/// records go; digests already sent stay as history.
#[utoipa::path(delete, path = "/api/v1/subscriptions/{id}", tag = "subscriptions", security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses((status = 200, body = RemovedView), (status = 404, description = "no such subscription")))]
async fn end(
    State(app): State<App>,
    _: Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<RemovedView>> {
    let id = parse_id(&id)?;
    let now = app.clock.now();
    let r = app
        .blocking(move |c| remove::subscription(c, now, id))
        .await?;
    Ok(Json(RemovedView::new("subscription", id.to_string(), r)))
}

/// The members who opted out of a group subscription, by name.
#[utoipa::path(get, path = "/api/v1/subscriptions/{id}/optouts", tag = "subscriptions", security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses((status = 200, body = Vec<OptOutView>), (status = 400, description = "the id is not a positive integer"),
        (status = 404, description = "no such subscription")))]
async fn optouts(
    State(app): State<App>,
    _: Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<OptOutView>>> {
    let id = parse_id(&id)?;
    let outs = app
        .blocking(move |c| subscriptions::list_optouts(c, Some(id)))
        .await?;
    Ok(Json(
        outs.into_iter()
            .map(|o| OptOutView {
                subscription: o.subscription.0,
                member: o.member,
                created_at: o.created_at,
            })
            .collect(),
    ))
}

/// Clears a member's opt-out from a group subscription: its digests reach
/// them again from its next one. Answers the opt-out that was cleared.
#[utoipa::path(delete, path = "/api/v1/subscriptions/{id}/optouts/{member}", tag = "subscriptions", security(("bearer" = [])),
    params(("id" = i64, Path), ("member" = String, Path, description = "the member's name")),
    responses((status = 200, body = OptOutView), (status = 400, description = "the id is not a positive integer"),
        (status = 404, description = "no such subscription or member, or the member has not opted out of it")))]
async fn optin(
    State(app): State<App>,
    _: Authed,
    Path((id, member)): Path<(String, String)>,
) -> ApiResult<Json<OptOutView>> {
    let id = parse_id(&id)?;
    let o = app
        .blocking(move |c| {
            let was = subscriptions::list_optouts(c, Some(id))?
                .into_iter()
                .find(|o| o.member == member);
            subscriptions::clear_optout(c, id, &member)?;
            Ok(was)
        })
        .await?
        .ok_or_else(ApiError::internal)?;
    Ok(Json(OptOutView {
        subscription: o.subscription.0,
        member: o.member,
        created_at: o.created_at,
    }))
}
