//! `[i18n]` (the operator's overrides of the shipped catalogues) and
//! `[branding]` (the name, logo, accent colour and footer of the emails and
//! pages). Both are read once at start and hold for the whole process:
//! [`install`] makes them the process's, [`branding`] reads them.

use std::path::Path;
use std::sync::OnceLock;

use crate::i18n::{self, overrides};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[i18n]`: wording without a rebuild, and the operator's language.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct I18nConfig {
    /// A directory of `<tag>/*.ftl` (tag: en, de, fr, es, pt, ja) whose
    /// messages replace the shipped ones of the same key; empty: none.
    pub dir: String,
    /// The locale of the operator's daily report (a BCP 47 tag, checked
    /// as a person's is); it reads the nearest shipped language.
    pub operator_locale: String,
}

impl Default for I18nConfig {
    fn default() -> Self {
        I18nConfig {
            dir: String::new(),
            operator_locale: "en".into(),
        }
    }
}

/// `[branding]`: who the emails and pages say they are from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BrandingConfig {
    /// The name shown in the emails' and pages' headers and footers.
    pub name: String,
    /// An https URL of a logo shown above the emails and pages; empty: none.
    pub logo_url: String,
    /// The accent colour, `#rrggbb`; empty: the built-in one.
    pub accent: String,
    /// A line of plain text at the foot of the emails and pages.
    pub footer: String,
}

impl Default for BrandingConfig {
    fn default() -> Self {
        BrandingConfig {
            name: "digestd".into(),
            logo_url: String::new(),
            accent: String::new(),
            footer: String::new(),
        }
    }
}

/// Longest `[branding] footer`, in characters.
pub const MAX_FOOTER: usize = 500;
/// Longest `[branding] name`, in characters.
pub const MAX_NAME: usize = 80;
/// Longest `[branding] logo_url`, in bytes.
pub const MAX_LOGO_URL: usize = 2000;

fn bad(key: &str, what: &str) -> Error {
    Error::invalid(format!("config: branding.{key} {what}"))
}

impl BrandingConfig {
    pub(super) fn check(&self) -> Result<()> {
        let n = self.name.chars().count();
        // No control character, line or direction override (a name goes
        // in subjects and titles), as a change's values.
        let plain = |s: &str| crate::validate::value("", s, usize::MAX).is_ok();
        if n == 0 || n > MAX_NAME || !plain(&self.name) {
            return Err(bad(
                "name",
                &format!("must be 1-{MAX_NAME} characters of plain text on one line"),
            ));
        }
        if !self.logo_url.is_empty() {
            let ok = self.logo_url.len() <= MAX_LOGO_URL
                && !self
                    .logo_url
                    .chars()
                    .any(|c| c.is_control() || c.is_whitespace())
                && url::Url::parse(&self.logo_url)
                    .is_ok_and(|u| u.scheme() == "https" && u.host().is_some());
            if !ok {
                return Err(bad("logo_url", "must be an https URL (or empty for none)"));
            }
        }
        if !self.accent.is_empty() {
            let b = self.accent.as_bytes();
            if b.len() != 7 || b[0] != b'#' || !b[1..].iter().all(u8::is_ascii_hexdigit) {
                return Err(bad("accent", "must be a colour #rrggbb (or empty)"));
            }
        }
        if self.footer.chars().count() > MAX_FOOTER || !plain(&self.footer) {
            return Err(bad(
                "footer",
                &format!("must be at most {MAX_FOOTER} characters of plain text on one line"),
            ));
        }
        Ok(())
    }

    /// Whether emails show a header with the name (and logo): when either
    /// is set to other than the default, so an installation that sets no
    /// branding sends what it always sent.
    pub fn shows_header(&self) -> bool {
        self.name != BrandingConfig::default().name || !self.logo_url.is_empty()
    }

    /// The accent colour: the configured one, else the built-in one.
    pub fn accent(&self) -> &str {
        if self.accent.is_empty() {
            "#2b5797"
        } else {
            &self.accent
        }
    }
}

impl I18nConfig {
    pub(super) fn check(&self) -> Result<()> {
        crate::validate::locale(&self.operator_locale).map_err(|e| {
            Error::invalid(format!(
                "config: i18n.operator_locale: {}",
                crate::text::one_line(&e.to_string())
            ))
        })?;
        // An override that does not parse or fit is refused at start.
        self.catalogs().map(|_| ())
    }

    /// The shipped language of the operator's report.
    pub fn operator_lang(&self) -> i18n::Locale {
        i18n::Locale::resolve(&self.operator_locale)
    }

    /// The catalogues with the overrides of `dir`; `None` without a dir.
    pub fn catalogs(&self) -> Result<Option<i18n::Catalogs>> {
        if self.dir.is_empty() {
            return Ok(None);
        }
        overrides::load(Path::new(&self.dir))
            .map(Some)
            .map_err(|e| Error::invalid(format!("config: i18n.dir: {e}")))
    }
}

static BRANDING: OnceLock<BrandingConfig> = OnceLock::new();

/// The branding of this process: the one [`install`]ed, else the default.
pub fn branding() -> &'static BrandingConfig {
    BRANDING.get_or_init(BrandingConfig::default)
}

/// Makes `cfg`'s catalogues (with its overrides) and branding the
/// process's, at start, before anything is written.
pub fn install(cfg: &super::Config) -> Result<()> {
    if let Some(c) = cfg.i18n.catalogs()? {
        i18n::install(c);
    }
    let _ = BRANDING.set(cfg.branding.clone());
    Ok(())
}
