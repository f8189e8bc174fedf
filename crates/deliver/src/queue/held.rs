//! Rows held for quiet hours follow the quiet hours their recipient has
//! now. A round settles a held row with `nt_queue.held` set and the
//! window's end as its next attempt ([`super::round`]'s `quiet`); when a
//! person's or a group's quiet hours or zone change, the operation that
//! changes them calls [`release_held_in_tx`] in its own transaction, which
//! makes the party's held rows due at once, so the next pass sends them,
//! or holds them again until the new window's end. Rows waiting on a
//! retry's backoff after a real failure are not marked, and keep their
//! wait.
//!
//! A round reads its recipients' windows and writes its holds in one
//! transaction under [`HOLD_LOCK`], which a release takes too: on
//! PostgreSQL a change that commits while a round is holding either is
//! seen by the round's read, or finds the round's holds written and
//! releases them (SQLite's write transactions take turns anyway).

use diesel::prelude::*;
use diesel::sql_types::Text;

use crate::db::{in_bound, DbConn, IdList, Ids};
use crate::error::Result;
use crate::ids::PartyId;

/// The transaction lock ([`DbConn::lock_in_tx`]) that orders a round's
/// holds with the changes of quiet hours that release them.
pub(super) const HOLD_LOCK: &str = "queue.held";

/// The reply text of a released row until the next pass claims it.
pub const RELEASED: &str = "quiet hours changed: due now";

/// Makes the held rows to `parties` due at once, in the caller's
/// transaction (the one that changes their quiet hours or zone): each
/// row's next attempt becomes the instant it was held, its mark is
/// cleared and its reply says why it waits no longer. A group's own rows
/// are those to its address; its members' rows follow each member's own
/// quiet hours and are not touched. Returns how many rows were released.
pub fn release_held_in_tx(c: &mut DbConn, parties: &[PartyId]) -> Result<usize> {
    if parties.is_empty() {
        return Ok(0);
    }
    c.lock_in_tx(HOLD_LOCK)?;
    // The instant it was held (its last settle), not the clock's: no
    // process's clock is read here, and any pass after the change finds
    // the row due.
    let sql = format!(
        "UPDATE nt_queue SET next_attempt_at = last_attempt_at, held = false, \
             smtp_reply_message = $1 \
         WHERE held AND NOT is_successful AND NOT gave_up \
             AND last_attempt_at < next_attempt_at AND party_to {}",
        in_bound(c, "$2")
    );
    Ok(diesel::sql_query(sql)
        .bind::<Text, _>(RELEASED)
        .bind::<IdList, _>(Ids(parties.iter().map(|p| p.0).collect()))
        .execute(c)?)
}
