//! Rendering a composed digest for each channel with askama templates from
//! `templates/`: email text and HTML (the HTML template escapes every
//! value), compact XMPP text, an SMS summary fitted to a number of
//! segments, and the webhook's JSON document ([`webhook`]). A subject never holds a control character, so it cannot carry
//! a header of its own.

use std::borrow::Cow;
use std::sync::Arc;

use askama::filters::{Escaper, Html};
use askama::Template;
use chrono::{DateTime, Utc};

use super::calendar::Publisher;
use super::compose::Upcoming;
use super::listed::Listed;
use super::words::{self, Line, Style};
use crate::error::{Error, Result};
use crate::i18n::Arg;
use crate::ids::{CollectionId, PartyId, SubscriptionId};
use crate::parties::Channel;
use crate::subscriptions::{Frequency, Kind};
use crate::text::gsm as sms;
use crate::text::one_line;

/// What a digest holds.
///
/// Shared: subscribers of one collection due at one tick read one window,
/// so their digests hold the same list.
#[derive(Debug, Clone)]
pub enum Content {
    /// Net changes: the first ones, and how many more.
    Changes(Arc<Listed>),
    Upcoming(Arc<Vec<Upcoming>>),
}

impl Content {
    /// Items in all, shown or not.
    pub fn len(&self) -> usize {
        match self {
            Content::Changes(v) => v.len(),
            Content::Upcoming(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The address of the shared list, to key caches by.
    pub(crate) fn ptr(&self) -> usize {
        match self {
            Content::Changes(v) => Arc::as_ptr(v) as usize,
            Content::Upcoming(v) => Arc::as_ptr(v) as usize,
        }
    }

    /// Items held, the first of [`Content::len`].
    fn held(&self) -> usize {
        match self {
            Content::Changes(v) => v.items.len(),
            Content::Upcoming(v) => v.len(),
        }
    }

    fn collection_of(&self, i: usize) -> CollectionId {
        match self {
            Content::Changes(v) => v.items[i].collection,
            Content::Upcoming(v) => v[i].collection,
        }
    }

    /// The collections of the items not held, in order.
    fn rest_collections(&self) -> &[CollectionId] {
        match self {
            Content::Changes(v) => &v.rest_collections,
            Content::Upcoming(_) => &[],
        }
    }
}

/// Everything rendering needs besides the content.
pub struct Frame<'a> {
    pub style: Style,
    pub kind: Kind,
    pub frequency: Frequency,
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    /// The digest's subscription (`None` in a preview of no stored one).
    pub subscription: Option<SubscriptionId>,
    /// The subscription's own collection, or `None` for all of them.
    pub collection: Option<CollectionId>,
    pub collection_name: &'a dyn Fn(CollectionId) -> Cow<'a, str>,
    pub party_name: &'a dyn Fn(PartyId) -> Cow<'a, str>,
    /// Items shown at most; the rest become "and N more".
    pub max_items: usize,
    pub sms_segments: usize,
    pub manage_url: String,
    pub unsubscribe_url: Option<String>,
    /// Where the whole digest can be read (the SMS and "N more" link).
    pub full_url: String,
    /// Who publishes a forward digest's calendar; `None`: it has none
    /// (`[email] calendar = false`, or a frame that renders a built body).
    pub calendar: Option<Arc<Publisher>>,
}

/// Which renderings a digest gets: only what the channels of its request
/// read. Email reads the text and HTML parts, XMPP the chat text, SMS the
/// SMS text; a request to a group expands to the members on the request's
/// own channels, so the group's request needs no more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts {
    /// The email's text and HTML parts.
    pub email: bool,
    /// The XMPP text.
    pub chat: bool,
    /// The SMS text.
    pub sms: bool,
    /// The webhook's JSON document (the presets' bodies are built from it).
    pub webhook: bool,
}

impl Parts {
    /// Every rendering (`digestd preview`).
    pub const ALL: Parts = Parts {
        email: true,
        chat: true,
        sms: true,
        webhook: true,
    };

    /// What a request on `channels` (comma-separated, as subscriptions and
    /// requests store them) needs.
    pub fn for_channels(channels: &str) -> Parts {
        let has = |name: &str| channels.split(',').any(|c| c.trim() == name);
        Parts {
            email: has("email"),
            chat: has("xmpp"),
            sms: has("sms"),
            // The presets and Matrix build their bodies from the same
            // document.
            webhook: Channel::ALL
                .into_iter()
                .any(|c| c.reads_document() && has(c.as_str())),
        }
    }
}

/// A digest rendered for the channels it goes out on: `None` for a
/// rendering no channel of its request reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    /// The email's text part.
    pub text: Option<String>,
    /// The email's HTML part.
    pub html: Option<String>,
    pub chat: Option<String>,
    pub sms: Option<String>,
    /// The webhook's JSON document.
    pub webhook: Option<String>,
    /// The email's calendar (a forward digest's, `super::calendar`).
    pub calendar: Option<String>,
}

impl Rendered {
    /// Bytes of text rendered.
    pub fn bytes(&self) -> usize {
        [
            &self.text,
            &self.html,
            &self.chat,
            &self.sms,
            &self.webhook,
            &self.calendar,
        ]
        .iter()
        .map(|r| r.as_ref().map_or(0, String::len))
        .sum()
    }
}

/// One collection's lines.
pub struct Section {
    pub name: String,
    pub lines: Vec<Line>,
}

/// What every recipient of the same content in the same style reads: the
/// subject, the heading and the lines. Built once and shared by such
/// recipients.
pub struct Body {
    /// The same for every digest of the subscription ([`words::subject`]),
    /// so mail readers that thread by subject keep them together.
    pub subject: String,
    /// What this digest holds and since when: the body's first line (and
    /// the SMS's, and the webhook document's `subject`).
    pub heading: String,
    pub sections: Vec<Section>,
    /// Items left out by the cap.
    pub more: usize,
    /// A forward digest's calendar of the items its lines list: the same
    /// for every recipient of its content, whatever their style.
    pub calendar: Option<String>,
    /// The words around the lines, in the reader's language.
    pub words: Words,
}

/// What the templates see: the body and the recipient's own links.
pub struct View<'a> {
    pub subject: &'a str,
    pub heading: &'a str,
    pub sections: &'a [Section],
    pub more: usize,
    pub tz_name: &'a str,
    pub manage_url: &'a str,
    pub unsubscribe_url: Option<&'a str>,
    pub full_url: &'a str,
    pub calendar: Option<&'a str>,
    pub w: &'a Words,
    /// The operator's branding.
    pub b: &'static crate::config::BrandingConfig,
}

#[derive(Template)]
#[template(path = "email/digest.txt")]
struct EmailText<'a> {
    d: &'a View<'a>,
}

#[derive(Template)]
#[template(path = "email/digest.html")]
struct EmailHtml<'a> {
    d: &'a View<'a>,
}

#[derive(Template)]
#[template(path = "xmpp/digest.txt")]
struct Chat<'a> {
    d: &'a View<'a>,
}

/// Builds the body: sections per collection in order of first appearance,
/// capped at `max_items` lines in all, the heading and the subject.
pub fn body(content: &Content, f: &Frame) -> Body {
    let shown = content.held().min(f.max_items.max(1));
    let mut sections: Vec<(CollectionId, Section)> = Vec::new();
    let mut colls_in_content: Vec<CollectionId> = Vec::new();
    // The names of a line's actors, written afresh for each line.
    let mut who = String::new();
    for i in 0..content.held() {
        let coll = content.collection_of(i);
        if !colls_in_content.contains(&coll) {
            colls_in_content.push(coll);
        }
        if i >= shown {
            continue;
        }
        let name = (f.collection_name)(coll);
        let line = match content {
            Content::Changes(v) => {
                let ch = &v.items[i];
                who.clear();
                words::push_people(&mut who, f.style.lang, ch.actors.len(), |k| {
                    (f.party_name)(ch.actors[k])
                });
                let line = words::change_line(&f.style, ch, &who, &name);
                // Recorded late: the digest says when it happened.
                if ch.first_at < f.window_start {
                    words::earlier(&f.style, line, ch.first_at)
                } else {
                    line
                }
            }
            Content::Upcoming(v) => words::upcoming_line(&f.style, &v[i]),
        };
        match sections.iter_mut().find(|(c, _)| *c == coll) {
            Some((_, s)) => s.lines.push(line),
            None => sections.push((
                coll,
                Section {
                    name: name.into_owned(),
                    lines: vec![line],
                },
            )),
        }
    }
    for c in content.rest_collections() {
        if !colls_in_content.contains(c) {
            colls_in_content.push(*c);
        }
    }
    let colls: Vec<Cow<str>> = match f.collection {
        Some(c) => vec![(f.collection_name)(c)],
        None => colls_in_content
            .into_iter()
            .map(|c| (f.collection_name)(c))
            .collect(),
    };
    let colls = words::collections_phrase(f.style.lang, &colls);
    let subject = words::subject(
        f.style.lang,
        f.kind,
        f.frequency,
        f.collection.map(|c| (f.collection_name)(c)).as_deref(),
    );
    let n = content.len();
    let calendar = match (content, &f.calendar) {
        (Content::Upcoming(v), Some(p)) if f.kind == Kind::Forward => {
            super::calendar::calendar(v, shown, p, (f.window_start, f.window_end))
        }
        _ => None,
    };
    Body {
        subject: one_line(&subject),
        heading: one_line(&with_seen(heading(content.len(), &colls, f), content, f)),
        sections: sections.into_iter().map(|(_, s)| s).collect(),
        more: n - shown,
        calendar,
        words: Words::new(&f.style, n - shown),
    }
}

/// `heading` and, when seen marks left changes out, how many: in the first
/// line, so every channel's rendering says it.
fn with_seen(heading: String, content: &Content, f: &Frame) -> String {
    match content {
        Content::Changes(v) if v.seen > 0 => {
            let seen = words::seen_left_out(f.style.lang, v.seen);
            f.style.say(
                "heading-seen",
                &[("heading", Arg::Str(&heading)), ("seen", Arg::Str(&seen))],
            )
        }
        _ => heading,
    }
}

/// The first line of a digest: how much it holds of which collections,
/// and since when (what changed) or over which span (what is coming up).
fn heading(n: usize, colls: &str, f: &Frame) -> String {
    let s = &f.style;
    let (start, end) = (f.window_start, f.window_end);
    // What changed: since when; what is coming up: over which span.
    let (key, when, what) = match f.kind {
        Kind::Modification => {
            let key = if n == 0 {
                "heading-no-changes"
            } else {
                "heading-changes"
            };
            (key, "since", s.since(start, end))
        }
        Kind::Forward => {
            let span = match f.frequency {
                Frequency::Hourly => "span-hourly",
                Frequency::Daily => "span-daily",
                Frequency::Weekly => "span-weekly",
            };
            let (time, zone, date) = (s.time(start), s.zone(start), s.date(start));
            let args = [
                ("time", Arg::Str(&time)),
                ("zone", Arg::Str(&zone)),
                ("date", Arg::Str(&date)),
            ];
            let key = if n == 0 {
                "heading-nothing-upcoming"
            } else {
                "heading-upcoming"
            };
            (key, "span", s.say(span, &args))
        }
    };
    s.say(
        key,
        &[
            ("count", Arg::Num(n)),
            ("collections", Arg::Str(colls)),
            (when, Arg::Str(&what)),
        ],
    )
}

/// The view of `b` for the recipient framed by `f`.
pub fn view<'a>(b: &'a Body, f: &'a Frame) -> View<'a> {
    View {
        subject: &b.subject,
        heading: &b.heading,
        sections: &b.sections,
        more: b.more,
        tz_name: f.style.tz.name(),
        manage_url: &f.manage_url,
        unsubscribe_url: f.unsubscribe_url.as_deref(),
        full_url: &f.full_url,
        calendar: b.calendar.as_deref(),
        w: &b.words,
        b: crate::config::branding(),
    }
}

fn template_error(e: askama::Error) -> Error {
    Error::Storage(format!("rendering a digest: {e}"))
}

/// The SMS body: the heading and the lines run together, fitted to
/// `segments`; when cut, or when lines were left out by the cap, it ends
/// with the link to the full digest.
fn sms_body(v: &View, segments: usize) -> String {
    let mut body = v.heading.to_string();
    let mut sep = ": ";
    // Lines past what any message of `segments` can hold would be cut anyway.
    let bound = sms::max_chars(segments);
    let mut chars = body.chars().count();
    let mut dropped = false;
    'lines: for s in v.sections {
        for l in &s.lines {
            if chars > bound {
                dropped = true;
                break 'lines;
            }
            let t = l.text();
            chars += sep.len() + t.chars().count();
            body.push_str(sep);
            body.push_str(t);
            sep = "; ";
        }
    }
    if v.more > 0 {
        body.push_str("; ");
        body.push_str(&v.w.more);
    }
    let tail = format!(" {}", v.full_url);
    if v.more == 0 && !dropped && sms::segments(&body) <= segments {
        return body;
    }
    let whole = format!("{body}{tail}");
    if sms::segments(&whole) <= segments {
        return whole;
    }
    sms::fit(&body, segments, &tail)
}

/// Renders `content` for every channel.
pub fn render(content: &Content, f: &Frame) -> Result<Rendered> {
    render_body(&body(content, f), f, Parts::ALL)
}

/// Renders a body built by [`body`] for the recipient framed by `f`: the
/// renderings `parts` asks for, no others.
pub(crate) fn render_body(b: &Body, f: &Frame, parts: Parts) -> Result<Rendered> {
    let mut r = render_view(&view(b, f), parts, f.sms_segments)?;
    r.webhook = parts.webhook.then(|| webhook::document(b, f));
    Ok(r)
}

/// The renderings of `v` that `parts` asks for; SMS fitted to `segments`.
fn render_view(v: &View, parts: Parts, segments: usize) -> Result<Rendered> {
    let run = |on: bool, r: &dyn Fn() -> askama::Result<String>| {
        on.then(r).transpose().map_err(template_error)
    };
    Ok(Rendered {
        text: run(parts.email, &|| EmailText { d: v }.render())?,
        html: run(parts.email, &|| EmailHtml { d: v }.render())?,
        chat: run(parts.chat, &|| Chat { d: v }.render())?,
        sms: parts.sms.then(|| sms_body(v, segments)),
        webhook: None,
        calendar: v.calendar.filter(|_| parts.email).map(str::to_string),
        subject: v.subject.to_string(),
    })
}

mod around;
mod holes;
#[cfg(test)]
mod tests;
pub mod webhook;

pub use around::Words;
pub use holes::{
    code_hole, fill, fill_code, has_code_hole, render_shared, Links, CODE_HOLE, HOLE, HOLE_CODE,
    HOLE_FULL, HOLE_MANAGE, HOLE_UNSUBSCRIBE,
};
