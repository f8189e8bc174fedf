//! ntfy topics: the body is Markdown text of at most 4,096 bytes (past
//! that ntfy keeps a message as an attachment), with headers `Title` (the
//! subject), `Markdown: yes` and `Click` (the full digest). A header is
//! ASCII, so a subject that is not is sent as RFC 2047 encoded words
//! (`=?UTF-8?B?…?=`), which ntfy decodes.

use base64::Engine as _;

use super::fit::{self, Limits, Measure};
use super::{clip, discord, Post, Request, Syntax};

/// Markdown as ntfy reads it: Discord's escaping, a list of items.
const SYNTAX: Syntax = Syntax {
    bullet: "-",
    ..discord::MARKDOWN
};

/// The most bytes of a body.
pub const BODY: usize = 4_096;
/// The longest title, in characters.
const TITLE: usize = 250;

/// The request of `p`.
pub fn request(p: &Post) -> Request {
    let lines = SYNTAX.lines(p);
    let limits = Limits {
        chunk: BODY,
        chunks: 1,
        total: BODY,
        measure: Measure::Bytes,
    };
    let mut body = fit::pack(&lines, p.more, limits, |n| SYNTAX.tail(p, n)).join("\n");
    if body.is_empty() {
        body = super::clip_bytes(&(SYNTAX.escape)(&p.subject), BODY);
    }
    let mut headers = vec![
        ("content-type", "text/markdown; charset=utf-8".to_string()),
        ("markdown", "yes".to_string()),
    ];
    if !p.subject.is_empty() {
        headers.push(("title", header(&clip(&p.subject, TITLE))));
    }
    if let Some(url) = &p.full {
        headers.push(("click", header(url)));
    }
    Request {
        body: body.into_bytes(),
        headers,
    }
}

/// `s` as a header value: itself when it is printable ASCII (and holds
/// no `=?`, which would read as an encoded word), else RFC 2047 encoded
/// words of UTF-8, each at most 75 characters, cut between characters.
pub fn header(s: &str) -> String {
    let s = crate::text::one_line(s);
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) && !s.contains("=?") {
        return s;
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut words = Vec::new();
    let mut word = String::new();
    for c in s.chars() {
        // 45 bytes are 60 base64 characters: 72 with `=?UTF-8?B?` and `?=`.
        if word.len() + c.len_utf8() > 45 {
            words.push(std::mem::take(&mut word));
        }
        word.push(c);
    }
    words.push(word);
    words
        .iter()
        .map(|w| format!("=?UTF-8?B?{}?=", b64.encode(w)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::tests::{digest, digest_with, notification, tail_of_500, HOSTILE};
    use super::*;

    fn head<'a>(r: &'a Request, name: &str) -> Option<&'a str> {
        r.headers.iter().find(|h| h.0 == name).map(|h| h.1.as_str())
    }

    /// What RFC 2047 encoded words say (as ntfy's Go decoder reads them:
    /// the space between two encoded words is not part of the text).
    fn decode(v: &str) -> String {
        let b64 = base64::engine::general_purpose::STANDARD;
        v.split(' ')
            .map(|w| {
                let inner = w
                    .strip_prefix("=?UTF-8?B?")
                    .unwrap()
                    .strip_suffix("?=")
                    .unwrap();
                String::from_utf8(b64.decode(inner).unwrap()).unwrap()
            })
            .collect()
    }

    #[test]
    fn titles_that_are_not_ascii_are_encoded_words() {
        assert_eq!(header("Disk almost full"), "Disk almost full");
        for s in HOSTILE {
            let v = header(s);
            assert!(v.bytes().all(|b| (0x20..0x7f).contains(&b)), "{v}");
            assert!(!v.contains('\r') && !v.contains('\n'));
            if !s.is_ascii() {
                assert!(v.split(' ').all(|w| w.len() <= 75));
                assert_eq!(decode(&v), crate::text::one_line(s));
            }
        }
        let long = "ÉÉ🚀".repeat(40);
        assert_eq!(decode(&header(&long)), long);
        assert!(header("a =?x?= b").starts_with("=?UTF-8?B?"));
    }

    #[test]
    fn hostile_titles_are_escaped_markdown() {
        let r = request(&Post::of(&digest_with(
            HOSTILE.len(),
            |i| HOSTILE[i].into(),
            |i| format!(" was renamed from {}", HOSTILE[i]),
        )));
        let body = String::from_utf8(r.body.clone()).unwrap();
        assert!(
            body.contains("\\*bold\\*") && body.contains("\\[x\\]") && !body.contains('\r'),
            "{body}"
        );
        assert_eq!(head(&r, "markdown"), Some("yes"));
        assert_eq!(
            head(&r, "click"),
            Some("https://digestd.example/d/1001?sig=x")
        );
        assert_eq!(
            head(&r, "title"),
            Some("Daily digest: Ops <team> & friends")
        );
    }

    #[test]
    fn five_hundred_items_stay_within_4096_bytes() {
        let r = request(&Post::of(&digest(500, |i| format!("Ítem {i} ✓"))));
        let body = String::from_utf8(r.body).unwrap();
        assert!(body.len() <= BODY, "{}", body.len());
        let shown = body.lines().filter(|l| l.starts_with("- ")).count();
        let last = body.lines().last().unwrap();
        tail_of_500(last, shown, true);
    }

    #[test]
    fn a_notification_is_its_subject_and_lines() {
        let r = request(&Post::of(&notification()));
        assert_eq!(r.body, b"Body line one.\nSecond line.");
        assert_eq!(head(&r, "title"), Some("Disk almost full"));
        assert_eq!(head(&r, "click"), None);
    }
}
