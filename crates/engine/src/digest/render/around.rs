//! The words around a digest's lines, in its reader's language: what the
//! templates and the SMS write besides the heading and the lines. Built
//! with the body (once per language and zone), so the templates receive
//! translated text and escape it as any other value; a catalogue never
//! gives them markup.

use crate::i18n::Arg;

use crate::digest::words::Style;

/// What a digest says around its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// The language's tag, for `<html lang>`.
    pub lang: &'static str,
    /// "and 3 more" (the items the cap left out).
    pub more: String,
    /// "see the full digest"
    pub full_digest: &'static str,
    /// "Times are shown in Europe/Berlin."
    pub times_shown: String,
    /// "Manage your subscriptions"
    pub manage: &'static str,
    /// "Unsubscribe from this digest"
    pub unsubscribe: &'static str,
    /// "Manage" (the chat message's short link text)
    pub manage_short: &'static str,
}

impl Words {
    /// The words of a digest in `style` that left `more` items out.
    pub fn new(style: &Style, more: usize) -> Words {
        Words {
            lang: style.lang.tag(),
            more: style.say("more", &[("count", Arg::Num(more))]),
            full_digest: style.text("full-digest"),
            times_shown: style.say("times-shown", &[("zone", Arg::Str(style.tz.name()))]),
            manage: style.text("manage-subscriptions"),
            unsubscribe: style.text("unsubscribe-digest"),
            manage_short: style.text("manage-short"),
        }
    }
}
