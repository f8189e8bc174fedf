use super::*;
use crate::config::parse_from;
use crate::message::{build, Email};
use chrono::{TimeZone, Utc};

fn thread(name: &str) -> Thread {
    Thread {
        root: "nt.thread.42.7.f3711f7dce0b477d3deb@example.org".into(),
        list: Some(List {
            name: name.into(),
            id: list_id(Some("96e0364e-db7d-4250-98a2-99ef4f402c0b"), "Example.ORG"),
        }),
    }
}

/// The message built with `t`'s headers, and its header block.
fn built(t: &Thread) -> (Vec<u8>, String) {
    let from = parse_from("digestd <digestd@example.org>").unwrap();
    let bytes = build(&Email {
        from: &from,
        from_name: None,
        to_name: "Ann",
        to_address: "ann@example.com",
        subject: "Daily digest: Calendar",
        text: "hello\n",
        html: Some("<p>hello</p>"),
        date: Utc.with_ymd_and_hms(2026, 11, 23, 17, 0, 0).unwrap(),
        message_id: "nt.1000.7.1.b2c5e6fe4415c8dc7671@example.org",
        unsubscribe: Some("http://localhost:8080/s/abc/unsubscribe/42"),
        thread: Some(t),
        calendar: None,
        dkim: None,
    })
    .unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let head = text.split("\r\n\r\n").next().unwrap().to_string();
    (bytes, head)
}

#[test]
fn a_list_id_is_the_collections_uuid_under_the_senders_domain() {
    assert_eq!(
        list_id(Some("96E0364E-db7d-4250-98a2-99ef4f402c0b"), "Example.org"),
        "96e0364e-db7d-4250-98a2-99ef4f402c0b.lists.example.org"
    );
    assert_eq!(list_id(None, "example.org"), "all.lists.example.org");
    // Nothing but letters, digits, dots and hyphens is ever written.
    assert_eq!(list_id(Some("a>\r\nX: <b"), "h"), "axb.lists.h");
}

#[test]
fn a_digest_replies_to_its_root_and_names_its_list() {
    let (bytes, head) = built(&thread("Calendar"));
    let root = "<nt.thread.42.7.f3711f7dce0b477d3deb@example.org>";
    assert!(
        head.contains(&format!("\r\nIn-Reply-To: {root}\r\n")),
        "{head}"
    );
    assert!(
        head.contains(&format!("\r\nReferences: {root}\r\n")),
        "{head}"
    );
    assert!(
        head.contains(
            "\r\nList-Id: Calendar <96e0364e-db7d-4250-98a2-99ef4f402c0b.lists.example.org>\r\n"
        ),
        "{head}"
    );
    assert!(head.contains("\r\nList-Post: NO\r\n"), "{head}");
    // RFC 8058's pair is still there.
    assert!(head.contains("\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"));
    let m = mail_parser::MessageParser::default().parse(&bytes).unwrap();
    assert_eq!(m.in_reply_to().as_text(), Some(&root[1..root.len() - 1]));
    assert_eq!(m.references().as_text(), Some(&root[1..root.len() - 1]));
    // A message the same row builds again carries the same headers (only
    // lettre's MIME boundary is drawn afresh).
    let upto = |h: &str| h.split("\r\nContent-Type:").next().unwrap().to_string();
    assert_eq!(upto(&built(&thread("Calendar")).1), upto(&head));
}

#[test]
fn no_thread_no_headers_and_no_list_no_list_headers() {
    let t = Thread {
        root: "nt.thread.1.2.00@h".into(),
        list: None,
    };
    let (_, head) = built(&t);
    assert!(head.contains("In-Reply-To: <nt.thread.1.2.00@h>"));
    assert!(
        !head.contains("List-Id") && !head.contains("List-Post"),
        "{head}"
    );
}

/// A collection's name is user input: whatever it holds, it stays inside
/// the one List-Id header, and a reader gets the name back.
#[test]
fn a_hostile_collection_name_cannot_start_a_header() {
    for (name, shown) in [
        ("Q&A \"team\" <ops>", "Q&A \"team\" <ops>"),
        (
            "Evil\r\nBcc: victim@example.com",
            "Evil  Bcc: victim@example.com",
        ),
        (
            "Kalender München — “Zoë” <x>",
            "Kalender München — “Zoë” <x>",
        ),
        ("x\"><y@z>\r\nX-Evil: 1", "x\"><y@z>  X-Evil: 1"),
        ("\\\"quoted\\\"", "\\\"quoted\\\""),
        (&"Üñï ".repeat(60), "Üñï ".repeat(60).trim()),
        ("", ""),
    ] {
        let (bytes, head) = built(&thread(name));
        for line in head.split("\r\n") {
            assert!(
                !line.starts_with("Bcc:") && !line.starts_with("X-Evil:"),
                "{name:?}: {head}"
            );
            assert!(line.len() <= 998 && line.is_ascii(), "{name:?}: {line}");
        }
        let m = mail_parser::MessageParser::default().parse(&bytes).unwrap();
        assert!(m.header("Bcc").is_none() && m.header("X-Evil").is_none());
        let raw = m.header_raw("List-Id").expect("one List-Id");
        assert!(
            raw.trim_end()
                .ends_with("<96e0364e-db7d-4250-98a2-99ef4f402c0b.lists.example.org>"),
            "{name:?}: {raw}"
        );
        // The name a reader decodes is the one stored, on one line.
        let got = m.header("List-Id").unwrap();
        let got = match got {
            mail_parser::HeaderValue::Address(a) => a
                .first()
                .and_then(|a| a.name())
                .unwrap_or_default()
                .to_string(),
            other => panic!("{name:?}: {other:?}"),
        };
        assert_eq!(got, shown, "{name:?}: {raw}");
    }
}
