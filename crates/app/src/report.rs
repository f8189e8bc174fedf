//! The operator's daily report: what digestd did in the last 24 hours and
//! what is waiting now, read from the database ([`read`]), rendered as
//! text ([`Report::text`], in `[i18n] operator_locale`'s language) or
//! JSON, printed by `digestd report` and posted
//! once a day through the queue ([`post_if_due`]) to `[ops] report_to`.
//! "If the system is down, the absence of the report tells you."
//!
//! Owns `ops_reports`: one row per local day in `[ops] report_tz`, written
//! in the same transaction as the report's request, so the report is
//! exactly-once per local day like any other period, however many ticks
//! or processes try.

mod text;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDateTime, Timelike, Utc};
use diesel::dsl::count_star;
use diesel::prelude::*;
use serde::Serialize;

use crate::config::Config;
use crate::db::schema::{
    contact_points, delivery_log, email_bounces, nt_job, nt_queue, nt_requests, ops_reports,
    subscription_runs, subscriptions,
};
use crate::db::states::{LogOutcome, RequestStatus};
use crate::db::DbConn;
use crate::deliver::queue::post_system_email_in;
use crate::error::Result;
use crate::i18n::{catalogs, Arg};
use crate::ids::RequestId;
use crate::schedule::TICK_JOB;

/// Digests of one channel and frequency in the last 24 hours.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DigestCounts {
    /// Periods that came due (runs recorded by a tick).
    pub due: i64,
    /// Of those, digests posted to the queue.
    pub posted: i64,
    /// Of those, nothing to say (and not sent empty): nothing posted.
    pub empty: i64,
    /// Digest deliveries that succeeded.
    pub sent: i64,
    /// Digest deliveries given up (retries spent, permanent refusal, no
    /// address).
    pub failed: i64,
}

/// The oldest request not yet finished (pending or sending).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Oldest {
    pub request_id: i64,
    pub status: String,
    pub requested_at: DateTime<Utc>,
}

/// The latest digest that went out, and how late.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LatestRun {
    pub subscription_id: i64,
    pub period: String,
    pub scheduled_at: DateTime<Utc>,
    /// Its first successful delivery.
    pub sent_at: DateTime<Utc>,
    /// `sent_at − scheduled_at`, in seconds.
    pub late_seconds: i64,
}

/// One `nt_job` lease: who holds it now (none between runs) and when it last
/// ran.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LeaseRow {
    pub job: String,
    pub holder: Option<String>,
    pub last_run: Option<DateTime<Utc>>,
}

/// The report: every number it states.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    pub version: String,
    pub at: DateTime<Utc>,
    /// The start of the 24 hours counted.
    pub since: DateTime<Utc>,
    /// By channel, then frequency.
    pub digests: BTreeMap<String, BTreeMap<String, DigestCounts>>,
    pub bounces_hard: i64,
    pub bounces_soft: i64,
    /// Addresses disabled by a bounce received in the 24 hours.
    pub addresses_disabled: i64,
    /// Queue rows that failed at least once and will be tried again (of
    /// requests still sending: a cancelled one retries nothing).
    pub retries_pending: i64,
    pub oldest_unfinished: Option<Oldest>,
    /// When the tick last finished.
    pub latest_tick: Option<DateTime<Utc>>,
    pub latest_run: Option<LatestRun>,
    pub leases: Vec<LeaseRow>,
}

fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}

/// The report as of `now`: the 24 hours before it, and the state at it.
pub fn read(conn: &mut DbConn, now: DateTime<Utc>) -> Result<Report> {
    let since = now - Duration::hours(24);
    let (since_n, now_n) = (since.naive_utc(), now.naive_utc());
    let digests = digest_counts(conn, since_n, now_n)?;
    let bounces: Vec<(bool, i64)> = email_bounces::table
        .filter(email_bounces::received_at.gt(since_n))
        .group_by(email_bounces::hard)
        .select((email_bounces::hard, count_star()))
        .load(conn)?;
    let bounced = |hard: bool| bounces.iter().filter(|b| b.0 == hard).map(|b| b.1).sum();
    let addresses_disabled: i64 = contact_points::table
        .filter(contact_points::disabled.eq(true))
        .filter(
            contact_points::id.eq_any(
                email_bounces::table
                    .filter(email_bounces::received_at.gt(since_n))
                    .select(email_bounces::contact_point_id),
            ),
        )
        .count()
        .get_result(conn)?;
    let retries_pending: i64 = nt_queue::table
        .inner_join(nt_requests::table)
        .filter(nt_requests::status.eq(RequestStatus::Sending.as_str()))
        .filter(nt_queue::is_successful.eq(false))
        .filter(nt_queue::gave_up.eq(false))
        .filter(nt_queue::retry_count.gt(0))
        .count()
        .get_result(conn)?;
    let leases: Vec<LeaseRow> = nt_job::table
        .select((nt_job::job_name, nt_job::owner, nt_job::last_run_date))
        .order(nt_job::job_name)
        .load::<(String, Option<String>, Option<NaiveDateTime>)>(conn)?
        .into_iter()
        .map(|(job, holder, last)| LeaseRow {
            job,
            holder,
            last_run: last.map(utc),
        })
        .collect();
    let latest_tick = leases
        .iter()
        .find(|l| l.job == TICK_JOB)
        .and_then(|l| l.last_run);
    Ok(Report {
        version: env!("CARGO_PKG_VERSION").to_string(),
        at: now,
        since,
        digests,
        bounces_hard: bounced(true),
        bounces_soft: bounced(false),
        addresses_disabled,
        retries_pending,
        oldest_unfinished: oldest_unfinished(conn)?,
        latest_tick,
        latest_run: latest_run(conn, since_n)?,
        leases,
    })
}

/// Per channel and frequency, the digests due, posted, empty, sent and
/// failed in `(since, now]`.
fn digest_counts(
    conn: &mut DbConn,
    since_n: NaiveDateTime,
    now_n: NaiveDateTime,
) -> Result<BTreeMap<String, BTreeMap<String, DigestCounts>>> {
    let mut digests: BTreeMap<String, BTreeMap<String, DigestCounts>> = BTreeMap::new();
    let runs: Vec<(String, String, Option<i64>)> = subscription_runs::table
        .inner_join(subscriptions::table)
        .filter(subscription_runs::ran_at.gt(since_n))
        .filter(subscription_runs::ran_at.le(now_n))
        .select((
            subscriptions::channels,
            subscriptions::frequency,
            subscription_runs::request_id,
        ))
        .load(conn)?;
    for (channels, frequency, request) in runs {
        for ch in channels.split(',').filter(|s| !s.is_empty()) {
            let d = digests
                .entry(ch.to_string())
                .or_default()
                .entry(frequency.clone())
                .or_default();
            d.due += 1;
            match request {
                Some(_) => d.posted += 1,
                None => d.empty += 1,
            }
        }
    }
    // Finished digest rows whose last attempt (or, given up with no
    // attempt, whose turn) fell in the 24 hours.
    let finished: Vec<(String, String, bool)> = nt_queue::table
        .inner_join(nt_requests::table)
        .inner_join(
            subscriptions::table.on(nt_requests::subscription_id.eq(subscriptions::id.nullable())),
        )
        .filter(nt_requests::kind.eq("digest"))
        .filter(nt_queue::is_successful.or(nt_queue::gave_up))
        .filter(
            nt_queue::last_attempt_at
                .gt(since_n)
                .or(nt_queue::last_attempt_at
                    .is_null()
                    .and(nt_queue::next_attempt_at.gt(since_n))),
        )
        .select((
            nt_queue::channel,
            subscriptions::frequency,
            nt_queue::is_successful,
        ))
        .load(conn)?;
    for (ch, frequency, ok) in finished {
        let d = digests.entry(ch).or_default().entry(frequency).or_default();
        match ok {
            true => d.sent += 1,
            false => d.failed += 1,
        }
    }
    Ok(digests)
}

/// The oldest request not yet finished.
fn oldest_unfinished(conn: &mut DbConn) -> Result<Option<Oldest>> {
    Ok(nt_requests::table
        .filter(nt_requests::status.eq_any(RequestStatus::strs(RequestStatus::OPEN)))
        .filter(nt_requests::fulfill_date.is_null())
        .order((
            nt_requests::request_date.asc(),
            nt_requests::request_id.asc(),
        ))
        .select((
            nt_requests::request_id,
            nt_requests::status,
            nt_requests::request_date,
        ))
        .first::<(i64, String, NaiveDateTime)>(conn)
        .optional()?
        .map(|(id, status, t)| Oldest {
            request_id: id,
            status,
            requested_at: utc(t),
        }))
}

/// Of the digests delivered in the 24 hours since `since`, the latest due
/// (the first delivered of that period's): when it was due, when it went
/// out.
fn latest_run(conn: &mut DbConn, since: NaiveDateTime) -> Result<Option<LatestRun>> {
    let row: Option<(i64, String, NaiveDateTime, NaiveDateTime)> = subscription_runs::table
        .inner_join(
            delivery_log::table.on(delivery_log::request_id
                .nullable()
                .eq(subscription_runs::request_id)),
        )
        .filter(subscription_runs::ran_at.gt(since))
        .filter(delivery_log::outcome.eq(LogOutcome::Sent.as_str()))
        .order((
            subscription_runs::scheduled_at.desc(),
            delivery_log::attempted_at.asc(),
        ))
        .select((
            subscription_runs::subscription_id,
            subscription_runs::period,
            subscription_runs::scheduled_at,
            delivery_log::attempted_at,
        ))
        .first(conn)
        .optional()?;
    Ok(row.map(|(sub, period, scheduled, sent)| LatestRun {
        subscription_id: sub,
        period,
        scheduled_at: utc(scheduled),
        sent_at: sent.and_utc(),
        late_seconds: (sent - scheduled).num_seconds(),
    }))
}

/// The local date the report of `now` belongs to, when it is due: `[ops]
/// report_to` set and the local hour in `report_tz` at or past
/// `report_hour`.
pub fn due_date(cfg: &Config, now: DateTime<Utc>) -> Result<Option<String>> {
    let ops = &cfg.ops;
    if ops.report_to.is_empty() {
        return Ok(None);
    }
    let local = now.with_timezone(&ops.tz()?);
    if local.hour() < ops.report_hour {
        return Ok(None);
    }
    Ok(Some(local.date_naive().format("%Y-%m-%d").to_string()))
}

fn posted_on(conn: &mut DbConn, date: &str) -> Result<bool> {
    Ok(ops_reports::table
        .find(date)
        .count()
        .get_result::<i64>(conn)?
        > 0)
}

/// Posts today's report to `[ops] report_to` when it is due (see
/// [`due_date`]) and this local day has none yet; the request and the
/// day's `ops_reports` row are written in one transaction, so a second
/// tick the same day, or a second process, posts nothing. Called where the
/// tick is driven (`serve`, `digestd tick`); the queue delivers it.
pub fn post_if_due(
    conn: &mut DbConn,
    cfg: &Config,
    now: DateTime<Utc>,
) -> Result<Option<RequestId>> {
    let Some(date) = due_date(cfg, now)? else {
        return Ok(None);
    };
    if posted_on(conn, &date)? {
        return Ok(None);
    }
    let report = read(conn, now)?;
    let lang = cfg.i18n.operator_lang();
    let subject = catalogs().format(lang, "report-subject", &[("date", Arg::Str(&date))]);
    let written = conn.write_tx(|c| {
        if posted_on(c, &date)? {
            return Ok(None);
        }
        let id = post_system_email_in(
            c,
            &cfg.ops.report_to,
            &subject,
            &report.text(lang),
            cfg.email.max_retries,
            now,
        )?;
        diesel::insert_into(ops_reports::table)
            .values((
                ops_reports::local_date.eq(&date),
                ops_reports::request_id.eq(id.0),
                ops_reports::created_at.eq(now.naive_utc()),
            ))
            .execute(c)?;
        Ok(Some(id))
    });
    match written {
        // Another process wrote the day's row between the check and the
        // insert (PostgreSQL: the key's unique violation); ours rolled back.
        Err(_) if posted_on(conn, &date)? => Ok(None),
        other => other,
    }
}
