//! The holes of a shared rendering: one body rendered for many
//! recipients with a marked place for each one's links (manage,
//! unsubscribe, the whole digest, a group member's code), filled as each
//! message is built.

use super::*;

/// Marks a hole in a shared rendering: followed by one of [`HOLE_MANAGE`],
/// [`HOLE_UNSUBSCRIBE`], [`HOLE_FULL`]. A control character, which no
/// stored text can hold (input validation refuses them), so a hole cannot
/// be forged by content; [`Body::has_holes`] checks it anyway.
pub const HOLE: char = '\u{1}';
pub const HOLE_MANAGE: char = 'm';
pub const HOLE_UNSUBSCRIBE: char = 'u';
pub const HOLE_FULL: char = 'f';
/// In a group's digest, where each member's own subscriber code goes in
/// its links (`{base}/s/{code}`, `…/unsubscribe/{id}`): a group's request
/// is one rendering for every member, and the queue fills this hole with
/// the member's code as it writes each member's message ([`fill_code`]).
/// Left in place by [`fill`], so it survives into the stored links.
pub const HOLE_CODE: char = 'c';

/// The code hole, [`HOLE`] then [`HOLE_CODE`].
pub const CODE_HOLE: &str = "\u{1}c";

/// The code hole, owned (what a group's links are made with).
pub fn code_hole() -> String {
    CODE_HOLE.to_string()
}

/// Whether `s` has a code hole for [`fill_code`].
pub fn has_code_hole(s: &str) -> bool {
    s.contains(CODE_HOLE)
}

/// `s` with every code hole replaced by `code` (a subscriber code: hex
/// digits, the same escaped or not).
pub fn fill_code(s: &str, code: &str) -> String {
    s.replace(CODE_HOLE, code)
}

impl Body {
    /// Whether any of the body's text holds [`HOLE`] (then it cannot be
    /// shared as a rendering with holes).
    pub(crate) fn has_holes(&self) -> bool {
        let has = |t: &str| t.contains(HOLE);
        has(&self.subject)
            || has(&self.heading)
            || self.sections.iter().any(|s| {
                has(&s.name)
                    || s.lines
                        .iter()
                        .any(|l| has(l.text()) || l.url().is_some_and(has))
            })
    }
}

/// A recipient's own links: what fills the holes of a shared rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links<'a> {
    pub manage_url: &'a str,
    pub unsubscribe_url: Option<&'a str>,
    pub full_url: &'a str,
}

/// The email text and HTML and the XMPP text (as `parts` asks) of `b` for
/// every recipient in `f`'s style, with a hole where each recipient's
/// own link goes: rendered once, stored once, and filled by [`fill`] for
/// each recipient when the digest is sent. `unsubscribe` says whether its
/// recipients have an unsubscribe link (users do, groups do not). No SMS
/// (its fitting depends on the length of the recipient's link) and no
/// webhook document (its links are its own values, not holes in text).
pub fn render_shared(b: &Body, f: &Frame, parts: Parts, unsubscribe: bool) -> Result<Rendered> {
    let hole = |c: char| format!("{HOLE}{c}");
    let (manage, unsub, full) = (hole(HOLE_MANAGE), hole(HOLE_UNSUBSCRIBE), hole(HOLE_FULL));
    let mut v = view(b, f);
    v.manage_url = &manage;
    v.unsubscribe_url = unsubscribe.then_some(unsub.as_str());
    v.full_url = &full;
    let no_sms = Parts {
        sms: false,
        ..parts
    };
    render_view(&v, no_sms, f.sms_segments)
}

/// `shared` (from [`render_shared`]) for one recipient: each hole replaced
/// by its link, escaped as the HTML template escapes it when `html`. A
/// hole with no link (an unsubscribe hole for a recipient without one)
/// becomes empty.
pub fn fill(shared: &str, links: &Links, html: bool) -> String {
    let mut out = String::with_capacity(shared.len() + 256);
    let mut rest = shared;
    while let Some(i) = rest.find(HOLE) {
        out.push_str(&rest[..i]);
        let after = &rest[i + HOLE.len_utf8()..];
        let mut chars = after.chars();
        let link = match chars.next() {
            Some(HOLE_MANAGE) => Some(links.manage_url),
            Some(HOLE_UNSUBSCRIBE) => Some(links.unsubscribe_url.unwrap_or("")),
            Some(HOLE_FULL) => Some(links.full_url),
            _ => None,
        };
        match link {
            Some(l) if html => {
                // Writing to a String cannot fail.
                let _ = Html.write_escaped_str(&mut out, l);
                rest = chars.as_str();
            }
            Some(l) => {
                out.push_str(l);
                rest = chars.as_str();
            }
            // Not a hole of ours: kept as it is.
            None => {
                out.push(HOLE);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
