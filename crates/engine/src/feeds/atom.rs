//! The Atom 1.0 document (RFC 4287) of a feed, written with
//! `atom_syndication`: pure, data in and XML out.
//!
//! Text constructs (titles, names, summaries) are escaped by the writer;
//! XHTML content is written as given, so it is built here from escaped
//! pieces ([`escape`]) and is well-formed by construction. Every text is
//! first cleaned of what XML 1.0 cannot carry, whatever the log holds.
//!
//! Ids are tag URIs (RFC 4151) that do not depend on the caller: a changed
//! entry is the item's net change over the window (collection, item,
//! window); a range entry is one start or reminder of an item (collection,
//! item, kind, instant), the same in every window that holds it.
//!
//! An entry links to its item's address in its source system when the
//! item has one, and has no link otherwise: digestd has no page of its own
//! for an item. A page with more after it links to the next one and to
//! the first (RFC 5005).

use std::collections::BTreeMap;
use std::sync::Arc;

use atom_syndication::{Category, Content, Entry, Feed, Generator, Link, Person, Text};
use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;

use super::{Head, Query};
use crate::digest::compose::{Changes, ItemChange, Upcoming, When};
use crate::digest::words::{self, Style};
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::text::one_line;
use crate::validate;

const XHTML_NS: &str = "http://www.w3.org/1999/xhtml";
const TAG: &str = "tag:digestd,2026:";

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `t` in `tz`, for people: "2026-11-24 15:00 PST".
pub fn local(t: DateTime<Utc>, tz: Tz) -> String {
    t.with_timezone(&tz).format("%Y-%m-%d %H:%M %Z").to_string()
}

/// `s` without what XML 1.0 forbids (replaced by U+FFFD).
fn xml_clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if validate::is_xml_char(c) {
                c
            } else {
                '\u{FFFD}'
            }
        })
        .collect()
}

/// A one-line text for a title or a name.
fn line(s: &str) -> String {
    xml_clean(&one_line(s))
}

/// `s` as XML character data or attribute value: markup escaped, CR kept
/// as a reference (a parser would fold a raw one), forbidden characters
/// replaced.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\r' => out.push_str("&#13;"),
            c if !validate::is_xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Where the feed and its items live.
pub struct Urls<'a> {
    base: &'a str,
}

impl<'a> Urls<'a> {
    pub fn new(base_url: &'a str) -> Self {
        Urls {
            base: base_url.trim_end_matches('/'),
        }
    }

    /// The feed's address at the page after the cursor `after` (never
    /// with a ticket: a feed is copied around).
    pub fn feed(&self, head: &Head, q: &Query, after: Option<&str>) -> String {
        let mut qs = url::form_urlencoded::Serializer::new(String::new());
        qs.append_pair("start", &rfc3339(q.start));
        qs.append_pair("end", &rfc3339(q.end));
        if let Some(tz) = &q.tz_param {
            qs.append_pair("tz", tz);
        }
        if let Some(a) = after {
            qs.append_pair("after", a);
        }
        format!(
            "{}/atom/collection/{}/{}?{}",
            self.base,
            head.uuid,
            q.projection.as_str(),
            qs.finish()
        )
    }
}

/// An entry's links: its item's address, when it has one.
fn item_links(url: Option<&str>) -> Vec<Link> {
    url.map(|u| link("alternate", u.to_string(), Some("text/html"), None))
        .into_iter()
        .collect()
}

fn link(rel: &str, href: String, mime: Option<&str>, title: Option<&str>) -> Link {
    Link {
        rel: rel.into(),
        href,
        mime_type: mime.map(Into::into),
        title: title.map(Into::into),
        ..Default::default()
    }
}

fn xhtml(class: &str, body: &str) -> Content {
    Content {
        content_type: Some("xhtml".into()),
        value: Some(format!(
            "<div xmlns=\"{XHTML_NS}\" class=\"{class}\">{body}</div>"
        )),
        ..Default::default()
    }
}

/// The feed around its entries; `next`, the cursor of the page after it.
fn feed(
    head: &Head,
    q: &Query,
    urls: &Urls,
    subtitle: String,
    entries: Vec<Entry>,
    next: Option<&str>,
) -> Feed {
    let atom = Some("application/atom+xml");
    let this = q.after.as_ref().map(|(_, raw)| raw.as_str());
    let mut links = vec![link("self", urls.feed(head, q, this), atom, None)];
    if this.is_some() || next.is_some() {
        links.push(link("first", urls.feed(head, q, None), atom, None));
    }
    if let Some(n) = next {
        links.push(link("next", urls.feed(head, q, Some(n)), atom, None));
    }
    Feed {
        title: Text::plain(line(&head.name)),
        id: format!(
            "{TAG}{}/{}/{}/{}",
            head.uuid,
            q.projection.as_str(),
            rfc3339(q.start),
            rfc3339(q.end)
        ),
        updated: head.changed_at.fixed_offset(),
        authors: vec![Person {
            name: head
                .owner
                .as_deref()
                .map(line)
                .unwrap_or_else(|| "digestd".into()),
            ..Default::default()
        }],
        generator: Some(Generator {
            value: "digestd".into(),
            uri: None,
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        links,
        subtitle: Some(Text::plain(subtitle)),
        entries,
        ..Default::default()
    }
}

/// The feed's XML. Written into a buffer that doubles as it grows, so up
/// to half of it may be spare: given back, since a feed is kept in the
/// feed cache, which counts its length (`[http] feed_cache_bytes`).
fn write(feed: &Feed) -> Result<String> {
    let mut out = feed
        .write_to(Vec::new())
        .map_err(|e| Error::Storage(format!("atom: {e}")))?;
    out.shrink_to_fit();
    String::from_utf8(out).map_err(|e| Error::Storage(format!("atom: {e}")))
}

fn window(q: &Query) -> String {
    format!("{} to {}", local(q.start, q.tz), local(q.end, q.tz))
}

/// An attribute value for the content: an instant in the feed's zone,
/// anything else as stored.
fn value(v: Option<&str>, tz: Tz) -> String {
    match v {
        None => "—".into(),
        Some(s) => match DateTime::parse_from_rfc3339(s) {
            Ok(t) => local(t.with_timezone(&Utc), tz),
            Err(_) => s.to_string(),
        },
    }
}

/// The `changed` feed: one entry per item, its net change over the window.
pub(crate) fn changed_feed(
    head: &Head,
    q: &Query,
    base_url: &str,
    changes: &[Arc<ItemChange>],
    names: &BTreeMap<PartyId, String>,
    next: Option<&str>,
) -> Result<String> {
    let urls = Urls::new(base_url);
    let style = Style::new(q.tz, &q.locale);
    let entries = changes
        .iter()
        .map(|c| {
            let actors: Vec<String> = c
                .actors
                .iter()
                .map(|a| line(names.get(a).map_or("someone", String::as_str)))
                .collect();
            let sentence = words::change_line(&style, c, &words::people(style.lang, &actors), &head.name);
            let mut body = format!(
                "<p class=\"action\">{} by {} at {}</p>",
                c.action.as_str(),
                escape(&words::people(style.lang, &actors)),
                escape(&local(c.last_at, q.tz))
            );
            if !c.changes.is_empty() {
                body.push_str("<ul class=\"changedprops\">");
                for a in &c.changes {
                    body.push_str(&format!(
                        "<li class=\"prop\"><span class=\"id\">{}</span>: \
                         <span class=\"oldvalue\">{}</span> → <span class=\"newvalue\">{}</span></li>",
                        escape(&a.attribute),
                        escape(&value(a.old.as_deref(), q.tz)),
                        escape(&value(a.new.as_deref(), q.tz)),
                    ));
                }
                body.push_str("</ul>");
            }
            Entry {
                title: Text::plain(line(&c.title)),
                id: format!(
                    "{TAG}{}/changed/{}/{}/{}",
                    head.uuid,
                    c.item_uuid,
                    rfc3339(q.start),
                    rfc3339(q.end)
                ),
                updated: c.last_at.fixed_offset(),
                published: Some(c.first_at.fixed_offset()),
                authors: actors
                    .iter()
                    .map(|n| Person {
                        name: n.clone(),
                        ..Default::default()
                    })
                    .collect(),
                categories: vec![Category {
                    term: c.action.as_str().into(),
                    ..Default::default()
                }],
                links: item_links(c.url.as_deref()),
                summary: Some(Text::plain(line(sentence.text()))),
                content: Some(xhtml("change", &body)),
                ..Default::default()
            }
        })
        .collect();
    write(&feed(
        head,
        q,
        &urls,
        format!("Changes from {}", window(q)),
        entries,
        next,
    ))
}

/// The `range` feed: one entry per start or reminder in the window, each
/// instance of a recurring event on its own, linked to its series.
pub(crate) fn range_feed(
    head: &Head,
    q: &Query,
    base_url: &str,
    upcoming: &[Upcoming],
    next: Option<&str>,
) -> Result<String> {
    let urls = Urls::new(base_url);
    let style = Style::new(q.tz, &q.locale);
    let entries = upcoming
        .iter()
        .map(|u| {
            let what = match u.what {
                When::Starts => "starts",
                When::Reminder => "reminder",
            };
            let mut body = format!(
                "<p class=\"when\"><span class=\"what\">{}</span> at <span class=\"at\">{}</span></p>\
                 <p class=\"kind\">{}</p>",
                if u.what == When::Starts { "Starts" } else { "Reminder" },
                escape(&local(u.at, q.tz)),
                escape(&u.kind)
            );
            if u.recurring {
                body.push_str("<p class=\"recurring\">One instance of a recurring item.</p>");
            }
            let links = item_links(u.url.as_deref());
            Entry {
                title: Text::plain(line(&u.title)),
                id: format!("{TAG}{}/{}/{what}/{}", head.uuid, u.item_uuid, rfc3339(u.at)),
                updated: head.changed_at.fixed_offset(),
                categories: vec![Category {
                    term: what.into(),
                    ..Default::default()
                }],
                links,
                summary: Some(Text::plain(line(
                    words::upcoming_line(&style, u).text(),
                ))),
                content: Some(xhtml("upcoming", &body)),
                ..Default::default()
            }
        })
        .collect();
    write(&feed(
        head,
        q,
        &urls,
        format!("Starts and reminders from {}", window(q)),
        entries,
        next,
    ))
}

/// The feed of either projection (see [`super::changed`], [`super::range`]).
pub enum Data {
    Changed(Changes, BTreeMap<PartyId, String>),
    Range(Vec<Upcoming>),
}

/// Writes `data` as `q`'s feed; `next`, the cursor of the page after it.
pub fn render(
    head: &Head,
    q: &Query,
    base_url: &str,
    data: &Data,
    next: Option<&str>,
) -> Result<String> {
    match data {
        Data::Changed(c, names) => changed_feed(head, q, base_url, c, names, next),
        Data::Range(u) => range_feed(head, q, base_url, u, next),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_leaves_no_markup_and_keeps_cr() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\"\r\n\u{1}"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;&#13;\n\u{FFFD}"
        );
        assert_eq!(line("a\r\nb\u{FFFE}"), "a  b\u{FFFD}");
    }
}
