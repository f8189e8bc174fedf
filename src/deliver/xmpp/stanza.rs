//! What goes into a stanza and what comes back in one: the stanza id,
//! the body cut to length, and a stanza error told permanent or transient.

use tokio_xmpp::minidom::Element;

use crate::deliver::listener::Outgoing;

const STANZAS_NS: &str = "urn:ietf:params:xml:ns:xmpp-stanzas";

/// What a `<message type="error">` says: the defined condition and whether
/// it is worth another attempt.
pub fn classify(error: &Element) -> (String, bool) {
    let condition = error
        .children()
        .find(|c| c.ns() == STANZAS_NS && c.name() != "text")
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| "undefined-condition".into());
    let kind = error.attr("type").unwrap_or("cancel");
    let transient = match condition.as_str() {
        "item-not-found" | "not-allowed" | "forbidden" | "jid-malformed" | "not-acceptable"
        | "bad-request" => false,
        "service-unavailable"
        | "remote-server-timeout"
        | "resource-constraint"
        | "internal-server-error"
        | "recipient-unavailable" => true,
        _ => kind == "wait",
    };
    let text = error
        .children()
        .find(|c| c.ns() == STANZAS_NS && c.name() == "text")
        .map(|t| format!(": {}", t.text()))
        .unwrap_or_default();
    (format!("{condition} ({kind}){text}"), transient)
}

/// Cuts `body` to `max` characters, marking the cut.
pub fn cap(body: &str, max: usize) -> String {
    if body.chars().count() <= max {
        return body.to_string();
    }
    let mut s: String = body.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The message's stanza id: named after its outbox file (first request and
/// recipient), so a retry of the same message carries the same id; a
/// message without one (a test alert) gets one unique to its batch.
pub(super) fn stanza_id(m: &Outgoing, batch: u64, i: usize) -> String {
    match m.file.file_stem().and_then(|s| s.to_str()) {
        Some(stem) if !stem.is_empty() => format!("digestd-{stem}"),
        _ => format!("digestd-{batch}-{i}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(xml: &str) -> Element {
        xml.parse().unwrap()
    }

    #[test]
    fn stanza_errors_are_told_apart() {
        let cases = [
            ("item-not-found", "cancel", false),
            ("not-allowed", "cancel", false),
            ("forbidden", "auth", false),
            ("service-unavailable", "cancel", true),
            ("remote-server-timeout", "wait", true),
            ("policy-violation", "modify", false),
            ("policy-violation", "wait", true),
        ];
        for (cond, kind, retry) in cases {
            let e = error(&format!(
                "<error xmlns='jabber:client' type='{kind}'><{cond} xmlns='{STANZAS_NS}'/>\
                 <text xmlns='{STANZAS_NS}'>why</text></error>"
            ));
            let (text, transient) = classify(&e);
            assert_eq!(transient, retry, "{cond} {kind}");
            assert_eq!(text, format!("{cond} ({kind}): why"));
        }
        let (text, transient) = classify(&error("<error xmlns='jabber:client'/>"));
        assert_eq!(
            (text.as_str(), transient),
            ("undefined-condition (cancel)", false)
        );
    }

    #[test]
    fn long_bodies_are_capped_on_a_character_boundary() {
        assert_eq!(cap("short", 100), "short");
        let long = "é".repeat(300);
        let c = cap(&long, 100);
        assert_eq!(c.chars().count(), 100);
        assert!(c.ends_with('…'));
    }
}
