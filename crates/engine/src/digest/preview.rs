//! `digestd preview`: the digest one subscription would get from a tick at
//! an instant, through the real [`Composer`] (compose, then render), with
//! nothing posted and the schedule left where it is. The run comes from
//! [`crate::schedule::preview_run`]; this only reads.
//!
//! [`whole`]: the digest a subscription got (or is getting) for a period,
//! with up to [`WHOLE_MAX_ITEMS`] items, not capped at `digest.max_items`:
//! what the "and N more" link opens. The window is the one the tick
//! recorded. The recipient's seen marks leave out what they left out of
//! the digest (the same rule, on the same first items), and its first line
//! says so as the digest's did.

use chrono::{DateTime, Utc};

use super::render::{self, Parts, Rendered, Section};
use super::words::Style;
use super::Composer;
use crate::config::{DigestConfig, EmailConfig};
use crate::db::DbConn;
use crate::error::Result;
use crate::ids::SubscriptionId;
use crate::schedule::{self, DueRun};

/// A previewed digest.
pub struct Preview {
    /// The run a tick at the instant would hand on (period and window).
    pub run: DueRun,
    /// The subscription is paused: a tick would send nothing.
    pub paused: bool,
    /// The digest holds nothing: a tick would post it only with `send_empty`.
    pub empty: bool,
    /// Every channel's rendering, whichever channels the subscription uses.
    pub rendered: Rendered,
}

/// Composes and renders subscription `id`'s digest for a tick at `at`.
pub fn preview(
    c: &mut DbConn,
    digest: &DigestConfig,
    email: &EmailConfig,
    id: SubscriptionId,
    at: DateTime<Utc>,
) -> Result<Preview> {
    let p = schedule::preview_run(c, id, at)?;
    let mut composer = Composer::new(digest, email)?;
    let (content, mut rendered) = composer.compose(c, &p.run, Parts::ALL)?;
    // A group's links carry each member's code, filled as it is sent: the
    // preview shows where it goes.
    let member = |s: &mut String| *s = render::fill_code(s, "{member-code}");
    for s in [&mut rendered.text, &mut rendered.html, &mut rendered.chat]
        .into_iter()
        .flatten()
    {
        member(s);
    }
    if let Some(doc) = &mut rendered.webhook {
        *doc = render::webhook::fill_code_json(doc, "{member-code}");
    }
    Ok(Preview {
        run: p.run,
        paused: p.paused,
        empty: content.is_empty(),
        rendered,
    })
}

/// Items the whole digest's page lists at most; the rest it counts.
pub const WHOLE_MAX_ITEMS: usize = 10_000;

/// A period's whole digest in its recipient's style: every item, or the
/// first [`WHOLE_MAX_ITEMS`].
pub struct Whole {
    /// The digest's first line (what it holds and since when), which the
    /// page is titled with: the subject names only the subscription.
    pub subject: String,
    pub sections: Vec<Section>,
    /// The zone its times are written in.
    pub tz: String,
    /// Items in it.
    pub items: usize,
    /// Items in it not listed.
    pub more: usize,
    /// The language it is written in (the recipient's).
    pub lang: crate::i18n::Locale,
}

/// Subscription `id`'s digest of `period`, up to [`WHOLE_MAX_ITEMS`]
/// items; `None` when the subscription is unknown or has no such period
/// (see [`schedule::past_run`]). Reads only.
pub fn whole(
    c: &mut DbConn,
    digest: &DigestConfig,
    email: &EmailConfig,
    id: SubscriptionId,
    period: &str,
    now: DateTime<Utc>,
) -> Result<Option<Whole>> {
    let Some(p) = schedule::past_run(c, id, period, now)? else {
        return Ok(None);
    };
    let uncapped = DigestConfig {
        max_items: WHOLE_MAX_ITEMS,
        ..digest.clone()
    };
    let mut composer = Composer::new(&uncapped, email)?;
    composer.share_bodies = false;
    // Marks leave out what they left out of the digest: items among the
    // first it kept, not the ones it counted in its rest.
    composer.seen.first = Some(super::post::kept_of(digest));
    let (content, _) = composer.content(c, &p.run)?;
    let r = composer.recipient(c, p.run.party)?;
    let style = Style::new(r.tz, &r.locale);
    let body = composer.build_body(c, &p.run, &content, style)?;
    Ok(Some(Whole {
        subject: body.heading,
        sections: body.sections,
        tz: r.tz.name().to_string(),
        items: content.len(),
        more: body.more,
        lang: style.lang,
    }))
}
