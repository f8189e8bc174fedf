//! `GET /admin/grid?time=local|server&week=&user=`: the week grid as
//! `digestd grid --svg` draws it (`schedule::grid::build`, `to_svg_in`),
//! inline in the page (no image request, nothing for the CSP to allow),
//! with the same text table below for reading without colour; both in the
//! operator's words ([`Operator`]), where `digestd grid` writes English.

use std::borrow::Cow;

use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use crate::i18n::{catalogs, Arg};
use crate::schedule::grid::{self, GridTime, GridWords};
use crate::validate;

use super::super::super::App;
use super::super::{PageResult, Words};
use super::{field, fields, gated, party, render, Admin, Refused};

#[derive(Template)]
#[template(path = "pages/admin/grid.html")]
struct GridPage<'a> {
    t: Words,
    a: &'a Admin,
    local: bool,
    week: String,
    user: String,
    /// The SVG, escaped by `to_svg_in` itself.
    svg: String,
    table: String,
    error: Option<String>,
}

/// The grid's words in the operator's language (`admin-grid-*`, the
/// weekdays' short names of the catalogue).
struct Operator(Words);

impl Operator {
    fn n(n: usize) -> Arg<'static> {
        Arg::Num(n)
    }
}

impl GridWords for Operator {
    fn day(&self, d: usize) -> Cow<'_, str> {
        Cow::Borrowed(&catalogs().names(self.0.lang).weekdays[d % 7])
    }
    fn time(&self, t: GridTime) -> Cow<'_, str> {
        match t {
            GridTime::Local => self.0.t("admin-grid-time-local"),
            GridTime::Server => self.0.t("admin-grid-time-server"),
        }
    }
    fn subtitle(&self, time: &str) -> String {
        self.0.f1("admin-grid-subtitle", "time", time)
    }
    fn cell(&self, day: &str, hour: u8, time: &str, digests: usize, empty: usize) -> String {
        let hour = format!("{hour:02}:00");
        self.0.f(
            "admin-grid-cell",
            &[
                ("day", Arg::Str(day)),
                ("hour", Arg::Str(&hour)),
                ("time", Arg::Str(time)),
                ("digests", Self::n(digests)),
                ("empty", Self::n(empty)),
            ],
        )
    }
    fn dot(&self, empty: usize) -> String {
        self.0.f("admin-grid-dot", &[("empty", Self::n(empty))])
    }
    fn hour_axis(&self, time: &str) -> String {
        self.0.f1("admin-grid-hour-axis", "time", time)
    }
    fn day_axis(&self) -> Cow<'_, str> {
        self.0.t("admin-grid-day-axis")
    }
    fn scale(&self) -> Cow<'_, str> {
        self.0.t("admin-grid-scale")
    }
    fn empty_runs(&self, n: usize) -> String {
        self.0.f("admin-grid-empty-runs", &[("empty", Self::n(n))])
    }
    fn peak(&self, day: &str, hour: u8, digests: usize, total: usize) -> String {
        let hour = format!("{hour:02}:00");
        self.0.f(
            "admin-grid-peak",
            &[
                ("day", Arg::Str(day)),
                ("hour", Arg::Str(&hour)),
                ("digests", Self::n(digests)),
                ("total", Self::n(total)),
            ],
        )
    }
    fn total(&self) -> Cow<'_, str> {
        self.0.t("admin-grid-total")
    }
}

pub async fn show(State(app): State<App>, headers: HeaderMap, RawQuery(q): RawQuery) -> PageResult {
    let raw = q.unwrap_or_default();
    let now = app.clock.now();
    gated(&app, &headers, None, move |c, a| {
        let asked = fields(raw.as_bytes()).and_then(|q| {
            let time = field(&q, "time").unwrap_or("server");
            let time = GridTime::parse(time).map_err(|_| Refused::Time(time.to_string()))?;
            let week = field(&q, "week")
                .map(|w| validate::instant("week", w).map_err(|_| Refused::Week(w.to_string())))
                .transpose()?;
            let user = field(&q, "user").map(|u| party(c, u)).transpose()?;
            Ok((time, week, user))
        });
        let (time, week, user) = match asked {
            Ok(x) => x,
            Err(r) => {
                let (_, line) = r.said(&a.t)?;
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
                        error: Some(line),
                    },
                ));
            }
        };
        let at = week.unwrap_or(now);
        let (local, server) = grid::build(c, at, user.as_ref().map(|u| u.0))?;
        let start = grid::week_start_utc(at);
        let scope = match &user {
            Some(u) => a.t.f1("admin-grid-scope-user", "user", &u.1),
            None => a.t.t("admin-grid-scope-all").into_owned(),
        };
        let week_of = start.format("%Y-%m-%d").to_string();
        let title = a.t.f(
            "admin-grid-title",
            &[("week", Arg::Str(&week_of)), ("scope", Arg::Str(&scope))],
        );
        let g = match time {
            GridTime::Local => &local,
            GridTime::Server => &server,
        };
        let words = Operator(a.t);
        let heading = a.t.f(
            "admin-grid-table-title",
            &[
                ("title", Arg::Str(&title)),
                ("time", Arg::Str(&words.time(time))),
            ],
        );
        Ok(render(
            StatusCode::OK,
            &GridPage {
                t: a.t,
                a,
                local: time == GridTime::Local,
                week: start.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                user: user.map(|u| u.1).unwrap_or_default(),
                svg: g.to_svg_in(&title, time, &words),
                table: g.to_text_in(&heading, &words),
                error: None,
            },
        ))
    })
    .await
}
