//! `POST /api/v1/subscriptions/{id}/flush`: "send it now", as `digestd
//! subscription flush`: what is waiting for a modification subscription
//! posted as a digest through the queue, in one transaction with the
//! moved cut ([`crate::schedule::flush`]). Accepts `Idempotency-Key`: a
//! retry gets the first answer again and posts nothing.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::json;

use crate::digest::Composer;
use crate::schedule::{self, Flushed};

use super::super::body::{Path, RawBody};
use super::super::error::ApiResult;
use super::super::guard::Authed;
use super::super::idempotency::{self, IdemKey, Reply};
use super::super::App;
use super::parse_id;

pub const ROUTE_FLUSH: &str = "POST /api/v1/subscriptions/{id}/flush";

/// Posts what is waiting for a subscription now, as a digest: 201 with the
/// request's id, or 200 saying nothing was waiting (nothing posted,
/// whatever `send_empty` says). The next scheduled digest holds only what
/// comes after. Accepts `Idempotency-Key`; any body is ignored (but
/// counts for the key).
#[utoipa::path(post, path = "/api/v1/subscriptions/{id}/flush", tag = "subscriptions", security(("bearer" = [])),
    params(("id" = i64, Path), ("Idempotency-Key" = Option<String>, Header, description = "replays the first answer to a retry")),
    responses((status = 201, description = "posted: {subscription, flushed: true, request}"),
        (status = 200, description = "nothing waiting: {subscription, flushed: false, message: \"nothing waiting\"}"),
        (status = 400, description = "the id is not a positive integer"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs admin"),
        (status = 404, description = "no such subscription"),
        (status = 409, description = "paused, or a forward digest (nothing waits for it)"),
        (status = 422, description = "Idempotency-Key reused with another body")))]
pub async fn flush(
    State(app): State<App>,
    Authed(token): Authed,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: RawBody,
) -> ApiResult<Reply> {
    let id = parse_id(&id)?;
    let key = IdemKey::from_request(&headers, &token, ROUTE_FLUSH, &body.0)?;
    let keep = idempotency::Keep::from_config(&app.cfg.http);
    let (now, hours) = (app.clock.now(), keep.hours);
    let (dcfg, ecfg) = (app.cfg.digest.clone(), app.cfg.email.clone());
    let reply = app
        .blocking(move |c| {
            if let Some(k) = &key {
                if let Some(answer) = idempotency::prior(c, k, now, hours)? {
                    return Ok(answer);
                }
            }
            let mut composer = Composer::new(&dcfg, &ecfg)?;
            idempotency::once(c, key.as_ref(), now, keep, |c| {
                Ok(match schedule::flush_in_tx(c, id, now, &mut composer)? {
                    Flushed::Sent { request, .. } => Reply::new(
                        StatusCode::CREATED,
                        &json!({"subscription": id.0, "flushed": true, "request": request.0}),
                    ),
                    Flushed::Nothing => Reply::new(
                        StatusCode::OK,
                        &json!({"subscription": id.0, "flushed": false, "message": "nothing waiting"}),
                    ),
                })
            })
        })
        .await??;
    if reply.status == StatusCode::CREATED {
        app.db.wake_queue();
    }
    Ok(reply)
}
