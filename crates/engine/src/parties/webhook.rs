//! A webhook contact point: an https URL and the secret every message
//! posted to it is signed with (Standard Webhooks: `whsec_` and the base64
//! of 24 to 32 random bytes), kept in `contact_points.secret`. The secret
//! is made when the URL is set (or given by the operator), shown once, and
//! replaced by [`rotate_webhook_secret`]; listings never show it.

use std::collections::HashMap;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use rand::RngCore;

use super::{contact_points as points_of, find, insert_contact, Channel, ContactPoint};
use crate::db::schema::contact_points;
use crate::db::DbConn;
use crate::error::{Error, Result};
use crate::events::{self, Event, Kind};
use crate::validate::{self, UrlPolicy};

/// The prefix of a Standard Webhooks secret.
const PREFIX: &str = "whsec_";

/// A new secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_webhook_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "{PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The key a secret stands for: the bytes its base64 after `whsec_`
/// decodes to, 24 to 32 of them.
pub fn webhook_secret_bytes(secret: &str) -> Result<Vec<u8>> {
    let bad = |why: &str| Error::invalid(format!("invalid webhook secret: {why}"));
    let b64 = secret
        .strip_prefix(PREFIX)
        .ok_or_else(|| bad("it must start with whsec_"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| bad("what follows whsec_ is not base64"))?;
    if !(24..=32).contains(&bytes.len()) {
        return Err(bad(&format!(
            "it holds {} bytes; use 24 to 32 random bytes",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// `secret` when it is a good one, a new one when none is given.
fn given_or_new(secret: Option<&str>) -> Result<String> {
    match secret {
        Some(s) => webhook_secret_bytes(s).map(|_| s.to_string()),
        None => Ok(new_webhook_secret()),
    }
}

/// Sets `party`'s webhook to `url` (checked against `policy`, the
/// operator's `[webhook]` settings) with `secret`, or a new one when none
/// is given: enabled, not verified, bounces reset; added when the party
/// has none. Returns the contact point and its secret, to be shown once.
pub fn set_webhook(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    party: &str,
    url: &str,
    secret: Option<&str>,
    policy: UrlPolicy,
) -> Result<(ContactPoint, String)> {
    let secret = given_or_new(secret)?;
    let point = set_url(
        conn,
        now,
        party,
        Channel::Webhook,
        url,
        Some(&secret),
        policy,
    )?;
    Ok((point, secret))
}

/// Sets `party`'s contact point on a preset channel (Slack, Discord,
/// Teams, ntfy) to `url`, checked against `policy` as a webhook's is; no
/// secret: the URL is the credential.
pub fn set_preset(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    party: &str,
    channel: Channel,
    url: &str,
    policy: UrlPolicy,
) -> Result<ContactPoint> {
    if !channel.is_preset() {
        return Err(Error::invalid(format!(
            "{} is not a webhook preset",
            channel.as_str()
        )));
    }
    set_url(conn, now, party, channel, url, None, policy)
}

/// `party`'s contact point on URL channel `channel` set to `url`, with
/// `secret`: enabled, not verified, bounces reset; added when missing.
fn set_url(
    conn: &mut DbConn,
    now: DateTime<Utc>,
    party: &str,
    channel: Channel,
    url: &str,
    secret: Option<&str>,
    policy: UrlPolicy,
) -> Result<ContactPoint> {
    let url = validate::webhook_url(url, policy)?;
    let (id, _) = find(conn, party)?;
    let mine = || {
        contact_points::table
            .filter(contact_points::party_id.eq(id.0))
            .filter(contact_points::channel.eq(channel.as_str()))
    };
    conn.write_tx(|c| {
        let n = diesel::update(mine())
            .set((
                contact_points::address.eq(&url),
                contact_points::secret.eq(secret),
                contact_points::verified.eq(false),
                contact_points::disabled.eq(false),
                contact_points::bounce_count.eq(0),
            ))
            .execute(c)?;
        if n == 0 {
            insert_contact(c, id, channel, &url, now.naive_utc())?;
            diesel::update(mine())
                .set(contact_points::secret.eq(secret))
                .execute(c)?;
        }
        Ok(())
    })?;
    points_of(conn, id)?
        .into_iter()
        .find(|p| p.channel == channel.as_str())
        .ok_or_else(|| Error::not_found("contact point vanished"))
}

/// Replaces the secret of `party`'s webhook with `secret`, or a new one;
/// returns it, to be shown once. Messages already queued are signed with
/// the new one when they go.
pub fn rotate_webhook_secret(
    conn: &mut DbConn,
    party: &str,
    secret: Option<&str>,
) -> Result<String> {
    let secret = given_or_new(secret)?;
    let (id, _) = find(conn, party)?;
    let n = conn.write_tx(|c| {
        Ok(diesel::update(
            contact_points::table
                .filter(contact_points::party_id.eq(id.0))
                .filter(contact_points::channel.eq(Channel::Webhook.as_str())),
        )
        .set(contact_points::secret.eq(&secret))
        .execute(c)?)
    })?;
    if n == 0 {
        return Err(Error::not_found(format!("{party} has no webhook address")));
    }
    Ok(secret)
}

/// The secrets of the webhook contact points of `parties`, by (party,
/// URL): a queue row is signed with the secret of the URL it was expanded
/// with, and a URL changed since has none.
pub fn webhook_secrets(
    conn: &mut DbConn,
    parties: &[i64],
) -> Result<HashMap<(i64, String), String>> {
    let mut out = HashMap::new();
    for chunk in parties.chunks(5_000) {
        let rows: Vec<(i64, String, Option<String>)> = contact_points::table
            .filter(contact_points::party_id.eq_any(chunk))
            .filter(contact_points::channel.eq(Channel::Webhook.as_str()))
            .select((
                contact_points::party_id,
                contact_points::address,
                contact_points::secret,
            ))
            .load(conn)?;
        out.extend(
            rows.into_iter()
                .filter_map(|(p, a, s)| s.map(|s| ((p, a), s))),
        );
    }
    Ok(out)
}

/// Disables the contact point of `party` on `channel` at `url`, which
/// answered 410 Gone (a URL channel) or `M_FORBIDDEN` (Matrix), as hard
/// bounces disable an email address; in the caller's transaction, with
/// a `contact.disabled` event when it was enabled. Never enables one.
pub fn disable_gone_webhook_in_tx(
    c: &mut DbConn,
    now: DateTime<Utc>,
    party: i64,
    channel: Channel,
    url: &str,
) -> Result<usize> {
    let n = diesel::update(
        contact_points::table
            .filter(contact_points::party_id.eq(party))
            .filter(contact_points::channel.eq(channel.as_str()))
            .filter(contact_points::address.eq(url))
            .filter(contact_points::disabled.eq(false)),
    )
    .set(contact_points::disabled.eq(true))
    .execute(c)?;
    if n > 0 {
        let why = if channel == Channel::Matrix {
            "forbidden"
        } else {
            "gone"
        };
        // A preset's URL is its credential: only a webhook's is shown.
        let shown = (channel == Channel::Webhook).then_some(url);
        let e = Event::new(Kind::ContactDisabled)
            .party(crate::ids::PartyId(party))
            .with("channel", channel.as_str())
            .with("address", shown)
            .with("why", why);
        events::record_one_in_tx(c, now, e)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_standard_webhooks_shaped() {
        let s = new_webhook_secret();
        assert!(s.starts_with("whsec_"));
        assert_eq!(webhook_secret_bytes(&s).unwrap().len(), 32);
        assert_ne!(s, new_webhook_secret());
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        assert_eq!(
            webhook_secret_bytes(&format!("whsec_{}", b64(24))).unwrap(),
            vec![7u8; 24]
        );
        for (bad, why) in [
            (format!("whsec_{}", b64(23)), "23 bytes"),
            (format!("whsec_{}", b64(33)), "33 bytes"),
            (b64(32), "whsec_"),
            ("whsec_***".to_string(), "not base64"),
            ("whsec_\r\nX: y".to_string(), "not base64"),
        ] {
            let e = webhook_secret_bytes(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
