//! `digestd inbound`: one message on stdin. A delivery status notification
//! (RFC 3464: `multipart/report; report-type=delivery-status`) is parsed
//! with mail-parser, each failed recipient's bounce is recorded against its
//! email contact point, and an address is disabled after
//! `[email] bounce_limit` hard bounces; any other message is ignored.
//!
//! Hard: `Action: failed` with a 5.x.x status. Soft: a 4.x.x status or
//! `Action: delayed`; recorded, not counted.
//!
//! A bounce counts only when the report quotes the Message-ID of a message
//! digestd made for the party that owns the address (its returned headers,
//! or References): ids carry a MAC under the installation's key
//! ([`crate::msgid`]), so nobody who can merely mail the bounce
//! address can disable anyone. One message counts once, however many
//! reports or recipient blocks name it. Addresses match as stored: the
//! local part exactly, the domain in any case. An address disabled by
//! hand stays disabled whatever arrives.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use mail_parser::{MessageParser, MimeHeaders};
use serde::Serialize;

use crate::db::schema::{contact_points, email_bounces};
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::msgid::{MessageKey, MessageRef};
use digestd_engine::events::{self, Event, Kind};

diesel::define_sql_function!(fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text);

/// Largest inbound message read.
pub const MAX_INBOUND: usize = 10 << 20;

/// One recipient block of a DSN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bounce {
    pub address: String,
    pub action: String,
    pub status: String,
    pub diagnostic: Option<String>,
    pub hard: bool,
}

/// What `inbound` did with one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Inbound {
    /// Not a delivery status notification.
    Ignored(String),
    /// Bounces recorded: (address, hard, disabled now), and why the other
    /// recipient blocks were not (one line each, escaped).
    Recorded {
        recorded: Vec<(String, bool, bool)>,
        ignored: Vec<String>,
    },
}

/// The failed or delayed recipients of a DSN, and the messages of ours it
/// quotes; `None` when `raw` is not one.
pub(crate) fn parse_report(raw: &[u8], key: &MessageKey) -> Option<(Vec<Bounce>, Vec<MessageRef>)> {
    let bounces = parse_dsn(raw)?;
    Some((bounces, key.find_all(&String::from_utf8_lossy(raw))))
}

/// The failed or delayed recipients of a DSN; `None` when `raw` is not one.
pub(crate) fn parse_dsn(raw: &[u8]) -> Option<Vec<Bounce>> {
    let msg = MessageParser::default().parse(raw)?;
    let ct = msg.content_type()?;
    let is_report = ct.ctype().eq_ignore_ascii_case("multipart")
        && ct
            .subtype()
            .is_some_and(|s| s.eq_ignore_ascii_case("report"))
        && ct
            .attribute("report-type")
            .is_some_and(|r| r.eq_ignore_ascii_case("delivery-status"));
    if !is_report {
        return None;
    }
    let raw_msg = msg.raw_message.as_ref();
    let part = msg.parts.iter().find(|p| {
        p.content_type().is_some_and(|c| {
            c.ctype().eq_ignore_ascii_case("message")
                && c.subtype().is_some_and(|s| {
                    s.eq_ignore_ascii_case("delivery-status")
                        || s.eq_ignore_ascii_case("global-delivery-status")
                })
        })
    })?;
    let body = raw_msg.get(part.offset_body as usize..part.offset_end as usize)?;
    Some(parse_fields(&String::from_utf8_lossy(body)))
}

/// The per-recipient blocks of a `message/delivery-status` body: groups of
/// `Field: value` lines separated by blank lines; the first group is about
/// the message, the rest about one recipient each.
fn parse_fields(body: &str) -> Vec<Bounce> {
    let mut out = Vec::new();
    let body = body.replace("\r\n", "\n");
    for block in body.split("\n\n") {
        // Unfold continuation lines.
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in block.lines() {
            if line.starts_with([' ', '\t']) {
                if let Some(last) = fields.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(line.trim());
                }
            } else if let Some((k, v)) = line.split_once(':') {
                fields.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let get = |k: &str| fields.iter().find(|f| f.0 == k).map(|f| f.1.clone());
        let Some(recipient) = get("final-recipient").or_else(|| get("original-recipient")) else {
            continue;
        };
        // "rfc822; user@example.com"
        let address = recipient
            .split_once(';')
            .map_or(recipient.as_str(), |(_, a)| a)
            .trim()
            .trim_matches(|c| c == '<' || c == '>')
            .to_string();
        let action = get("action").unwrap_or_default().to_ascii_lowercase();
        let status = get("status").unwrap_or_default();
        let status =
            crate::validate::escape_for_line(status.split_whitespace().next().unwrap_or(""));
        if !matches!(action.as_str(), "failed" | "delayed") {
            continue;
        }
        let hard = action == "failed" && status.starts_with('5');
        out.push(Bounce {
            address,
            action,
            status,
            // Stored and printed: control characters (a NUL) escaped.
            diagnostic: get("diagnostic-code").map(|d| {
                crate::validate::escape_for_line(&d.chars().take(1000).collect::<String>())
            }),
            hard,
        });
    }
    out
}

/// True when `stored` is `reported`: the local part as written, the
/// domain in any case.
fn same_address(stored: &str, reported: &str) -> bool {
    match (stored.rsplit_once('@'), reported.rsplit_once('@')) {
        (Some((l1, d1)), Some((l2, d2))) => l1 == l2 && d1.eq_ignore_ascii_case(d2),
        _ => false,
    }
}

/// Reads one message: records the bounces it proves, disabling an address
/// at its `limit`-th hard bounce.
pub fn inbound(conn: &mut DbConn, raw: &[u8], limit: u32, now: DateTime<Utc>) -> Result<Inbound> {
    if raw.len() > MAX_INBOUND {
        return Err(Error::invalid(format!(
            "inbound message is larger than {MAX_INBOUND} bytes"
        )));
    }
    let key = MessageKey::load(conn)?;
    let Some((bounces, refs)) = parse_report(raw, &key) else {
        return Ok(Inbound::Ignored(
            "not a delivery status notification".into(),
        ));
    };
    if bounces.is_empty() {
        return Ok(Inbound::Ignored(
            "a delivery status notification with no failed recipient".into(),
        ));
    }
    conn.write_tx(|c| {
        let (mut recorded, mut ignored) = (Vec::new(), Vec::new());
        for b in &bounces {
            let shown = crate::validate::escape_for_line(&b.address);
            // An address no contact point can have (a NUL, a space) is
            // nobody's, and must not reach the database as a query.
            if crate::validate::email(&b.address).is_err() {
                ignored.push(format!("{shown} is no address of ours"));
                continue;
            }
            let candidates: Vec<(i64, i64, String, i32, bool)> = contact_points::table
                .filter(contact_points::channel.eq("email"))
                .filter(lower(contact_points::address).eq(lower(&b.address)))
                .select((
                    contact_points::id,
                    contact_points::party_id,
                    contact_points::address,
                    contact_points::bounce_count,
                    contact_points::disabled,
                ))
                .load(c)?;
            let mine: Vec<_> = candidates
                .into_iter()
                .filter(|cp| same_address(&cp.2, &b.address))
                .collect();
            if mine.is_empty() {
                ignored.push(format!("{shown} is no address of ours"));
                continue;
            }
            let matched = mine
                .iter()
                .find_map(|cp| refs.iter().find(|r| r.party == cp.1).map(|r| (cp, r)));
            let Some(((id, party, address, count, was_disabled), r)) = matched else {
                ignored.push(format!(
                    "{shown}: the report quotes no message digestd sent to it"
                ));
                continue;
            };
            let message_ref = r.key();
            let seen = email_bounces::table
                .filter(email_bounces::contact_point_id.eq(id))
                .filter(email_bounces::message_ref.eq(&message_ref))
                .count()
                .get_result::<i64>(c)?;
            if seen > 0 {
                ignored.push(format!("{shown}: this message's bounce is already counted"));
                continue;
            }
            diesel::insert_into(email_bounces::table)
                .values((
                    email_bounces::contact_point_id.eq(id),
                    email_bounces::received_at.eq(now.naive_utc()),
                    email_bounces::hard.eq(b.hard),
                    email_bounces::status_code.eq(&b.status),
                    email_bounces::diagnostic.eq(&b.diagnostic),
                    email_bounces::message_ref.eq(&message_ref),
                ))
                .execute(c)?;
            let mut disabled_now = false;
            if b.hard {
                let n = count + 1;
                // Never re-enables: disabled by hand stays disabled.
                disabled_now = !was_disabled && n >= limit as i32;
                diesel::update(contact_points::table.find(id))
                    .set((
                        contact_points::bounce_count.eq(n),
                        contact_points::disabled.eq(*was_disabled || disabled_now),
                    ))
                    .execute(c)?;
                if disabled_now {
                    tracing::warn!(address = %shown, bounces = n, "address disabled after hard bounces");
                }
            }
            bounce_events(c, now, (*party, address), b, disabled_now)?;
            recorded.push((shown, b.hard, disabled_now));
        }
        Ok(Inbound::Recorded { recorded, ignored })
    })
}

/// Records `contact.bounced` for bounce `b` of `party`'s `address`, and
/// `contact.disabled` when it disabled the address.
fn bounce_events(
    c: &mut DbConn,
    now: DateTime<Utc>,
    (party, address): (i64, &str),
    b: &Bounce,
    disabled_now: bool,
) -> Result<()> {
    let bounced = Event::new(Kind::ContactBounced)
        .party(PartyId(party))
        .with("channel", "email")
        .with("address", address)
        .with("hard", b.hard)
        .with("status", b.status.as_str());
    let mut list = vec![bounced];
    if disabled_now {
        list.push(
            Event::new(Kind::ContactDisabled)
                .party(PartyId(party))
                .with("channel", "email")
                .with("address", address)
                .with("why", "bounces"),
        );
    }
    events::record_in_tx(c, now, &list)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const DSN: &str = "From: MAILER-DAEMON@mx.example.net\r\n\
To: digestd@localhost\r\n\
Subject: Undelivered Mail Returned to Sender\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/report; report-type=delivery-status;\r\n\
\tboundary=\"B1\"\r\n\
\r\n\
--B1\r\n\
Content-Type: text/plain; charset=us-ascii\r\n\
\r\n\
I'm sorry to have to inform you that your message could not be delivered.\r\n\
\r\n\
--B1\r\n\
Content-Type: message/delivery-status\r\n\
\r\n\
Reporting-MTA: dns; mx.example.net\r\n\
Arrival-Date: Mon, 23 Nov 2026 09:00:01 +0000 (UTC)\r\n\
\r\n\
Final-Recipient: rfc822; Ann@Example.com\r\n\
Original-Recipient: rfc822;ann@example.com\r\n\
Action: failed\r\n\
Status: 5.1.1\r\n\
Diagnostic-Code: smtp; 550 5.1.1 <ann@example.com>: Recipient address\r\n\
\x20   rejected: User unknown\r\n\
\r\n\
Final-Recipient: rfc822; bob@example.com\r\n\
Action: delayed\r\n\
Status: 4.4.1\r\n\
\r\n\
--B1\r\n\
Content-Type: text/rfc822-headers\r\n\
\r\n\
Subject: 3 changes in Calendar\r\n\
\r\n\
--B1--\r\n";

    #[test]
    fn a_dsn_gives_each_recipient_with_its_status() {
        let got = parse_dsn(DSN.as_bytes()).expect("a DSN");
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].address.as_str(), got[0].status.as_str(), got[0].hard),
            ("Ann@Example.com", "5.1.1", true)
        );
        assert_eq!(
            got[0].diagnostic.as_deref(),
            Some("smtp; 550 5.1.1 <ann@example.com>: Recipient address rejected: User unknown")
        );
        assert_eq!((got[1].action.as_str(), got[1].hard), ("delayed", false));
    }

    #[test]
    fn addresses_match_local_part_exactly_and_domain_in_any_case() {
        assert!(same_address(
            "Bob.Smith@example.com",
            "Bob.Smith@EXAMPLE.com"
        ));
        assert!(!same_address(
            "Bob.Smith@example.com",
            "bob.smith@example.com"
        ));
        assert!(!same_address("bob@example.com", "bob@example.org"));
        assert!(!same_address("bob", "bob"));
    }

    #[test]
    fn other_mail_and_garbage_are_not_dsns() {
        assert!(parse_dsn(b"From: a@b\r\nSubject: hi\r\n\r\nhello\r\n").is_none());
        assert!(parse_dsn(b"").is_none());
        assert!(parse_dsn(&[0xff, 0xfe, 0x00, 0x80, 0x0a]).is_none());
        let report_of_other_kind = DSN.replace(
            "report-type=delivery-status",
            "report-type=disposition-notification",
        );
        assert!(parse_dsn(report_of_other_kind.as_bytes()).is_none());
    }
}
