//! The delivery channels, as stored in `contact_points.channel`, queue
//! rows and subscriptions, with how each one's addresses are checked.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::validate;

/// A delivery channel, as stored in `contact_points.channel` and subscriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Email,
    Xmpp,
    Sms,
    /// An https URL posted a signed JSON document (Standard Webhooks).
    Webhook,
    /// A Slack incoming webhook URL, posted Block Kit.
    Slack,
    /// A Discord webhook URL, posted content and embeds.
    Discord,
    /// A Microsoft Teams Workflows webhook URL, posted an Adaptive Card.
    Teams,
    /// An ntfy topic URL, posted Markdown text.
    Ntfy,
    /// A Matrix user ID (a direct room is opened for it) or room ID, sent
    /// plain text and HTML by digestd's service account.
    Matrix,
}

impl Channel {
    pub const ALL: [Channel; 9] = [
        Channel::Email,
        Channel::Xmpp,
        Channel::Sms,
        Channel::Webhook,
        Channel::Slack,
        Channel::Discord,
        Channel::Teams,
        Channel::Ntfy,
        Channel::Matrix,
    ];

    /// The chat and push services whose webhook URL is the address: posted
    /// by the webhook listener in the service's own format, unsigned.
    pub const PRESETS: [Channel; 4] = [
        Channel::Slack,
        Channel::Discord,
        Channel::Teams,
        Channel::Ntfy,
    ];

    /// Whether the address is a URL the webhook listener posts to (the
    /// webhook channel and its presets): checked against `[webhook]`'s
    /// policy, and never shown whole.
    pub fn is_url(self) -> bool {
        self == Channel::Webhook || self.is_preset()
    }

    /// Whether its messages are built from the digest's JSON document (the
    /// webhook, its presets, Matrix) rather than its chat or SMS text.
    pub fn reads_document(self) -> bool {
        self.is_url() || self == Channel::Matrix
    }

    /// Whether this is one of [`Channel::PRESETS`].
    pub fn is_preset(self) -> bool {
        Channel::PRESETS.contains(&self)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Email => "email",
            Channel::Xmpp => "xmpp",
            Channel::Sms => "sms",
            Channel::Webhook => "webhook",
            Channel::Slack => "slack",
            Channel::Discord => "discord",
            Channel::Teams => "teams",
            Channel::Ntfy => "ntfy",
            Channel::Matrix => "matrix",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        Channel::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                Error::invalid(format!("unknown channel {s:?}: use {}", Channel::named()))
            })
    }

    /// Every channel's name for a refusal: "email, xmpp, … or matrix".
    pub fn named() -> String {
        let names: Vec<&str> = Channel::ALL.iter().map(|c| c.as_str()).collect();
        let (last, rest) = names.split_last().expect("there are channels");
        format!("{} or {last}", rest.join(", "))
    }

    /// Validates and normalises an address for this channel. A webhook
    /// URL is checked here for its form alone (any scheme and target the
    /// settings could allow); [`set_webhook`] checks it against
    /// `[webhook]`'s policy, and the listener again before each post.
    pub fn validate_address(self, address: &str) -> Result<String> {
        Ok(match self {
            Channel::Email => validate::email(address),
            Channel::Xmpp => validate::jid(address),
            Channel::Sms => validate::phone(address),
            Channel::Matrix => validate::matrix_id(address),
            Channel::Webhook
            | Channel::Slack
            | Channel::Discord
            | Channel::Teams
            | Channel::Ntfy => validate::webhook_url(address, validate::UrlPolicy::ANY),
        }?)
    }

    /// `address` as listings and logs show it: a URL channel's as
    /// `https://host/***` (its path is the receiver's credential), any
    /// other whole.
    pub fn shown(self, address: &str) -> String {
        if !self.is_url() {
            return address.to_string();
        }
        match address.split_once("://") {
            Some((scheme, rest)) => {
                let host = rest.split(['/', '?', '#']).next().unwrap_or("");
                let host = host.rsplit('@').next().unwrap_or(host);
                format!("{scheme}://{host}/***")
            }
            None => "***".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_every_channel_in_order() {
        assert_eq!(
            Channel::named(),
            "email, xmpp, sms, webhook, slack, discord, teams, ntfy or matrix"
        );
        let e = Channel::parse("pigeon").unwrap_err().to_string();
        assert!(
            e.ends_with(&format!("\"pigeon\": use {}", Channel::named())),
            "{e}"
        );
    }
}
