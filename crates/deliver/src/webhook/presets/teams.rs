//! Microsoft Teams' Workflows webhooks: a message with one Adaptive Card
//! (version 1.4): a TextBlock for the subject, one for each line
//! (`• [title](link) — change`, Markdown escaped), and Action.OpenUrl
//! buttons to the full digest and the manage page. The payload is kept
//! within 28 KB, Teams' limit for a message.

use crate::i18n::catalogs;
use serde_json::{json, Value};

use super::fit;
use super::{clip, discord, Line, Post, Syntax};

/// Markdown as Teams reads it: Discord's escaping; a heading is a bold
/// TextBlock of its own.
const SYNTAX: Syntax = Syntax {
    bold: "",
    ..discord::MARKDOWN
};

/// The most bytes a payload may have.
pub const MAX: usize = 28_000;
/// The longest line shown, in characters.
const LINE: usize = 2_000;

/// The payload of `p`.
pub fn payload(p: &Post) -> Value {
    let subject = p.title();
    let blocks: Vec<(Value, bool)> = p.lines.iter().map(|l| (block(l), l.counts())).collect();
    let mut actions = Vec::new();
    if let Some(url) = &p.full {
        actions
            .push(json!({"type": "Action.OpenUrl", "title": catalogs().text(p.lang, "open-full-digest"), "url": url}));
    }
    if let Some(url) = p.manage.as_ref().filter(|m| Some(*m) != p.full.as_ref()) {
        actions.push(json!({"type": "Action.OpenUrl", "title": catalogs().text(p.lang, "manage-short"), "url": url}));
    }
    let head = json!({
        "type": "TextBlock", "text": clip(&(SYNTAX.escape)(subject), LINE),
        "size": "Large", "weight": "Bolder", "wrap": true,
    });
    let size = |v: &Value| v.to_string().len() + 1;
    let base = size(&message(vec![head.clone()], actions.clone()));
    let costs: Vec<usize> = blocks.iter().map(|b| size(&b.0)).collect();
    let most = blocks.iter().filter(|b| b.1).count() + p.more;
    let reserve = size(&text(SYNTAX.tail(p, most)));
    let budget = MAX.saturating_sub(base);
    let n = if p.more == 0 {
        fit::take(&costs, budget, reserve)
    } else {
        fit::take(&costs, budget.saturating_sub(reserve), 0)
    };
    let mut body = vec![head];
    body.extend(blocks[..n].iter().map(|b| b.0.clone()));
    let left = blocks[n..].iter().filter(|b| b.1).count() + p.more;
    if left > 0 {
        body.push(text(SYNTAX.tail(p, left)));
    }
    message(body, actions)
}

fn message(body: Vec<Value>, actions: Vec<Value>) -> Value {
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": body,
                "actions": actions,
            },
        }],
    })
}

fn text(s: String) -> Value {
    json!({"type": "TextBlock", "text": s, "wrap": true})
}

fn block(l: &Line) -> Value {
    let t = clip(&SYNTAX.line(l), LINE);
    match l {
        Line::Heading(_) => json!({
            "type": "TextBlock", "text": t, "weight": "Bolder", "wrap": true, "spacing": "Medium",
        }),
        _ => text(t),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{digest, digest_with, notification, tail_of_500, HOSTILE};
    use super::*;

    fn card(v: &Value) -> &Value {
        &v["attachments"][0]["content"]
    }

    #[test]
    fn hostile_titles_are_escaped() {
        let v = payload(&Post::of(&digest_with(
            HOSTILE.len(),
            |i| HOSTILE[i].into(),
            |i| format!(" was renamed from {}", HOSTILE[i]),
        )));
        assert_eq!(v["type"], "message");
        assert_eq!(
            v["attachments"][0]["contentType"],
            "application/vnd.microsoft.card.adaptive"
        );
        assert_eq!(card(&v)["version"], "1.4");
        let body = card(&v)["body"].as_array().unwrap();
        let all: Vec<&str> = body.iter().map(|b| b["text"].as_str().unwrap()).collect();
        let all = all.join("\n");
        assert!(
            all.contains("\\[x\\]\\(https\\:") && !all.contains('\r'),
            "{all}"
        );
        assert!(all.contains("🚀🔥") && all.contains("עברית"));
        assert_eq!(card(&v)["actions"][0]["type"], "Action.OpenUrl");
        assert_eq!(
            card(&v)["actions"][1]["url"],
            "https://digestd.example/s/abc"
        );
    }

    #[test]
    fn five_hundred_items_stay_within_28_kb() {
        let v = payload(&Post::of(&digest(500, |i| {
            format!("Item {i} {}", "z".repeat(60))
        })));
        assert!(v.to_string().len() <= MAX, "{}", v.to_string().len());
        let body = card(&v)["body"].as_array().unwrap();
        let shown = body.len() - 3; // the subject, the heading, the tail
        let last = body.last().unwrap()["text"].as_str().unwrap();
        tail_of_500(last, shown, true);
    }

    #[test]
    fn a_notification_is_its_subject_and_lines() {
        let v = payload(&Post::of(&notification()));
        let body = card(&v)["body"].as_array().unwrap();
        assert_eq!(body[0]["text"], "Disk almost full");
        assert_eq!(body[2]["text"], "Second line.");
        assert_eq!(card(&v)["actions"], json!([]));
    }
}
