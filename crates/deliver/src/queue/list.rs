//! Reading the queue for the operator's pages: requests filtered by
//! status, sender and recipient, newest first, a page at a time (keyset on
//! the id, so a page costs the same deep in the history); and every
//! delivery attempt of one request from `delivery_log`.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::{delivery_log, nt_requests, parties};
use crate::db::states::RequestStatus;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::{PartyId, RequestId};

/// Which requests to list.
#[derive(Debug, Clone, Default)]
pub struct RequestFilter {
    pub status: Option<RequestStatus>,
    pub sender: Option<PartyId>,
    pub recipient: Option<PartyId>,
    /// Only requests older than this one (the next page).
    pub before: Option<RequestId>,
    /// At most this many (1–500).
    pub limit: i64,
}

/// One request in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    pub id: i64,
    pub status: RequestStatus,
    pub kind: String,
    pub subject: String,
    pub from: String,
    pub to: String,
    pub requested_at: DateTime<Utc>,
    pub fulfilled_at: Option<DateTime<Utc>>,
}

/// The columns of `nt_requests` a [`RequestRow`] shows.
#[derive(Queryable, Selectable)]
#[diesel(table_name = nt_requests)]
struct Stored {
    request_id: i64,
    status: String,
    kind: String,
    subject: String,
    party_from: i64,
    party_to: i64,
    request_date: NaiveDateTime,
    fulfill_date: Option<NaiveDateTime>,
}

/// The requests `f` selects, newest first.
pub fn list(conn: &mut DbConn, f: &RequestFilter) -> Result<Vec<RequestRow>> {
    let mut q = nt_requests::table
        .select(Stored::as_select())
        .order(nt_requests::request_id.desc())
        .limit(f.limit.clamp(1, 500))
        .into_boxed();
    if let Some(s) = f.status {
        q = q.filter(nt_requests::status.eq(s.as_str()));
    }
    if let Some(p) = f.sender {
        q = q.filter(nt_requests::party_from.eq(p.0));
    }
    if let Some(p) = f.recipient {
        q = q.filter(nt_requests::party_to.eq(p.0));
    }
    if let Some(b) = f.before {
        q = q.filter(nt_requests::request_id.lt(b.0));
    }
    let rows: Vec<Stored> = q.load(conn)?;
    let statuses = rows
        .iter()
        .map(|r| {
            r.status
                .parse::<RequestStatus>()
                .map_err(|e| Error::Storage(e.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut ids: Vec<i64> = rows
        .iter()
        .flat_map(|r| [r.party_from, r.party_to])
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let names: HashMap<i64, String> = parties::table
        .filter(parties::id.eq_any(&ids))
        .select((parties::id, parties::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();
    let name = |id: i64| names.get(&id).cloned().unwrap_or_else(|| format!("#{id}"));
    Ok(rows
        .into_iter()
        .zip(statuses)
        .map(|(r, status)| RequestRow {
            id: r.request_id,
            status,
            kind: r.kind,
            subject: r.subject,
            from: name(r.party_from),
            to: name(r.party_to),
            requested_at: r.request_date.and_utc(),
            fulfilled_at: r.fulfill_date.map(|t| t.and_utc()),
        })
        .collect())
}

/// One delivery attempt, as `delivery_log` recorded it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    pub party: String,
    pub channel: String,
    pub address: Option<String>,
    pub attempted_at: DateTime<Utc>,
    pub outcome: String,
    pub reply_code: Option<i32>,
    pub reply_message: Option<String>,
}

/// Every attempt to deliver request `id`, oldest first (at most 1,000).
pub fn attempts(conn: &mut DbConn, id: RequestId) -> Result<Vec<Attempt>> {
    let rows: Vec<Logged> = delivery_log::table
        .inner_join(parties::table.on(parties::id.eq(delivery_log::party_to)))
        .filter(delivery_log::request_id.eq(id.0))
        .select(Logged::as_select())
        .order(delivery_log::id.asc())
        .limit(1000)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|r| Attempt {
            party: r.party,
            channel: r.channel,
            address: r.address,
            attempted_at: r.attempted_at.and_utc(),
            outcome: r.outcome,
            reply_code: r.reply_code,
            reply_message: r.reply_message,
        })
        .collect())
}

/// A `delivery_log` row with its recipient's name, as an [`Attempt`]
/// shows it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = delivery_log)]
struct Logged {
    #[diesel(select_expression = parties::name)]
    party: String,
    channel: String,
    address: Option<String>,
    attempted_at: NaiveDateTime,
    outcome: String,
    reply_code: Option<i32>,
    reply_message: Option<String>,
}

/// Requests by status, every status listed (zero when none): one
/// aggregate over `nt_requests`, finished requests included until purged.
pub fn count_by_status(conn: &mut DbConn) -> Result<Vec<(RequestStatus, i64)>> {
    let by: HashMap<String, i64> = nt_requests::table
        .group_by(nt_requests::status)
        .select((nt_requests::status, diesel::dsl::count_star()))
        .load::<(String, i64)>(conn)?
        .into_iter()
        .collect();
    Ok(RequestStatus::ALL
        .into_iter()
        .map(|s| (s, by.get(s.as_str()).copied().unwrap_or(0)))
        .collect())
}
