//! `digestd user import`: `{"name", "tz", "email", "xmpp", "phone",
//! "week_start", "daily_hour", "locale", "quiet_hours"}` lines (only `name` and `tz`
//! required), upserted by name. New users go in three multi-row statements
//! per chunk (parties, users, contact points); a user who exists is
//! changed as `PUT /api/v1/users/{name}` changes one, and rescheduled.

use std::collections::HashMap;
use std::io::BufRead;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{read_lines, verdict};
use crate::db::DbConn;
use crate::error::Result;
use crate::ingest::Bad;
use crate::parties::{self, UserChanges, UserPut, ValidPut};
use crate::schedule::tick::reschedule_party;

/// Rows per multi-row statement.
const CHUNK: usize = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    name: String,
    tz: String,
    email: Option<String>,
    xmpp: Option<String>,
    phone: Option<String>,
    matrix: Option<String>,
    week_start: Option<String>,
    daily_hour: Option<i64>,
    locale: Option<String>,
    quiet_hours: Option<String>,
}

impl Line {
    fn put(self) -> UserPut {
        UserPut {
            name: self.name,
            changes: UserChanges {
                timezone: Some(self.tz),
                week_start: self.week_start,
                daily_hour: self.daily_hour,
                locale: self.locale,
                quiet_hours: self.quiet_hours,
            },
            email: self.email,
            xmpp: self.xmpp,
            phone: self.phone,
            matrix: self.matrix,
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Imported {
    pub created: usize,
    pub updated: usize,
}

/// Validated lines, ready to write.
pub struct Checked {
    puts: Vec<ValidPut>,
}

impl Checked {
    pub fn len(&self) -> usize {
        self.puts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.puts.is_empty()
    }
}

/// Reads and validates every line (fields, names repeated in the input,
/// names that are groups'); the one-line refusal names the bad ones.
pub fn check(conn: &mut DbConn, input: impl BufRead) -> Result<Checked> {
    let mut bad = Bad::default();
    let (lines, total) = read_lines::<Line>(input, &mut bad)?;
    let mut puts = Vec::with_capacity(lines.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut at = Vec::with_capacity(lines.len());
    for (n, line) in lines {
        match line.put().validate() {
            Ok(v) => {
                if let Some(first) = seen.insert(v.name().to_string(), n) {
                    bad.push(n, format!("{:?} is also on line {first}", v.name()));
                    continue;
                }
                at.push(n);
                puts.push(v);
            }
            Err(e) => bad.push(n, e.to_string()),
        }
    }
    let names: Vec<&str> = puts.iter().map(|p| p.name()).collect();
    let stored = parties::kinds_by_name(conn, &names)?;
    for (p, n) in puts.iter().zip(&at) {
        if let Some((_, kind)) = stored.get(p.name()) {
            if kind != "user" {
                bad.push(*n, format!("{:?} is a group, not a user", p.name()));
            }
        }
    }
    verdict(bad, total)?;
    Ok(Checked { puts })
}

/// Writes checked users in one transaction: the new ones in multi-row
/// statements of [`CHUNK`], the stored ones one by one (rescheduled, as
/// `user set` does). `progress` gets the running count.
pub fn write(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    checked: &Checked,
    progress: &mut dyn FnMut(usize),
) -> Result<Imported> {
    let now_n = now.naive_utc();
    conn.write_tx(|c| {
        let mut done = Imported::default();
        // Stored users whose quiet hours or zone the lines set: their held
        // notifications are released, as `user set` releases them.
        let mut moved = Vec::new();
        for chunk in checked.puts.chunks(CHUNK) {
            let names: Vec<&str> = chunk.iter().map(|p| p.name()).collect();
            let stored = parties::kinds_by_name(c, &names)?;
            let (old, new): (Vec<&ValidPut>, Vec<&ValidPut>) =
                chunk.iter().partition(|p| stored.contains_key(p.name()));
            if !new.is_empty() {
                parties::insert_users_in_tx(c, now_n, &new)?;
            }
            for p in &old {
                let (id, _) = parties::put_user_in_tx(c, now_n, p)?;
                reschedule_party(c, id)?;
                if p.changes().moves_quiet_hours() {
                    moved.push(id);
                }
            }
            done.created += new.len();
            done.updated += old.len();
            progress(done.created + done.updated);
        }
        crate::deliver::queue::release_held_in_tx(c, &moved)?;
        Ok(done)
    })
}
