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
use crate::parties::Channel;
use crate::{metrics, schedule};

use super::super::super::App;
use super::super::PageResult;
use super::{gated, render, Admin};

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
    a: &'a Admin,
    now: String,
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

/// A delay in words: "on time", "42 s", "3 min 5 s", "2 h 4 min".
pub fn delay(d: chrono::Duration) -> String {
    let s = d.num_seconds();
    match s {
        ..=0 => "on time".into(),
        1..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// When the oldest of something waiting happened, and how long ago.
fn since(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) if t < now => format!("{} ({} ago)", stamp(t), delay(now - t)),
        Some(t) => format!("{} (just now)", stamp(t)),
        None => "none pending".into(),
    }
}

pub async fn show(State(app): State<App>, headers: HeaderMap) -> PageResult {
    let now = app.clock.now();
    let cfg = app.cfg.events.clone();
    gated(&app, &headers, None, move |c, a| {
        let statuses = queue::count_by_status(c)?;
        let db = metrics::read_db(c)?;
        let ticks = schedule::recent_ticks(c, TICKS)?
            .into_iter()
            .map(|t| TickView {
                at: stamp(t.at),
                runs: t.runs,
                digests: t.digests,
                empty: t.runs - t.digests,
                late: delay(t.late),
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
                        (Some(o), false) => format!("nobody (expired lease of {o})"),
                        (None, _) => "nobody".into(),
                    },
                    until: l.expires.filter(|_| live).map_or_else(|| "—".into(), stamp),
                    last_run: l.last_run.map_or_else(|| "never".into(), stamp),
                }
            })
            .collect();
        let oldest_pending = since(db.oldest_pending, now);
        // The finished events of the last day: the table keeps every
        // event until `queue purge`, and this page reads no more than that.
        let day = now - chrono::Duration::hours(24);
        let events = EventsView {
            target: match &cfg.url {
                u if u.is_empty() => "not posted: [events] url is empty".into(),
                // A receiver's URL may hold its credential: masked.
                u => format!(
                    "posted to {}",
                    crate::validate::escape_for_line(&Channel::Webhook.shown(u))
                ),
            },
            counts: crate::events::counts(c, day)?.into_iter().collect(),
            oldest_pending: since(db.oldest_pending_event, now),
            last_error: crate::events::last_error(c, day)?
                .map(|(id, kind, e)| format!("event {id} ({kind}): {e}")),
        };
        Ok(render(
            StatusCode::OK,
            &HomePage {
                a,
                now: stamp(now),
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
