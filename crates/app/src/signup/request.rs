//! A pending sign-up and its verification message ([`request`]).

use askama::Template;
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use rand::RngCore;

use super::{limits, token_hash, ValidSignup};
use crate::config::{EmailConfig, SignupConfig};
use crate::db::schema::signups;
use crate::db::DbConn;
use crate::deliver;
use crate::error::{Error, Result};
use crate::i18n::{catalogs, Arg, Locale};
use crate::text::hex;

/// How long sign-up rows are kept (they count towards the limits).
const KEEP_DAYS: i64 = 7;

/// What [`request`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// Recorded, and the verification message posted.
    Sent,
    /// Over a limit: nothing written, nothing sent; a sign-up may pass
    /// again from `retry_at`.
    Limited { retry_at: DateTime<Utc> },
}

/// The verification message's subject in English (its subject in other
/// languages is the catalogue's `signup-subject`).
pub const SUBJECT: &str = "Confirm your digest subscription";

/// The verification message's words in the reader's language.
struct Words {
    lang: &'static str,
    asked: String,
    /// Names the confirm page's button, in the same language.
    open: String,
    button: &'static str,
    copy: &'static str,
    until: String,
}

#[derive(Template)]
#[template(path = "email/signup_confirm.txt")]
struct MailText<'a> {
    t: &'a Words,
    link: &'a str,
    b: &'static crate::config::BrandingConfig,
}

#[derive(Template)]
#[template(path = "email/signup_confirm.html")]
struct MailHtml<'a> {
    t: &'a Words,
    link: &'a str,
    b: &'static crate::config::BrandingConfig,
}

/// The verification message's subject, text and HTML (a button for the
/// link) in `lang`.
fn message(lang: Locale, names: &str, link: &str, until: &str) -> Result<(String, String, String)> {
    let c = catalogs();
    let t = Words {
        lang: lang.tag(),
        asked: c.format(lang, "signup-asked", &[("names", Arg::Str(names))]),
        open: c.say(lang, "signup-open").into_owned(),
        button: c.text(lang, "signup-button"),
        copy: c.text(lang, "signup-copy"),
        until: c.format(lang, "signup-until", &[("until", Arg::Str(until))]),
    };
    let b = crate::config::branding();
    let fail = |e: askama::Error| Error::Storage(format!("sign-up message: {e}"));
    let text = MailText { t: &t, link, b }.render().map_err(fail)?;
    let html = MailHtml { t: &t, link, b }.render().map_err(fail)?;
    Ok((c.text(lang, "signup-subject").to_string(), text, html))
}

/// Records the pending sign-up `v` from `client` (its address as text)
/// and posts its verification message, unless a limit is reached.
pub fn request(
    c: &mut DbConn,
    cfg: &SignupConfig,
    email: &EmailConfig,
    base_url: &str,
    v: &ValidSignup,
    client: &str,
    now: DateTime<Utc>,
) -> Result<Requested> {
    let client: String = client.chars().take(64).collect();
    let network = limits::network(&client);
    let mailbox = limits::mailbox(&v.email);
    let wish =
        serde_json::to_string(&v.wish).map_err(|e| Error::Storage(format!("sign-up wish: {e}")))?;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = hex(&bytes);
    let expires = now + Duration::hours(i64::from(cfg.expiry_hours));
    let link = format!(
        "{}/subscribe/confirm/{token}",
        base_url.trim_end_matches('/')
    );
    let until = expires.format("%Y-%m-%d %H:%M").to_string();
    let (subject, text, html) = message(v.lang, &v.names.join(", "), &link, &until)?;
    c.write_tx(|c| {
        limits::lock(c)?;
        if let Some(retry_at) = limits::check(c, cfg, &mailbox, &network, now)? {
            return Ok(Requested::Limited { retry_at });
        }
        diesel::delete(
            signups::table
                .filter(signups::created_at.lt((now - Duration::days(KEEP_DAYS)).naive_utc())),
        )
        .execute(c)?;
        let id: i64 = diesel::insert_into(signups::table)
            .values((
                signups::token_hash.eq(token_hash(&token)),
                signups::email.eq(&v.email),
                signups::client.eq(&client),
                signups::mailbox.eq(&mailbox),
                signups::network.eq(&network),
                signups::wish.eq(&wish),
                signups::created_at.eq(now.naive_utc()),
                signups::expires_at.eq(expires.naive_utc()),
            ))
            .returning(signups::id)
            .get_result(c)?;
        deliver::queue::post_to_address(
            c,
            email,
            -id,
            &v.email,
            &subject,
            &text,
            Some(&html),
            now,
        )?;
        Ok(Requested::Sent)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_has_the_link_as_text_and_as_a_button() {
        let link = "https://d.example/subscribe/confirm/ab";
        let (subject, text, html) =
            message(Locale::En, "Calendar & <Rota>", link, "2026-11-24 00:00").unwrap();
        assert_eq!(subject, SUBJECT);
        assert!(text.contains(link) && text.contains("Calendar & <Rota>"));
        assert!(html.contains(&format!("<a href=\"{link}\"")), "{html}");
        // The names are escaped in the HTML.
        assert!(html.contains("Rota") && !html.contains("<Rota>"), "{html}");
        let (subject, text, html) =
            message(Locale::De, "Kalender", link, "2026-11-24 00:00").unwrap();
        assert_eq!(subject, "Bitte bestätigen Sie Ihr Abonnement");
        assert!(
            text.contains("Der Link gilt bis 2026-11-24 00:00 UTC"),
            "{text}"
        );
        assert!(html.contains("<html lang=\"de\">") && html.contains("Abonnement bestätigen"));
        // The sentence names the confirm page's button in its language.
        let button = catalogs().text(Locale::De, "signup-confirm-button");
        assert!(text.contains(&format!("„{button}“")), "{text}");
        let (_, text, _) = message(Locale::En, "Calendar", link, "x").unwrap();
        assert!(text.contains("open this link and press Confirm:"), "{text}");
    }
}
