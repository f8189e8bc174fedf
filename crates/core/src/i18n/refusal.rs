//! What a field's own check refused, said in the reader's language: each
//! [`Refusal`] kind a validator gives has its message (`refusal-*` in
//! `pages.ftl`), with the value as given (`$value`) and any part of it
//! (`$part`) shown escaped; the CLI and the API keep the validator's
//! English line.

use crate::error::{Refusal, RefusalKind};
use crate::validate::escape_for_line;

use super::{catalogs, Arg, Catalogs, Locale};

impl Refusal {
    /// The catalogue key that says it.
    pub(crate) fn key(&self) -> &'static str {
        match self.kind() {
            RefusalKind::TimezoneMalformed => "refusal-timezone-malformed",
            RefusalKind::TimezoneUnknown { nearest: None } => "refusal-timezone-unknown",
            RefusalKind::TimezoneUnknown { nearest: Some(_) } => "refusal-timezone-nearest",
            RefusalKind::Locale => "refusal-locale",
            RefusalKind::Hour => "refusal-hour",
            RefusalKind::QuietTooLong { .. } => "refusal-quiet-long",
            RefusalKind::QuietNotAscii { .. } => "refusal-quiet-char",
            RefusalKind::QuietNoDash => "refusal-quiet-dash",
            RefusalKind::QuietStart { .. } => "refusal-quiet-start",
            RefusalKind::QuietEnd { .. } => "refusal-quiet-end",
            RefusalKind::QuietSame => "refusal-quiet-same",
            RefusalKind::MatrixEmpty => "refusal-matrix-empty",
            RefusalKind::MatrixTooLong { .. } => "refusal-matrix-long",
            RefusalKind::MatrixSpace => "refusal-matrix-space",
            RefusalKind::MatrixChar => "refusal-matrix-char",
            RefusalKind::MatrixNoServer => "refusal-matrix-no-server",
            RefusalKind::MatrixNoLocal => "refusal-matrix-no-local",
            RefusalKind::MatrixSigil => "refusal-matrix-sigil",
            RefusalKind::MatrixPort => "refusal-matrix-port",
            RefusalKind::MatrixServer => "refusal-matrix-server",
            RefusalKind::EmailControl => "refusal-email-control",
            RefusalKind::EmailNonAscii => "refusal-email-non-ascii",
            RefusalKind::EmailTooLong => "refusal-email-long",
            RefusalKind::EmailNoAt => "refusal-email-no-at",
            RefusalKind::EmailLocalLength => "refusal-email-local-length",
            RefusalKind::EmailDots => "refusal-email-dots",
            RefusalKind::EmailQuoting => "refusal-email-quoting",
            RefusalKind::EmailDomain => "refusal-email-domain",
            RefusalKind::EmailNoDot => "refusal-email-no-dot",
        }
    }

    /// The refusal in `l`, from this process's catalogues.
    pub fn say(&self, l: Locale) -> String {
        self.say_in(catalogs(), l)
    }

    /// The refusal in `l`, from `c`: one line, the value (`$value`) and
    /// any part of it (`$part`) shown by [`shown`].
    pub(crate) fn say_in(&self, c: &Catalogs, l: Locale) -> String {
        let value = shown(self.value());
        let part = match self.kind() {
            RefusalKind::QuietStart { part } | RefusalKind::QuietEnd { part } => shown(part),
            _ => String::new(),
        };
        let mut args = vec![("value", Arg::Str(&value))];
        match self.kind() {
            RefusalKind::TimezoneUnknown { nearest: Some(n) } => {
                args.push(("nearest", Arg::Str(n)))
            }
            RefusalKind::QuietTooLong { max } | RefusalKind::MatrixTooLong { max } => {
                args.push(("max", Arg::Num(*max)))
            }
            RefusalKind::QuietNotAscii { code } => args.push(("code", Arg::Str(code))),
            RefusalKind::QuietStart { .. } | RefusalKind::QuietEnd { .. } => {
                args.push(("part", Arg::Str(&part)))
            }
            _ => {}
        }
        escape_for_line(&c.format(l, self.key(), &args))
    }
}

/// `s` as a page shows a refused value: its first [`Refusal::SHOWN`] characters
/// (and "…" when there were more), every character that could break a
/// line or turn text around escaped (`\r`, `\n`, `\u{202e}`). Escaping
/// for HTML is the page's (its templates escape every value).
pub fn shown(s: &str) -> String {
    let mut cut: String = s.chars().take(Refusal::SHOWN).collect();
    if cut.len() < s.len() {
        cut.push('…');
    }
    escape_for_line(&cut)
}

#[cfg(test)]
#[path = "refusal_tests.rs"]
mod tests;
