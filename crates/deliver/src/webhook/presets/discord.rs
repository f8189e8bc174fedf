//! Discord's webhooks: `content` (the subject, at most 2,000 characters)
//! and embeds (at most 10, a title of at most 256 characters, a
//! description of at most 4,096, at most 6,000 across them) holding the
//! lines, `• [title](link) — change`. Discord's Markdown is escaped in
//! every string from a digest (in a link's label by lookalikes, since
//! Discord shows backslashes there), and `allowed_mentions` parses
//! nothing, so `@everyone` in a title pings no one.

use serde_json::{json, Value};

use super::fit::{self, Limits, Measure};
use super::{clip, Post, Syntax};

/// Markdown with backslash escapes, as CommonMark reads it (Teams' and
/// ntfy's).
pub(super) const MARKDOWN: Syntax = Syntax {
    escape,
    link,
    bullet: "•",
    bold: "**",
};

/// Discord's: a masked link's label shows backslashes instead of taking
/// them as escapes, so its markup characters are swapped for lookalikes.
const SYNTAX: Syntax = Syntax {
    link: masked,
    ..MARKDOWN
};

const CONTENT: usize = 2_000;
const TITLE: usize = 256;
const DESCRIPTION: usize = 4_096;
const EMBEDS: usize = 10;
const TOTAL: usize = 6_000;

/// The payload of `p`.
pub fn payload(p: &Post) -> Value {
    let subject = escape(p.title());
    let title = clip(&subject, TITLE);
    let lines = SYNTAX.lines(p);
    let limits = Limits {
        chunk: DESCRIPTION,
        chunks: EMBEDS,
        total: TOTAL - title.chars().count(),
        measure: Measure::Chars,
    };
    let chunks = fit::pack(&lines, p.more, limits, |n| SYNTAX.tail(p, n));
    let mut embeds: Vec<Value> = chunks
        .into_iter()
        .map(|d| json!({ "description": d }))
        .collect();
    match embeds.first_mut() {
        Some(first) => {
            first["title"] = json!(title);
            if let Some(url) = &p.full {
                first["url"] = json!(url);
            }
        }
        None => embeds.push(json!({ "title": title })),
    }
    json!({
        "content": clip(&subject, CONTENT),
        "embeds": embeds,
        "allowed_mentions": { "parse": [] },
    })
}

/// `[label](url)`: the label escaped, the URL unable to end the link.
pub(super) fn link(url: &str, label: &str) -> String {
    format!("[{}]({})", escape(label), target(url))
}

/// `url` unable to end a Markdown link early.
fn target(url: &str) -> String {
    url.replace('(', "%28")
        .replace(')', "%29")
        .replace('<', "%3C")
        .replace('>', "%3E")
        .replace(' ', "%20")
}

/// `[label](url)` as Discord shows it: the label's markup characters as
/// lookalikes that format nothing and cannot end the link.
fn masked(url: &str, label: &str) -> String {
    let label: String = label
        .chars()
        .map(|c| match c {
            '\\' => '⧵',
            '*' => '∗',
            '_' => 'ˍ',
            '~' => '∼',
            '`' => 'ˋ',
            '[' => '⁅',
            ']' => '⁆',
            '|' => '∣',
            '<' => '‹',
            '>' => '›',
            c => c,
        })
        .collect();
    format!("[{label}]({})", target(url))
}

/// Every Markdown character a backslash before it (Markdown takes any
/// escaped ASCII punctuation as itself), so nothing in a title formats,
/// links, quotes or mentions.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\*_~`|>#-[]()<@:!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{digest, digest_with, notification, tail_of_500, HOSTILE};
    use super::*;

    fn chars(v: &Value) -> usize {
        v.as_str().map_or(0, |s| s.chars().count())
    }

    #[test]
    fn hostile_titles_are_escaped_and_mention_no_one() {
        // Each hostile text as a linked title and in the sentence after it.
        let v = payload(&Post::of(&digest_with(
            HOSTILE.len(),
            |i| HOSTILE[i].into(),
            |i| format!(" was renamed from {}", HOSTILE[i]),
        )));
        assert_eq!(v["allowed_mentions"]["parse"], json!([]));
        let d = v["embeds"][0]["description"].as_str().unwrap();
        assert!(
            d.contains("\\@everyone") && !d.contains(" @everyone"),
            "{d}"
        );
        assert!(
            d.contains("\\*bold\\* \\_it\\_ \\~strike\\~ \\`code\\` \\[x\\]\\(https\\:"),
            "{d}"
        );
        assert!(d.contains("\\<\\!channel\\>") && !d.contains('\r'), "{d}");
        // A link's label takes lookalikes: Discord shows its backslashes.
        assert!(
            d.contains("[∗bold∗ ˍitˍ ∼strike∼ ˋcodeˋ ⁅x⁆(https://evil.example) # h]("),
            "{d}"
        );
        assert!(d.contains("[a∣b ‹https://evil.example∣click›]("), "{d}");
        assert!(d.contains("🚀🔥") && d.contains("עברית"));
        assert!(
            d.contains("](https://tracker.example/item/0?a=1&b=2)"),
            "{d}"
        );
        assert_eq!(v["content"], "Daily digest\\: Ops \\<team\\> & friends");
    }

    #[test]
    fn five_hundred_items_stay_within_every_limit() {
        let v = payload(&Post::of(&digest(500, |i| {
            format!("Item {i} {}", "y".repeat(60))
        })));
        let embeds = v["embeds"].as_array().unwrap();
        assert!(embeds.len() <= EMBEDS);
        assert!(chars(&v["content"]) <= CONTENT);
        let total: usize = embeds
            .iter()
            .map(|e| chars(&e["title"]) + chars(&e["description"]))
            .sum();
        assert!(total <= TOTAL, "{total}");
        assert!(embeds
            .iter()
            .all(|e| chars(&e["description"]) <= DESCRIPTION));
        assert!(embeds.iter().all(|e| chars(&e["title"]) <= TITLE));
        let all: Vec<&str> = embeds
            .iter()
            .flat_map(|e| e["description"].as_str().unwrap().lines())
            .collect();
        let shown = all.iter().filter(|l| l.starts_with('•')).count();
        let last = all.last().unwrap();
        tail_of_500(last, shown, true);
    }

    #[test]
    fn a_notification_is_its_subject_and_lines() {
        let v = payload(&Post::of(&notification()));
        assert_eq!(v["content"], "Disk almost full");
        assert_eq!(
            v["embeds"][0]["description"],
            "Body line one.\nSecond line."
        );
    }
}
