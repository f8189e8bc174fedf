//! `contact`: a user's or group's addresses, one channel at a time: set,
//! verify, disable, enable; a webhook's URL with its signing secret, and
//! the chat and push presets' URLs.

use std::io::Write;

use clap::Args;

use super::Ctx;
use crate::error::{Error, Result};
use crate::parties;

#[derive(Args, Debug)]
pub struct ContactArgs {
    /// The user or group.
    name: String,
    /// email, xmpp, sms, webhook, slack, discord, teams, ntfy or matrix (needed with an action; without one, shows only that channel).
    #[arg(long)]
    channel: Option<String>,
    /// A new address (checked for the channel): enabled, not verified, bounces reset.
    /// For webhook, an https URL; its signing secret is made (or taken from
    /// --secret) and shown once. For matrix, a user ID (@alice:example.org)
    /// or a room ID (!room:example.org).
    #[arg(long, value_name = "ADDRESS")]
    set: Option<String>,
    /// With --channel webhook: the signing secret (whsec_ and the base64 of
    /// 24-32 random bytes) instead of a new one.
    #[arg(long, value_name = "WHSEC")]
    secret: Option<String>,
    /// With --channel webhook: a new signing secret (or --secret's), shown once.
    #[arg(long)]
    rotate_secret: bool,
    /// Its owner confirmed it.
    #[arg(long)]
    verify: bool,
    /// Send nothing more to it.
    #[arg(long)]
    disable: bool,
    /// Send to it again (bounce count reset).
    #[arg(long)]
    enable: bool,
    /// With no action: the addresses as a JSON array.
    #[arg(long, conflicts_with_all = ["set", "verify", "disable", "enable", "rotate_secret"])]
    json: bool,
}

/// `contact NAME [--channel C]` with no action shows the addresses, one
/// line each (or `--json`); with one action it changes the channel's.
pub fn contact(a: ContactArgs, ctx: &mut Ctx) -> Result<()> {
    let channel = a
        .channel
        .as_deref()
        .map(parties::Channel::parse)
        .transpose()?;
    if channel == Some(parties::Channel::Webhook) && (a.set.is_some() || a.rotate_secret) {
        return webhook(a, ctx);
    }
    if let (Some(ch), Some(url)) = (channel.filter(|c| c.is_preset()), &a.set) {
        return preset(ch, url, &a, ctx);
    }
    if a.secret.is_some() || a.rotate_secret {
        return Err(Error::invalid(
            "contact: --secret and --rotate-secret are for --channel webhook with --set or --rotate-secret",
        ));
    }
    let change = match (a.set, a.verify, a.disable, a.enable) {
        (None, false, false, false) => None,
        (Some(a), false, false, false) => Some(parties::ContactChange::Set(a)),
        (None, true, false, false) => Some(parties::ContactChange::Verify),
        (None, false, true, false) => Some(parties::ContactChange::Disable),
        (None, false, false, true) => Some(parties::ContactChange::Enable),
        _ => {
            return Err(Error::invalid(
                "contact: give at most one of --set ADDRESS, --verify, --disable, --enable",
            ))
        }
    };
    if change.is_some() && channel.is_none() {
        return Err(Error::invalid(
            "contact: --set, --verify, --disable and --enable need --channel",
        ));
    }
    let mut conn = ctx.conn()?;
    let (Some(change), Some(channel)) = (change, channel) else {
        let points = parties::show_contacts(&mut conn, &a.name, channel)?;
        if a.json {
            let json = serde_json::to_string(&points).expect("serialisable");
            writeln!(ctx.out, "{json}")?;
        }
        for p in points.iter().filter(|_| !a.json) {
            writeln!(ctx.out, "{} {p}", a.name)?;
        }
        return Ok(());
    };
    let p = parties::change_contact(&mut conn, ctx.now(), &a.name, channel, &change)?;
    writeln!(ctx.out, "{} {p}", a.name)?;
    Ok(())
}

/// `contact NAME --channel webhook --set URL [--secret S]` or
/// `--rotate-secret [--secret S]`: the secret is printed once, here.
fn webhook(a: ContactArgs, ctx: &mut Ctx) -> Result<()> {
    if a.verify || a.disable || a.enable || (a.set.is_some() && a.rotate_secret) {
        return Err(Error::invalid(
            "contact: give at most one of --set ADDRESS, --verify, --disable, --enable, --rotate-secret",
        ));
    }
    let policy = ctx.cfg.webhook.policy();
    let now = ctx.now();
    let mut conn = ctx.conn()?;
    let secret = match &a.set {
        Some(url) => {
            let (p, secret) =
                parties::set_webhook(&mut conn, now, &a.name, url, a.secret.as_deref(), policy)?;
            writeln!(ctx.out, "{} {p}", a.name)?;
            secret
        }
        None => parties::rotate_webhook_secret(&mut conn, &a.name, a.secret.as_deref())?,
    };
    writeln!(
        ctx.out,
        "secret {secret} (shown once: give it to the receiver, which verifies each message's webhook-signature with it)"
    )?;
    Ok(())
}

/// `contact NAME --channel slack|discord|teams|ntfy --set URL`: the URL
/// checked against `[webhook]`'s policy, as a webhook's is; no secret.
fn preset(channel: parties::Channel, url: &str, a: &ContactArgs, ctx: &mut Ctx) -> Result<()> {
    if a.verify || a.disable || a.enable || a.rotate_secret || a.secret.is_some() {
        return Err(Error::invalid(format!(
            "contact: --channel {} takes --set URL alone (no secret: the URL is the credential)",
            channel.as_str()
        )));
    }
    let policy = ctx.cfg.webhook.policy();
    let now = ctx.now();
    let mut conn = ctx.conn()?;
    let p = parties::set_preset(&mut conn, now, &a.name, channel, url, policy)?;
    writeln!(ctx.out, "{} {p}", a.name)?;
    Ok(())
}
