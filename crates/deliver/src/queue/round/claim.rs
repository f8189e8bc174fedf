//! A round's rows claimed: the next batch of due queue rows, a sender and
//! recipient pair at a time, under the pass's claim token.

use super::*;

/// Claims for the round `token` up to `limit` due rows (all when `None`)
/// that also meet `and` (more SQL conditions on `r`, the request, and
/// `q2`, the row) — not delivered, not given up, retries left, request
/// `sending`, next attempt due, not claimed by a live round — and returns
/// how many it claimed. Rows are taken in order of sender, recipient and
/// channel. On PostgreSQL they are picked `FOR UPDATE SKIP LOCKED`, so
/// rounds of several processes claim disjoint rows; SQLite has one writer
/// at a time. A claim lasts `claim_for`; a round that dies leaves it to
/// expire.
///
/// The unclaimed due rows are found first, from the `nt_queue_due` index,
/// and only then joined to their requests. Left to the planner, with
/// statistics older than the expansion just done, it walked the `sending`
/// requests and for each scanned every due row: 14–27 ms on PostgreSQL
/// for a first round of 1,000 that found nothing to claim, growing with
/// the square of the round (`docs/benchmarks.md`).
fn claim(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    claim_for: chrono::Duration,
    token: &str,
    only: Only<'_>,
    limit: Option<i64>,
) -> Result<usize> {
    use diesel::sql_types::{BigInt, Text, Timestamp};
    // Concurrent writers claim different rows.
    let lock = crate::db::skip_locked_sql(conn, "q2");
    // Placeholders are numbered in the order they first appear, so that
    // SQLite, which numbers `$N` parameters by first appearance, binds them
    // as PostgreSQL does.
    let (cond, next) = match only {
        Only::All => ("", 4),
        Only::UpTo(..) => (
            "AND (r.party_from < $4 OR (r.party_from = $4 AND q2.party_to <= $5))",
            6,
        ),
        Only::Group(..) => (
            "AND (r.party_from, q2.party_to, q2.channel) = ($4, $5, $6)",
            7,
        ),
    };
    let limit_sql = match limit {
        Some(_) => format!("LIMIT ${next}"),
        None => String::new(),
    };
    let sql = format!(
        "WITH due AS MATERIALIZED ( \
             SELECT request_id, party_to, channel FROM nt_queue \
             WHERE NOT is_successful AND NOT gave_up AND next_attempt_at <= $1 \
                 AND (claimed_until IS NULL OR claimed_until < $1)) \
         UPDATE nt_queue SET claimed_by = $2, claimed_until = $3 \
         WHERE (request_id, party_to, channel) IN ( \
             SELECT q2.request_id, q2.party_to, q2.channel \
             FROM due JOIN nt_queue q2 ON (q2.request_id, q2.party_to, q2.channel) \
                     = (due.request_id, due.party_to, due.channel) \
                 JOIN nt_requests r ON r.request_id = q2.request_id \
             WHERE r.status = 'sending' AND NOT q2.is_successful AND NOT q2.gave_up \
                 AND q2.retry_count < r.max_retries AND q2.next_attempt_at <= $1 \
                 AND (q2.claimed_until IS NULL OR q2.claimed_until < $1) {cond} \
             ORDER BY r.party_from, q2.party_to, q2.channel, q2.request_id \
             {limit_sql} {lock})"
    );
    type Backend = <DbConn as diesel::Connection>::Backend;
    let mut q = diesel::sql_query(sql)
        .into_boxed::<Backend>()
        .bind::<Timestamp, _>(now.naive_utc())
        .bind::<Text, _>(token.to_string())
        .bind::<Timestamp, _>((now + claim_for).naive_utc());
    match only {
        Only::All => {}
        Only::UpTo(from, to) => q = q.bind::<BigInt, _>(from).bind::<BigInt, _>(to),
        Only::Group(from, to, ch) => {
            q = q
                .bind::<BigInt, _>(from)
                .bind::<BigInt, _>(to)
                .bind::<Text, _>(ch.to_string())
        }
    }
    if let Some(n) = limit {
        q = q.bind::<BigInt, _>(n);
    }
    conn.write_tx(|c| Ok(q.execute(c)?))
}

/// Which due rows a claim takes.
#[derive(Debug, Clone, Copy)]
enum Only<'a> {
    /// Every due row.
    All,
    /// Rows of the pairs an expansion has finished: of senders before
    /// the first, or of the first and recipients up to the second.
    UpTo(i64, i64),
    /// The rows of one (sender, recipient, channel) group.
    Group(i64, i64, &'a str),
}

/// Claims a round and loads it. The lease holder first expands pending
/// requests, up to `limit` of them, into rows already claimed by the round
/// ([`expand_some`]; another process on PostgreSQL, [`expand_unheld`]);
/// then the round claims up to `limit` rows expanded earlier and due now (retries, or everything when it does not expand),
/// only of pairs the expansion has finished. When that limit cuts a
/// (sender, recipient, channel) group, the rest of its due rows are
/// claimed too, and new rows of the groups after the cut are left to a
/// later round with the older rows of their pairs: every message holds
/// all of its pair's due rows.
pub(super) fn claim_round(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    claim_for: chrono::Duration,
    limit: i64,
    leader: bool,
) -> Result<(Round, Expanded)> {
    let token = || uuid::Uuid::new_v4().simple().to_string();
    let fresh = token();
    let start = Instant::now();
    let ex = if leader {
        expand_some(conn, now, Some(limit), Some((&fresh, now + claim_for)))?
    } else {
        // PostgreSQL: from the other end (SQLite: nothing).
        expand_unheld(conn, now, limit, (&fresh, now + claim_for))?
    };
    // The older rows under a token of their own, so that where the limit
    // cut them can be found.
    let old = if ex.n > 0 { token() } else { fresh.clone() };
    let only = match ex.upto {
        Some((from, to)) => Only::UpTo(from, to),
        None => Only::All,
    };
    let expand = start.elapsed();
    let n = claim(conn, now, claim_for, &old, only, Some(limit))?;
    if n as i64 >= limit {
        if let Some((from, to, ch)) = last_group(conn, &old)? {
            let ch = Channel::parse(&ch)?.as_str();
            // The rest of that group's rows, and the fresh rows of the
            // groups after it left to a later round.
            claim(conn, now, claim_for, &old, Only::Group(from, to, ch), None)?;
            if old != fresh {
                unclaim_after(conn, &fresh, (from, to, ch))?;
            }
        }
    }
    let claimed = start.elapsed();
    let round = load(conn, &[fresh, old])?;
    tracing::debug!(
        ?expand,
        claim = ?(claimed - expand),
        load = ?(start.elapsed() - claimed),
        "queue round steps"
    );
    Ok((round, ex))
}

/// Gives back the rows claimed under `token` of the (sender, recipient,
/// channel) groups after `group`.
fn unclaim_after(conn: &mut DbConn, token: &str, group: (i64, i64, &str)) -> Result<usize> {
    use diesel::sql_types::{BigInt, Text};
    let (from, to, ch) = group;
    conn.write_tx(|c| {
        Ok(diesel::sql_query(
            "UPDATE nt_queue SET claimed_by = NULL, claimed_until = NULL \
             WHERE (request_id, party_to, channel) IN ( \
                 SELECT q2.request_id, q2.party_to, q2.channel FROM nt_queue q2 \
                 JOIN nt_requests r ON r.request_id = q2.request_id \
                 WHERE q2.claimed_by = $1 AND (r.party_from, q2.party_to, q2.channel) > ($2, $3, $4))",
        )
        .bind::<Text, _>(token)
        .bind::<BigInt, _>(from)
        .bind::<BigInt, _>(to)
        .bind::<Text, _>(ch)
        .execute(c)?)
    })
}

/// The last (sender, recipient, channel) group claimed under `token`.
fn last_group(conn: &mut DbConn, token: &str) -> Result<Option<(i64, i64, String)>> {
    Ok(nt_queue::table
        .inner_join(nt_requests::table)
        .filter(nt_queue::claimed_by.eq(token))
        .select((
            nt_requests::party_from,
            nt_queue::party_to,
            nt_queue::channel,
        ))
        .order((
            nt_requests::party_from.desc(),
            nt_queue::party_to.desc(),
            nt_queue::channel.desc(),
        ))
        .first(conn)
        .optional()?)
}
