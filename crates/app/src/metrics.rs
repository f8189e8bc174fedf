//! What `GET /metrics` shows, in the Prometheus text exposition format.
//!
//! Two sources. What only this process knows — ticks and their duration,
//! runs claimed, digests posted, queue rows delivered, retried or given up
//! — is counted in a [`Metrics`] value that `serve` feeds after each tick
//! and queue pass ([`Metrics::tick`], [`Metrics::queue_pass`]). What the
//! database knows — unfinished requests by status, the oldest pending
//! request, recorded bounces, the leases — is read at scrape time
//! ([`read_db`]) with queries whose cost follows the backlog, not the
//! history: finished requests are not counted (they stay until purged;
//! their rate is `digestd_deliveries_total`).
//!
//! A value, not a global registry: each server (and each test) has its own.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::dsl::{count_star, min};
use diesel::prelude::*;
use prometheus::{
    Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use crate::db::schema::{contact_points, email_bounces, nt_job, nt_requests};
use crate::db::states::{RequestStatus, RowState};
use crate::db::DbConn;
use crate::deliver::queue::PassReport;
use crate::error::{Error, Result};
use crate::parties::Channel;
use crate::schedule::{DueRun, TICK_JOB};

/// The exposition format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How a tick ended.
pub enum Tick<'a> {
    /// It recorded `runs`, holding the lease (`led`) or, on PostgreSQL,
    /// helping the process that held it; the composer posted `posted`
    /// digests per channel and found `empty` runs with nothing.
    Ran {
        runs: &'a [DueRun],
        posted: &'a BTreeMap<&'static str, usize>,
        empty: usize,
        led: bool,
    },
    /// Another process held the tick lease.
    Skipped,
    /// It failed; what it did not commit stays due.
    Failed,
}

/// The process's counters and histograms.
pub struct Metrics {
    registry: Registry,
    tick_duration: Histogram,
    ticks: IntCounterVec,
    runs_claimed: IntCounterVec,
    digests_posted: IntCounterVec,
    digests_empty: IntCounter,
    queue_pass_duration: Histogram,
    queue_passes: IntCounterVec,
    deliveries: IntCounterVec,
    events_posted: IntCounterVec,
}

/// Seconds, from a tick of a few milliseconds to a backlog of minutes.
const BUCKETS: &[f64] = &[
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

fn err(e: prometheus::Error) -> Error {
    Error::Storage(format!("metrics: {e}"))
}

fn counters(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
    r.register(Box::new(c.clone())).expect("registered once");
    c
}

fn histogram(r: &Registry, name: &str, help: &str) -> Histogram {
    let h = Histogram::with_opts(HistogramOpts::new(name, help).buckets(BUCKETS.to_vec()))
        .expect("valid metric");
    r.register(Box::new(h.clone())).expect("registered once");
    h
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let r = Registry::new();
        let m = Metrics {
            tick_duration: histogram(
                &r,
                "digestd_tick_duration_seconds",
                "How long a tick took (finding, composing and posting due digests).",
            ),
            ticks: counters(
                &r,
                "digestd_ticks_total",
                "Ticks by outcome: ran, helped (claimed chunks of the tick of another process, which held the lease), skipped (another process held the lease), failed.",
                &["outcome"],
            ),
            runs_claimed: counters(
                &r,
                "digestd_runs_claimed_total",
                "Runs a tick recorded (claimed), by frequency.",
                &["frequency"],
            ),
            digests_posted: counters(
                &r,
                "digestd_digests_posted_total",
                "Digests posted as requests, per channel they go out on.",
                &["channel"],
            ),
            digests_empty: IntCounter::new(
                "digestd_digests_empty_total",
                "Runs with nothing to say whose subscription does not want empty digests.",
            )
            .expect("valid metric"),
            queue_pass_duration: histogram(
                &r,
                "digestd_queue_pass_duration_seconds",
                "How long a queue pass took.",
            ),
            queue_passes: counters(
                &r,
                "digestd_queue_passes_total",
                "Queue passes by outcome: ran, failed.",
                &["outcome"],
            ),
            deliveries: counters(
                &r,
                "digestd_deliveries_total",
                "Queue rows (a request to one recipient on one channel) settled, by channel and \
                 outcome: sent, retry (will be tried again), failed (given up).",
                &["channel", "outcome"],
            ),
            events_posted: counters(
                &r,
                "digestd_events_posted_total",
                "Operators' events posted to [events] url, by outcome: sent, retry (will be \
                 posted again), failed (given up).",
                &["outcome"],
            ),
            registry: r,
        };
        m.registry
            .register(Box::new(m.digests_empty.clone()))
            .expect("registered once");
        let build = IntGaugeVec::new(
            Opts::new("digestd_build_info", "The running version (always 1)."),
            &["version"],
        )
        .expect("valid metric");
        build.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        m.registry
            .register(Box::new(build))
            .expect("registered once");
        // Every label value present from the start, at 0: a rate over a
        // series that appears only at its first event misses that event.
        for o in ["ran", "helped", "skipped", "failed"] {
            m.ticks.with_label_values(&[o]);
        }
        for f in ["hourly", "daily", "weekly"] {
            m.runs_claimed.with_label_values(&[f]);
        }
        for o in ["ran", "failed"] {
            m.queue_passes.with_label_values(&[o]);
        }
        for o in ["sent", "retry", "failed"] {
            m.events_posted.with_label_values(&[o]);
        }
        for ch in Channel::ALL {
            m.digests_posted.with_label_values(&[ch.as_str()]);
            for o in RowState::ALL {
                m.deliveries.with_label_values(&[ch.as_str(), o.as_str()]);
            }
        }
        m
    }

    /// Counts one tick that took `took`.
    pub fn tick(&self, took: Duration, tick: Tick<'_>) {
        self.tick_duration.observe(took.as_secs_f64());
        let outcome = match tick {
            Tick::Ran {
                runs,
                posted,
                empty,
                led,
            } => {
                for r in runs {
                    self.runs_claimed
                        .with_label_values(&[r.frequency.as_str()])
                        .inc();
                }
                for (ch, n) in posted {
                    self.digests_posted
                        .with_label_values(&[ch])
                        .inc_by(*n as u64);
                }
                self.digests_empty.inc_by(empty as u64);
                if led {
                    "ran"
                } else {
                    "helped"
                }
            }
            Tick::Skipped => "skipped",
            Tick::Failed => "failed",
        };
        self.ticks.with_label_values(&[outcome]).inc();
    }

    /// Counts one queue pass that took `took`: its report, or `None` when
    /// it failed.
    pub fn queue_pass(&self, took: Duration, report: Option<&PassReport>) {
        self.queue_pass_duration.observe(took.as_secs_f64());
        let Some(report) = report else {
            self.queue_passes.with_label_values(&["failed"]).inc();
            return;
        };
        self.queue_passes.with_label_values(&["ran"]).inc();
        let e = &report.events;
        for (o, n) in [
            ("sent", e.sent),
            ("retry", e.retrying),
            ("failed", e.failed),
        ] {
            self.events_posted.with_label_values(&[o]).inc_by(n as u64);
        }
        for ((ch, outcome), n) in &report.rows {
            self.deliveries
                .with_label_values(&[ch.as_str(), outcome.as_str()])
                .inc_by(*n as u64);
        }
    }

    /// The exposition text: this process's metrics and `db`'s state at `now`.
    pub fn render(&self, db: &DbState, now: DateTime<Utc>) -> Result<String> {
        let scrape = Registry::new();
        let reg = |m: Box<dyn prometheus::core::Collector>| scrape.register(m).map_err(err);
        let requests = IntGaugeVec::new(
            Opts::new(
                "digestd_requests",
                "Requests not yet final, by status (pending: not yet expanded; sending: rows open).",
            ),
            &["status"],
        )
        .map_err(err)?;
        for s in RequestStatus::OPEN {
            requests.with_label_values(&[s.as_str()]);
        }
        for (s, n) in &db.requests {
            requests.with_label_values(&[s]).set(*n);
        }
        reg(Box::new(requests))?;
        let oldest = Gauge::new(
            "digestd_oldest_pending_request_age_seconds",
            "Age of the oldest request no queue pass has expanded yet; 0 when none is pending.",
        )
        .map_err(err)?;
        if let Some(t) = db.oldest_pending {
            oldest.set(((now - t).num_milliseconds() as f64 / 1000.0).max(0.0));
        }
        reg(Box::new(oldest))?;
        let bounces = IntCounterVec::new(
            Opts::new(
                "digestd_bounces_total",
                "Bounces recorded by `digestd inbound`, by kind: hard, soft.",
            ),
            &["kind"],
        )
        .map_err(err)?;
        for (kind, n) in [("hard", db.bounces_hard), ("soft", db.bounces_soft)] {
            bounces.with_label_values(&[kind]).inc_by(n.max(0) as u64);
        }
        reg(Box::new(bounces))?;
        let disabled = IntGauge::new(
            "digestd_bounce_disabled_addresses",
            "Email addresses disabled after too many hard bounces.",
        )
        .map_err(err)?;
        disabled.set(db.bounce_disabled);
        reg(Box::new(disabled))?;
        let held = IntGaugeVec::new(
            Opts::new(
                "digestd_lease_held",
                "1 when a process holds the job's lease (owner: host:pid:random), else 0 with owner \"\".",
            ),
            &["job", "owner"],
        )
        .map_err(err)?;
        let mut last_tick = 0.0;
        for l in &db.leases {
            match (&l.owner, l.expires) {
                (Some(o), Some(e)) if e > now => held.with_label_values(&[&l.job, o]).set(1),
                _ => held.with_label_values(&[&l.job, ""]).set(0),
            }
            if l.job == TICK_JOB {
                last_tick = l.last_run.map_or(0.0, |t| t.timestamp() as f64);
            }
        }
        reg(Box::new(held))?;
        let last = Gauge::new(
            "digestd_last_tick_timestamp_seconds",
            "When the last tick (by any process on this database) finished, Unix time; 0 if never.",
        )
        .map_err(err)?;
        last.set(last_tick);
        reg(Box::new(last))?;
        let events = IntGauge::new(
            "digestd_events_pending",
            "Operators' events recorded and not yet posted (or waiting for [events] url).",
        )
        .map_err(err)?;
        events.set(db.events_pending);
        reg(Box::new(events))?;
        let oldest_event = Gauge::new(
            "digestd_oldest_pending_event_age_seconds",
            "Age of the oldest operators' event not yet posted; 0 when none is pending.",
        )
        .map_err(err)?;
        if let Some(t) = db.oldest_pending_event {
            oldest_event.set(((now - t).num_milliseconds() as f64 / 1000.0).max(0.0));
        }
        reg(Box::new(oldest_event))?;
        let mut families = self.registry.gather();
        families.extend(scrape.gather());
        families.sort_by(|a, b| a.name().cmp(b.name()));
        TextEncoder::new().encode_to_string(&families).map_err(err)
    }
}

/// One `nt_job` lease.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub job: String,
    pub owner: Option<String>,
    pub expires: Option<DateTime<Utc>>,
    pub last_run: Option<DateTime<Utc>>,
}

/// What the database says at scrape time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbState {
    /// Requests not yet final (no `fulfill_date`), by status.
    pub requests: BTreeMap<String, i64>,
    /// The `request_date` of the oldest pending request.
    pub oldest_pending: Option<DateTime<Utc>>,
    pub bounces_hard: i64,
    pub bounces_soft: i64,
    /// Disabled email addresses that have bounced.
    pub bounce_disabled: i64,
    pub leases: Vec<Lease>,
    /// Operators' events not yet posted, and when the oldest happened.
    pub events_pending: i64,
    pub oldest_pending_event: Option<DateTime<Utc>>,
}

/// Reads [`DbState`]. The request queries read the partial indexes over
/// unfinished and pending requests; the bounce queries read `email_bounces`
/// (one row per bounce) and look its contact points up by key.
pub fn read_db(conn: &mut DbConn) -> Result<DbState> {
    let requests: Vec<(String, i64)> = nt_requests::table
        .filter(nt_requests::fulfill_date.is_null())
        .group_by(nt_requests::status)
        .select((nt_requests::status, count_star()))
        .load(conn)?;
    let oldest: Option<NaiveDateTime> = nt_requests::table
        .filter(nt_requests::status.eq(RequestStatus::Pending.as_str()))
        .filter(nt_requests::fulfill_date.is_null())
        .select(min(nt_requests::request_date))
        .first(conn)?;
    let bounces: Vec<(bool, i64)> = email_bounces::table
        .group_by(email_bounces::hard)
        .select((email_bounces::hard, count_star()))
        .load(conn)?;
    let bounce_disabled: i64 = contact_points::table
        .filter(contact_points::disabled.eq(true))
        .filter(
            contact_points::id.eq_any(email_bounces::table.select(email_bounces::contact_point_id)),
        )
        .count()
        .get_result(conn)?;
    type JobRow = (
        String,
        Option<String>,
        Option<NaiveDateTime>,
        Option<NaiveDateTime>,
    );
    let jobs: Vec<JobRow> = nt_job::table
        .select((
            nt_job::job_name,
            nt_job::owner,
            nt_job::lease_expires_at,
            nt_job::last_run_date,
        ))
        .order(nt_job::job_name)
        .load(conn)?;
    let count = |hard: bool| {
        bounces
            .iter()
            .filter(|b| b.0 == hard)
            .map(|b| b.1)
            .sum::<i64>()
    };
    let (events_pending, oldest_pending_event) = crate::events::pending(conn)?;
    Ok(DbState {
        events_pending,
        oldest_pending_event,
        requests: requests.into_iter().collect(),
        oldest_pending: oldest.map(|t| t.and_utc()),
        bounces_hard: count(true),
        bounces_soft: count(false),
        bounce_disabled,
        leases: jobs
            .into_iter()
            .map(|(job, owner, expires, last)| Lease {
                job,
                owner,
                expires: expires.map(|t| t.and_utc()),
                last_run: last.map(|t| t.and_utc()),
            })
            .collect(),
    })
}
