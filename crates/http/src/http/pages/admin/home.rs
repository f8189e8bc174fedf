//! `GET /admin`: the queue (requests by status, the oldest pending one),
//! the last ticks as their runs recorded them (when, runs, digests, how
//! late), and the leases in `nt_job` (who holds each, until when, its last
//! run), and the operators' events (by status, the oldest waiting, the
//! last error). Tick durations are not stored: the page says where they
//! are.

use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};

use crate::deliver::queue;
use crate::i18n::Arg;
use crate::parties::Channel;
use crate::{metrics, schedule};

use super::super::super::App;
use super::super::{PageResult, Words};
use super::{gated, render, with_code, Admin};

/// Ticks shown.
const TICKS: usize = 12;

pub struct LeaseView {
    pub job: String,
    pub holder: String,
    pub until: String,
    pub last_run: String,
}

pub struct TickView {
    pub at: String,
    pub runs: usize,
    pub digests: usize,
    pub empty: usize,
    pub late: String,
}

#[derive(Template)]
#[template(path = "pages/admin/home.html")]
struct HomePage<'a> {
    t: Words,
    a: &'a Admin,
    now: String,
    /// The notes that name a metric and commands, as HTML.
    ticks_note: String,
    events_note: String,
    statuses: Vec<(crate::db::states::RequestStatus, i64)>,
    oldest_pending: String,
    ticks: Vec<TickView>,
    leases: Vec<LeaseView>,
    events: EventsView,
}

/// The operators' events, as the page shows them.
pub struct EventsView {
    /// Where they are posted, or why not.
    pub target: String,
    pub counts: Vec<(String, i64)>,
    pub oldest_pending: String,
    pub last_error: Option<String>,
}

/// An instant as the operator reads it: UTC, to the second.
pub fn stamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A delay in `t`'s words: "on time", "42 s", "3 min 5 s", "2 h 4 min".
pub fn delay(t: &Words, d: chrono::Duration) -> String {
    let s = d.num_seconds();
    let n = |v: i64| Arg::Num(v as usize);
    match s {
        ..=0 => t.t("admin-on-time").into_owned(),
        1..=59 => t.f("admin-delay-s", &[("s", n(s))]),
        60..=3599 => t.f("admin-delay-min", &[("min", n(s / 60)), ("s", n(s % 60))]),
        _ => t.f(
            "admin-delay-h",
            &[("h", n(s / 3600)), ("min", n(s % 3600 / 60))],
        ),
    }
}

/// When the oldest of something waiting happened, and how long ago.
fn since(t: &Words, at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match at {
        Some(at) if at < now => {
            let (at, ago) = (stamp(at), delay(t, now - at));
            t.f(
                "admin-ago",
                &[("at", Arg::Str(&at)), ("delay", Arg::Str(&ago))],
            )
        }
        Some(at) => t.f1("admin-just-now", "at", &stamp(at)),
        None => t.t("admin-none-pending").into_owned(),
    }
}

pub async fn show(State(app): State<App>, headers: HeaderMap) -> PageResult {
    let now = app.clock.now();
    let cfg = app.cfg.events.clone();
    gated(&app, &headers, None, move |c, a| {
        let t = &a.t;
        let statuses = queue::count_by_status(c)?;
        let db = metrics::read_db(c)?;
        let ticks = schedule::recent_ticks(c, TICKS)?
            .into_iter()
            .map(|t| TickView {
                at: stamp(t.at),
                runs: t.runs,
                digests: t.digests,
                empty: t.runs - t.digests,
                late: delay(&a.t, t.late),
            })
            .collect();
        let leases = db
            .leases
            .iter()
            .map(|l| {
                let live = l.expires.is_some_and(|e| e > now);
                LeaseView {
                    job: l.job.clone(),
                    holder: match (&l.owner, live) {
                        (Some(o), true) => o.clone(),
                        (Some(o), false) => t.f1("admin-expired-lease", "holder", o),
                        (None, _) => t.t("admin-nobody").into_owned(),
                    },
                    until: l.expires.filter(|_| live).map_or_else(|| "—".into(), stamp),
                    last_run: l
                        .last_run
                        .map_or_else(|| t.t("admin-never").into_owned(), stamp),
                }
            })
            .collect();
        let oldest_pending = since(t, db.oldest_pending, now);
        let events = events(c, t, &cfg.url, now, db.oldest_pending_event)?;
        Ok(render(
            StatusCode::OK,
            &HomePage {
                t: a.t,
                a,
                now: stamp(now),
                ticks_note: with_code(
                    t,
                    "admin-ticks-note",
                    &[
                        ("metrics", "/metrics"),
                        ("metric", "digestd_tick_duration_seconds"),
                    ],
                ),
                events_note: with_code(
                    t,
                    "admin-events-commands",
                    &[
                        ("list", "digestd events list"),
                        ("replay", "digestd events replay --since TIME"),
                    ],
                ),
                statuses,
                oldest_pending,
                ticks,
                leases,
                events,
            },
        ))
    })
    .await
}

/// The operators' events as the page shows them: where they go, the
/// counts, the oldest waiting (at `oldest`), the last failure.
fn events(
    c: &mut crate::db::DbConn,
    t: &Words,
    url: &str,
    now: DateTime<Utc>,
    oldest: Option<DateTime<Utc>>,
) -> crate::Result<EventsView> {
    // The finished events of the last day: the table keeps every event
    // until `queue purge`, and this page reads no more than that.
    let day = now - chrono::Duration::hours(24);
    Ok(EventsView {
        target: match url {
            "" => t.t("admin-events-off").into_owned(),
            // A receiver's URL may hold its credential: masked.
            u => t.f1(
                "admin-events-to",
                "url",
                &crate::validate::escape_for_line(&Channel::Webhook.shown(u)),
            ),
        },
        counts: in_order(crate::events::counts(c, day)?),
        oldest_pending: since(t, oldest, now),
        last_error: crate::events::last_error(c, day)?.map(|(id, kind, e)| {
            let id = id.to_string();
            t.f(
                "admin-event-failed",
                &[
                    ("id", Arg::Str(&id)),
                    ("kind", Arg::Str(&kind)),
                    ("error", Arg::Str(&e)),
                ],
            )
        }),
    })
}

/// The events' counts waiting first, then sent, failed and skipped (then
/// any other status): the order of their life, whatever their names read
/// in the operator's language.
fn in_order(counts: std::collections::BTreeMap<String, i64>) -> Vec<(String, i64)> {
    const ORDER: [&str; 4] = ["pending", "sent", "failed", "skipped"];
    let mut v: Vec<(String, i64)> = counts.into_iter().collect();
    v.sort_by_key(|(s, _)| ORDER.iter().position(|o| o == s).unwrap_or(ORDER.len()));
    v
}
