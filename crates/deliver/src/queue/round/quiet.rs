//! Quiet hours in a round: the rows of notifications (not urgent) to a
//! recipient inside their quiet hours are taken out of the round before
//! it is planned and settled as held, not attempted: each waits, its
//! retries untouched, until the window ends ([`super::super::settle`]),
//! or until the recipient's quiet hours or zone change
//! ([`super::super::held`]).
//! Digests are never held. The recipients' windows are read once a round,
//! in one statement, and only for parties that have one.

use diesel::sql_types::BigInt;

use crate::db::{in_bound, IdList, Ids};

use super::super::held::HOLD_LOCK;
use super::push::{groups, settle_of};
use super::*;
use crate::schedule::quiet::{quiet_until, seconds_until, until_text};
use crate::validate::QuietHours;

#[derive(QueryableByName)]
struct Window {
    #[diesel(sql_type = BigInt)]
    party_id: i64,
    #[diesel(sql_type = Text)]
    quiet_hours: String,
    #[diesel(sql_type = Text)]
    timezone: String,
}

/// The quiet windows of `parties` that have one: a user's from `users`
/// (a group's members are users), a group's own from `group_prefs` (a
/// request to the group's address).
fn windows(conn: &mut DbConn, parties: &[i64]) -> Result<Vec<Window>> {
    // `$1` twice: one parameter on both back ends.
    let these = in_bound(conn, "$1");
    let sql = format!(
        "SELECT party_id, quiet_hours, timezone FROM users \
             WHERE quiet_hours <> '' AND party_id {these} \
         UNION ALL \
         SELECT party_id, quiet_hours, timezone FROM group_prefs \
             WHERE quiet_hours <> '' AND party_id {these}"
    );
    Ok(diesel::sql_query(sql)
        .bind::<IdList, _>(Ids(parties.to_vec()))
        .load(conn)?)
}

/// When each of `parties` that is quiet at `now` stops being quiet, and
/// in which zone.
fn quiet_ends(
    conn: &mut DbConn,
    parties: &[i64],
    now: DateTime<Utc>,
) -> Result<HashMap<i64, (DateTime<Utc>, chrono_tz::Tz)>> {
    let mut until = HashMap::new();
    for w in windows(conn, parties)? {
        let (Some(q), Ok(tz)) = (
            QuietHours::parse_stored(&w.quiet_hours),
            w.timezone.parse::<chrono_tz::Tz>(),
        ) else {
            continue;
        };
        if let Some(end) = quiet_until(&q, tz, now) {
            until.insert(w.party_id, (end, tz));
        }
    }
    Ok(until)
}

/// Takes the held rows out of `round.rows` (their order kept) and settles
/// them with `write`: one outcome per (sender, recipient, channel),
/// transient, not attempted, with the window's end as the wait and in the
/// reply text. Returns how many rows were held. When a first read finds
/// someone quiet, the windows are read again and the holds written in one
/// transaction under [`HOLD_LOCK`], so that a change of quiet hours either
/// comes before that read or finds the holds to release
/// ([`crate::queue::release_held_in_tx`]).
pub(super) fn take_held(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    round: &mut Round,
    write: impl FnOnce(&mut DbConn, &[Settle]) -> Result<()>,
) -> Result<usize> {
    let mut parties: Vec<i64> = round
        .rows
        .iter()
        .filter(|r| r.holdable && r.party_to > 0)
        .map(|r| r.party_to)
        .collect();
    parties.sort_unstable();
    parties.dedup();
    if parties.is_empty() || quiet_ends(conn, &parties, now)?.is_empty() {
        return Ok(0);
    }
    conn.write_tx(|c| {
        c.lock_in_tx(HOLD_LOCK)?;
        let until = quiet_ends(c, &parties, now)?;
        if until.is_empty() {
            return Ok(0);
        }
        let (held, kept): (Vec<Row>, Vec<Row>) = std::mem::take(&mut round.rows)
            .into_iter()
            .partition(|r| r.holdable && until.contains_key(&r.party_to));
        round.rows = kept;
        let settles: Vec<Settle> = groups(&held)
            .into_iter()
            .map(|(i, j)| {
                let (end, tz) = until[&held[i].party_to];
                let outcome = Outcome::Transient {
                    code: None,
                    text: format!("held: quiet hours until {}", until_text(tz, end)),
                    retry_after_secs: Some(seconds_until(now, end)),
                };
                Settle {
                    attempted: false,
                    ..settle_of(&held[i..j], outcome)
                }
            })
            .collect();
        write(c, &settles)?;
        Ok(held.len())
    })
}
