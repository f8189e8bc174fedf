//! A Matrix message's content: the digest's (or notification's) JSON
//! document, read into lines as the webhook presets read it
//! (`webhook::presets::Post`), written twice: as plain text (`body`) and
//! as simple escaped HTML (`formatted_body`, `org.matrix.custom.html`:
//! `<strong>`, `<a href>`, `<br>` and nothing else). Each is cut at a line
//! past [`MAX_PART`] bytes and then ends with "… and N more", so the
//! event stays under the homeserver's 64 KiB.

use crate::i18n::catalogs;
use serde_json::{json, Value};

use crate::feeds::atom::escape;
use crate::webhook::presets::fit::{self, Limits, Measure};
use crate::webhook::presets::{Line, Post, Syntax};

/// The most bytes of each of the two bodies.
pub const MAX_PART: usize = 24_000;

fn same(s: &str) -> String {
    s.to_string()
}

/// Plain text: a link is its label and the URL in angle brackets.
const PLAIN: Syntax = Syntax {
    escape: same,
    link: |url, label| format!("{label} <{url}>"),
    bullet: "•",
    bold: "",
};

/// HTML: everything escaped, links as anchors.
const HTML: Syntax = Syntax {
    escape,
    link: |url, label| format!("<a href=\"{}\">{}</a>", escape(url), escape(label)),
    bullet: "•",
    bold: "",
};

/// The `m.room.message` content of the document `doc`.
pub fn content(doc: &[u8]) -> Result<Value, String> {
    let doc: Value = serde_json::from_slice(doc)
        .map_err(|e| format!("matrix: the stored document is not JSON: {e}"))?;
    let post = Post::of(&doc);
    Ok(json!({
        "msgtype": "m.text",
        "body": plain(&post),
        "format": "org.matrix.custom.html",
        "formatted_body": html(&post),
    }))
}

fn limits() -> Limits {
    Limits {
        chunk: MAX_PART,
        chunks: 1,
        total: MAX_PART,
        measure: Measure::Bytes,
    }
}

/// The plain-text body: the subject, the lines, the manage link.
pub fn plain(p: &Post) -> String {
    let lines = PLAIN.lines(p);
    let mut out = p.title().to_string();
    for chunk in fit::pack(&lines, p.more, limits(), |n| PLAIN.tail(p, n)) {
        out.push_str("\n\n");
        out.push_str(&chunk);
    }
    if let Some(m) = &p.manage {
        let manage = catalogs().text(p.lang, "manage-subscriptions");
        out.push_str(&format!("\n\n{manage}: {m}"));
    }
    out
}

/// The HTML body: the subject in bold, each line ending with `<br>`.
pub fn html(p: &Post) -> String {
    let lines: Vec<fit::Written> = p
        .lines
        .iter()
        .map(|l| {
            let written = match l {
                Line::Heading(h) => format!("<strong>{}</strong>", escape(h)),
                other => HTML.line(other),
            };
            (format!("{written}<br>"), !matches!(l, Line::Heading(_)))
        })
        .collect();
    let mut out = format!("<strong>{}</strong><br>", escape(p.title()));
    for chunk in fit::pack(&lines, p.more, limits(), |n| HTML.tail(p, n)) {
        out.push('\n');
        out.push_str(&chunk);
    }
    if let Some(m) = &p.manage {
        out.push_str(&format!(
            "\n<br>{}",
            (HTML.link)(m, catalogs().text(p.lang, "manage-subscriptions"))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(title: &str, n: usize) -> Vec<u8> {
        let items: Vec<Value> = (0..n)
            .map(|i| {
                json!({
                    "title": format!("{title} {i}"),
                    "link": format!("https://tracker.example/item/{i}?a=1&b=2"),
                    "change": format!("{title} {i} changed status to done"),
                    "before": "",
                    "after": " changed status to done",
                })
            })
            .collect();
        json!({
            "type": "digest",
            "subject": format!("Digest: {title}"),
            "sections": [{"collection": "Ops <team>", "items": items}],
            "manage_url": "https://digest.example/s/abc",
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_digest_is_plain_text_and_escaped_html() {
        let c = content(&doc("<script>alert(1)</script> & \"q\"", 2)).unwrap();
        assert_eq!(c["msgtype"], "m.text");
        assert_eq!(c["format"], "org.matrix.custom.html");
        let body = c["body"].as_str().unwrap();
        assert!(body.starts_with("Digest: <script>"), "{body}");
        assert!(body.contains("tracker.example/item/1"), "{body}");
        let html = c["formatted_body"].as_str().unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;"));
        assert!(html.contains("<strong>Ops &lt;team&gt;</strong>"), "{html}");
        assert!(html.contains("<a href=\"https://tracker.example/item/0?a=1&amp;b=2\">"));
        assert!(html.contains("https://digest.example/s/abc"));
    }

    #[test]
    fn a_long_digest_is_cut_at_a_line_with_the_rest_counted() {
        let c = content(&doc(&"x".repeat(200), 400)).unwrap();
        for part in ["body", "formatted_body"] {
            let s = c[part].as_str().unwrap();
            assert!(s.len() < MAX_PART + 2_000, "{part}: {}", s.len());
            assert!(s.contains("more"), "{part}");
        }
        assert!(c.to_string().len() < 64 * 1024);
    }

    #[test]
    fn a_notification_is_its_subject_and_lines() {
        let doc = json!({"type": "notification", "subject": "Disk full", "message": "a\nb <i>"});
        let c = content(doc.to_string().as_bytes()).unwrap();
        assert_eq!(c["body"], "Disk full\n\na\nb <i>");
        assert!(c["formatted_body"]
            .as_str()
            .unwrap()
            .contains("b &lt;i&gt;<br>"));
        assert!(content(b"not json").is_err());
    }
}
