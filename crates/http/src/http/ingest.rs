//! What digests are made of, over HTTP: `POST /api/v1/modifications`
//! (`digestd record`), `PUT /api/v1/items/{uuid}` (`digestd item put`),
//! `POST` and `GET /api/v1/collections` (`digestd collection add|list`).
//! The same library calls as the CLI, so the same validation and errors.

use axum::extract::{FromRequest, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::{post, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::Error;
use crate::ingest::{self, Checked};
use crate::items;

use super::body::{JsonBody, Path, RawBody};
use super::error::{ApiError, ApiResult, BadLines};
use super::guard::{Authed, BodyLimit};
use super::idempotency::{self, KeyName, Reply};
use super::stream;
use super::App;

pub use super::error::MAX_LINES_LISTED;
const ROUTE_MODIFICATIONS: &str = "POST /api/v1/modifications";

#[derive(utoipa::OpenApi)]
#[openapi(
    paths(record, put_item, add_collection, list_collections),
    components(schemas(
        Recorded,
        CollectionOut,
        NewCollection,
        PutAnswer,
        RefusedBatch,
        LineErrorDoc
    ))
)]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/v1/modifications", post(record))
        .route("/api/v1/items/{uuid}", put(put_item))
        .route(
            "/api/v1/collections",
            post(add_collection).get(list_collections),
        )
}

/// How many modifications were stored.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Recorded {
    pub recorded: usize,
}

/// A refused batch: the first error, up to 100 bad lines, and how many
/// more bad lines there were (absent when none).
#[derive(Serialize, utoipa::ToSchema)]
pub struct RefusedBatch {
    pub error: String,
    pub lines: Vec<LineErrorDoc>,
    pub lines_not_listed: Option<usize>,
}

/// One bad line (1-based) of a refused batch.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LineErrorDoc {
    pub line: usize,
    pub error: String,
}

/// Stores a batch of modifications, all or nothing. The body is a JSON
/// array of `digestd record` lines, or those lines as NDJSON
/// (`Content-Type: application/x-ndjson`), checked line by line as it
/// arrives. Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/v1/modifications", tag = "ingest", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "replays the first answer to a retry")),
    request_body(content = Vec<serde_json::Value>, description = "array of modification lines (docs/input.md), or NDJSON"),
    responses(
        (status = 201, description = "every line stored", body = Recorded),
        (status = 400, description = "bad body or bad lines; nothing stored", body = RefusedBatch),
        (status = 401, description = "no valid token"), (status = 403, description = "needs ingest"),
        (status = 413, description = "body too large"),
        (status = 422, description = "Idempotency-Key reused with another body")))]
async fn record(State(app): State<App>, Authed(token): Authed, req: Request) -> ApiResult<Reply> {
    let headers = req.headers();
    let named = KeyName::from_headers(headers, &token, ROUTE_MODIFICATIONS)?;
    let keep = idempotency::Keep::from_config(&app.cfg.http);
    let (now, hours, batch) = (app.clock.now(), keep.hours, app.cfg.record.batch_size);
    let at = app.cfg.record.at_bounds(now);
    // NDJSON is checked line by line as it arrives; an array is read whole.
    let (key, body) = match is_ndjson(headers) {
        true => {
            let limit = req
                .extensions()
                .get::<BodyLimit>()
                .map_or(app.cfg.http.max_body_bytes, |l| l.0);
            let streamed = stream::ndjson(req.into_body(), limit, at).await?;
            let key = named.map(|n| n.with_hash(streamed.hash));
            (key, Batch::Lines(streamed.scan))
        }
        false => {
            let body = RawBody::from_request(req, &app).await?;
            let key = named.map(|n| n.with_hash(idempotency::body_hash(&body.0)));
            (key, Batch::Array(body))
        }
    };
    app.blocking(move |c| {
        if let Some(k) = &key {
            if let Some(answer) = idempotency::prior(c, k, now, hours)? {
                return Ok(answer);
            }
        }
        let checked = match body {
            Batch::Lines(scan) => scan.resolve(c)?,
            Batch::Array(body) => match check_array(c, &body, &at)? {
                Ok(checked) => checked,
                Err(e) => return Ok(Err(e)),
            },
        };
        let mods = match checked {
            Checked::Good(mods) => mods,
            Checked::Bad {
                bad,
                bad_total,
                total,
            } => return Ok(Err(refused(bad, bad_total, total))),
        };
        idempotency::once(c, key.as_ref(), now, keep, |c| {
            let n = ingest::write_batched(c, &mods, batch, &mut |_| {})?;
            Ok(Reply::new(StatusCode::CREATED, &json!({ "recorded": n })))
        })
    })
    .await?
}

/// A batch as it came: NDJSON lines already checked, or a JSON array.
enum Batch {
    Lines(ingest::Scan),
    Array(RawBody),
}

/// Checks a JSON array of lines. A well-formed array is parsed straight
/// into lines; any other body again as values, to name each element that
/// is not a line. `Ok(Err)`: the body is not an array at all.
fn check_array(
    c: &mut crate::db::DbConn,
    body: &RawBody,
    at: &ingest::AtBounds,
) -> crate::error::Result<ApiResult<Checked>> {
    let fast = match body.text() {
        Ok(text) => ingest::check_array(c, text, at)?,
        Err(_) => None,
    };
    if let Some(checked) = fast {
        return Ok(Ok(checked));
    }
    match parse_array(body) {
        Ok(values) => ingest::check_values(c, values, at).map(Ok),
        Err(e) => Ok(Err(e)),
    }
}

fn is_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-ndjson"))
}

fn parse_array(body: &RawBody) -> ApiResult<Vec<serde_json::Value>> {
    serde_json::from_str(body.text()?).map_err(|e| {
        ApiError::bad_request(format!(
            "request body: {e} (expected a JSON array of modifications)"
        ))
    })
}

/// 400 naming how many lines are bad, listing the first ones.
fn refused(bad: ingest::BadLines, bad_total: usize, total: usize) -> ApiError {
    let (first, why) = &bad[0];
    let e = ApiError::bad_request(format!(
        "{bad_total} of {total} lines are invalid, nothing was written; line {first}: {why}"
    ));
    let mut lines = BadLines::default();
    for (line, error) in bad {
        lines.push(line, || error);
    }
    // The library keeps the first ones and counts the rest.
    lines.counted_beyond(bad_total);
    e.with_lines(lines)
}

/// What `digestd item put` prints, and which it was.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PutAnswer {
    /// `created`, `updated`, `deleted` or `unchanged`.
    pub result: &'static str,
    #[schema(value_type = i64)]
    pub item: crate::ids::ItemId,
    pub uuid: String,
    /// The actions recorded (empty when nothing changed).
    pub actions: Vec<String>,
    /// `[{"attribute", "old", "new"}]`.
    #[schema(value_type = Vec<Object>)]
    pub changes: Vec<crate::modlog::Change>,
}

/// Upserts an item and records what changed, as `digestd item put`. The
/// body is the item's full new state (docs/input.md); its `uuid` may be
/// left out, and must be the path's if given.
#[utoipa::path(put, path = "/api/v1/items/{uuid}", tag = "ingest", security(("bearer" = [])),
    params(("uuid" = String, Path, description = "the item's UUID")),
    request_body(content = serde_json::Value, description = "the item's state, as `digestd item put` reads it"),
    responses(
        (status = 201, description = "the item is new (or back after a delete)", body = PutAnswer),
        (status = 200, description = "updated, deleted or unchanged", body = PutAnswer),
        (status = 400, description = "bad body, or its uuid is not the path's"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs ingest"),
        (status = 404, description = "unknown collection or actor, or deleting an unknown item")))]
async fn put_item(
    State(app): State<App>,
    _: Authed,
    Path(uuid): Path<String>,
    JsonBody(mut body): JsonBody<serde_json::Value>,
) -> ApiResult<(StatusCode, Json<PutAnswer>)> {
    let path_uuid = crate::validate::uuid("item", &uuid)?;
    let obj = body
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("request body: expected a JSON object"))?;
    match obj.get("uuid") {
        None => {
            obj.insert("uuid".into(), path_uuid.clone().into());
        }
        Some(serde_json::Value::String(u))
            if crate::validate::uuid("item", u).ok().as_ref() == Some(&path_uuid) => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "the body's uuid {other} is not the path's {path_uuid}"
            )))
        }
    }
    let input: items::ItemInput =
        serde_json::from_value(body).map_err(|e| Error::invalid(format!("item: bad JSON: {e}")))?;
    let now = app.clock.now();
    let at = app.cfg.record.at_bounds(now);
    let out = app
        .blocking(move |c| items::put_item_within(c, now, &input, &at))
        .await?;
    let has = |a: &str| out.actions.iter().any(|x| x == a);
    let (status, result) = if out.actions.is_empty() {
        (StatusCode::OK, "unchanged")
    } else if has("created") {
        (StatusCode::CREATED, "created")
    } else if has("deleted") {
        (StatusCode::OK, "deleted")
    } else {
        (StatusCode::OK, "updated")
    };
    Ok((
        status,
        Json(PutAnswer {
            result,
            item: out.item,
            uuid: out.uuid,
            actions: out.actions,
            changes: out.changes,
        }),
    ))
}

/// `{"name": …}`: a new collection.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCollection {
    pub name: String,
}

/// A collection: its UUID and name.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CollectionOut {
    pub uuid: String,
    pub name: String,
}

impl From<items::Collection> for CollectionOut {
    fn from(c: items::Collection) -> Self {
        CollectionOut {
            uuid: c.uuid,
            name: c.name,
        }
    }
}

/// Adds a collection with a fresh UUID, as `digestd collection add`.
#[utoipa::path(post, path = "/api/v1/collections", tag = "collections", security(("bearer" = [])),
    request_body = NewCollection,
    responses((status = 201, description = "made", body = CollectionOut),
        (status = 400, description = "bad name"),
        (status = 401, description = "no valid token"), (status = 403, description = "needs admin")))]
async fn add_collection(
    State(app): State<App>,
    _: Authed,
    JsonBody(body): JsonBody<NewCollection>,
) -> ApiResult<(StatusCode, Json<CollectionOut>)> {
    let now = app.clock.now();
    let c = app
        .blocking(move |c| items::create_collection(c, now, &body.name, None))
        .await?;
    Ok((StatusCode::CREATED, Json(c.into())))
}

/// Every collection, by name.
#[utoipa::path(get, path = "/api/v1/collections", tag = "collections", security(("bearer" = [])),
    responses((status = 200, description = "by name", body = Vec<CollectionOut>),
        (status = 401, description = "no valid token")))]
async fn list_collections(
    State(app): State<App>,
    _: Authed,
) -> ApiResult<Json<Vec<CollectionOut>>> {
    let cs = app.blocking(items::list_collections).await?;
    Ok(Json(cs.into_iter().map(Into::into).collect()))
}
