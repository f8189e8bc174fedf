//! "Send me a new link" (the manage page): the person's subscriber code is
//! replaced ([`crate::parties::rotate_code`]) and the new manage link is
//! mailed to their email address, through the nt queue, in one
//! transaction. Whoever held the old link (a forwarded digest, a shared
//! screen) can no longer open the page; old unsubscribe links still stop
//! digests by one-click.

use chrono::{DateTime, Utc};

use crate::config::EmailConfig;
use crate::db::DbConn;
use crate::deliver::queue::{self, NewNotification};
use crate::error::{Error, Result};
use crate::ids::PartyId;
use crate::parties::{self, SYSTEM_PARTY};

/// The new link message's subject.
pub const SUBJECT: &str = "Your new link to your digest settings";

/// Replaces `party`'s code and posts the new manage link to their email
/// address. A person with no email address that is in use is refused with
/// nothing changed (the link would reach no one).
pub fn send_new_link(
    c: &mut DbConn,
    email: &EmailConfig,
    base_url: &str,
    party: PartyId,
    now: DateTime<Utc>,
) -> Result<()> {
    let reachable = parties::contact_points(c, party)?
        .iter()
        .any(|cp| cp.channel == "email" && !cp.disabled);
    if !reachable {
        return Err(Error::invalid(
            "there is no email address to send a new link to; nothing was changed",
        ));
    }
    c.write_tx(|c| {
        let code = parties::rotate_code(c, now, party)?;
        let link = parties::manage_url(base_url, &code);
        let message = format!(
            "You asked for a new link to your digest settings. The link you used \
             before no longer opens them.\n\nYour new link:\n\n{link}\n\n\
             Unsubscribe links in digests you received before still stop those digests.\n"
        );
        let n = NewNotification {
            from: SYSTEM_PARTY.into(),
            to: parties::name_of(c, party)?,
            expand_group: false,
            subject: SUBJECT.into(),
            message,
            max_retries: None,
            channels: vec!["email".into()],
            // Asked for on the page just now: quiet hours do not hold it.
            urgent: true,
        };
        queue::post_request(c, email, &n, now)?;
        Ok(())
    })
}
