//! `digestd preview`: the digest one subscription would get from a tick at
//! an instant, through the real [`Composer`] (compose, then render), with
//! nothing posted and the schedule left where it is. The run comes from
//! [`crate::schedule::preview_run`]; this only reads.

use chrono::{DateTime, Utc};

use super::render::Rendered;
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
    /// Every channel's rendering.
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
    let (content, rendered) = composer.compose(c, &p.run)?;
    Ok(Preview {
        run: p.run,
        paused: p.paused,
        empty: content.is_empty(),
        rendered,
    })
}
