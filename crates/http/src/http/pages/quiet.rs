//! The manage page's words on quiet hours, in the person's language: for each of the person's daily
//! and weekly digests whose hour falls inside them, a line saying it is
//! still sent (only notifications and hourly digests wait).

use std::collections::HashMap;

use crate::db::DbConn;
use crate::digest::words::Style;
use crate::ids::PartyId;
use crate::subscriptions;
use crate::validate::QuietHours;

use super::{view, Words};
use crate::i18n::Arg;

/// One line per running daily or weekly subscription of `party` whose
/// local hour is inside `quiet` (stored form; empty: none).
pub fn notes(
    c: &mut DbConn,
    t: &Words,
    party: PartyId,
    quiet: &str,
    names: &HashMap<i64, String>,
    style: &Style,
) -> crate::Result<Vec<String>> {
    let Some(q) = QuietHours::parse_stored(quiet) else {
        return Ok(Vec::new());
    };
    Ok(subscriptions::list_for_party(c, party)?
        .iter()
        .filter(|s| s.frequency != "hourly" && !s.paused)
        .filter_map(|s| {
            let h = s.hour_of_day?;
            q.holds_hour(u8::try_from(h).ok()?).then(|| {
                t.f(
                    "manage-quiet-inside",
                    &[
                        ("what", Arg::Str(&view::describe(t, s, names, style).what)),
                        ("hour", Arg::Str(&view::hour_label(style, h))),
                    ],
                )
            })
        })
        .collect())
}
