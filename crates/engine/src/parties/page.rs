//! Users a page at a time, for the operator's subscriber list: by name,
//! optionally only names containing a text, or only users with a disabled
//! address; keyset paging on the name (unique per party).

use diesel::prelude::*;

use crate::db::schema::{contact_points, parties, users};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::PartyId;

/// Which users to list.
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    /// Only names containing this (case as stored; `%` and `_` are literal).
    pub name_contains: Option<String>,
    /// Only users with at least one disabled contact point.
    pub disabled_only: bool,
    /// Only names after this one (the next page).
    pub after: Option<String>,
    /// At most this many (1–500).
    pub limit: i64,
}

/// Users `f` selects, by name: their ids and names.
pub fn page_users(conn: &mut DbConn, f: &UserFilter) -> Result<Vec<(PartyId, String)>> {
    let mut q = users::table
        .inner_join(parties::table)
        .select((parties::id, parties::name))
        .order(parties::name.asc())
        .limit(f.limit.clamp(1, 500))
        .into_boxed();
    if let Some(t) = &f.name_contains {
        let pattern = format!(
            "%{}%",
            t.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        q = q.filter(parties::name.like(pattern).escape('\\'));
    }
    if f.disabled_only {
        q = q.filter(
            parties::id.eq_any(
                contact_points::table
                    .filter(contact_points::disabled.eq(true))
                    .select(contact_points::party_id),
            ),
        );
    }
    if let Some(a) = &f.after {
        q = q.filter(parties::name.gt(a.clone()));
    }
    let rows: Vec<(i64, String)> = q.load(conn)?;
    Ok(rows.into_iter().map(|(id, n)| (PartyId(id), n)).collect())
}
