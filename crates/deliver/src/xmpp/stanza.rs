//! What goes into a stanza and what comes back in one: the stanza id,
//! the body cut to length, the chat stanza built and proven serialisable
//! before it goes near the session, and a stanza error told permanent or
//! transient.

use tokio_xmpp::jid::{BareJid, Jid};
use tokio_xmpp::minidom::Element;
use tokio_xmpp::parsers::message::{Id, Lang, Message};
use tokio_xmpp::Stanza;

use super::Error;
use crate::listener::Outgoing;
use crate::validate;

const STANZAS_NS: &str = "urn:ietf:params:xml:ns:xmpp-stanzas";

/// What a `<message type="error">` says: its defined condition, its
/// error type and its text, as [`Error::Stanza`] (which decides whether it
/// is worth another attempt).
pub fn classify(error: &Element) -> Error {
    let condition = error
        .children()
        .find(|c| c.ns() == STANZAS_NS && c.name() != "text")
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| "undefined-condition".into());
    let kind = error.attr("type").unwrap_or("cancel").to_string();
    let text = error
        .children()
        .find(|c| c.ns() == STANZAS_NS && c.name() == "text")
        .map(|t| t.text());
    Error::Stanza {
        condition,
        kind,
        text,
    }
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

/// The chat stanza for `m` with id `id`, its body cut to `max_chars`, and
/// the address it goes to; or why this message can never be sent. Each
/// refusal is this message's alone: the rest of the batch goes on.
///
/// A body with a character XML 1.0 forbids (a row stored before the
/// validators refused it, or a body built from other stored text) is never
/// handed to the session: the stream would fail to write it, and before
/// this check that failure took the session, and every other message of
/// the batch, down with it. The stanza is then written once on its own,
/// exactly as the stream would, so that nothing else the XML layer refuses
/// reaches the session either.
pub(super) fn prepare(
    m: &Outgoing,
    id: &str,
    max_chars: usize,
) -> Result<(BareJid, Stanza), Error> {
    let to = BareJid::new(&m.to).map_err(|e| Error::JidMalformed {
        to: m.to.clone(),
        error: e.to_string(),
    })?;
    let body = m.body()?;
    if let Some(c) = validate::not_xml(body) {
        return Err(Error::NotXml(c));
    }
    let mut msg = Message::chat(Some(Jid::from(to.clone())))
        .with_body(Lang(String::new()), cap(body, max_chars));
    msg.id = Some(Id(id.to_string()));
    let stanza = Stanza::from(msg);
    xso::to_vec(&stanza).map_err(|e| Error::Unwritable(e.to_string()))?;
    Ok((to, stanza))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listener::DeliveryError;

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
            let got = classify(&e);
            assert_eq!(got.is_transient(), retry, "{cond} {kind}");
            assert_eq!(got.to_string(), format!("xmpp: {cond} ({kind}): why"));
        }
        let got = classify(&error("<error xmlns='jabber:client'/>"));
        assert_eq!(
            (got.to_string().as_str(), got.is_transient()),
            ("xmpp: undefined-condition (cancel)", false)
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

    fn refusal(m: &Outgoing) -> String {
        match prepare(m, "digestd-1-0", 100).map_err(DeliveryError::from) {
            Err(DeliveryError::Permanent { text, .. }) => text,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_body_xml_cannot_carry_is_refused_before_the_session() {
        for (body, code) in [
            ("a \u{FFFF} b", "U+FFFF"),
            ("\u{FFFE}", "U+FFFE"),
            ("nul \0", "U+0000"),
            ("esc \u{1b}[2J", "U+001B"),
        ] {
            let text = refusal(&Outgoing::text("bob@localhost", body, Default::default()));
            assert!(text.starts_with("xmpp: ") && text.contains(code), "{text}");
        }
        let not_utf8 = Outgoing {
            to: "bob@localhost".into(),
            bytes: vec![b'a', 0xff],
            ..Default::default()
        };
        assert_eq!(refusal(&not_utf8), "body is not UTF-8 (at byte 1)");
        let text = refusal(&Outgoing::text("a@b@c", "hi", Default::default()));
        assert!(text.starts_with("xmpp: jid-malformed"), "{text}");
    }

    #[test]
    fn a_good_body_becomes_a_chat_stanza_with_its_id_and_cap() {
        let long = format!("tab\tline\n\u{FDD0} 会議 {}", "x".repeat(200));
        let m = Outgoing::text("bob@localhost", &long, Default::default());
        let (to, stanza) = prepare(&m, "digestd-1-0", 100).unwrap();
        assert_eq!(to.as_str(), "bob@localhost");
        let Stanza::Message(msg) = stanza else {
            panic!("{stanza:?}")
        };
        assert_eq!(msg.id, Some(Id("digestd-1-0".into())));
        let (_, body) = msg.get_best_body(vec![]).unwrap();
        assert_eq!(body, &cap(&long, 100));
    }
}
