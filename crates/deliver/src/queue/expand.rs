//! `expand_requests`: pending requests become queue rows.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::Bool;

use crate::db::schema::{contact_points, nt_queue, nt_requests, parties, subscription_optouts};
use crate::db::states::RequestStatus;
use crate::db::{insert_from_moved, BoundSql, DbConn, Moving};
use crate::error::Result;
use crate::ids::PartyId;
use crate::parties::{expand as expand_party, Channel};

/// The enabled addresses of `parties`, by party and channel: one read per
/// chunk, not one per member.
fn addresses(conn: &mut DbConn, parties: &[i64]) -> Result<HashMap<(i64, String), String>> {
    let mut out = HashMap::with_capacity(parties.len());
    for chunk in parties.chunks(5_000) {
        let rows: Vec<(i64, String, String)> = contact_points::table
            .filter(contact_points::party_id.eq_any(chunk))
            .filter(contact_points::disabled.eq(false))
            .select((
                contact_points::party_id,
                contact_points::channel,
                contact_points::address,
            ))
            .load(conn)?;
        out.extend(rows.into_iter().map(|(p, ch, a)| ((p, ch), a)));
    }
    Ok(out)
}

/// `expand_requests`: every pending request → one queue row per end user
/// (or the party itself when not expanded) and channel; `sending`.
///
/// Requests to a single party (a user, or a group not expanded) are
/// expanded set-based, a chunk at a time in one statement; a request
/// expanded over a group walks the group (nested, cycle-safe, each user
/// once) in its own transaction.
pub fn expand(conn: &mut DbConn, now: DateTime<Utc>) -> Result<usize> {
    let n = expand_some(conn, now, None, None)?.n;
    if n >= 1_000 {
        analyze(conn)?;
    }
    Ok(n)
}

/// The queue's next queries are planned from statistics taken before a
/// large expansion's rows existed: without fresh ones, a pass of 50,000
/// on tables last analyzed before the requests were posted spent 0.42 s
/// instead of 0.07 s on its expansion reads, and 0.31 s instead of 0.12 s
/// loading its rows (PostgreSQL). Their plans need only the gross shape of
/// these tables (how many rows, how many pending), so a small sample does
/// ([`crate::db::refresh_statistics`]).
pub(super) fn analyze(conn: &mut DbConn) -> Result<()> {
    crate::db::refresh_statistics(conn, &["nt_queue", "nt_requests"])
}

/// A queue row of a request over a group, to insert.
#[derive(Insertable)]
#[diesel(table_name = nt_queue, treat_none_as_default_value = false)]
struct MemberRow<'a> {
    request_id: i64,
    party_to: i64,
    channel: &'static str,
    address: Option<&'a str>,
    next_attempt_at: NaiveDateTime,
}

/// What [`expand_some`] did.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Expanded {
    /// Requests expanded.
    pub n: usize,
    /// While requests are left pending: the last (sender, recipient) pair
    /// expanded. Every pending request of that pair and of the pairs before
    /// it is expanded, so a round claims only up to it and each pair goes
    /// out whole. `None` when nothing is left pending.
    pub upto: Option<(i64, i64)>,
}

/// [`expand`] for the first `limit` pending requests (all when `None`),
/// taken in order of sender and recipient, and then the rest of the last
/// pair's, so that a pair is never split between two calls. Requests over a
/// group (whose pairs are known only once the group is walked) are all
/// expanded by the first call. A pass expands this way a round at a time,
/// so sending starts before the whole backlog is expanded.
///
/// With `claim` (a round's token and its claim's end), the new rows of
/// requests to single parties are written already claimed by that round:
/// one write a row instead of two. A group's rows are not: their pairs may
/// be later than the last one expanded, so the round claims them with the
/// older rows, pair by pair.
pub(super) fn expand_some(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    limit: Option<i64>,
    claim: Option<(&str, DateTime<Utc>)>,
) -> Result<Expanded> {
    let is_group = parties::kind.eq("group").and(nt_requests::expand_group);
    // `status = 'pending'` as a literal, not a bound parameter: a plan
    // prepared for any status could not use the partial indexes on pending
    // requests, and PostgreSQL moves a prepared statement to such a generic
    // plan after its fifth run.
    let is_pending = || diesel::dsl::sql::<Bool>("nt_requests.status = 'pending'");
    // Read through `nt_requests_pending_groups`: only pending requests
    // over groups, where every round used to read every pending request.
    let groups: Vec<(i64, i64, String)> = nt_requests::table
        .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
        .filter(is_pending())
        .filter(nt_requests::expand_group)
        .filter(parties::kind.eq("group"))
        .select((
            nt_requests::request_id,
            nt_requests::party_to,
            nt_requests::channels,
        ))
        .order(nt_requests::request_id.asc())
        .load(conn)?;
    let simple = || {
        nt_requests::table
            .inner_join(parties::table.on(parties::id.eq(nt_requests::party_to)))
            .filter(is_pending())
            .filter(diesel::dsl::not(is_group))
            .select((
                nt_requests::request_id,
                nt_requests::party_from,
                nt_requests::party_to,
            ))
            .order((
                nt_requests::party_from.asc(),
                nt_requests::party_to.asc(),
                nt_requests::request_id.asc(),
            ))
    };
    let mut pending: Vec<(i64, i64, i64)> = simple().limit(limit.unwrap_or(i64::MAX)).load(conn)?;
    let mut upto = None;
    if let (Some(limit), Some(&(last, from, to))) = (limit, pending.last()) {
        if pending.len() as i64 >= limit {
            // The rest of the last pair's requests.
            pending.extend(
                simple()
                    .filter(nt_requests::party_from.eq(from))
                    .filter(nt_requests::party_to.eq(to))
                    .filter(nt_requests::request_id.gt(last))
                    .load::<(i64, i64, i64)>(conn)?,
            );
            upto = Some((from, to));
        }
    }
    let n = groups.len() + pending.len();
    for chunk in pending.chunks(5_000) {
        let ids: Vec<i64> = chunk.iter().map(|r| r.0).collect();
        conn.write_tx(|c| move_to_queue(c, &ids, now, claim))?;
    }
    for (id, to, channels) in groups {
        conn.write_tx(|c| expand_group(c, now, id, PartyId(to), &channels))?;
    }
    Ok(Expanded { n, upto })
}

/// Writes the queue rows of request `id` over group `to`: one per member
/// (nested, each user once; none for a member who opted out of the
/// request's subscription) and channel, to the member's enabled address
/// (none: the row is given up when its turn comes), and marks the request
/// `sending`. The addresses are read for all members at once and the rows
/// written in bulk ([`crate::db::insert_rows!`]): a 10,000-member group
/// took 1.7 s on PostgreSQL when each member cost a read and an insert.
fn expand_group(
    c: &mut DbConn,
    now: DateTime<Utc>,
    id: i64,
    to: PartyId,
    channels: &str,
) -> Result<()> {
    let users = expand_party(c, to)?;
    // Members who opted out of the request's subscription get no row; the
    // others still do (`subscriptions::optouts`).
    let out: HashSet<i64> =
        subscription_optouts::table
            .inner_join(nt_requests::table.on(
                nt_requests::subscription_id.eq(subscription_optouts::subscription_id.nullable()),
            ))
            .filter(nt_requests::request_id.eq(id))
            .select(subscription_optouts::party_id)
            .load::<i64>(c)?
            .into_iter()
            .collect();
    let ids: Vec<i64> = users
        .iter()
        .map(|u| u.id.0)
        .filter(|u| !out.contains(u))
        .collect();
    if ids.is_empty() && !users.is_empty() {
        // Every member opted out: nothing is left to send, which is not a
        // failure. Finished `sent` with no rows (a request with no rows
        // otherwise ends `failed`: no one could be reached).
        tracing::info!(request = id, "every member opted out: nothing to send");
        diesel::update(nt_requests::table.find(id))
            .filter(nt_requests::status.eq(RequestStatus::Pending.as_str()))
            .set((
                nt_requests::status.eq(RequestStatus::Sent.as_str()),
                nt_requests::fulfill_date.eq(now.naive_utc()),
            ))
            .execute(c)?;
        return Ok(());
    }
    let addrs = addresses(c, &ids)?;
    let channels: Vec<Channel> = channels
        .split(',')
        .filter(|s| !s.is_empty())
        .map(Channel::parse)
        .collect::<Result<_>>()?;
    let at = now.naive_utc();
    let mut rows = Vec::with_capacity(ids.len() * channels.len());
    for u in &ids {
        for ch in &channels {
            rows.push(MemberRow {
                request_id: id,
                party_to: *u,
                channel: ch.as_str(),
                address: addrs
                    .get(&(*u, ch.as_str().to_string()))
                    .map(String::as_str),
                next_attempt_at: at,
            });
        }
    }
    crate::db::insert_rows!(c, nt_queue::table, &rows);
    diesel::update(nt_requests::table.find(id))
        .filter(nt_requests::status.eq(RequestStatus::Pending.as_str()))
        .set(nt_requests::status.eq(RequestStatus::Sending.as_str()))
        .execute(c)?;
    Ok(())
}

/// The `INSERT` of the queue rows of the requests `from` names as `r`
/// (`request_id`, `party_to`, `channels`): one per channel each names, to
/// the party's enabled address for it. Its parameters, bound by
/// [`bind_rows`]: `$1` the rows' first attempt, `$2` and `$3` their claim
/// (token and until, or NULL). They are the statement's first, so that
/// SQLite, which numbers `$N` parameters by first appearance, binds them as
/// PostgreSQL does.
fn queue_rows(from: &str) -> String {
    // Every channel, from the enum: one that is missing here would queue
    // nothing for the requests that name it.
    let names = Channel::ALL
        .iter()
        .enumerate()
        .map(|(i, c)| match i {
            0 => format!("SELECT '{}' AS name", c.as_str()),
            _ => format!("SELECT '{}'", c.as_str()),
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    format!(
        "INSERT INTO nt_queue (request_id, party_to, channel, address, retry_count, \
             is_successful, gave_up, next_attempt_at, claimed_by, claimed_until) \
         SELECT r.request_id, r.party_to, ch.name, cp.address, 0, false, false, $1, $2, $3 \
         FROM {from} \
         CROSS JOIN ({names}) ch \
         LEFT JOIN contact_points cp ON cp.party_id = r.party_to \
             AND cp.channel = ch.name AND NOT cp.disabled \
         WHERE (',' || r.channels || ',') LIKE ('%,' || ch.name || ',%')"
    )
}

/// `sql` (which holds [`queue_rows`]) with the rows' first attempt `now`
/// and their claim bound.
fn bind_rows(sql: String, now: DateTime<Utc>, claim: Option<(&str, DateTime<Utc>)>) -> BoundSql {
    use diesel::sql_types::{Nullable, Text, Timestamp};
    diesel::sql_query(sql)
        .into_boxed()
        .bind::<Timestamp, _>(now.naive_utc())
        .bind::<Nullable<Text>, _>(claim.map(|c| c.0.to_string()))
        .bind::<Nullable<Timestamp>, _>(claim.map(|c| c.1.naive_utc()))
}

/// [`expand_some`] for a pass without the queue lease, on PostgreSQL, so
/// that processes share a burst's delivery: up to `limit` pending requests
/// to single parties, taken from the end of the order the lease holder
/// takes them in (it expands from the start) and passing over those
/// another pass is moving (`FOR UPDATE SKIP LOCKED`), moved to `sending`
/// with their rows written claimed by `claim`, in one statement and one
/// transaction. Requests over groups are the lease holder's. Returns the
/// requests moved (never a cut: each request's rows are claimed whole,
/// though a pair may go out in two messages where the two ends meet).
pub(super) fn expand_unheld(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    limit: i64,
    claim: (&str, DateTime<Utc>),
) -> Result<Expanded> {
    #[derive(QueryableByName)]
    struct Moved {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    if !conn.backend().concurrent_writers() {
        return Ok(Expanded::default());
    }
    let sql = format!(
        "WITH pick AS ( \
             SELECT q.request_id FROM nt_requests q \
             JOIN parties p ON p.id = q.party_to \
             WHERE q.status = 'pending' AND NOT (q.expand_group AND p.kind = 'group') \
             ORDER BY q.party_from DESC, q.party_to DESC, q.request_id DESC \
             LIMIT $4 FOR UPDATE OF q SKIP LOCKED), \
         r AS (UPDATE nt_requests SET status = 'sending' \
             WHERE request_id IN (SELECT request_id FROM pick) AND status = 'pending' \
             RETURNING request_id, party_to, channels), \
         ins AS ({}) \
         SELECT count(*) AS n FROM r",
        queue_rows("r")
    );
    let q = bind_rows(sql, now, Some(claim)).bind::<diesel::sql_types::BigInt, _>(limit);
    let moved: Moved = conn.write_tx(|c| Ok(q.get_result(c)?))?;
    Ok(Expanded {
        n: moved.n as usize,
        upto: None,
    })
}

/// Moves the requests `ids` that are still pending to `sending` and writes
/// their queue rows: one per channel the request names, to the party's
/// enabled address for it (none: the row is given up when its turn
/// comes). `now` is the rows' first attempt, `claim` their claim (token
/// and until), if any. A request another pass moved first gets no rows
/// here ([`crate::db::insert_from_moved`]).
fn move_to_queue(
    c: &mut DbConn,
    ids: &[i64],
    now: DateTime<Utc>,
    claim: Option<(&str, DateTime<Utc>)>,
) -> Result<()> {
    let moving = Moving {
        table: "nt_requests",
        key: "request_id",
        ids,
        cond: "r.status = 'pending'",
        set: "status = 'sending'",
        returning: "request_id, party_to, channels",
    };
    // `queue_rows`'s three parameters first.
    insert_from_moved(c, &moving, &queue_rows, 3, &|sql| {
        bind_rows(sql, now, claim)
    })?;
    Ok(())
}
