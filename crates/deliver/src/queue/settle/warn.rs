//! The warning a failed attempt leaves in the log: the channel, the far
//! end's reply (SMTP code and text, the gateway's status, the XMPP error)
//! and whether it will be retried, and of the address only its domain. The
//! whole address stays in the database (`delivery_log`), never in the log;
//! a reply that quotes it has it replaced by its domain form.

use crate::sink::Outcome;
use crate::validate::escape_for_line;

use super::Settle;

/// The longest reply text a warning carries.
const MAX_REPLY: usize = 300;

/// Logs `s` at `warn` when an attempt failed (at `info` when there was
/// nothing to attempt, or the rows are held for quiet hours). `retry`: whether its rows will be tried again.
pub(super) fn failed(s: &Settle, channel: &str, retry: bool) {
    if matches!(s.outcome, Outcome::Sent { .. }) {
        return;
    }
    // No attempt was made: the recipient has no address on the channel
    // (none given, or disabled by bounces), which `request show` tells;
    // not a failure of the far end to warn about.
    if !s.attempted && matches!(s.outcome, Outcome::Transient { .. }) {
        tracing::info!(
            channel,
            rows = s.keys.len(),
            reason = %escape_for_line(&s.outcome.text()),
            "not sent yet"
        );
        return;
    }
    if !s.attempted {
        tracing::info!(
            channel,
            rows = s.keys.len(),
            "not delivered: no usable address"
        );
        return;
    }
    let address = s.address.as_deref().unwrap_or("");
    let domain = domain(channel, address);
    let reply = reply(&s.outcome.text(), address, &domain);
    let code = s
        .outcome
        .code()
        .map_or_else(|| "-".to_string(), |c| c.to_string());
    let outcome = match (&s.outcome, retry) {
        (_, true) => "will retry",
        (Outcome::Permanent { .. }, false) => "permanent",
        (_, false) => "out of retries",
    };
    tracing::warn!(
        channel,
        domain = %domain,
        code = %code,
        reply = %reply,
        rows = s.keys.len(),
        outcome,
        "delivery failed"
    );
}

/// The part of an address that names where it goes, not who: an email's
/// or a JID's domain; a phone number's first digits (its country code
/// and a little more); a URL's scheme and host; never the rest.
pub(super) fn domain(channel: &str, address: &str) -> String {
    let shown = match channel {
        "email" | "xmpp" => {
            let bare = address.split('/').next().unwrap_or("");
            match bare.rsplit_once('@') {
                Some((_, d)) => format!("@{d}"),
                None => "-".to_string(),
            }
        }
        _ if address.is_empty() => "-".to_string(),
        // A URL's scheme and host, never its path (the credential).
        _ => match crate::parties::Channel::parse(channel) {
            Ok(c) if c.is_url() => c.shown(address),
            _ => format!("{}…", address.chars().take(3).collect::<String>()),
        },
    };
    escape_for_line(&shown)
}

/// The reply as one line, cut to [`MAX_REPLY`] characters, with the
/// address it may quote replaced by its domain form.
fn reply(text: &str, address: &str, domain: &str) -> String {
    let mut t = text.to_string();
    if !address.is_empty() {
        t = replace_ignoring_case(&t, address, &format!("…{domain}"));
        // A JID's bare form, or an email's local part quoted alone.
        if let Some((local, _)) = address.split('/').next().unwrap_or("").rsplit_once('@') {
            if local.len() >= 3 {
                t = replace_ignoring_case(&t, local, "…");
            }
        }
    }
    let one = escape_for_line(&t);
    match one.char_indices().nth(MAX_REPLY) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

fn replace_ignoring_case(text: &str, needle: &str, with: &str) -> String {
    let lower = text.to_lowercase();
    let n = needle.to_lowercase();
    // Lowercasing may change lengths outside ASCII: then only exact matches.
    if lower.len() != text.len() || n.len() != needle.len() {
        return text.replace(needle, with);
    }
    let mut out = String::new();
    let mut rest = 0;
    for (i, _) in lower.match_indices(&n) {
        if i < rest {
            continue;
        }
        out.push_str(&text[rest..i]);
        out.push_str(with);
        rest = i + n.len();
    }
    out.push_str(&text[rest..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_domain_of_an_address_is_shown() {
        assert_eq!(domain("email", "Bob.Smith@Example.org"), "@Example.org");
        assert_eq!(
            domain("slack", "https://hooks.slack.com/services/T0/B0/x"),
            "https://hooks.slack.com/***"
        );
        assert_eq!(domain("xmpp", "bob@chat.example/phone"), "@chat.example");
        assert_eq!(domain("sms", "+34600111222"), "+34…");
        assert_eq!(domain("email", ""), "-");
        assert_eq!(domain("email", "x@a\r\nb"), "@a\\r\\nb");
        let r = reply(
            "550 5.1.1 <Bob.Smith@example.org>: no such user bob.smith\r\nhere",
            "bob.smith@example.org",
            "@example.org",
        );
        assert_eq!(r, "550 5.1.1 <…@example.org>: no such user …\\r\\nhere");
        let long = reply(&"x".repeat(1000), "", "-");
        assert_eq!(long.chars().count(), MAX_REPLY + 1);
    }
}
