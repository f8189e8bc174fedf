//! The chat and push presets of the webhook listener: Slack, Discord,
//! Microsoft Teams and ntfy. The queue stores and hands over the same JSON
//! document the webhook channel posts (`super::body`); as it is sent, the
//! document is read into a [`Post`] (a subject, lines, the links) and
//! written in the service's own format, within the service's limits. A
//! post that would pass a limit is cut at a line and ends with "… and N
//! more" linking to the whole digest ([`fit`]). Nothing here is signed:
//! the URL is the credential.

mod discord;
pub(crate) mod fit;
mod ntfy;
mod slack;
mod teams;

use crate::i18n::{catalogs, Arg, Locale};
use serde_json::Value;

use crate::parties::Channel;
use crate::text::one_line;

/// What is posted: the body and the headers besides `user-agent`.
#[derive(Debug)]
pub struct Request {
    pub body: Vec<u8>,
    pub headers: Vec<(&'static str, String)>,
}

/// The request `channel`'s service takes for the document `doc` (one
/// digest, one notification, or a batch of them).
pub fn request(channel: Channel, doc: &[u8]) -> Result<Request, String> {
    let doc: Value = serde_json::from_slice(doc)
        .map_err(|e| format!("{}: the stored document is not JSON: {e}", channel.as_str()))?;
    let post = Post::of(&doc);
    let json = |v: Value| Request {
        body: v.to_string().into_bytes(),
        headers: vec![("content-type", "application/json".into())],
    };
    Ok(match channel {
        Channel::Slack => json(slack::payload(&post)),
        Channel::Discord => json(discord::payload(&post)),
        Channel::Teams => json(teams::payload(&post)),
        Channel::Ntfy => ntfy::request(&post),
        other => return Err(format!("{} is not a webhook preset", other.as_str())),
    })
}

/// One line of a post.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A collection's name, or a batched message's subject.
    Heading(String),
    /// A digest's item: its title, its link (http or https only), what
    /// changed, and where in that sentence the title stands (the words
    /// before and after it) when the document says so.
    Item {
        title: String,
        link: Option<String>,
        change: String,
        around: Option<(String, String)>,
    },
    /// A line of a notification's message.
    Text(String),
}

impl Line {
    /// Whether "… and N more" counts it when it is left out.
    fn counts(&self) -> bool {
        !matches!(self, Line::Heading(_))
    }
}

/// A document as the presets write it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Post {
    pub subject: String,
    pub lines: Vec<Line>,
    /// Items the digest itself left out (`[digest] max_items`).
    pub more: usize,
    /// The whole digest (`full_url`), else the manage page.
    pub full: Option<String>,
    /// The manage page.
    pub manage: Option<String>,
    /// The language of the digest's words (its document's `locale`).
    pub lang: Locale,
}

impl Post {
    /// The subject, or `digestd` when it is empty (a service refuses an
    /// empty title).
    pub fn title(&self) -> &str {
        if self.subject.is_empty() {
            "digestd"
        } else {
            &self.subject
        }
    }

    /// The post of a digest, a notification or a batch of them.
    pub fn of(doc: &Value) -> Post {
        let s = |v: &Value| plain(v.as_str().unwrap_or(""));
        match doc["type"].as_str() {
            Some("batch") => {
                let docs: Vec<Post> = doc["messages"]
                    .as_array()
                    .map(|a| a.iter().map(Post::of).collect())
                    .unwrap_or_default();
                let lang = docs.first().map_or(Locale::En, |d| d.lang);
                let mut out = Post {
                    subject: match docs.first() {
                        Some(first) => catalogs().format(
                            lang,
                            "batch-subject",
                            &[
                                ("subject", Arg::Str(&first.subject)),
                                ("count", Arg::Num(docs.len() - 1)),
                            ],
                        ),
                        None => String::new(),
                    },
                    lang,
                    ..Post::default()
                };
                for p in docs {
                    out.lines.push(Line::Heading(p.subject));
                    out.lines.extend(p.lines);
                    out.more += p.more;
                    out.full = out.full.or(p.full);
                    out.manage = out.manage.or(p.manage);
                }
                out
            }
            Some("digest") => {
                let mut lines = Vec::new();
                for sec in doc["sections"].as_array().into_iter().flatten() {
                    let name = s(&sec["collection"]);
                    if !name.is_empty() {
                        lines.push(Line::Heading(name));
                    }
                    for it in sec["items"].as_array().into_iter().flatten() {
                        let (title, change) = (s(&it["title"]), s(&it["change"]));
                        // The title's place in the sentence, when the
                        // parts run together to the whole.
                        let around = match (it["before"].as_str(), it["after"].as_str()) {
                            (Some(b), Some(a)) => {
                                let (b, a) = (plain(b), plain(a));
                                (format!("{b}{title}{a}") == change).then_some((b, a))
                            }
                            _ => None,
                        };
                        lines.push(Line::Item {
                            title,
                            link: web_link(it["link"].as_str()),
                            change,
                            around,
                        });
                    }
                }
                let manage = web_link(doc["manage_url"].as_str());
                Post {
                    subject: s(&doc["subject"]),
                    lines,
                    more: doc["more"].as_u64().unwrap_or(0) as usize,
                    full: web_link(doc["full_url"].as_str()).or_else(|| manage.clone()),
                    manage,
                    lang: doc["locale"]
                        .as_str()
                        .and_then(Locale::exact)
                        .unwrap_or(Locale::En),
                }
            }
            _ => Post {
                subject: s(&doc["subject"]),
                lines: doc["message"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .map(plain)
                    .filter(|l| !l.is_empty())
                    .map(Line::Text)
                    .collect(),
                ..Post::default()
            },
        }
    }
}

/// How a service writes a line: its escaping, its links, its bullet and
/// its bold.
pub struct Syntax {
    pub escape: fn(&str) -> String,
    /// `(url, label)` as a link whose label is escaped.
    pub link: fn(&str, &str) -> String,
    pub bullet: &'static str,
    pub bold: &'static str,
}

impl Syntax {
    /// `l` written in this syntax.
    pub fn line(&self, l: &Line) -> String {
        let esc = self.escape;
        match l {
            Line::Heading(h) => format!("{0}{1}{0}", self.bold, esc(h)),
            Line::Text(t) => esc(t),
            Line::Item {
                title,
                link,
                change,
                around,
            } => {
                let title = match link {
                    Some(url) => (self.link)(url, &clip(title, 300)),
                    None => esc(title),
                };
                match around {
                    // The sentence once, its title linked where it
                    // stands.
                    Some((before, after)) => {
                        format!("{} {}{title}{}", self.bullet, esc(before), esc(after))
                    }
                    None => format!("{} {title} — {}", self.bullet, esc(change)),
                }
            }
        }
    }

    /// The lines of `p`, each with whether "… and N more" counts it.
    pub fn lines(&self, p: &Post) -> Vec<fit::Written> {
        p.lines.iter().map(|l| (self.line(l), l.counts())).collect()
    }

    /// "… and N more" in `p`'s language, linking to the whole digest
    /// when there is one.
    pub fn tail(&self, p: &Post, n: usize) -> String {
        let c = catalogs();
        let more = c.format(p.lang, "more", &[("count", Arg::Num(n))]);
        match p.full.as_deref() {
            Some(url) => {
                let label = c.text(p.lang, "the-full-digest");
                format!("… {more}: {}", (self.link)(url, label))
            }
            None => format!("… {more}"),
        }
    }
}

/// `s` on one line (control characters as spaces), without the
/// directional overrides and isolates that would turn the text after it
/// around (right-to-left text itself is kept).
fn plain(s: &str) -> String {
    one_line(s)
        .chars()
        .filter(|c| !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .collect()
}

/// `url` when it is an http or https link: anything else (`javascript:`,
/// a relative path, the empty string) is shown as no link at all.
fn web_link(url: Option<&str>) -> Option<String> {
    let u = url::Url::parse(url?.trim()).ok()?;
    matches!(u.scheme(), "http" | "https").then(|| u.to_string())
}

/// `s` cut to at most `max` characters, ending with "…" when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to at most `max` bytes on a character boundary, with "…".
pub(crate) fn clip_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Titles that try every trick the presets escape.
    pub const HOSTILE: [&str; 8] = [
        "<!channel> ping",
        "@everyone look",
        "&lt;b&gt; already escaped",
        "a|b <https://evil.example|click>",
        "line one\r\nline two",
        "emoji 🚀🔥 done",
        "עברית RTL \u{202e}txet",
        "*bold* _it_ ~strike~ `code` [x](https://evil.example) # h",
    ];

    /// A digest of `n` items in one collection, each titled by `title(i)`
    /// and "changed status to done".
    pub fn digest(n: usize, title: impl Fn(usize) -> String) -> Value {
        digest_with(n, title, |_| " changed status to done".into())
    }

    /// A digest of `n` items, each titled by `title(i)`, whose sentence is
    /// its title and then `after(i)`.
    pub(crate) fn digest_with(
        n: usize,
        title: impl Fn(usize) -> String,
        after: impl Fn(usize) -> String,
    ) -> Value {
        let items: Vec<Value> = (0..n)
            .map(|i| {
                json!({
                    "title": title(i),
                    "link": format!("https://tracker.example/item/{i}?a=1&b=2"),
                    "change": format!("{}{}", title(i), after(i)),
                    "before": "",
                    "after": after(i),
                })
            })
            .collect();
        json!({
            "type": "digest",
            "request_id": 1001,
            "subject": "Daily digest: Ops <team> & friends",
            "sections": [{"collection": "Ops", "items": items}],
            "more": 0,
            "manage_url": "https://digestd.example/s/abc",
            "unsubscribe_url": null,
            "full_url": "https://digestd.example/d/1001?sig=x",
        })
    }

    /// `last` is the tail of a 500-item digest of which `shown` were
    /// shown, its link written as `[…](` (Markdown) or `<…|` (Slack).
    pub(crate) fn tail_of_500(last: &str, shown: usize, markdown: bool) {
        let link = match markdown {
            true => "[the full digest](https://digestd.example/d/1001",
            false => "<https://digestd.example/d/1001?sig=x|the full digest>",
        };
        let want = format!("… and {} more: {link}", 500 - shown);
        assert!(last.starts_with(&want), "{last}");
        assert!(shown > 10, "{shown} shown");
    }

    pub fn notification() -> Value {
        json!({
            "type": "notification",
            "request_id": 7,
            "subject": "Disk almost full",
            "message": "Body line one.\nSecond line.",
            "requested_at": "2026-11-23T09:00:00Z",
        })
    }

    #[test]
    fn a_digest_a_notification_and_a_batch_read_into_lines() {
        let d = Post::of(&digest(2, |i| format!("Item {i}")));
        assert_eq!(d.lines.len(), 3);
        assert_eq!(
            d.full.as_deref(),
            Some("https://digestd.example/d/1001?sig=x")
        );
        let n = Post::of(&notification());
        assert_eq!(
            n.lines,
            [
                Line::Text("Body line one.".into()),
                Line::Text("Second line.".into())
            ]
        );
        let b = Post::of(
            &json!({"type": "batch", "messages": [notification(), digest(1, |_| "x".into())]}),
        );
        assert_eq!(b.subject, "Disk almost full (+1 more)");
        assert_eq!(b.lines[0], Line::Heading("Disk almost full".into()));
        assert_eq!(web_link(Some("javascript:alert(1)")), None);
        assert_eq!(plain("עברית \u{202e}txet\r\n"), "עברית txet  ");
    }

    #[test]
    fn an_item_says_its_sentence_once_with_the_title_linked_where_it_stands() {
        let slack = Syntax {
            escape: |s| s.replace('<', "&lt;"),
            link: |u, l| format!("<{u}|{l}>"),
            bullet: "•",
            bold: "*",
        };
        let item = |before: &str, after: &str, change: &str| {
            Post::of(
                &json!({"type": "digest", "sections": [{"collection": "C", "items": [{
                    "title": "Budget <sync>", "link": "https://t.example/1",
                    "change": change, "before": before, "after": after,
                }]}]}),
            )
            .lines[1]
                .clone()
        };
        let whole = "Wed 18 Nov, 20:30: Budget <sync> (repeats)";
        assert_eq!(
            slack.line(&item("Wed 18 Nov, 20:30: ", " (repeats)", whole)),
            "• Wed 18 Nov, 20:30: <https://t.example/1|Budget <sync>> (repeats)"
        );
        // Parts that do not make the sentence (an older document, or one
        // made by hand): the title, then the whole sentence.
        assert_eq!(
            slack.line(&item("Thu ", " (repeats)", whole)),
            "• <https://t.example/1|Budget <sync>> — Wed 18 Nov, 20:30: Budget &lt;sync> (repeats)"
        );
        // A control character in a part is a space, as in the sentence.
        assert_eq!(
            slack.line(&item("On\nWed: ", "", "On Wed: Budget <sync>")),
            "• On Wed: <https://t.example/1|Budget <sync>>"
        );
    }

    #[test]
    fn every_preset_refuses_what_is_not_json_and_the_webhook() {
        assert!(request(Channel::Slack, b"not json").is_err());
        assert!(request(Channel::Webhook, b"{}").is_err());
    }
}
