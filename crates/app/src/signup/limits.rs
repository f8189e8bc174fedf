//! The sign-up limits, counted in `signups` (so they hold across
//! processes and restarts):
//!
//! - `signup.per_address_per_day` verification messages per **mailbox** in
//!   a day: the address with its local part and domain case-folded and a
//!   `+tag` dropped ([`mailbox`]), so `Bomb@`, `bOmb@` and `bomb+1@` are one;
//! - `signup.per_client_per_hour` sign-ups per **client block** in an hour:
//!   the client's IPv4 /24 or IPv6 /64 ([`crate::validate::client_block`]);
//! - `signup.mail_per_hour` verification messages in an hour from the
//!   whole installation, whoever asks.
//!
//! Over any of them, [`check`] says when the oldest sign-up that holds the
//! limit leaves its window: the earliest instant a retry can pass.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use diesel::prelude::*;

use crate::config::SignupConfig;
use crate::db::schema::signups;
use crate::db::DbConn;
use crate::error::Result;

/// The key an address is counted under: local part and domain lower-cased,
/// the local part cut at its first `+` (a `+tag` reaches the same
/// mailbox). A local part that is all tag (`+x@…`) is kept whole.
pub fn mailbox(address: &str) -> String {
    let address = address.trim().to_lowercase();
    let Some((local, domain)) = address.rsplit_once('@') else {
        return address;
    };
    let base = local.split('+').next().unwrap_or(local);
    let local = if base.is_empty() { local } else { base };
    format!("{local}@{domain}")
}

/// The block a client is counted in: its /24 or /64, or the text given
/// when it is not an address (a router driven without a socket).
pub fn network(client: &str) -> String {
    match client.parse::<std::net::IpAddr>() {
        Ok(ip) => crate::validate::client_block(ip),
        Err(_) => client.to_string(),
    }
}

/// What one limit counts: which rows, over what window, how many at most.
struct Limit<'a> {
    column: Option<(Column, &'a str)>,
    window: Duration,
    max: u32,
}

#[derive(Clone, Copy)]
enum Column {
    Mailbox,
    Network,
}

/// When a sign-up for `mailbox` from `network` may pass, if a limit holds
/// it now: `None` when every limit has room. Runs inside the sign-up's
/// transaction, after [`lock`].
pub fn check(
    c: &mut DbConn,
    cfg: &SignupConfig,
    mailbox: &str,
    network: &str,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>> {
    let limits = [
        Limit {
            column: Some((Column::Mailbox, mailbox)),
            window: Duration::days(1),
            max: cfg.per_address_per_day,
        },
        Limit {
            column: Some((Column::Network, network)),
            window: Duration::hours(1),
            max: cfg.per_client_per_hour,
        },
        Limit {
            column: None,
            window: Duration::hours(1),
            max: cfg.mail_per_hour,
        },
    ];
    let mut until: Option<DateTime<Utc>> = None;
    for l in &limits {
        if let Some(t) = free_at(c, l, now)? {
            until = Some(until.map_or(t, |u| u.max(t)));
        }
    }
    Ok(until)
}

/// When limit `l` has room again, if it has none at `now`: of the `n`
/// rows in its window, the `(n - max + 1)`th oldest must leave it.
fn free_at(c: &mut DbConn, l: &Limit, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
    let since = (now - l.window).naive_utc();
    let rows = || {
        let q = signups::table
            .filter(signups::created_at.gt(since))
            .into_boxed();
        match l.column {
            Some((Column::Mailbox, v)) => q.filter(signups::mailbox.eq(v.to_string())),
            Some((Column::Network, v)) => q.filter(signups::network.eq(v.to_string())),
            None => q,
        }
    };
    let n: i64 = rows().count().get_result(c)?;
    let max = i64::from(l.max);
    if n < max {
        return Ok(None);
    }
    let oldest: Option<NaiveDateTime> = rows()
        .select(signups::created_at)
        .order(signups::created_at.asc())
        .offset(n - max)
        .first(c)
        .optional()?;
    Ok(Some(oldest.map_or(now, |t| t.and_utc()) + l.window))
}

/// Makes [`check`]'s count-then-insert in [`super::request`] one step.
/// Without it two sign-ups at once each count the rows committed before
/// either began and both insert, past the limit (24 at once to one
/// address with a limit of 3 all passed on PostgreSQL).
///
/// - **SQLite**: nothing to do. `write_tx` is `BEGIN IMMEDIATE`: the
///   write lock is taken before the first count, so writers run one after
///   another and each counts what the one before it committed.
/// - **PostgreSQL**: one transaction-level advisory lock for all sign-ups
///   (`pg_advisory_xact_lock`, freed at commit or rollback), taken before
///   counting. Under READ COMMITTED each count is a new snapshot, so the
///   next sign-up, once it has the lock, sees the one before it. One lock
///   rather than one per mailbox and block, because the installation-wide
///   cap counts every sign-up; sign-ups are rare and the lock is held for
///   a few statements. Chosen over SERIALIZABLE because that would fail
///   whole transactions (the verification message's queue rows included)
///   on unrelated conflicts and need a retry loop.
pub fn lock(c: &mut DbConn) -> Result<()> {
    // "dgsdsign" in ASCII: no other lock of digestd uses it.
    const KEY: i64 = 0x6467_7364_7369_676e;
    c.lock_key_in_tx(KEY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mailbox_is_one_however_it_is_written() {
        for a in [
            "bomb@example.org",
            "Bomb@example.org",
            "bOmb@EXAMPLE.org",
            "bomb+1@example.org",
            "BOMB+a+b@Example.Org",
        ] {
            assert_eq!(mailbox(a), "bomb@example.org", "{a}");
        }
        assert_eq!(mailbox("+x@example.org"), "+x@example.org");
        assert_ne!(mailbox("bomb.x@example.org"), "bomb@example.org");
        assert_ne!(mailbox("bomb@example.net"), "bomb@example.org");
    }

    #[test]
    fn clients_count_by_block() {
        assert_eq!(network("203.0.113.9"), "203.0.113.0/24");
        assert_eq!(network("2001:db8::5"), "2001:db8::/64");
        assert_eq!(network("unknown"), "unknown");
    }
}
