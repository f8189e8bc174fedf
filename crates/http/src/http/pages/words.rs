//! The pages' words in the reader's language, and which language that is.
//!
//! [`Words`] is what a template says its words with (`{{ t.t("key") }}`,
//! from the catalogues of [`crate::i18n`], the operator's overrides
//! included) and what the layout shows of the operator's branding
//! (`t.b`). [`Asked`] is what a request asks for: an explicit `?lang=`
//! (exactly a shipped tag: `de`, not `de-DE`; anything else is ignored)
//! and the browser's `Accept-Language` ([`Locale::accepted`]: the
//! preferred shipped language; a hostile or overlong header asks for
//! nothing). A page of a known person is in their stored locale's
//! language unless `?lang=` says otherwise; the sign-up pages are in the
//! one the browser asks for.

use std::borrow::Cow;
use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::{header, request::Parts};

use crate::config::{branding, BrandingConfig};
use crate::i18n::{catalogs, Arg, Locale};
use crate::validate;

/// The words of one page.
#[derive(Clone, Copy)]
pub struct Words {
    pub lang: Locale,
    /// The operator's `[branding]`.
    pub b: &'static BrandingConfig,
}

impl Words {
    pub fn new(lang: Locale) -> Words {
        Words {
            lang,
            b: branding(),
        }
    }

    /// The language's tag, for `<html lang>`.
    pub fn tag(&self) -> &'static str {
        self.lang.tag()
    }

    /// The buttons' colour: `[branding] accent`, else the pages' own
    /// slate (links take the accent, else the built-in blue).
    pub fn button(&self) -> &str {
        if self.b.accent.is_empty() {
            "#3b4a63"
        } else {
            &self.b.accent
        }
    }

    /// A message without variables.
    pub fn t(&self, key: &'static str) -> Cow<'static, str> {
        catalogs().say(self.lang, key)
    }

    /// A message with variables.
    pub fn f(&self, key: &str, args: &[(&str, Arg)]) -> String {
        catalogs().format(self.lang, key, args)
    }

    /// A message with one variable of text.
    pub fn f1(&self, key: &str, name: &str, value: &str) -> String {
        self.f(key, &[(name, Arg::Str(value))])
    }

    /// A channel's name as the reader says it (`E-Mail`, `メール`); a name
    /// that is no channel's, as stored.
    pub fn channel(&self, name: &str) -> String {
        match crate::parties::Channel::parse(name) {
            Ok(c) => self.t(channel_key(c)).into_owned(),
            Err(_) => name.to_string(),
        }
    }

    /// A request's status as the operator's pages say it (`wartend`); a
    /// word that is no status's, as stored.
    pub fn request_status(&self, stored: &str) -> String {
        let all = crate::db::states::RequestStatus::ALL.map(|s| s.as_str());
        self.stored("admin-status-", &all, stored)
    }

    /// An operators' event's status (`pending`, `sent`, `failed`,
    /// `skipped`) as the pages say it; anything else as stored.
    pub fn event_status(&self, stored: &str) -> String {
        self.stored(
            "admin-event-status-",
            &["pending", "sent", "failed", "skipped"],
            stored,
        )
    }

    /// A request's kind (`digest`, `notification`) as the pages say it;
    /// anything else as stored.
    pub fn request_kind(&self, stored: &str) -> String {
        self.stored("admin-kind-", &["digest", "notification"], stored)
    }

    /// What one delivery attempt came to (`sent`, `transient`,
    /// `permanent`, `gave_up`) as the pages say it; anything else as
    /// stored.
    pub fn outcome(&self, stored: &str) -> String {
        self.stored(
            "admin-outcome-",
            &["sent", "transient", "permanent", "gave_up"],
            stored,
        )
    }

    /// `stored` said by the message `{prefix}{stored}` (`_` read as `-`)
    /// when it is one of `known`, else as it is: a word the catalogues do
    /// not name never becomes a key.
    fn stored(&self, prefix: &str, known: &[&str], stored: &str) -> String {
        if known.contains(&stored) {
            self.f(&format!("{prefix}{}", stored.replace('_', "-")), &[])
        } else {
            stored.to_string()
        }
    }

    /// The name of weekday `d` (0 = Monday).
    pub fn day(&self, d: i32) -> &'static str {
        &catalogs().names(self.lang).weekdays_long[d.rem_euclid(7) as usize]
    }
}

/// The languages a visitor can switch a sign-up page to, each in its own
/// words.
pub const ENDONYMS: [(Locale, &str); 6] = [
    (Locale::En, "English"),
    (Locale::De, "Deutsch"),
    (Locale::Fr, "Français"),
    (Locale::Es, "Español"),
    (Locale::Pt, "Português"),
    (Locale::Ja, "日本語"),
];

/// The language a request asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// `?lang=`, when it is exactly a shipped tag.
    pub explicit: Option<Locale>,
    /// The shipped language `Accept-Language` prefers, and the tag that
    /// asked for it (`fr-CA`), checked as a locale.
    pub accepted: Option<(Locale, String)>,
}

impl Asked {
    /// What `query` (a raw query string) and `accept_language` ask for.
    pub fn of(query: Option<&str>, accept_language: Option<&str>) -> Asked {
        let explicit = query.and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "lang")
                .and_then(|(_, v)| Locale::exact(&v))
        });
        let accepted = accept_language
            .and_then(Locale::accepted)
            .map(|(l, tag)| (l, validate::locale(tag).unwrap_or_else(|_| l.tag().into())));
        Asked { explicit, accepted }
    }

    /// A visitor's language: `?lang=`, else the browser's, else English.
    pub fn visitor(&self) -> Locale {
        self.explicit
            .or(self.accepted.as_ref().map(|a| a.0))
            .unwrap_or_default()
    }

    /// A known person's language: `?lang=`, else their stored locale's.
    pub fn person(&self, locale: &str) -> Locale {
        self.explicit.unwrap_or_else(|| Locale::resolve(locale))
    }

    /// The locale a sign-up stores for its new person: the tag of
    /// `?lang=` (`de`), else the browser's preferred tag (`fr-CA`); none
    /// when neither names a shipped language.
    pub(crate) fn to_store(&self) -> Option<String> {
        match (self.explicit, &self.accepted) {
            (Some(l), Some((a, tag))) if *a == l => Some(tag.clone()),
            (Some(l), _) => Some(l.tag().into()),
            (None, Some((_, tag))) => Some(tag.clone()),
            (None, None) => None,
        }
    }

    /// `?lang=xx` to carry an explicit choice into a form's action; empty
    /// when there is none.
    pub fn query(&self) -> String {
        self.explicit
            .map_or_else(String::new, |l| format!("?lang={}", l.tag()))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Asked {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Asked, Infallible> {
        let accept = parts
            .headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok());
        Ok(Asked::of(parts.uri.query(), accept))
    }
}

/// The catalogue key of a channel's name.
fn channel_key(c: crate::parties::Channel) -> &'static str {
    use crate::parties::Channel;
    match c {
        Channel::Email => "channel-email",
        Channel::Xmpp => "channel-xmpp",
        Channel::Sms => "channel-sms",
        Channel::Webhook => "channel-webhook",
        Channel::Slack => "channel-slack",
        Channel::Discord => "channel-discord",
        Channel::Teams => "channel-teams",
        Channel::Ntfy => "channel-ntfy",
        Channel::Matrix => "channel-matrix",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_lang_must_be_a_shipped_tag() {
        let a = Asked::of(Some("lang=de"), Some("fr"));
        assert_eq!((a.visitor(), a.person("ja-JP")), (Locale::De, Locale::De));
        assert_eq!(a.to_store().as_deref(), Some("de"));
        assert_eq!(a.query(), "?lang=de");
        for bad in [
            "lang=de-DE",
            "lang=../de",
            "lang=DE",
            "lang=",
            "lang=xx",
            "lang=%00de",
            "lang=de%0d%0aSet-Cookie:x",
            "x=1",
        ] {
            let a = Asked::of(Some(bad), Some("fr-CA"));
            assert_eq!(a.explicit, None, "{bad}");
            assert_eq!(a.visitor(), Locale::Fr, "{bad}");
            assert_eq!(a.person("ja-JP"), Locale::Ja, "{bad}");
            assert_eq!(a.to_store().as_deref(), Some("fr-CA"), "{bad}");
            assert_eq!(a.query(), "");
        }
    }

    #[test]
    fn hostile_accept_language_asks_for_nothing() {
        let long = format!("de,{}", "x".repeat(600));
        for bad in [
            "",
            "*",
            "de;q=2",
            "de;q=-1",
            "de;q=NaN",
            "de;q=inf",
            "de;q=0",
            "de-<script>",
            "../de",
            long.as_str(),
        ] {
            let a = Asked::of(None, Some(bad));
            assert_eq!(a.visitor(), Locale::En, "{bad:?}");
            assert_eq!(a.to_store(), None, "{bad:?}");
        }
        // A valid entry after a hostile one still counts.
        let a = Asked::of(None, Some("de;q=inf, ja;q=0.3"));
        assert_eq!(a.visitor(), Locale::Ja);
        // A tag the locale check refuses stores its language's tag.
        let a = Asked::of(None, Some("pt-BRAZILIANPORTUGUESE"));
        assert_eq!(a.to_store().as_deref(), Some("pt"));
        let a = Asked::of(None, Some("en-GB,en;q=0.9"));
        assert_eq!(a.to_store().as_deref(), Some("en-GB"));
    }

    #[test]
    fn every_key_the_templates_name_is_in_every_catalogue() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../templates/pages");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "html") {
                continue;
            }
            let src = std::fs::read_to_string(&path).unwrap();
            for call in ["t.t(\"", "t.f1(\""] {
                for part in src.split(call).skip(1) {
                    let key = part.split('"').next().unwrap();
                    for l in Locale::ALL {
                        assert!(
                            catalogs().has_own(l, key),
                            "{}: {key} is not in {}",
                            path.display(),
                            l.tag()
                        );
                    }
                    seen += 1;
                }
            }
        }
        assert!(seen > 80, "{seen} keys found");
    }
}
