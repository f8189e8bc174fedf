//! Slack's incoming webhooks: `{"text": fallback, "blocks": [...]}` in
//! Block Kit: a header block (the subject, at most 150 characters), then
//! section blocks of mrkdwn lines (`• <link|title> — change`, at most
//! 3,000 characters each), at most 50 blocks and 40,000 characters in
//! all. Every string from a
//! digest has `&`, `<` and `>` escaped, so a title such as `<!channel>`
//! is shown and never acted on; a link's label has its `|` replaced, and
//! its URL `|`, `<` and `>` percent-encoded.

use serde_json::{json, Value};

use super::fit::{self, Limits, Measure};
use super::{clip, Post, Syntax};

/// Slack's mrkdwn.
const SYNTAX: Syntax = Syntax {
    escape,
    link,
    bullet: "•",
    bold: "*",
};

const HEADER: usize = 150;
const SECTION: usize = 3_000;
const BLOCKS: usize = 50;
/// Slack cuts a message's text past 40,000 characters.
const TOTAL: usize = 40_000;

/// The payload of `p`.
pub fn payload(p: &Post) -> Value {
    let subject = p.title();
    let lines = SYNTAX.lines(p);
    let limits = Limits {
        chunk: SECTION,
        chunks: BLOCKS - 1,
        total: TOTAL,
        measure: Measure::Chars,
    };
    let sections = fit::pack(&lines, p.more, limits, |n| SYNTAX.tail(p, n));
    let mut blocks = vec![json!({
        "type": "header",
        "text": {"type": "plain_text", "text": clip(subject, HEADER), "emoji": true},
    })];
    blocks.extend(
        sections
            .into_iter()
            .map(|s| json!({"type": "section", "text": {"type": "mrkdwn", "text": s}})),
    );
    json!({ "text": clip(&escape(subject), SECTION), "blocks": blocks })
}

/// `<url|label>`, neither able to end the link early.
fn link(url: &str, label: &str) -> String {
    let url = url
        .replace('|', "%7C")
        .replace('<', "%3C")
        .replace('>', "%3E");
    format!("<{url}|{}>", escape(label).replace('|', "∣"))
}

/// Slack's three control characters escaped, as its docs ask.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::super::tests::{digest, digest_with, notification, tail_of_500, HOSTILE};
    use super::*;

    fn texts(v: &Value) -> Vec<String> {
        v["blocks"].as_array().unwrap()[1..]
            .iter()
            .map(|b| b["text"]["text"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn hostile_titles_are_shown_not_acted_on() {
        let v = payload(&Post::of(&digest_with(
            HOSTILE.len(),
            |i| HOSTILE[i].into(),
            |i| format!(" was renamed from {}", HOSTILE[i]),
        )));
        let all = texts(&v).join("\n");
        assert!(!all.contains("<!channel>") && all.contains("&lt;!channel&gt;"));
        assert!(all.contains("&amp;lt;b&amp;gt;"), "{all}");
        // The one `<…|…>` per item is the link digestd makes.
        assert!(
            all.contains("|a∣b &lt;https://evil.example∣click&gt;>"),
            "{all}"
        );
        assert!(!all.contains('\r') && all.contains("line one  line two"));
        assert!(all.contains("🚀🔥") && all.contains("עברית") && !all.contains('\u{202e}'));
        assert!(all.contains("?a=1&b=2|"), "{all}");
        assert_eq!(v["text"], "Daily digest: Ops &lt;team&gt; &amp; friends");
    }

    #[test]
    fn five_hundred_items_stay_within_every_limit() {
        let v = payload(&Post::of(&digest(500, |i| {
            format!("Item {i} {}", "x".repeat(80))
        })));
        let blocks = v["blocks"].as_array().unwrap();
        assert!(blocks.len() <= BLOCKS);
        assert!(blocks[0]["text"]["text"].as_str().unwrap().chars().count() <= HEADER);
        let t = texts(&v);
        assert!(t.iter().all(|s| s.chars().count() <= SECTION));
        assert!(t.iter().map(|s| s.chars().count()).sum::<usize>() <= TOTAL);
        let shown = t
            .iter()
            .flat_map(|s| s.lines())
            .filter(|l| l.starts_with('•'))
            .count();
        let last = t.last().unwrap().lines().last().unwrap();
        tail_of_500(last, shown, false);
    }

    #[test]
    fn a_notification_is_its_subject_and_lines() {
        let v = payload(&Post::of(&notification()));
        assert_eq!(v["blocks"][0]["text"]["text"], "Disk almost full");
        assert_eq!(texts(&v), ["Body line one.\nSecond line."]);
    }
}
