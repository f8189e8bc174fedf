//! `/subscribe`: the public sign-up page (Fossil-style) for the
//! collections an operator marks public, with double opt-in
//! ([`crate::signup`] does the work).
//!
//! - `GET /subscribe`: the form: email address, collections (checkboxes),
//!   frequency, hour and day, zone (a `<select>` of every IANA zone). A
//!   small optional script preselects the browser's zone; the CSP allows
//!   exactly that script by its hash, and the page works without it.
//! - `POST /subscribe`: every field validated (the form again with one
//!   line, 422, nothing written); then one pending sign-up and one
//!   verification message, and "check your mail" — the same answer for a
//!   known address and a new one; the queue is woken so the message goes
//!   out at once. Over a limit: 429 with `Retry-After` and a page that
//!   says when to try again, nothing written.
//! - `GET /subscribe/confirm/{token}`: what will be confirmed and a button;
//!   writes nothing (mail scanners fetch links). A used link says
//!   "already confirmed" and nothing more.
//! - `POST /subscribe/confirm/{token}`: confirms, once; the manage link is
//!   shown on that answer only.
//!
//! The form carries a client token ([`FormKey::client_token`]: the
//! client's /24 or /64 and the hour it was served); the confirm page a MAC
//! of the sign-up token. Without it, 403. An unknown, malformed or expired
//! sign-up token is the bad-link 404.

use std::sync::LazyLock;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::{header, Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use chrono::{DateTime, Utc};

use crate::error::Error;
use crate::signup::{self, Confirmed, Link, Requested, SignupInput};

use super::super::body::RawBody;
use super::super::{ApiError, App};
use super::manage::{prefix, render_failed};
use super::view::{self, Choice};
use super::words::ENDONYMS;
use super::{is_form, refusal_line, Asked, FormKey, Page, PageResult, Words};
use crate::i18n::{Arg, Locale};
use crate::subscriptions::Frequency;

/// The optional script: selects the browser's zone in the zone list. Its
/// exact text is hashed into the page's CSP.
pub const ZONE_SCRIPT: &str = "(function(){try{var z=Intl.DateTimeFormat().resolvedOptions().timeZone;var s=document.getElementById('timezone');if(!z||!s||s.getAttribute('data-chosen')==='1')return;for(var i=0;i<s.options.length;i++){if(s.options[i].value===z){s.selectedIndex=i;break;}}}catch(e){}})();";

/// The sign-up page's CSP: the pages' own, plus the one hashed script.
static SIGNUP_CSP: LazyLock<String> = LazyLock::new(|| {
    super::csp(&format!(
        "; script-src 'sha256-{}'",
        base64(&Sha256::digest(ZONE_SCRIPT.as_bytes()))
    ))
});

/// Standard base64 with padding (RFC 4648), for the CSP hash.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Longest value kept of a field shown again in the form.
const ECHO_MAX: usize = 254;

/// The purpose in the sign-up form's client token.
const FORM: &str = "signup form";

fn confirm_token(key: &FormKey, token: &str) -> String {
    key.token(&format!("signup confirm {token}"))
}

/// One public collection in the form.
pub struct CollectionChoice {
    pub uuid: String,
    pub name: String,
    pub checked: bool,
}

#[derive(Template)]
#[template(path = "pages/signup.html")]
pub struct SignupPage {
    pub t: Words,
    /// The languages to switch to, this one selected.
    pub langs: Vec<Choice>,
    /// "form" or "sent".
    pub state: &'static str,
    pub action: String,
    pub csrf: String,
    pub error: Option<String>,
    pub email: String,
    pub collections: Vec<CollectionChoice>,
    pub frequencies: Vec<Choice>,
    pub hours: Vec<Choice>,
    pub days: Vec<Choice>,
    pub zones: Vec<Choice>,
    /// The visitor chose a zone already (the script leaves it alone).
    pub zone_chosen: bool,
    pub script: &'static str,
}

#[derive(Template)]
#[template(path = "pages/signup_confirm.html")]
pub struct ConfirmPage {
    pub t: Words,
    /// "confirm", "done" or "already".
    pub state: &'static str,
    pub action: String,
    pub csrf: String,
    pub collections: Vec<String>,
    pub when: String,
    pub manage: Option<String>,
}

/// The form's fields as entered (for showing them again).
fn input_of(body: &[u8]) -> (SignupInput, Option<String>) {
    let mut i = SignupInput::default();
    let mut csrf = None;
    let clip = |v: &str| v.chars().take(ECHO_MAX * 4).collect::<String>();
    for (k, v) in url::form_urlencoded::parse(body) {
        match &*k {
            "email" if i.email.is_empty() => i.email = clip(&v),
            "collection" if i.collections.len() <= signup::MAX_COLLECTIONS => {
                i.collections.push(clip(&v))
            }
            "frequency" if i.frequency.is_empty() => i.frequency = clip(&v),
            "hour" if i.hour.is_empty() => i.hour = clip(&v),
            "day" if i.day.is_empty() => i.day = clip(&v),
            "timezone" if i.timezone.is_empty() => i.timezone = clip(&v),
            "csrf" if csrf.is_none() => csrf = Some(v.into_owned()),
            _ => {}
        }
    }
    (i, csrf)
}

fn form_page(
    t: Words,
    action: String,
    csrf: String,
    offered: Vec<crate::items::Collection>,
    i: &SignupInput,
    error: Option<String>,
) -> SignupPage {
    let freq = if i.frequency.is_empty() {
        "daily"
    } else {
        &i.frequency
    };
    let hour: i32 = i.hour.parse().unwrap_or(8);
    let day = if i.day.is_empty() { "mon" } else { &i.day };
    let zone = if i.timezone.is_empty() {
        "UTC"
    } else {
        &i.timezone
    };
    let clock = crate::digest::words::Style::new(chrono_tz::UTC, "en-GB");
    SignupPage {
        langs: ENDONYMS
            .iter()
            .map(|(l, name)| Choice {
                value: l.tag().into(),
                label: (*name).into(),
                selected: *l == t.lang,
            })
            .collect(),
        state: "form",
        action,
        csrf,
        error,
        email: i.email.chars().take(ECHO_MAX).collect(),
        collections: offered
            .into_iter()
            .map(|k| CollectionChoice {
                checked: i.collections.contains(&k.uuid),
                uuid: k.uuid,
                name: k.name,
            })
            .collect(),
        frequencies: [Frequency::Hourly, Frequency::Daily, Frequency::Weekly]
            .into_iter()
            .map(|f| Choice {
                value: f.as_str().into(),
                label: t.t(view::frequency_key(f)).into_owned(),
                selected: f.as_str() == freq,
            })
            .collect(),
        hours: view::hour_choices(&clock, hour),
        days: view::day_choices(&t, day),
        zones: view::zone_choices(zone),
        zone_chosen: !i.timezone.is_empty(),
        script: ZONE_SCRIPT,
        t,
    }
}

/// A sign-up page answer: the pages' headers, with the CSP that allows the
/// one hashed script.
fn with_script(p: Page) -> Response {
    let mut r = p.into_response();
    if let Ok(v) = HeaderValue::from_str(&SIGNUP_CSP) {
        r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

fn render(p: impl Template, status: StatusCode) -> PageResult {
    Ok(Page::with(status, p.render().map_err(render_failed)?))
}

/// `GET /subscribe`, in the language the browser (or `?lang=`) asks for.
pub async fn show(
    State(app): State<App>,
    headers: HeaderMap,
    ext: Extensions,
    asked: Asked,
) -> Result<Response, Page> {
    let hour = app.clock.now().timestamp().div_euclid(3600);
    let pre = prefix(&app);
    let lang = asked.visitor();
    let block = signup::limits::network(&client(&app, &ext, &headers));
    let (offered, key) = app
        .blocking(|c| Ok((crate::items::public_collections(c)?, FormKey::load(c)?)))
        .await
        .map_err(Page::failed(lang))?;
    let p = form_page(
        Words::new(lang),
        format!("{pre}/subscribe{}", asked.query()),
        key.client_token(FORM, &block, hour),
        offered,
        &SignupInput::default(),
        None,
    );
    Ok(with_script(render(p, StatusCode::OK)?))
}

/// The client address: the socket's peer, or the one a trusted proxy
/// forwarded for ([`crate::http::client`]).
pub fn client(app: &App, ext: &Extensions, headers: &HeaderMap) -> String {
    crate::http::client::address(ext, headers, &app.trusted_proxies)
        .map_or_else(|| "unknown".into(), |ip| ip.to_string())
}

enum Posted {
    Forbidden,
    Refused(Box<SignupPage>),
    Sent(Box<SignupPage>),
    Limited(DateTime<Utc>),
}

/// The 429 of a limit, in `lang`: when to try again, in words and in
/// `Retry-After` (whole seconds, at least one).
pub fn limited(now: DateTime<Utc>, retry_at: DateTime<Utc>, lang: Locale) -> Response {
    let t = Words::new(lang);
    let when = retry_at.format("%Y-%m-%d %H:%M").to_string();
    let text = t.f1("signup-limited", "when", &when);
    let mut r = Page::message(
        StatusCode::TOO_MANY_REQUESTS,
        t,
        &t.t("signup-limited-title"),
        &text,
    )
    .into_response();
    let ms = (retry_at - now).num_milliseconds();
    let secs = ((ms + 999) / 1000).max(1);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

/// `POST /subscribe`.
pub async fn post(
    State(app): State<App>,
    headers: HeaderMap,
    ext: Extensions,
    asked: Asked,
    body: Result<RawBody, ApiError>,
) -> Result<Response, Page> {
    // The page, the verification message and the confirm page are in the
    // language the browser (or `?lang=`) asks for; the new person keeps it.
    let lang = asked.visitor();
    let body = body.map_err(Page::failed(lang))?;
    if !is_form(&headers) {
        return Err(Page::not_a_form(lang));
    }
    let (input, csrf) = input_of(&body.0);
    let now = app.clock.now();
    let hour = now.timestamp().div_euclid(3600);
    let pre = prefix(&app);
    let who = client(&app, &ext, &headers);
    let action = format!("{pre}/subscribe{}", asked.query());
    let store = asked.to_store();
    let block = signup::limits::network(&who);
    let (scfg, ecfg, base) = (
        app.cfg.signup.clone(),
        app.cfg.email.clone(),
        app.cfg.digest.base_url.clone(),
    );
    let out = app
        .blocking(move |c| {
            let key = FormKey::load(c)?;
            if !key.client_token_ok(FORM, &block, csrf.as_deref(), hour) {
                return Ok(Posted::Forbidden);
            }
            let token = key.client_token(FORM, &block, hour);
            let v = match signup::validate_input(c, &input, lang) {
                Ok(v) => v,
                Err(e @ Error::Invalid(_)) => {
                    let offered = crate::items::public_collections(c)?;
                    return Ok(Posted::Refused(Box::new(form_page(
                        Words::new(lang),
                        action,
                        token,
                        offered,
                        &input,
                        Some(refusal_line(&e, lang)),
                    ))));
                }
                Err(e) => return Err(e),
            };
            let v = signup::ValidSignup {
                wish: signup::Wish {
                    locale: store,
                    ..v.wish
                },
                ..v
            };
            match signup::request(c, &scfg, &ecfg, &base, &v, &who, now)? {
                Requested::Limited { retry_at } => Ok(Posted::Limited(retry_at)),
                Requested::Sent => {
                    let mut p =
                        form_page(Words::new(lang), action, token, Vec::new(), &input, None);
                    p.state = "sent";
                    Ok(Posted::Sent(Box::new(p)))
                }
            }
        })
        .await
        .map_err(Page::failed(lang))?;
    match out {
        Posted::Forbidden => Err(Page::forbidden(lang)),
        Posted::Limited(retry_at) => Ok(limited(now, retry_at, lang)),
        Posted::Refused(p) => Ok(with_script(render(*p, StatusCode::UNPROCESSABLE_ENTITY)?)),
        Posted::Sent(p) => {
            // The verification goes out now, not at the next queue pass.
            app.db.wake_queue();
            Ok(with_script(render(*p, StatusCode::OK)?))
        }
    }
}

/// "Daily at 09:00", "Weekly on Monday at 09:00", "Every hour", with the
/// zone, in `t`'s language.
fn describe(t: &Words, w: &signup::Wish) -> String {
    let clock = crate::digest::words::Style::new(chrono_tz::UTC, "en-GB");
    let day = w
        .day
        .as_deref()
        .and_then(|d| crate::validate::weekday(d).ok())
        .map_or(0, i32::from);
    let hour = w.hour.map(|h| h as i32).or(Some(0));
    let when = view::when(t, &clock, &w.frequency, Some(day), hour);
    t.f(
        "signup-wish",
        &[("when", Arg::Str(&when)), ("zone", Arg::Str(&w.timezone))],
    )
}

/// `GET /subscribe/confirm/{token}`: what will be confirmed, in the
/// language the sign-up was made in (its message names this page's
/// button); writes nothing.
pub async fn confirm_show(
    State(app): State<App>,
    Path(token): Path<String>,
    asked: Asked,
) -> PageResult {
    let now = app.clock.now();
    let pre = prefix(&app);
    let t = token.clone();
    let visitor = asked.visitor();
    let (pending, key) = app
        .blocking(move |c| Ok((signup::pending(c, &t, now)?, FormKey::load(c)?)))
        .await
        .map_err(Page::failed(visitor))?;
    let page = match pending.ok_or_else(|| Page::not_found(visitor))? {
        Link::Open(p) => {
            let lang = asked
                .explicit
                .unwrap_or_else(|| Locale::resolve(p.wish.locale.as_deref().unwrap_or("")));
            let t = Words::new(lang);
            ConfirmPage {
                state: "confirm",
                action: format!("{pre}/subscribe/confirm/{token}{}", asked.query()),
                csrf: confirm_token(&key, &token),
                collections: p.names,
                when: describe(&t, &p.wish),
                manage: None,
                t,
            }
        }
        Link::Used => ConfirmPage {
            t: Words::new(visitor),
            state: "already",
            action: String::new(),
            csrf: String::new(),
            collections: Vec::new(),
            when: String::new(),
            manage: None,
        },
    };
    render(page, StatusCode::OK)
}

/// `POST /subscribe/confirm/{token}` with the form token: confirms.
pub async fn confirm(
    State(app): State<App>,
    Path(token): Path<String>,
    asked: Asked,
    body: Result<RawBody, ApiError>,
) -> PageResult {
    let visitor = asked.visitor();
    let f = super::form(&body.map_err(Page::failed(visitor))?.0);
    let now = app.clock.now();
    let pre = prefix(&app);
    let t = token.clone();
    let out = app
        .blocking(move |c| {
            if !signup::is_token_shaped(&t) {
                return Ok(None);
            }
            let key = FormKey::load(c)?;
            let given = f.get("csrf").map(String::as_str).unwrap_or("");
            if !crate::access::constant_time_eq(
                given.as_bytes(),
                confirm_token(&key, &t).as_bytes(),
            ) {
                return Ok(Some(Err(())));
            }
            Ok(Some(Ok(signup::confirm(c, &t, now)?)))
        })
        .await
        .map_err(Page::failed(visitor))?;
    let manage = |code: &str| format!("{pre}/s/{code}");
    let page = |state, manage, lang| ConfirmPage {
        t: Words::new(lang),
        state,
        action: String::new(),
        csrf: String::new(),
        collections: Vec::new(),
        when: String::new(),
        manage,
    };
    match out {
        None | Some(Ok(Confirmed::Invalid)) => Err(Page::not_found(visitor)),
        Some(Err(())) => Err(Page::forbidden(visitor)),
        Some(Ok(Confirmed::Done { code, lang, .. })) => render(
            page("done", Some(manage(&code)), asked.explicit.unwrap_or(lang)),
            StatusCode::OK,
        ),
        Some(Ok(Confirmed::Already)) => render(page("already", None, visitor), StatusCode::OK),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
