//! `/d/{subscription}/{period}/{mac}`: a digest with every item, the page
//! its "and N more" link (and its SMS) opens. The link is signed
//! ([`crate::digest::link`]): a MAC of subscription and period under a key
//! derived from the site secret, so it cannot be guessed or edited into
//! another subscription's or period's; it needs no subscriber code, so the
//! one digest rendered for a group opens for each member. An unknown,
//! edited or malformed link, and the old unsigned `/d/{subscription}/{period}`,
//! are the same bad-link 404. Reads only; in the recipient's language,
//! zone and clock, as the digest. It shows no manage link: the digest link
//! must not hand out the subscriber code.

use askama::Template;
use axum::extract::{Path, State};

use crate::digest::link::{LinkKey, MAC_HEX};
use crate::digest::render::Section;
use crate::digest::{self, Whole};
use crate::ids::SubscriptionId;

use super::super::App;
use super::manage::render_failed;
use super::{Asked, Page, PageResult, Words};
use crate::i18n::Arg;

/// Longest period key accepted (they are dates or a local hour with its
/// offset: `week-2026-11-23`, `2026-11-22T01:00+01:00`).
const MAX_PERIOD: usize = 40;

#[derive(Template)]
#[template(path = "pages/digest.html")]
pub struct DigestPage {
    pub t: Words,
    pub subject: String,
    pub sections: Vec<Section>,
    pub tz: String,
    pub items: usize,
    /// Items not listed (past the page's limit).
    pub more: usize,
}

impl DigestPage {
    /// "And 3 more not listed here: …" or "All 12 items.", with the zone.
    pub fn summary(&self) -> (String, String) {
        let t = &self.t;
        let counted = if self.more > 0 {
            t.f(
                "digest-more",
                &[
                    ("more", Arg::Num(self.more)),
                    ("listed", Arg::Num(self.items - self.more)),
                    ("count", Arg::Num(self.items)),
                ],
            )
        } else {
            t.f("digest-all", &[("count", Arg::Num(self.items))])
        };
        (counted, t.f1("times-shown", "zone", &self.tz))
    }
}

/// The link's parts, when each is well formed.
fn parse(id: &str, period: &str, mac: &str) -> Option<SubscriptionId> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let period_ok = !period.is_empty()
        && period.len() <= MAX_PERIOD
        && period
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-:+T".contains(&b));
    let mac_ok = mac.len() == MAC_HEX && mac.bytes().all(|b| b.is_ascii_hexdigit());
    if id.len() > 18 || !digits(id) || !period_ok || !mac_ok {
        return None;
    }
    id.parse().ok().filter(|i| *i > 0).map(SubscriptionId)
}

/// `GET /d/{subscription}/{period}/{mac}`.
pub async fn show(
    State(app): State<App>,
    Path((id, period, mac)): Path<(String, String, String)>,
    asked: Asked,
) -> PageResult {
    let visitor = asked.visitor();
    let Some(sub) = parse(&id, &period, &mac) else {
        return Err(Page::not_found(visitor));
    };
    let now = app.clock.now();
    let (dcfg, ecfg) = (app.cfg.digest.clone(), app.cfg.email.clone());
    let whole: Option<Whole> = app
        .blocking(move |c| {
            if !LinkKey::load(c)?.verify(sub, &period, &mac) {
                return Ok(None);
            }
            digest::whole(c, &dcfg, &ecfg, sub, &period, now)
        })
        .await
        .map_err(Page::failed(visitor))?;
    let w = whole.ok_or_else(|| Page::not_found(visitor))?;
    let html = DigestPage {
        t: Words::new(w.lang),
        subject: w.subject,
        sections: w.sections,
        tz: w.tz,
        items: w.items,
        more: w.more,
    }
    .render()
    .map_err(render_failed)?;
    Ok(Page::ok(html))
}

/// `GET /d/{subscription}/{period}`: the unsigned link digests carried
/// before; the same 404 as any bad link.
pub async fn unsigned(asked: Asked) -> Page {
    Page::not_found(asked.visitor())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_parse_strictly() {
        let mac = "0123456789abcdef0123456789abcdef";
        assert_eq!(parse("5", "2026-11-22", mac), Some(SubscriptionId(5)));
        assert!(parse("5", "week-2026-11-23", mac).is_some());
        assert!(parse("5", "2026-11-22T01:00+01:00", mac).is_some());
        for (id, p, m) in [
            ("0", "2026-11-22", mac),
            ("-5", "2026-11-22", mac),
            ("5a", "2026-11-22", mac),
            ("99999999999999999999", "2026-11-22", mac),
            ("5", "", mac),
            ("5", "2026-11-22<x>", mac),
            ("5", &"9".repeat(41), mac),
            ("5", "2026-11-22", "0123"),
            ("5", "2026-11-22", "zz23456789abcdef0123456789abcdef"),
        ] {
            assert_eq!(parse(id, p, m), None, "{id} {p} {m}");
        }
    }
}
