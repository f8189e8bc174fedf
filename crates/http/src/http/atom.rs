//! The Atom projections of a collection (Cosmo proposal):
//! `GET /atom/collection/{uuid}/changed?start=…&end=…[&tz=…]` and
//! `GET /atom/collection/{uuid}/range?start=…&end=…[&tz=…]`.
//!
//! Who: a read ticket for this collection (`?ticket=…`), or a bearer token
//! with the `read` scope. An unknown ticket or no credentials is 401 before
//! anything says whether the collection exists; a ticket for another
//! collection is 403.
//!
//! Widgets poll, so every feed carries a strong `ETag` and
//! `Last-Modified`, and a conditional GET is answered 304 from the
//! collection's row alone ([`feeds::head`]), kept in memory with the
//! credentials until the database changes (`super::cache`), so that a
//! current copy costs no database work at all: the log is read only when
//! the caller's copy is stale ([`answer`] checks before it loads).
//!
//! A document holds at most `[http] max_feed_entries` entries; the rest
//! are on the pages its `next` link leads to (`?after=…`, a cursor:
//! [`feeds::page`]), each read with `LIMIT`ed queries.

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::access::{self, Scope};
use crate::feeds::{self, atom::Data, Head, Projection, Query};

use super::error::ApiResult;
use super::feed_cache::{Served, Version};
use super::{auth, ApiError, App};

#[derive(utoipa::OpenApi)]
#[openapi(paths(changed, range))]
struct Doc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    <Doc as utoipa::OpenApi>::openapi()
}

pub fn routes() -> Router<App> {
    Router::new()
        .route("/atom/collection/{uuid}/changed", get(changed))
        .route("/atom/collection/{uuid}/range", get(range))
}

/// Every item modified in `[start, end)`, one entry each: the net change of
/// each attribute over the window (old → new), who changed it, when.
#[utoipa::path(get, path = "/atom/collection/{uuid}/changed", tag = "feeds",
    security(("bearer" = []), ()),
    params(
        ("uuid" = String, Path, description = "the collection"),
        ("start" = String, Query, description = "RFC 3339 instant, inclusive"),
        ("end" = String, Query, description = "RFC 3339 instant, exclusive; at most http.max_feed_days after start"),
        ("tz" = Option<String>, Query, description = "IANA zone for the times in the content; default the owner's, else UTC"),
        ("ticket" = Option<String>, Query, description = "a read ticket of this collection, instead of a token"),
        ("after" = Option<String>, Query, description = "the cursor of a page, from a feed's own next link"),
    ),
    responses(
        (status = 200, description = "Atom 1.0 feed", content_type = "application/atom+xml"),
        (status = 304, description = "If-None-Match / If-Modified-Since: the caller's copy is current"),
        (status = 400, description = "bad start, end, range, tz or after cursor"),
        (status = 401, description = "no valid token or ticket"),
        (status = 403, description = "a token without read, or a ticket for another collection"),
        (status = 404, description = "no such collection"),
    ))]
async fn changed(
    State(app): State<App>,
    Path(uuid): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    answer(app, Projection::Changed, uuid, query, headers).await
}

/// Every start or reminder in `[start, end)`, one entry each; each instance
/// of a recurring event is its own entry, linked to its series.
#[utoipa::path(get, path = "/atom/collection/{uuid}/range", tag = "feeds",
    security(("bearer" = []), ()),
    params(
        ("uuid" = String, Path, description = "the collection"),
        ("start" = String, Query, description = "RFC 3339 instant, inclusive"),
        ("end" = String, Query, description = "RFC 3339 instant, exclusive; at most http.max_feed_days after start"),
        ("tz" = Option<String>, Query, description = "IANA zone for the times in the content; default the owner's, else UTC"),
        ("ticket" = Option<String>, Query, description = "a read ticket of this collection, instead of a token"),
        ("after" = Option<String>, Query, description = "the cursor of a page, from a feed's own next link"),
    ),
    responses(
        (status = 200, description = "Atom 1.0 feed", content_type = "application/atom+xml"),
        (status = 304, description = "If-None-Match / If-Modified-Since: the caller's copy is current"),
        (status = 400, description = "bad start, end, range, tz or after cursor"),
        (status = 401, description = "no valid token or ticket"),
        (status = 403, description = "a token without read, or a ticket for another collection"),
        (status = 404, description = "no such collection"),
    ))]
async fn range(
    State(app): State<App>,
    Path(uuid): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    answer(app, Projection::Range, uuid, query, headers).await
}

/// The query string's parameters. A name given twice is refused, after
/// the credentials are checked (`twice`).
#[derive(Default)]
struct Params {
    start: Option<String>,
    end: Option<String>,
    tz: Option<String>,
    ticket: Option<String>,
    after: Option<String>,
    twice: Option<String>,
}

impl Params {
    fn parse(raw: Option<&str>) -> Params {
        let mut p = Params::default();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            let slot = match k.as_ref() {
                "start" => &mut p.start,
                "end" => &mut p.end,
                "tz" => &mut p.tz,
                "ticket" => &mut p.ticket,
                "after" => &mut p.after,
                _ => continue,
            };
            if slot.replace(v.into_owned()).is_some() && p.twice.is_none() {
                p.twice = Some(k.into_owned());
            }
        }
        p
    }
}

/// The collection the caller may read, by `uuid`: with a ticket, the one it
/// opens (a ticket for another collection, or a UUID that names nothing, is
/// 403 so a ticket cannot probe); with a token, any (404 when none).
///
/// From the process's cache when it holds the credentials and the head
/// under the current generation (`cache`): then a conditional GET asks the
/// database nothing. Otherwise one blocking call and one pooled connection
/// for both, which keeps what it found.
async fn authorize(
    app: &App,
    headers: &HeaderMap,
    ticket: Option<String>,
    uuid: String,
) -> ApiResult<Head> {
    let now = app.clock.now();
    let g = app.cache.generation().await;
    let Some(ticket) = ticket else {
        let presented = auth::presented(headers);
        if let Some(g) = g {
            if let (Some(t), Some(head)) = (
                auth::cached(&app.cache, Some(g), now, &presented),
                app.cache.head(g, &uuid),
            ) {
                auth::scoped(Some(t), Some(Scope::Read))?;
                return Ok(head);
            }
        }
        let a = app.clone();
        return app
            .blocking(move |c| {
                let token = auth::check_and_keep(c, &a.cache, g, now, &presented)?;
                Ok(match auth::scoped(token, Some(Scope::Read)) {
                    Ok(_) => Ok(head_kept(c, &a, g, &uuid)?),
                    Err(refused) => Err(refused),
                })
            })
            .await?;
    };
    let other = || {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "this ticket opens another collection",
        )
    };
    let key = auth::cache_key(&ticket);
    if let (Some(g), Some(key)) = (g, &key) {
        if let (Some(opened), Some(head)) = (app.cache.ticket(g, key), app.cache.head(g, &uuid)) {
            return if head.collection == opened {
                Ok(head)
            } else {
                Err(other())
            };
        }
    }
    let a = app.clone();
    app.blocking(move |c| {
        let Some(opened) = access::ticket_collection(c, &ticket)? else {
            return Ok(Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unknown read ticket",
            )));
        };
        if let (Some(g), Some(key)) = (g, key) {
            a.cache.put_ticket(g, key, opened);
        }
        Ok(match head_kept(c, &a, g, &uuid) {
            Ok(head) if head.collection == opened => Ok(head),
            Ok(_) => Err(other()),
            Err(e) if e.is_bad_input() => Err(other()),
            Err(e) => return Err(e),
        })
    })
    .await?
}

/// [`feeds::head`], kept under generation `g`.
fn head_kept(
    c: &mut crate::db::DbConn,
    app: &App,
    g: Option<u64>,
    uuid: &str,
) -> crate::error::Result<Head> {
    let head = feeds::head(c, uuid)?;
    if let Some(g) = g {
        app.cache.put_head(g, &head);
    }
    Ok(head)
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn validators(etag: &str, head: &Head) -> ApiResult<[(header::HeaderName, HeaderValue); 3]> {
    validators_of(etag, head.changed_at)
}

fn validators_of(
    etag: &str,
    changed_at: chrono::DateTime<chrono::Utc>,
) -> ApiResult<[(header::HeaderName, HeaderValue); 3]> {
    let v = |s: &str| HeaderValue::from_str(s).map_err(|_| ApiError::internal());
    Ok([
        (header::ETAG, v(etag)?),
        (header::LAST_MODIFIED, v(&feeds::http_date(changed_at))?),
        // Revalidate every time; a ticket's feed is nobody else's to cache.
        (header::CACHE_CONTROL, v("private, no-cache")?),
    ])
}

/// Authorise, validate, answer 304 from the validators when the caller's
/// copy is current, else read the log (or the items) and write the feed.
async fn answer(
    app: App,
    projection: Projection,
    uuid: String,
    raw: Option<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let p = Params::parse(raw.as_deref());
    let head = authorize(&app, &headers, p.ticket.clone(), uuid).await?;
    if let Some(k) = p.twice {
        return Err(ApiError::bad_request(format!("{k} is given twice")));
    }
    let q = Query::new(
        projection,
        p.start.as_deref(),
        p.end.as_deref(),
        p.tz.as_deref(),
        app.cfg.http.max_feed_days,
        &head,
    )
    .and_then(|q| q.paged(&head, app.cfg.http.max_feed_entries, p.after.as_deref()))
    .map_err(ApiError::from)?;
    let base = app.cfg.digest.base_url.clone();
    let etag = feeds::etag(&head, &q, &base);
    let validators = validators(&etag, &head)?;
    if feeds::not_modified(
        &etag,
        head.changed_at,
        header_str(&headers, header::IF_NONE_MATCH),
        header_str(&headers, header::IF_MODIFIED_SINCE),
    ) {
        return Ok((StatusCode::NOT_MODIFIED, validators).into_response());
    }
    // The same representation under the same strong tag: polls of one feed
    // are served from memory until its version moves.
    let key = format!("{}|{etag}", head.uuid);
    let feed = feeds::feed_key(&head, &q, &base);
    let ctype = (
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/atom+xml; charset=utf-8"),
    );
    // A write between the head and this read makes the body newer than its
    // tag: the next poll fetches once more, never a stale body as current
    // (the version has moved, so the tag it is cached under is not asked
    // for again). Readers of one tag share one render, and while it is in
    // flight later readers get the previous version under its own tag
    // (`feed_cache`).
    let want = Version {
        version: head.version,
        etag,
        changed_at: head.changed_at,
        body: Default::default(),
    };
    let served = app
        .feed_cache
        .serve(&feed, &key, want, || render(app.clone(), head, q, base))
        .await?;
    let (validators, xml) = match served {
        Served::Fresh(xml) => (validators, xml),
        Served::Stale(old) => {
            let validators = validators_of(&old.etag, old.changed_at)?;
            if feeds::not_modified(
                &old.etag,
                old.changed_at,
                header_str(&headers, header::IF_NONE_MATCH),
                header_str(&headers, header::IF_MODIFIED_SINCE),
            ) {
                return Ok((StatusCode::NOT_MODIFIED, validators).into_response());
            }
            (validators, old.body)
        }
    };
    Ok((StatusCode::OK, validators, [ctype], xml).into_response())
}

/// Reads the page `q` of the feed and writes its document.
async fn render(app: App, head: Head, q: Query, base: String) -> ApiResult<String> {
    app.blocking(move |c| {
        let (data, next) = match q.projection {
            Projection::Changed => {
                let (page, names) = feeds::changed(c, &head, &q)?;
                (Data::Changed(page.entries, names), page.next)
            }
            Projection::Range => {
                let page = feeds::range(c, &head, &q)?;
                (Data::Range(page.entries), page.next)
            }
        };
        let next = next.map(|n| q.page_of(&head).encode(&n));
        feeds::atom::render(&head, &q, &base, &data, next.as_deref())
    })
    .await
}
