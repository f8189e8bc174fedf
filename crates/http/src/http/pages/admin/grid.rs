//! `GET /admin/grid?time=local|server&week=&user=`: the week grid as
//! `digestd grid --svg` draws it (`schedule::grid::build`, `to_svg`), inline
//! in the page (no image request, nothing for the CSP to allow), with the
//! same text table below for reading without colour.

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use crate::error::Error;
use crate::schedule::grid::{self, GridTime};
use crate::{parties, validate};

use super::super::super::App;
use super::super::{PageResult, Words};
use super::{field, fields, gated, render, Admin};

#[derive(Template)]
#[template(path = "pages/admin/grid.html")]
struct GridPage<'a> {
    t: Words,
    a: &'a Admin,
    local: bool,
    week: String,
    user: String,
    /// The SVG, escaped by `to_svg` itself.
    svg: String,
    table: String,
    error: Option<String>,
}

pub async fn show(State(app): State<App>, headers: HeaderMap, RawQuery(q): RawQuery) -> PageResult {
    let raw = q.unwrap_or_default();
    let now = app.clock.now();
    gated(&app, &headers, None, move |c, a| {
        let asked = fields(raw.as_bytes()).and_then(|q| {
            let time = GridTime::parse(field(&q, "time").unwrap_or("server"))?;
            let week = field(&q, "week")
                .map(|w| validate::instant("week", w))
                .transpose()?;
            let user = field(&q, "user")
                .map(|u| {
                    let u = validate::name("user", u)?;
                    parties::find(c, &u)
                        .map(|(id, _)| (id, u.clone()))
                        .map_err(|_| Error::invalid(format!("user: no user or group named {u}")))
                })
                .transpose()?;
            Ok((time, week, user))
        });
        let (time, week, user) = match asked {
            Ok(x) => x,
            Err(e) if e.is_bad_input() => {
                return Ok(render(
                    StatusCode::BAD_REQUEST,
                    &GridPage {
                        t: a.t,
                        a,
                        local: false,
                        week: String::new(),
                        user: String::new(),
                        svg: String::new(),
                        table: String::new(),
                        error: Some(validate::escape_for_line(&e.to_string())),
                    },
                ))
            }
            Err(e) => return Err(e),
        };
        let at = week.unwrap_or(now);
        let (local, server) = grid::build(c, at, user.as_ref().map(|u| u.0))?;
        let start = grid::week_start_utc(at);
        let scope = user
            .as_ref()
            .map_or("all users".to_string(), |u| format!("user {}", u.1));
        let title = format!(
            "digests in the week of {} ({scope})",
            start.format("%Y-%m-%d")
        );
        let g = match time {
            GridTime::Local => &local,
            GridTime::Server => &server,
        };
        Ok(render(
            StatusCode::OK,
            &GridPage {
                t: a.t,
                a,
                local: time == GridTime::Local,
                week: start.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                user: user.map(|u| u.1).unwrap_or_default(),
                svg: g.to_svg(&title, time),
                table: g.to_text(&format!("{title}, {}", time.label())),
                error: None,
            },
        ))
    })
    .await
}
