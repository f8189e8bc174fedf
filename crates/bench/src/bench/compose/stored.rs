//! What the digests a tick posted store, by column, and the time to fill
//! their stored holes as the queue does before it sends.

use std::time::{Duration, Instant};

use crate::bench::sql::Dialect;
use crate::db::DbConn;
use crate::error::Result;

/// Bytes stored by the digests a tick posted, by column.
pub(super) struct Stored {
    pub digests: i64,
    /// (column, bytes in all).
    pub columns: Vec<(String, i64)>,
    /// Shared renderings written.
    pub bodies: i64,
    /// PostgreSQL: the rows' size as stored (`pg_column_size`, after TOAST
    /// compression) of the digests' messages and the shared renderings.
    pub on_disk: Option<i64>,
}

#[derive(diesel::QueryableByName)]
struct Sum {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// The text a digest stores: its request's subject and links, its
/// message's columns, and the shared renderings (`nt_bodies`, the bench's
/// only ones, counted whole and spread over the digests).
const STORED_COLUMNS: [(&str, &str); 11] = [
    ("nt_requests", "subject"),
    ("nt_requests", "unsubscribe_url"),
    ("nt_messages", "message"),
    ("nt_messages", "message_html"),
    ("nt_messages", "message_chat"),
    ("nt_messages", "message_sms"),
    ("nt_messages", "manage_url"),
    ("nt_messages", "full_url"),
    ("nt_bodies", "message"),
    ("nt_bodies", "message_html"),
    ("nt_bodies", "message_chat"),
];

/// What the digests posted (requests of kind `digest`) store.
pub(super) fn stored(c: &mut DbConn) -> Result<Stored> {
    use diesel::RunQueryDsl;
    let d = Dialect(c.backend());
    let where_ = |table: &str| match table {
        "nt_bodies" => "",
        _ => " WHERE request_id IN (SELECT request_id FROM nt_requests WHERE kind = 'digest')",
    };
    let mut sum =
        |sql: String| -> Result<i64> { Ok(diesel::sql_query(sql).get_result::<Sum>(c)?.n) };
    let n = sum("SELECT COUNT(*) AS n FROM nt_requests WHERE kind = 'digest'".into())?;
    let bodies = sum("SELECT COUNT(*) AS n FROM nt_bodies".into())?;
    let mut columns = Vec::new();
    for (table, col) in STORED_COLUMNS {
        let bytes = sum(format!(
            "SELECT CAST(COALESCE(SUM({}), 0) AS BIGINT) AS n FROM {table}{}",
            d.octets(col),
            where_(table)
        ))?;
        let short = match table {
            "nt_requests" => "request",
            "nt_messages" => "message",
            _ => "body",
        };
        columns.push((format!("{short}.{col}"), bytes));
    }
    let on_disk = match d.0 {
        crate::db::Backend::Postgres => Some(
            sum(format!(
                "SELECT CAST(COALESCE(SUM(pg_column_size(m.*)), 0) AS BIGINT) AS n FROM nt_messages m{}",
                where_("nt_messages")
            ))? + sum(
                "SELECT CAST(COALESCE(SUM(pg_column_size(b.*)), 0) AS BIGINT) AS n FROM nt_bodies b"
                    .into(),
            )?,
        ),
        crate::db::Backend::Sqlite => None,
    };
    Ok(Stored {
        digests: n,
        columns,
        bodies,
        on_disk,
    })
}

/// The posted digests' stored renderings filled with each one's links, as
/// the queue does before it sends: (digests filled, bytes out, time spent
/// filling alone). Each rendering is read once, not once per digest.
pub(super) fn fill_all(c: &mut DbConn) -> Result<(usize, usize, Duration)> {
    use crate::db::schema::{nt_bodies, nt_messages, nt_requests};
    use crate::digest::render::{fill, Links};
    use diesel::prelude::*;
    type Body = (i64, String, Option<String>, Option<String>);
    let bodies: std::collections::HashMap<i64, Body> = nt_bodies::table
        .select((
            nt_bodies::body_id,
            nt_bodies::message,
            nt_bodies::message_html,
            nt_bodies::message_chat,
        ))
        .load::<Body>(c)?
        .into_iter()
        .map(|b| (b.0, b))
        .collect();
    type Row = (Option<i64>, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Row> = nt_requests::table
        .inner_join(nt_messages::table)
        .filter(nt_messages::body_id.is_not_null())
        .select((
            nt_messages::body_id,
            nt_requests::unsubscribe_url,
            nt_messages::manage_url,
            nt_messages::full_url,
        ))
        .load(c)?;
    let t = Instant::now();
    let mut bytes = 0;
    for (body, unsub, manage, full) in &rows {
        let Some((_, text, html, chat)) = body.and_then(|b| bodies.get(&b)) else {
            continue;
        };
        let links = Links {
            manage_url: manage.as_deref().unwrap_or(""),
            unsubscribe_url: unsub.as_deref(),
            full_url: full.as_deref().unwrap_or(""),
        };
        bytes += fill(text, &links, false).len();
        for (b, is_html) in [(html, true), (chat, false)] {
            if let Some(b) = b {
                bytes += fill(b, &links, is_html).len();
            }
        }
    }
    Ok((rows.len(), bytes, t.elapsed()))
}
