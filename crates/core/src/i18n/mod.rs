//! The words digestd writes, in the reader's language: Project Fluent
//! catalogues for English, German, French, Spanish, Portuguese and
//! Japanese (`crates/core/locales/<tag>/`: `digestd.ftl`, `pages.ftl`,
//! `report.ftl`, `admin.ftl`, built in and read as one), and the operator's overrides
//! of them ([`overrides`]). A visitor's language comes from their
//! browser's `Accept-Language` ([`Locale::accepted`]).
//!
//! A person's BCP 47 tag resolves to the nearest shipped language
//! ([`Locale::resolve`]: "pt-BR" reads Portuguese, anything unknown
//! English); a message a catalogue lacks is read from English. Plurals
//! follow the CLDR rules of the catalogue's language (Fluent's
//! `intl_pluralrules`). Messages of text and variables only are compiled
//! once and written without Fluent's resolver ([`pattern`]): they are most
//! of a digest's words and are written for every line.
//!
//! The process reads one set of catalogues, [`catalogs`]: the shipped
//! ones, or the ones [`install`]ed at start with the operator's overrides.
//! A validator's [`Refusal`](crate::Refusal) of a person's value is said
//! from them by [`refusal`].

mod names;
pub mod overrides;
mod pattern;
pub mod refusal;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use fluent_syntax::ast::Entry;
use unic_langid::LanguageIdentifier;

pub use names::Names;
pub use pattern::Arg;
use pattern::Simple;

/// A shipped language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Locale {
    #[default]
    En,
    De,
    Fr,
    Es,
    Pt,
    Ja,
}

impl Locale {
    /// Every shipped language, English first.
    pub const ALL: [Locale; 6] = [
        Locale::En,
        Locale::De,
        Locale::Fr,
        Locale::Es,
        Locale::Pt,
        Locale::Ja,
    ];

    /// The language's tag: "en", "de", …
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::De => "de",
            Locale::Fr => "fr",
            Locale::Es => "es",
            Locale::Pt => "pt",
            Locale::Ja => "ja",
        }
    }

    /// The shipped language whose tag is exactly `tag` ("de", not "de-DE").
    pub fn exact(tag: &str) -> Option<Locale> {
        Locale::ALL.into_iter().find(|l| l.tag() == tag)
    }

    /// The shipped language nearest to the BCP 47 tag `tag`: its language
    /// subtag ("pt-BR" → Portuguese, "DE_at" → German), English for
    /// anything else (an empty, unknown or malformed tag). Pure: a tag
    /// never names a file.
    pub fn resolve(tag: &str) -> Locale {
        let lang = tag.split(['-', '_']).next().unwrap_or("");
        if !(2..=3).contains(&lang.len()) || !lang.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Locale::En;
        }
        Locale::ALL
            .into_iter()
            .find(|l| l.tag().eq_ignore_ascii_case(lang))
            .unwrap_or(Locale::En)
    }

    /// The shipped language an `Accept-Language` header asks for most
    /// (highest `q`, then first) and the tag that asked for it
    /// (`"fr-CA"`); `None` when it asks for none of them. Hostile headers
    /// read as asking for nothing: one longer than [`MAX_ACCEPT_LANGUAGE`]
    /// bytes, a `q` that is not a number from 0 to 1, a tag that is not
    /// letters, digits and dashes; only the first 32 entries are read.
    pub fn accepted(header: &str) -> Option<(Locale, &str)> {
        if header.len() > MAX_ACCEPT_LANGUAGE {
            return None;
        }
        let mut best: Option<(f32, Locale, &str)> = None;
        for part in header.split(',').take(32) {
            let mut it = part.split(';');
            let tag = it.next().unwrap_or("").trim();
            let q = match it.find_map(|p| p.trim().strip_prefix("q=")) {
                None => 1.0,
                Some(q) => q
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or(0.0),
            };
            let tag_ok = !tag.is_empty()
                && tag.len() <= 35
                && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            let lang = tag.split('-').next().unwrap_or("");
            let shipped = Locale::ALL
                .into_iter()
                .find(|l| l.tag().eq_ignore_ascii_case(lang));
            if let Some(l) = shipped.filter(|_| tag_ok) {
                if q > 0.0 && best.is_none_or(|(bq, _, _)| q > bq) {
                    best = Some((q, l, tag));
                }
            }
        }
        best.map(|(_, l, tag)| (l, tag))
    }
}

/// The longest `Accept-Language` header read, in bytes (browsers send a
/// few dozen); a longer one reads as asking for nothing.
pub const MAX_ACCEPT_LANGUAGE: usize = 512;

/// The catalogue source shipped for `l`: its digests' and messages'
/// words (`digestd.ftl`), its pages' (`pages.ftl`), the operator's
/// report's (`report.ftl`) and the operator's pages' (`admin.ftl`), read
/// as one resource.
pub(crate) fn shipped_source(l: Locale) -> &'static str {
    macro_rules! lang {
        ($tag:literal) => {
            concat!(
                include_str!(concat!("../../locales/", $tag, "/digestd.ftl")),
                "\n",
                include_str!(concat!("../../locales/", $tag, "/pages.ftl")),
                "\n",
                include_str!(concat!("../../locales/", $tag, "/report.ftl")),
                "\n",
                include_str!(concat!("../../locales/", $tag, "/admin.ftl")),
            )
        };
    }
    match l {
        Locale::En => lang!("en"),
        Locale::De => lang!("de"),
        Locale::Fr => lang!("fr"),
        Locale::Es => lang!("es"),
        Locale::Pt => lang!("pt"),
        Locale::Ja => lang!("ja"),
    }
}

/// One language's messages.
pub struct Catalog {
    bundle: FluentBundle<FluentResource>,
    simple: HashMap<String, Simple>,
}

impl Catalog {
    /// The catalogue of `source` in the language `lang`; the error says
    /// what does not parse.
    pub fn new(lang: &str, source: &str) -> Result<Catalog, String> {
        let id: LanguageIdentifier = lang.parse().map_err(|e| format!("{lang}: {e}"))?;
        let mut bundle = FluentBundle::new_concurrent(vec![id]);
        // Text is written as it is: no Unicode isolation marks around
        // values (mail readers show them as boxes).
        bundle.set_use_isolating(false);
        let mut c = Catalog {
            bundle,
            simple: HashMap::new(),
        };
        c.add(source, false)?;
        Ok(c)
    }

    /// Adds the messages of `source`, replacing those of the same key
    /// when `overriding`.
    fn add(&mut self, source: &str, overriding: bool) -> Result<(), String> {
        let res = FluentResource::try_new(source.to_string())
            .map_err(|(_, e)| format!("{} syntax error(s), the first {:?}", e.len(), e[0]))?;
        for e in res.entries() {
            if let Entry::Message(m) = e {
                let key = m.id.name.to_string();
                match m.value.as_ref().and_then(Simple::compile) {
                    Some(s) => self.simple.insert(key, s),
                    None => self.simple.remove(&key),
                };
            }
        }
        if overriding {
            self.bundle.add_resource_overriding(res);
        } else {
            self.bundle
                .add_resource(res)
                .map_err(|e| format!("{:?}", e[0]))?;
        }
        Ok(())
    }

    fn has(&self, key: &str) -> bool {
        self.bundle.has_message(key)
    }

    /// Writes `key` with `args` into `out` (see [`Catalogs::write`]).
    fn write(
        &self,
        out: &mut String,
        key: &str,
        args: &[(&str, Arg)],
        mark: Option<&str>,
    ) -> Option<(usize, usize)> {
        if let Some(s) = self.simple.get(key) {
            return s.write(out, args, mark);
        }
        let pattern = self.bundle.get_message(key)?.value()?;
        let mut fargs = FluentArgs::with_capacity(args.len());
        let mut marked = None;
        for (k, a) in args {
            let v = match a {
                Arg::Num(n) => FluentValue::from(*n),
                other => {
                    let mut s = String::new();
                    other.push(&mut s);
                    if mark == Some(*k) {
                        marked = Some(s.clone());
                    }
                    FluentValue::from(s)
                }
            };
            fargs.set(*k, v);
        }
        let mut errors = Vec::new();
        let start = out.len();
        out.push_str(
            &self
                .bundle
                .format_pattern(pattern, Some(&fargs), &mut errors),
        );
        let m = marked?;
        let at = start + out[start..].find(&m)?;
        Some((at, at + m.len()))
    }
}

/// Every shipped language's catalogue, with the operator's overrides.
pub struct Catalogs {
    langs: Vec<Catalog>,
    names: Vec<Names>,
}

impl Catalogs {
    /// The shipped catalogues.
    pub fn shipped() -> Catalogs {
        Catalogs::with(&[]).expect("the shipped catalogues parse (i18n::tests)")
    }

    /// The shipped catalogues with `overrides`: each a language and the
    /// source of messages that replace the shipped ones of the same key.
    pub fn with(overrides: &[(Locale, &str)]) -> Result<Catalogs, String> {
        let mut langs = Vec::with_capacity(Locale::ALL.len());
        for l in Locale::ALL {
            let mut c = Catalog::new(l.tag(), shipped_source(l))?;
            for (_, src) in overrides.iter().filter(|(o, _)| *o == l) {
                c.add(src, true)?;
            }
            langs.push(c);
        }
        let mut out = Catalogs {
            langs,
            names: Vec::new(),
        };
        out.names = Locale::ALL
            .into_iter()
            .map(|l| Names::of(&out, l))
            .collect();
        Ok(out)
    }

    /// The catalogue that holds `key` for `l`: `l`'s, else English's.
    fn holder(&self, l: Locale, key: &str) -> &Catalog {
        let own = &self.langs[l as usize];
        if l == Locale::En || own.has(key) {
            own
        } else {
            &self.langs[0]
        }
    }

    /// Writes the message `key` in `l` with `args` into `out`; returns
    /// where the value of the variable `mark` stands in `out`, if it was
    /// written. A key no catalogue has writes the key itself (never
    /// nothing, never a panic).
    pub fn write(
        &self,
        out: &mut String,
        l: Locale,
        key: &str,
        args: &[(&str, Arg)],
        mark: Option<&str>,
    ) -> Option<(usize, usize)> {
        let c = self.holder(l, key);
        if !c.has(key) {
            out.push_str(key);
            return None;
        }
        c.write(out, key, args, mark)
    }

    /// The message `key` in `l` with `args`.
    pub fn format(&self, l: Locale, key: &str, args: &[(&str, Arg)]) -> String {
        let mut out = String::new();
        self.write(&mut out, l, key, args, None);
        out
    }

    /// The text of a message without variables, borrowed (the key itself
    /// when no catalogue has it as such).
    pub fn text<'s>(&'s self, l: Locale, key: &'s str) -> &'s str {
        self.holder(l, key)
            .simple
            .get(key)
            .and_then(Simple::constant)
            .unwrap_or(key)
    }

    /// The message `key` in `l` without variables: borrowed when it is
    /// plain text, else written by Fluent (a message that names another,
    /// `{ signup-confirm-button }`, or selects).
    pub fn say<'s>(&'s self, l: Locale, key: &'s str) -> Cow<'s, str> {
        let c = self.holder(l, key);
        match c.simple.get(key).and_then(Simple::constant) {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(self.format(l, key, &[])),
        }
    }

    /// Whether `l`'s own catalogue (not English's) has `key`.
    pub fn has_own(&self, l: Locale, key: &str) -> bool {
        self.langs[l as usize].has(key)
    }

    /// The names of days and months in `l`.
    pub fn names(&self, l: Locale) -> &Names {
        &self.names[l as usize]
    }
}

static ACTIVE: OnceLock<Catalogs> = OnceLock::new();

/// The catalogues of this process: the ones [`install`]ed, else the shipped
/// ones.
pub fn catalogs() -> &'static Catalogs {
    ACTIVE.get_or_init(Catalogs::shipped)
}

/// Makes `c` the catalogues of this process (at start, before anything is
/// written). `false` when some were in use already.
pub fn install(c: Catalogs) -> bool {
    ACTIVE.set(c).is_ok()
}
