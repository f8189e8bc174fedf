//! `digestd group import`: `{"group", "member"}` lines. A group that does
//! not exist is created; the member (a user or a group) must exist; a line
//! that would make a group contain itself is refused. One transaction,
//! rolled back when any line is bad.

use std::io::BufRead;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{each_line, read_lines};
use crate::db::DbConn;
use crate::error::Result;
use crate::ingest::Bad;
use crate::parties;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    group: String,
    member: String,
}

/// Adds every line's member to its group; the number of lines.
pub fn import(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    input: impl BufRead,
    progress: &mut dyn FnMut(usize),
) -> Result<usize> {
    let mut bad = Bad::default();
    let (lines, total) = read_lines::<Line>(input, &mut bad)?;
    let now_n = now.naive_utc();
    let done = each_line(conn, &lines, bad, total, progress, |c, l| {
        parties::ensure_group_in_tx(c, now_n, &l.group)?;
        parties::add_member_in_tx(c, &l.group, &l.member)
    })?;
    Ok(done.len())
}
